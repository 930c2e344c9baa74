"""The config as it reaches the tap: what configinput judges without a Tap."""

from __future__ import annotations

from pathlib import Path

import pytest

from tap_feeddelta.configinput import config_file_problem, start_date_names_no_zone
from tests.unreadable_json import UNREADABLE_JSON


@pytest.mark.parametrize(("text", "why"), UNREADABLE_JSON)
def test_json_the_reader_cannot_take_is_named_as_such(text: str, why: str, tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(text)
    assert config_file_problem(str(tmp_path / "config.json")) == why


@pytest.mark.parametrize(
    ("start_date", "names_no_zone"),
    [
        ("2024-01-03T05:00:00", True),  # as Meltano passes an unquoted YAML timestamp
        ("2024-01-03 05:00:00", True),
        ("2024-01-03t05:00:00.5", True),
        ("2024-01-03T05:00:00+02:00", False),
        ("2024-01-03T05:00:00-0500", False),
        ("2024-01-03T05:00:00Z", False),
        ("2024-01-03T05:00:00z ", False),
        ("2024-01-03", False),  # a date alone: midnight UTC, nothing to warn about
        (None, False),
    ],
)
def test_a_start_date_with_a_time_and_no_zone_is_told(
    start_date: str | None, names_no_zone: bool
) -> None:
    assert start_date_names_no_zone(start_date) is names_no_zone
