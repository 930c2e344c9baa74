"""The config schema's patterns match whole values: no value passes with a newline added."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tap_feeddelta.config import CONFIG_SCHEMA, schema_problems


def _patterns(schema: Any, where: str = "config") -> Iterator[tuple[str, str]]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                yield where, value
            else:
                yield from _patterns(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _patterns(value, f"{where}[{index}]")


PATTERNS = dict(_patterns(CONFIG_SCHEMA))
GOOD = {
    "monitor_id": ["default", "a", "x" * 64, "A_b-9"],
    "user_agent": ["MyAgent", "tap-feeddelta/1.0 (+https://example.org)", "~"],
    "start_date": ["2024-01-01", "2024-01-01T00:00:00Z", "2024-01-01 10:30:00.5+02:00"],
    "feed_urls": ["https://example.org/feed", "HTTP://x"],
}


def _setting(where: str) -> str:
    return where.split(".")[2]  # config.properties.<setting>...


def test_every_pattern_is_checked_here() -> None:
    assert {_setting(where) for where in PATTERNS} == set(GOOD)


@pytest.mark.parametrize("where", sorted(PATTERNS))
def test_a_pattern_takes_its_good_values_and_not_with_a_newline_after(where: str) -> None:
    # jsonschema applies "pattern" with re.search, whose "$" also matches before a final
    # "\n": "default\n" passed ^[A-Za-z0-9_-]{1,64}$ and became another namespace.
    pattern = re.compile(PATTERNS[where])
    for value in GOOD[_setting(where)]:
        assert pattern.search(value), value
        if _setting(where) != "feed_urls":  # a prefix check: the rest is checked later
            assert not pattern.search(value + "\n"), value


BAD = {
    "monitor_id": "team.news",
    "user_agent": "bot\tv1",
    "start_date": "2024-01-01T10:00:00 UTC",
    "feed_urls": ["example.com/feed.xml"],
}
SAID = {
    "monitor_id": "config['monitor_id']: must be 1 to 64 characters, each one of A-Z a-z 0-9 _ -",
    "user_agent": (
        "config['user_agent']: must be printable ASCII characters only (no tab, line break "
        "or other control character)"
    ),
    "start_date": (
        "config['start_date']: must be an RFC 3339 date-time such as 2024-01-01T00:00:00Z, "
        "or a date such as 2024-01-01"
    ),
    "feed_urls": "config['feed_urls'][0]: must start with http:// or https://",
}


@pytest.mark.parametrize("setting", sorted(BAD))
def test_a_value_a_pattern_refuses_is_told_in_words(setting: str) -> None:
    # The message printed the schema's regex (^\d{4}-\d{2}-...$(?!\n)).
    config = {"feed_urls": ["https://example.org/feed"], setting: BAD[setting]}
    assert schema_problems(CONFIG_SCHEMA, config) == [SAID[setting]]


def test_every_pattern_has_its_words() -> None:
    assert {_setting(where) for where in PATTERNS} == set(SAID)
