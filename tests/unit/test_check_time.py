"""check_time: a feed's checks are never timed before its last one in the state."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tap_feeddelta.check import FeedTask, internal_error_outcome
from tap_feeddelta.checkfacts import check_time, last_check_at, utc_text
from tap_feeddelta.config import Settings
from tap_feeddelta.errors import StateError
from tap_feeddelta.state import FeedBookmark, decode_bookmark, encode_bookmark

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
        (FeedBookmark(checked_at="2024-02-31T00:00:00Z"), CLOCK),  # no such day: not a time
    ],
    ids=[
        "no-state",
        "clock-past",
        "clock-behind",
        "failure-later",
        "fraction",
        "same",
        "bad",
    ],
)
def test_check_time(bookmark: FeedBookmark | None, expected: datetime) -> None:
    assert check_time(bookmark, CLOCK) == expected


@pytest.mark.parametrize(
    ("bookmark", "expected"),
    [
        (None, None),
        (FeedBookmark(), None),
        (
            FeedBookmark(checked_at="2024-02-11T00:00:00Z", failed_at="2024-02-11T00:00:00.5Z"),
            datetime(2024, 2, 11, 0, 0, 0, 500_000, tzinfo=UTC),
        ),
        (
            FeedBookmark(checked_at="2024-02-11T00:00:00.5Z", failed_at="2024-02-11T00:00:00Z"),
            datetime(2024, 2, 11, 0, 0, 0, 500_000, tzinfo=UTC),
        ),
        (FeedBookmark(failed_at="2024-02-31T00:00:00Z"), None),  # no such day
    ],
    ids=["no-state", "never-checked", "failure-later", "success-later", "bad"],
)
def test_last_check_at(bookmark: FeedBookmark | None, expected: datetime | None) -> None:
    """The one answer to "when was the feed last checked" (check_time, the clock-behind
    warning): the later of the last answer and the last failure, as instants, since
    "…:00Z" sorts after "…:00.5Z" as text."""
    assert last_check_at(bookmark) == expected


def test_checks_that_move_no_state_are_timed_by_the_clock() -> None:
    """A run of feed_health alone, or a check ending in internal_error, commits nothing:
    pinned after the state's last check, which does not move, every such check of the
    feed had one checked_at, the key of its health row (an upserting target kept one row
    for all of them). No item version is ordered by them."""
    ahead = FeedBookmark(checked_at="2024-02-11T12:00:00.000000Z")
    clocks = [CLOCK, CLOCK.replace(hour=13), CLOCK.replace(hour=14)]
    assert [check_time(ahead, clock, commits=False) for clock in clocks] == clocks
    assert check_time(ahead, CLOCK) == datetime(2024, 2, 11, 12, 0, 0, 1, tzinfo=UTC)
    url = "https://example.org/feed.xml"
    rows = [
        internal_error_outcome(
            FeedTask(0, url, ahead), Settings(feed_urls=(url,)), clock
        ).health_record
        for clock in clocks
    ]
    assert [row["checked_at"] for row in rows] == [utc_text(c, micro=True) for c in clocks]


@pytest.mark.parametrize("name", ["checked_at", "failed_at"])
def test_a_state_checked_at_the_last_moment_a_date_can_name_is_refused(name: str) -> None:
    """No check can be timed after it: each would repeat it."""
    partition = encode_bookmark(_dated(name, "9999-12-31T23:59:59.999999Z"))
    with pytest.raises(StateError, match=f"'{name}' is the last moment") as raised:
        decode_bookmark(partition, "p")
    assert raised.value.code == "state_invalid"
    decode_bookmark(encode_bookmark(_dated(name, "9999-12-31T23:59:59.999998Z")), "p")


def _dated(name: str, value: str) -> FeedBookmark:
    if name == "checked_at":
        return FeedBookmark(checked_at=value)
    return FeedBookmark(failed_at=value)
