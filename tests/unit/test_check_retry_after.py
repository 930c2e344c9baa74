"""A stored Retry-After skips the feed, but never for longer than the tap's own cap."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from tap_feeddelta.check import FeedTask, check_feed
from tap_feeddelta.config import Settings
from tap_feeddelta.models import FetchResult
from tap_feeddelta.state import FeedBookmark
from tests.unit.test_check_budget import FEED, FEED_URL, ScriptedFetcher

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _row(retry_after_at: str) -> dict[str, object]:
    answer = FetchResult("ok", FEED_URL, FEED_URL, 200, "application/rss+xml", FEED)
    fetcher = ScriptedFetcher([answer])
    bookmark = FeedBookmark(success_at="2026-02-28T00:00:00Z", retry_after_at=retry_after_at)
    task = FeedTask(0, FEED_URL, bookmark)
    outcome = asyncio.run(check_feed(task, fetcher, Settings(feed_urls=(FEED_URL,)), lambda: NOW))
    return outcome.health_record


def test_a_retry_after_within_a_day_skips_the_feed() -> None:
    row = _row("2026-03-02T06:00:00Z")
    assert (row["status"], row["error_code"]) == ("skipped", "retry_later")


def test_a_retry_after_past_the_cap_is_not_obeyed() -> None:
    """A time no answer could have set (a clock that was wrong then, an edited state):
    before, the feed was skipped on every run until 2099."""
    row = _row("2099-01-01T00:00:00Z")
    assert row["status"] == "ok"
    assert row["retry_after_at"] is None


def test_a_retry_after_that_has_passed_is_not_obeyed() -> None:
    assert _row("2026-03-01T11:59:59Z")["status"] == "ok"
