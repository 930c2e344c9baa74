"""The shared conformance corpus (../shared/corpus, from feedparser's tests), every
expectation as one test. Misses are listed with their reason in corpus_known_misses.txt
and marked xfail(strict=True)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from tests.unit.parse.corpus_support import (
    KNOWN_MISSES,
    case_id,
    corpus_available,
    load_cases,
    load_checker,
    parse_corpus_file,
)

CASES = load_cases()
IDS = [case_id(case, index) for index, case in enumerate(CASES)]


def _known_misses() -> dict[str, str]:
    misses = {}
    for line in KNOWN_MISSES.read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            ident, _, reason = line.partition(" ")
            misses[ident] = reason.strip()
    return misses


MISSES = _known_misses()


@cache
def _result(relative: str) -> dict[str, Any]:
    return parse_corpus_file(relative)


def _params() -> list[Any]:
    params = []
    for ident, case in zip(IDS, CASES, strict=True):
        marks = [pytest.mark.xfail(reason=MISSES[ident], strict=True)] if ident in MISSES else []
        params.append(pytest.param(case, id=ident, marks=marks))
    return params


@pytest.mark.skipif(not corpus_available(), reason="../shared/corpus is not present")
@pytest.mark.parametrize("case", _params())
def test_corpus_expectation(case: dict[str, Any]) -> None:
    passed, detail = load_checker_cached().check(case, _result(case["file"]))
    assert passed, detail


@cache
def load_checker_cached() -> Any:
    return load_checker()


@pytest.mark.skipif(not corpus_available(), reason="../shared/corpus is not present")
def test_known_misses_name_real_cases() -> None:
    assert set(MISSES) <= set(IDS)
    assert len(CASES) == 749
    assert (len(CASES) - len(MISSES)) / len(CASES) >= 0.97
