"""start_date: normalized to the text items' dates are compared with, or a clean config error."""

from __future__ import annotations

import pytest

from tap_feeddelta.config import config_problems, normalize_start_date, settings_from_config
from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.models import ParsedItem


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-01-01", "2024-01-01T00:00:00Z"),
        ("2024-01-01 10:30:00.5+02:00", "2024-01-01T08:30:00Z"),
        # Zero-padded as items' dates are: "999-…" sorts after every "2024-…" as text.
        ("0999-01-01T00:00:00Z", "0999-01-01T00:00:00Z"),
        ("0500-06-01", "0500-06-01T00:00:00Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
        ("0001-01-01T01:00:00+01:00", "0001-01-01T00:00:00Z"),
        # A leap second is the second before it, as in feed dates.
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59Z"),
        ("2017-01-01T00:59:60+01:00", "2016-12-31T23:59:59Z"),
        ("2016-12-31T23:59:60.5Z", "2016-12-31T23:59:59Z"),
    ],
)
def test_start_date_normalized(raw: str, expected: str) -> None:
    assert normalize_start_date(raw) == expected
    assert config_problems({"feed_urls": ["https://example.org/f"], "start_date": raw}) == []


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("0001-01-01T00:00:00+01:00", "outside the years 0001 to 9999 in UTC"),
        ("9999-12-31T23:59:59-01:00", "outside the years 0001 to 9999 in UTC"),
        ("0000-01-01T00:00:00Z", "not a valid RFC 3339 date-time"),
        ("2024-02-30", "not a valid RFC 3339 date-time"),
        ("2024-01-01T23:59:61Z", "not a valid RFC 3339 date-time"),
        ("2024-01-01T23:60:00Z", "not a valid RFC 3339 date-time"),
    ],
)
def test_an_unusable_start_date_is_a_config_problem(raw: str, problem: str) -> None:
    problems = config_problems({"feed_urls": ["https://example.org/f"], "start_date": raw})
    assert problems == [f"config['start_date'] is {problem}"]


def test_a_start_date_before_year_1000_holds_back_nothing_since() -> None:
    settings = settings_from_config(
        {"feed_urls": ["https://example.org/f"], "start_date": "0999-01-01T00:00:00Z"}
    )
    items = [
        ParsedItem(native_id="a", native_id_source="guid", published_at="2024-01-01T00:00:00Z"),
        ParsedItem(native_id="b", native_id_source="guid", published_at="0998-01-01T00:00:00Z"),
    ]
    delta = diff_items(
        None,
        items,
        DeltaSettings("m", "u", first_run_mode="emit_all", start_date=settings.start_date),
    )
    assert [c.item_id for c in delta.changes] == ["a"]
