"""The summary scripts/run prints after a run: its words fit what happened."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest

SUMMARY = Path(__file__).resolve().parents[2] / "scripts" / "run_summary.py"


def _module() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("run_summary", SUMMARY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("count", "text"), [(None, "(not built)"), (0, "0 rows"), (1, "1 row"), (10, "10 rows")]
)
def test_table_sizes_read_as_english(count: int | None, text: str) -> None:
    assert _module().table_size(count) == text


def test_no_feed_answered_points_to_the_offline_demo() -> None:
    """The four public feeds of meltano.yml without a network: all dns_failed. Running
    again would not give a delta; the demo works offline."""
    hint = _module().next_step({"error": 4})
    assert "No feed answered" in hint
    assert "./scripts/run --demo" in hint
    assert "again" not in hint


@pytest.mark.parametrize("status", ["ok", "not_modified"])
def test_a_feed_that_answered_has_a_delta_next_time(status: str) -> None:
    hint = _module().next_step({status: 1, "error": 3, "skipped": 1})
    assert hint.startswith("Run it again to get the delta")
