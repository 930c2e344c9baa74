"""A check keeps the count of new items it held back in the feed's bookmark, so a feed
whose guids are made anew on every fetch drains its backlog (see test_delta_held_back)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from tap_feeddelta.check import FeedOutcome, FeedTask, check_feed
from tap_feeddelta.config import Settings
from tap_feeddelta.models import FetchResult
from tap_feeddelta.state import HELD_BYTES, FeedBookmark, encode_bookmark
from tests.unit.test_check_budget import FEED_URL, ScriptedFetcher

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _document(fetch: int) -> bytes:
    """20 undated items whose guids the generator makes anew on every fetch."""
    items = "".join(
        f'<item><guid isPermaLink="false">{n}-{fetch}</guid><title>Alert {n}</title>'
        f"<link>https://example.org/a{n}</link></item>"
        for n in range(20)
    )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<link>https://example.org/</link>{items}</channel></rss>"
    ).encode()


def _check(bookmark: FeedBookmark | None, fetch: int) -> FeedOutcome:
    settings = Settings(feed_urls=(FEED_URL,), first_run_mode="emit_all", max_items_per_run=5)
    answer = FetchResult("ok", FEED_URL, FEED_URL, 200, "application/rss+xml", _document(fetch))
    now = NOW + timedelta(hours=fetch)
    task = FeedTask(0, FEED_URL, bookmark)
    return asyncio.run(check_feed(task, ScriptedFetcher([answer]), settings, lambda: now))


def test_the_bookmark_counts_new_items_held_back_until_none_are() -> None:
    bookmark: FeedBookmark | None = None
    sent: list[str] = []
    held: list[int] = []
    for fetch in range(5):
        outcome = _check(bookmark, fetch)
        bookmark = outcome.bookmark
        assert bookmark is not None
        sent += [str(record["url"]) for record in outcome.item_records]
        held.append(len(bookmark.new_held_back) // HELD_BYTES)
    assert sorted(sent) == sorted(f"https://example.org/a{n}" for n in range(20))
    assert held == [15, 10, 5, 0, 0]
    assert bookmark is not None and "new_held_back" not in encode_bookmark(bookmark)
