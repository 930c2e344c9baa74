"""A server that asks for a pause without saying how long (429 or 503 without
Retry-After), or that says the feed is gone (410), is not asked again on every run: the
feed waits, longer with each failure in its streak, at most a day. Other failures are
checked on every run."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from tap_feeddelta.check import FeedOutcome, FeedTask, check_feed
from tap_feeddelta.config import Settings
from tap_feeddelta.errors import Issue
from tap_feeddelta.models import FetchResult
from tap_feeddelta.state import FeedBookmark
from tests.unit.test_check_budget import FEED_URL, ScriptedFetcher

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _check(
    code: str, http_status: int | None, bookmark: FeedBookmark | None, told: str | None = None
) -> FeedOutcome:
    failed = FetchResult(
        "error",
        FEED_URL,
        FEED_URL,
        http_status,
        retry_after_at=told,
        error=Issue(code, "no"),
    )
    task = FeedTask(0, FEED_URL, bookmark)
    settings = Settings(feed_urls=(FEED_URL,))
    return asyncio.run(check_feed(task, ScriptedFetcher([failed]), settings, lambda: NOW))


@pytest.mark.parametrize(
    ("failures_before", "waits_until"),
    [
        (0, "2026-03-01T12:05:00Z"),  # the first failure: 5 minutes
        (1, "2026-03-01T12:10:00Z"),
        (3, "2026-03-01T12:40:00Z"),
        (8, "2026-03-02T09:20:00Z"),  # 5 min × 2^8 = 21 h 20 min
        (9, "2026-03-02T12:00:00Z"),  # 42 h 40 min: capped at a day
        (400, "2026-03-02T12:00:00Z"),
    ],
)
@pytest.mark.parametrize(("code", "status"), [("rate_limited", 429), ("rate_limited", 503)])
def test_a_pause_asked_without_a_time_doubles_with_the_streak(
    code: str, status: int, failures_before: int, waits_until: str
) -> None:
    # Last answered long ago: the time since does not bound these waits.
    bookmark = FeedBookmark(checked_at="2026-01-01T00:00:00Z", failures=failures_before)
    outcome = _check(code, status, bookmark)
    assert outcome.status == "error"
    assert outcome.bookmark is not None
    assert outcome.bookmark.retry_after_at == waits_until
    assert outcome.health_record["retry_after_at"] == waits_until


def test_the_wait_is_never_longer_than_the_feed_has_gone_without_an_answer() -> None:
    """Skipped checks count in the streak (consecutive_failures): on a schedule more
    frequent than the wait, the streak outgrows the requests. The wait is bounded by the
    time since the feed last answered, so it doubles with each request, whatever the
    schedule."""
    bookmark = FeedBookmark(checked_at="2026-03-01T11:35:00Z", failures=12)
    outcome = _check("rate_limited", 429, bookmark)
    assert outcome.bookmark is not None
    assert outcome.bookmark.retry_after_at == "2026-03-01T12:25:00Z"


@pytest.mark.parametrize(("failures_before", "waits_until"), [
    (0, "2026-03-01T12:05:00Z"), (2, "2026-03-01T12:20:00Z"), (3, "2026-03-01T12:40:00Z"),
    (4, "2026-03-01T13:00:00Z"), (12, "2026-03-01T13:00:00Z"),
])  # fmt: skip
def test_a_feed_that_never_answered_waits_at_most_an_hour(
    failures_before: int, waits_until: str
) -> None:
    """Just configured, on a host that refuses for a while: its streak counts the checks
    skipped while the host rested too, and with no answer to bound the wait by it went
    to a day after three refusals (a short outage left a new feed unchecked all day)."""
    bookmark = FeedBookmark(failures=failures_before) if failures_before else None
    outcome = _check("rate_limited", 429, bookmark)
    assert outcome.bookmark is not None
    assert outcome.bookmark.retry_after_at == waits_until


def test_the_servers_own_time_is_kept() -> None:
    outcome = _check("rate_limited", 429, FeedBookmark(failures=5), told="2026-03-01T12:01:00Z")
    assert outcome.bookmark is not None
    assert outcome.bookmark.retry_after_at == "2026-03-01T12:01:00Z"


def test_a_feed_not_asked_for_while_its_host_rests_waits_by_its_own_streak() -> None:
    """Its host answered another feed's fetch with a 429 without Retry-After."""
    outcome = _check("retry_later", None, FeedBookmark(failures=1))
    assert outcome.status == "skipped"
    assert outcome.bookmark is not None
    assert outcome.bookmark.retry_after_at == "2026-03-01T12:10:00Z"


def test_a_gone_feed_is_checked_again_after_a_day() -> None:
    outcome = _check("feed_gone", 410, FeedBookmark(etag='"e"', items=b"x"))
    assert (outcome.status, outcome.error_code) == ("error", "feed_gone")
    assert outcome.bookmark is not None
    assert outcome.bookmark.retry_after_at == "2026-03-02T12:00:00Z"
    assert (outcome.bookmark.etag, outcome.bookmark.items) == ('"e"', b"x")


@pytest.mark.parametrize(
    ("code", "status"),
    [("http_error", 500), ("http_error", 404), ("timeout", None), ("connection_failed", None)],
)
def test_other_failures_are_checked_on_every_run(code: str, status: int | None) -> None:
    outcome = _check(code, status, FeedBookmark(failures=6))
    assert outcome.bookmark is not None
    assert outcome.bookmark.retry_after_at is None
