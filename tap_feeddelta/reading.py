"""The fetches and reads of one feed's check: the configured URL, a web page's feed
(discovery), or the feed a page led to before; each fetch on the validators of the
resource it reads, all within the feed's one time budget.

A usual document is parsed on the loop, between awaits; a big one on one worker thread,
so that its parse (up to seconds for a hostile body) never stops the loop while other
feeds' deadlines run. Either way one document of each kind at a time, so memory stays
flat however many fetches are in flight.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol

from tap_feeddelta.checkfacts import moved_issues, on_another_host, page_failure, remembered_feed
from tap_feeddelta.config import Settings
from tap_feeddelta.errors import Issue, ParseError
from tap_feeddelta.fetch.urls import upgraded_to_https
from tap_feeddelta.models import FetchResult, ParsedFeed
from tap_feeddelta.shownurl import (
    advertised_url_hash,
    echoes,
    final_url_hashes,
    redirect_tokens,
    shown_url,
    without_echo,
)
from tap_feeddelta.state import FeedBookmark

# Bodies up to this size are parsed on the loop: a few milliseconds for a feed, a
# tenth of a second for a hostile one, while a thread hand-off would cost every feed.
INLINE_PARSE_MAX_BYTES: Final = 256 * 1024
# Bigger ones, one at a time, on this thread (started on first use).
_big_document_parser = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="feeddelta-parse"
)


class FetchesFeeds(Protocol):
    """What checking one feed needs: its fetches."""

    async def fetch_async(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        budget_seconds: float | None = None,
        advertised: bool = False,
    ) -> FetchResult: ...


@dataclass(slots=True)
class Reading:
    """What a check's fetches read: the answer that counts, its document or its error,
    and the facts of all its fetches (a web page, the feed it advertises, or the feed it
    led to before)."""

    result: FetchResult
    moved: tuple[Issue, ...]  # the configured URL's permanent redirects
    feed: ParsedFeed | None = None
    error: Issue | None = None
    fetch_ms: int = 0
    redirects: int = 0
    received: int = 0
    parse_ms: int = 0
    discovered_from: str | None = None  # the page the feed was found through
    advertised: tuple[str, ...] = ()  # the feed links of the page read
    # What a redirect handed the page (a session id), which its links may echo, and the
    # feed URL it advertised, unless it echoes one: a URL the page published.
    handed: frozenset[str] = frozenset()
    published: str | None = None
    chosen: str | None = None  # the feed link of the page's that is read
    upgraded: bool = False  # the page's http:// feed link asked for over https
    # The feed the page advertised, as advertised_feeds shows it, for the bookmark.
    advertised_hash: str | None = None
    page_issue: Issue | None = None  # the page led to no feed: the one it led to before is read

    def fetched(self, result: FetchResult) -> None:
        """One more fetch of this check: its answer is the one that counts now."""
        self.result = result
        self.error = result.error
        self.feed = None
        self.fetch_ms += result.fetch_ms
        self.redirects += result.redirects
        self.received += result.bytes_received

    async def parse(self, feed_url: str) -> tuple[str, ...]:
        """The document of the answer that counts, when it is one; the feeds it
        advertises when it is a web page."""
        if self.result.status != "ok":
            return ()
        base_url = shown_url(self.result.final_url, feed_url, self.published)
        self.feed, parse_ms, self.error, advertised = await _read(self.result, base_url)
        self.parse_ms += parse_ms
        return advertised

    def common_facts(self, feed_url: str) -> dict[str, Any]:
        """The health row's facts of the fetches, whatever came of them."""
        return {
            "fetch": self.result,
            # The URL read, as records and the bookmark show it (see shown_url).
            "final_url": shown_url(self.result.final_url, feed_url, self.published),
            "fetch_ms": self.fetch_ms,
            "redirects": self.redirects,
            "bytes_received": self.received,
            "parse_ms": self.parse_ms,
            "discovered_from": self.discovered_from,
            "advertised_feeds": tuple(without_echo(url, self.handed) for url in self.advertised),
        }


async def read_feed(
    feed_url: str, bookmark: FeedBookmark | None, fetcher: FetchesFeeds, settings: Settings
) -> Reading:
    """The configured URL fetched and read; a web page's feed (discovery), or the feed
    the page led to before when it now leads to none."""
    first = await _fetch(fetcher, feed_url, bookmark, feed_url, None, False)
    # The configured URL's, not that of a feed a page links.
    reading = Reading(first, moved_issues(first, feed_url))
    reading.fetched(first)
    reading.advertised = await reading.parse(feed_url)
    if reading.advertised:
        reading.handed = redirect_tokens(first.final_url, feed_url)
    error = reading.error
    if (
        error is not None
        and error.code == "not_a_feed"
        and reading.advertised
        and settings.discover_from_websites
    ):
        await _read_advertised_feed(reading, feed_url, bookmark, fetcher)
    elif error is not None and reading.feed is None:
        await _read_feed_led_to_before(reading, feed_url, bookmark, fetcher, settings)
    return reading


async def _read_advertised_feed(
    reading: Reading, feed_url: str, bookmark: FeedBookmark | None, fetcher: FetchesFeeds
) -> None:
    """The feed of the page ``reading`` read, fetched and read."""
    # Loaded already: the page was just parsed.
    from tap_feeddelta.parse.discovery import chosen_feed

    discovered_from = reading.result.final_url or feed_url
    chosen = chosen_feed(reading.advertised, discovered_from)
    # A page read over https has its http:// feed link asked for over https: the feed is
    # read no less safely than the page (advertised_feeds shows the link).
    asked = chosen
    if discovered_from.startswith("https:"):
        asked = upgraded_to_https(asked)
        reading.upgraded = asked != chosen
    reading.discovered_from = discovered_from
    reading.chosen = chosen
    reading.advertised_hash = advertised_url_hash(without_echo(chosen, reading.handed))
    reading.published = None if echoes(asked, reading.handed) else asked
    reading.fetched(await _fetch(fetcher, asked, bookmark, feed_url, reading.published, True))
    await reading.parse(feed_url)


async def _read_feed_led_to_before(
    reading: Reading,
    feed_url: str,
    bookmark: FeedBookmark | None,
    fetcher: FetchesFeeds,
    settings: Settings,
) -> None:
    """When the page ``reading`` read led to no feed (a consent wall, a page down), the
    feed it led to before, read with ``discovery_failed``; else the page's error, which
    says so when the URL redirected to another host."""
    assert reading.error is not None
    error = reading.error
    elsewhere = on_another_host(reading.result, feed_url)
    remembered = remembered_feed(
        bookmark, settings, error, reading.result, reading.advertised, feed_url
    )
    if remembered is not None:
        assert bookmark is not None
        page = (reading.result, reading.published)
        reading.published = remembered
        reading.fetched(await _fetch(fetcher, remembered, bookmark, feed_url, remembered, True))
        await reading.parse(feed_url)
        if reading.feed is not None or reading.result.status == "not_modified":
            cause = page_failure(error, elsewhere)
            message = f"{cause}: the feed it led to before was read"
            reading.page_issue = Issue("discovery_failed", message)
            reading.error = None
            reading.advertised_hash = bookmark.advertised_url_hash
            return
        # The page's error stands, with the page's answer.
        (reading.result, reading.published), reading.feed = page, None
    reading.error = error
    if error.code == "not_a_feed" and elsewhere:
        message = f"{error.message} The configured URL redirects to another host."
        reading.error = Issue(error.code, message)
    elif error.code == "not_a_feed" and reading.advertised and not settings.discover_from_websites:
        # What to change, without a URL: advertised_feeds on the row lists them.
        message = (
            f"{error.message} Set discover_from_websites to read the one it leads to, "
            "or configure one of advertised_feeds."
        )
        reading.error = Issue(error.code, message)


async def _fetch(
    fetcher: FetchesFeeds,
    url: str,
    bookmark: FeedBookmark | None,
    feed_url: str,
    published: str | None,
    advertised: bool,
) -> FetchResult:
    """``url`` fetched on the bookmark's validators (``feed_url`` is the configured URL,
    ``published`` the feed URL a web page advertised, unless it echoes a token;
    ``advertised``: ``url`` is that link, a destination the page's publisher chose).

    They belong to the resource last read (the bookmark's ``final_url_hash``). A 304
    from another resource, such as the web page a feed was found through (servers that
    compare If-Modified-Since by date answer 304 for an older page), or another feed
    that a redirect reaches through the same path with another query (WordPress's
    /index.php?feed=…), says nothing about that feed: the URL is then fetched again
    without them.
    """
    if bookmark is None:
        return await fetcher.fetch_async(url, advertised=advertised)
    result = await fetcher.fetch_async(
        url, etag=bookmark.etag, last_modified=bookmark.last_modified, advertised=advertised
    )
    if result.status != "not_modified" or not read_elsewhere(
        bookmark, result.final_url or url, feed_url, published
    ):
        return result
    again = await fetcher.fetch_async(url, advertised=advertised)
    return replace(
        again,
        # The check sent them, though their answer was not trusted.
        etag_sent=result.etag_sent,
        last_modified_sent=result.last_modified_sent,
        fetch_ms=result.fetch_ms + again.fetch_ms,
        redirects=result.redirects + again.redirects,
        bytes_received=result.bytes_received + again.bytes_received,
    )


def read_elsewhere(
    bookmark: FeedBookmark, final_url: str, configured: str, asked: str | None
) -> bool:
    """Whether ``final_url``, reached from the ``configured`` URL by asking for ``asked``
    (the feed a page advertised), is another resource than the one the bookmark's
    document was read from. A bookmark from before the hash was kept knows that URL only
    as it was shown; one from before signing values were left out of it, by the hash of
    the whole URL."""
    if bookmark.final_url_hash is not None:
        return bookmark.final_url_hash not in final_url_hashes(final_url, configured, asked)
    return bookmark.final_url not in (None, shown_url(final_url, configured, asked))


class OneBudget:
    """The run's fetcher, for one feed: its fetches (discovery, a second ask after a 304)
    share the feed's one time budget. Each gets what the earlier ones left, counted by
    their fetch_ms, which leaves out waiting for a host's slot, as the budget does."""

    def __init__(self, fetcher: FetchesFeeds, budget_seconds: float) -> None:
        self._fetcher = fetcher
        self._left = budget_seconds

    async def fetch_async(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        budget_seconds: float | None = None,
        advertised: bool = False,
    ) -> FetchResult:
        left = self._left if budget_seconds is None else min(self._left, budget_seconds)
        result = await self._fetcher.fetch_async(
            url,
            etag=etag,
            last_modified=last_modified,
            budget_seconds=left,
            advertised=advertised,
        )
        self._left -= result.fetch_ms / 1000
        return result


async def _read(
    result: FetchResult, base_url: str | None
) -> tuple[ParsedFeed | None, int, Issue | None, tuple[str, ...]]:
    """The document of ``result``, its relative links resolved against ``base_url``: the
    URL read as the records show it, so that a token a redirect added (a signed query,
    a session id) is not copied into every item's link, nor changes them with each run."""
    if len(result.body or b"") <= INLINE_PARSE_MAX_BYTES:
        return _parse(result, base_url)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_big_document_parser, _parse, result, base_url)


def _parse(
    result: FetchResult, base_url: str | None
) -> tuple[ParsedFeed | None, int, Issue | None, tuple[str, ...]]:
    # Imported on first use: a run where every feed answers 304 never loads the parser
    # (lxml and friends are a tenth of the tap's start-up).
    from tap_feeddelta.parse import parse_feed

    started = time.perf_counter()
    try:
        feed = parse_feed(result.body or b"", result.content_type, base_url or "")
    except ParseError as exc:
        elapsed = int((time.perf_counter() - started) * 1000)
        return None, elapsed, Issue(exc.code, exc.message), exc.advertised_feeds
    return feed, int((time.perf_counter() - started) * 1000), None, ()
