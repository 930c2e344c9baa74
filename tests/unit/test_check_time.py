"""check_time: a feed's checks are never timed before its last one in the state."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tap_feeddelta.checkfacts import check_time
from tap_feeddelta.state import FeedBookmark

CLOCK = datetime(2024, 2, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("bookmark", "expected"),
    [
        (None, CLOCK),
        (FeedBookmark(checked_at="2024-02-09T12:00:00.000000Z"), CLOCK),
        (
            FeedBookmark(checked_at="2024-02-11T12:00:00.000000Z"),
            datetime(2024, 2, 11, 12, 0, 0, 1, tzinfo=UTC),
        ),
        (  # a failure after the last success counts too
            FeedBookmark(checked_at="2024-02-09T00:00:00Z", failed_at="2024-02-11T00:00:00.5Z"),
            datetime(2024, 2, 11, 0, 0, 0, 500_001, tzinfo=UTC),
        ),
        (  # compared as instants: "…:00Z" sorts after "…:00.5Z" as text
            FeedBookmark(checked_at="2024-02-11T00:00:00Z", failed_at="2024-02-11T00:00:00.5Z"),
            datetime(2024, 2, 11, 0, 0, 0, 500_001, tzinfo=UTC),
        ),
        (
            FeedBookmark(checked_at="2024-02-10T12:00:00Z"),
            datetime(2024, 2, 10, 12, 0, 0, 1, tzinfo=UTC),
        ),
        (
            FeedBookmark(checked_at="9999-12-31T23:59:59.999999Z"),
            datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        ),
        (FeedBookmark(checked_at="2024-02-31T00:00:00Z"), CLOCK),  # no such day: not a time
    ],
    ids=[
        "no-state",
        "clock-past",
        "clock-behind",
        "failure-later",
        "fraction",
        "same",
        "max",
        "bad",
    ],
)
def test_check_time(bookmark: FeedBookmark | None, expected: datetime) -> None:
    assert check_time(bookmark, CLOCK) == expected
