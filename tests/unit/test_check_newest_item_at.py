"""A state's newest_item_at more than a day ahead of the clock (written while the clock
was ahead, by an earlier version that took future dates, or edited) counts nowhere: not
for staleness, not against possible_gap, and every row of the check agrees."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from tap_feeddelta.check import FeedOutcome, FeedTask, check_feed
from tap_feeddelta.config import Settings
from tap_feeddelta.errors import Issue
from tap_feeddelta.models import FetchResult
from tap_feeddelta.state import FeedBookmark
from tests.feedserver import rss
from tests.unit.test_check_budget import FEED_URL, PAGE_URL, ScriptedFetcher, _page

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
AHEAD = "2026-09-17T11:00:00Z"  # 200 days ahead: the clock of the run that stored it
OLD = rss([("a-1", "A", "a"), ("b-2", "B", "b")]).encode()  # 2 and 3 January 2024
OLD_NEWEST = "2024-01-03T10:00:00Z"


def _ok(body: bytes, url: str = FEED_URL) -> FetchResult:
    return FetchResult("ok", url, url, 200, "application/rss+xml", body)


def _check(bookmark: FeedBookmark | None, *answers: FetchResult, **task: Any) -> FeedOutcome:
    url = task.pop("url", FEED_URL)
    settings = Settings(feed_urls=(url,), stale_after_days=30, discover_from_websites=True)
    feed_task = FeedTask(0, settings.feed_urls[0], bookmark, **task)
    return asyncio.run(check_feed(feed_task, ScriptedFetcher(list(answers)), settings, lambda: NOW))


def _ahead_state() -> FeedBookmark:
    first = _check(None, _ok(OLD)).bookmark
    assert first is not None and first.newest_item_at == OLD_NEWEST
    return replace(first, newest_item_at=AHEAD)


def _shown(row: dict[str, Any]) -> tuple[Any, Any]:
    return row["newest_item_at"], row["is_stale"]


def test_a_document_read_judges_by_its_own_dates_not_a_stored_date_ahead() -> None:
    outcome = _check(_ahead_state(), _ok(OLD))
    assert _shown(outcome.health_record) == (OLD_NEWEST, True)
    assert outcome.bookmark is not None and outcome.bookmark.newest_item_at == OLD_NEWEST
    # the row of a failed check on the state left agrees
    failed = FetchResult("error", FEED_URL, http_status=404, error=Issue("http_error", "404"))
    assert _shown(_check(outcome.bookmark, failed).health_record) == (OLD_NEWEST, True)


def test_the_rows_of_one_state_do_not_contradict_each_other() -> None:
    """On the same state, a read that finds no dated item and a failure both show no
    date (the error row dropped the stored one, the ok row kept it)."""
    undated = rss([]).encode()
    failed = FetchResult("error", FEED_URL, http_status=404, error=Issue("http_error", "404"))
    rows = [_check(_ahead_state(), answer).health_record for answer in (_ok(undated), failed)]
    assert [_shown(row) for row in rows] == [(None, None), (None, None)]


def test_a_stored_date_ahead_does_not_hide_gaps() -> None:
    """The read that drops it keeps the document's newest instead, and later reads
    compare with that. (That read itself knows no newest item seen: like a state of an
    undated feed, it cannot tell a gap from a feed renaming its ids.)"""
    moved_on = rss([("x-5", "X", "x"), ("y-6", "Y", "y"), ("z-7", "Z", "z")]).encode()
    read = _check(_ahead_state(), _ok(OLD)).bookmark
    row = _check(read, _ok(moved_on)).health_record
    assert "possible_gap" in {issue["code"] for issue in row["issues"]}


def test_a_partition_taken_over_is_judged_alike() -> None:
    """A web page that takes over the partition of the feed it leads to."""
    taken = _ahead_state()
    outcome = _check(
        None,
        _page(0),
        _ok(OLD),
        url=PAGE_URL,
        adopt=lambda _hash: (("default", FEED_URL), taken),
    )
    assert outcome.adopted == ("default", FEED_URL)
    assert _shown(outcome.health_record) == (OLD_NEWEST, True)
