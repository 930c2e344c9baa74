"""One time budget per feed: every fetch of a feed gets what the earlier ones left."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tap_feeddelta.check import FeedTask, check_feed
from tap_feeddelta.config import Settings
from tap_feeddelta.models import FetchResult
from tap_feeddelta.state import FeedBookmark
from tests.feedserver import rss

BUDGET = 10.0
PAGE_URL = "https://blog.example/"
FEED_URL = "https://blog.example/feed.xml"
PAGE = (
    b'<!doctype html><html><head><link rel="alternate" type="application/rss+xml" '
    b'href="/feed.xml"></head><body>hello</body></html>'
)
FEED = rss([("a", "A", "a"), ("b", "B", "b")]).encode()


@dataclass
class ScriptedFetcher:
    """Answers from a script, and remembers the budget each fetch was given."""

    answers: list[FetchResult]
    budgets: list[float | None] = field(default_factory=list)

    async def fetch_async(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        budget_seconds: float | None = None,
        advertised: bool = False,
    ) -> FetchResult:
        self.budgets.append(budget_seconds)
        return self.answers.pop(0)


def _page(fetch_ms: int) -> FetchResult:
    return FetchResult(
        "ok",
        PAGE_URL,
        PAGE_URL,
        200,
        "text/html",
        PAGE,
        bytes_received=len(PAGE),
        fetch_ms=fetch_ms,
    )


def _feed(fetch_ms: int) -> FetchResult:
    return FetchResult(
        "ok", FEED_URL, FEED_URL, 200, "application/rss+xml", FEED, fetch_ms=fetch_ms
    )


def _not_modified(url: str, fetch_ms: int) -> FetchResult:
    return FetchResult("not_modified", url, url, 304, etag_sent=True, fetch_ms=fetch_ms)


def _check(fetcher: ScriptedFetcher, bookmark: FeedBookmark | None = None) -> dict[str, Any]:
    settings = Settings(
        feed_urls=(PAGE_URL,), discover_from_websites=True, request_timeout_seconds=BUDGET
    )
    task = FeedTask(0, PAGE_URL, bookmark)
    now = datetime(2026, 3, 1, tzinfo=UTC)
    outcome = asyncio.run(check_feed(task, fetcher, settings, lambda: now))
    assert fetcher.answers == []
    return outcome.health_record


def test_the_discovered_feed_gets_what_the_page_left() -> None:
    fetcher = ScriptedFetcher([_page(4_000), _feed(3_000)])
    health = _check(fetcher)
    assert fetcher.budgets == [BUDGET, 6.0]
    assert (health["status"], health["fetch_ms"]) == ("ok", 7_000)


def test_asking_again_after_a_304_from_another_resource_shares_the_budget() -> None:
    bookmark = FeedBookmark(etag='"v1"', final_url=FEED_URL, success_at="2026-02-01T00:00:00Z")
    # The page answers 304 to the feed's validators, is asked again without them, and
    # the feed it advertises then answers 304: three fetches, one budget.
    fetcher = ScriptedFetcher(
        [_not_modified(PAGE_URL, 2_500), _page(2_500), _not_modified(FEED_URL, 2_000)]
    )
    health = _check(fetcher, bookmark)
    assert fetcher.budgets == [BUDGET, 7.5, 5.0]
    assert (health["status"], health["fetch_ms"]) == ("not_modified", 7_000)


def test_a_page_that_used_the_whole_budget_leaves_none() -> None:
    fetcher = ScriptedFetcher([_page(10_000), _feed(0)])
    _check(fetcher)
    assert fetcher.budgets == [BUDGET, 0.0]
