"""The fetches and reads of one feed's check: the configured URL, a web page's feed
(discovery), or the feed a page led to before; each fetch on the validators of the
resource it reads (a web page on its own, kept beside its feed's), all within the feed's
one time budget.

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
from typing import Final, NamedTuple, Protocol

from tap_feeddelta.checkfacts import (
    feed_of_unchanged_page,
    moved_issues,
    on_another_host,
    page_failure,
    remembered_feed,
)
from tap_feeddelta.config import Settings
from tap_feeddelta.errors import Issue, ParseError
from tap_feeddelta.fetch.urls import upgraded_to_https
from tap_feeddelta.models import FetchResult, ParsedFeed
from tap_feeddelta.records import FetchFacts
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


class PageValidators(NamedTuple):
    """A web page's validators, and which page they belong to (its final_url_hash)."""

    etag: str | None
    last_modified: str | None
    url_hash: str


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
    page_feed_links: tuple[str, ...] = ()  # the feed links of the page read
    # What a redirect handed the page (a session id), which its links may echo.
    handed: frozenset[str] = frozenset()
    # The feed URL asked for instead of the configured one (a page's link or the
    # remembered feed), unless it echoes a redirect's token.
    asked_url: str | None = None
    upgraded: bool = False  # the page's http:// feed link asked for over https
    # The feed the page advertised, as advertised_feeds shows it, for the bookmark.
    advertised_hash: str | None = None
    page_issue: Issue | None = None  # the page led to no feed: the one it led to before is read
    # The page's validators for the bookmark, when the feed was read from its very link.
    page: PageValidators | None = None
    page_unchanged: bool = False  # the page answered 304: the feed it led to last is read

    def fetched(self, result: FetchResult) -> None:
        """One more fetch of this check: its answer is the one that counts now."""
        self.result = result
        self.error = result.error
        self.feed = None
        self.fetch_ms += result.fetch_ms
        self.redirects += result.redirects
        self.received += result.bytes_received

    async def read_answer(self, feed_url: str) -> tuple[str, ...]:
        """Reads the answer that counts: ``feed`` is its document, or ``error`` says why
        there is none. Returns the feed links it advertises when it is a web page."""
        if self.result.status != "ok":
            return ()
        base_url = shown_url(self.result.final_url, feed_url, self.asked_url)
        self.feed, parse_ms, self.error, links = await _read(self.result, base_url)
        self.parse_ms += parse_ms
        return links

    def common_facts(self, feed_url: str) -> FetchFacts:
        """The health row's facts of the fetches, whatever came of them."""
        return FetchFacts(
            fetch=self.result,
            # The URL read, as records and the bookmark show it (see shown_url).
            final_url=shown_url(self.result.final_url, feed_url, self.asked_url),
            fetch_ms=self.fetch_ms,
            redirects=self.redirects,
            bytes_received=self.received,
            parse_ms=self.parse_ms,
            discovered_from=self.discovered_from,
            advertised_feeds=tuple(without_echo(url, self.handed) for url in self.page_feed_links),
        )


async def read_feed(
    feed_url: str, bookmark: FeedBookmark | None, fetcher: FetchesFeeds, settings: Settings
) -> Reading:
    """The configured URL fetched and read; a web page's feed (discovery), or the feed
    the page led to before when it now leads to none. A page that led to a feed is asked
    on its own validators: unchanged (304), the feed it led to is read without it."""
    led_to = feed_of_unchanged_page(bookmark, settings, feed_url)
    if led_to is None:
        first = await _fetch(fetcher, feed_url, bookmark, feed_url, None, False)
    else:
        assert bookmark is not None
        first = await _fetch_page(fetcher, feed_url, bookmark)
    # The configured URL's, not that of a feed a page links.
    reading = Reading(first, moved_issues(first, feed_url))
    reading.fetched(first)
    if led_to is not None and first.status == "not_modified":
        assert bookmark is not None
        await _read_feed_of_unchanged_page(reading, feed_url, led_to, bookmark, fetcher)
        return reading
    reading.page_feed_links = await reading.read_answer(feed_url)
    if reading.page_feed_links:
        reading.handed = redirect_tokens(first.final_url, feed_url)
    error = reading.error
    if (
        error is not None
        and error.code == "not_a_feed"
        and reading.page_feed_links
        and settings.discover_from_websites
    ):
        await _read_advertised_feed(reading, feed_url, bookmark, fetcher)
    elif error is not None and not await _read_remembered_feed(
        reading, feed_url, bookmark, fetcher, settings
    ):
        reading.error = _explained_page_error(
            error, reading, feed_url, settings.discover_from_websites
        )
    return reading


async def _read_advertised_feed(
    reading: Reading, feed_url: str, bookmark: FeedBookmark | None, fetcher: FetchesFeeds
) -> None:
    """The feed of the page ``reading`` read, fetched and read."""
    # Loaded already: the page was just parsed.
    from tap_feeddelta.parse.discovery import chosen_feed

    discovered_from = reading.result.final_url or feed_url
    chosen = chosen_feed(reading.page_feed_links, discovered_from)
    # A page read over https has its http:// feed link asked for over https: the feed is
    # read no less safely than the page (advertised_feeds shows the link).
    asked = chosen
    if discovered_from.startswith("https:"):
        asked = upgraded_to_https(asked)
        reading.upgraded = asked != chosen
    reading.discovered_from = discovered_from
    reading.advertised_hash = advertised_url_hash(without_echo(chosen, reading.handed))
    reading.asked_url = None if echoes(asked, reading.handed) else asked
    page = reading.result
    reading.fetched(await _fetch(fetcher, asked, bookmark, feed_url, reading.asked_url, True))
    await reading.read_answer(feed_url)
    # Not for a page a redirect hands a token (a session id): it is another URL each run.
    if (page.etag or page.last_modified) and reading.asked_url is not None and not reading.handed:
        url_hash = final_url_hashes(page.final_url or feed_url, feed_url)[0]
        reading.page = _page_to_keep(
            PageValidators(page.etag, page.last_modified, url_hash), reading
        )


async def _read_feed_of_unchanged_page(
    reading: Reading, feed_url: str, led_to: str, bookmark: FeedBookmark, fetcher: FetchesFeeds
) -> None:
    """The page ``reading`` read answered 304 on its own validators: it still leads to
    the feed it led to last (``led_to``, the very link it advertised), which is fetched
    on that feed's validators without reading the page again. Its links are not read:
    the row lists none in ``advertised_feeds``."""
    reading.page_unchanged = True
    reading.discovered_from = reading.result.final_url or feed_url
    reading.advertised_hash = bookmark.advertised_url_hash
    # The link was http://, asked for over https (see _read_advertised_feed).
    reading.upgraded = led_to.startswith("https:") and (
        advertised_url_hash("http:" + led_to.removeprefix("https:")) == reading.advertised_hash
    )
    reading.asked_url = led_to
    reading.fetched(await _fetch(fetcher, led_to, bookmark, feed_url, led_to, True))
    await reading.read_answer(feed_url)
    assert bookmark.page_url_hash is not None
    kept = PageValidators(bookmark.page_etag, bookmark.page_last_modified, bookmark.page_url_hash)
    reading.page = _page_to_keep(kept, reading)


def _page_to_keep(page: PageValidators, reading: Reading) -> PageValidators | None:
    """``page``'s validators, for the bookmark, when the feed was read from the very link
    the page advertised: a 304 of the page's then reads that feed as the page would
    lead to it. Not when a redirect came between them (a temporary one may lead
    elsewhere next time, and its target may hold a token the bookmark does not keep)."""
    return None if reading.result.redirected_from else page


async def _read_remembered_feed(
    reading: Reading,
    feed_url: str,
    bookmark: FeedBookmark | None,
    fetcher: FetchesFeeds,
    settings: Settings,
) -> bool:
    """When the page ``reading`` read led to no feed (a consent wall, a page down), the
    feed it led to before, read with ``discovery_failed``: whether it was read (its
    document or a 304). When it was not, ``reading`` keeps the page's answer and error."""
    error = reading.error
    assert error is not None
    remembered = remembered_feed(
        bookmark, settings, error, reading.result, reading.page_feed_links, feed_url
    )
    if remembered is None:
        return False
    assert bookmark is not None
    cause = page_failure(error, on_another_host(reading.result, feed_url))
    page = (reading.result, reading.asked_url)
    reading.asked_url = remembered
    reading.fetched(await _fetch(fetcher, remembered, bookmark, feed_url, remembered, True))
    await reading.read_answer(feed_url)
    if reading.feed is None and reading.result.status != "not_modified":
        # The page's error stands, with the page's answer.
        (reading.result, reading.asked_url), reading.feed, reading.error = page, None, error
        return False
    reading.page_issue = Issue("discovery_failed", f"{cause}: the feed it led to before was read")
    reading.error = None
    reading.advertised_hash = bookmark.advertised_url_hash
    return True


def _explained_page_error(
    error: Issue, reading: Reading, feed_url: str, discover_from_websites: bool
) -> Issue:
    """The error of the answer ``reading`` read from the configured URL, which led to no
    feed: a not_a_feed says so when the URL redirected to another host, or how to read a
    feed the page advertises when discovery is off."""
    if error.code != "not_a_feed":
        return error
    if on_another_host(reading.result, feed_url):
        return Issue(error.code, f"{error.message} The configured URL redirects to another host.")
    if reading.page_feed_links and not discover_from_websites:
        # What to change, without a URL: advertised_feeds on the row lists them.
        message = (
            f"{error.message} Set discover_from_websites to read the one it leads to, "
            "or configure one of advertised_feeds."
        )
        return Issue(error.code, message)
    return error


async def _fetch(
    fetcher: FetchesFeeds,
    url: str,
    bookmark: FeedBookmark | None,
    feed_url: str,
    asked_url: str | None,
    advertised: bool,
) -> FetchResult:
    """``url`` fetched on the bookmark's validators (``feed_url`` is the configured URL,
    ``asked_url`` the feed URL asked for instead, unless it echoes a token;
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
        bookmark, result.final_url or url, feed_url, asked_url
    ):
        return result
    return await _fetched_again(fetcher, url, result, advertised)


async def _fetch_page(fetcher: FetchesFeeds, url: str, bookmark: FeedBookmark) -> FetchResult:
    """The web page at the configured ``url`` fetched on its own validators, which the
    bookmark keeps. A 304 is trusted only from the page they belong to (its
    ``page_url_hash``): one from a page it now redirects to (servers that compare
    If-Modified-Since by date answer 304 for an older page) says nothing about that page,
    which is fetched again without them."""
    result = await fetcher.fetch_async(
        url, etag=bookmark.page_etag, last_modified=bookmark.page_last_modified
    )
    if result.status != "not_modified" or bookmark.page_url_hash in final_url_hashes(
        result.final_url or url, url
    ):
        return result
    return await _fetched_again(fetcher, url, result, False)


async def _fetched_again(
    fetcher: FetchesFeeds, url: str, result: FetchResult, advertised: bool
) -> FetchResult:
    """``url`` fetched again without validators, after ``result``, a 304 not trusted."""
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
    bookmark: FeedBookmark, final_url: str, configured: str, asked_url: str | None
) -> bool:
    """Whether ``final_url``, reached from the ``configured`` URL by asking for
    ``asked_url`` (the feed a page advertised, or led to before), is another resource
    than the one the bookmark's document was read from. A bookmark from before the hash
    was kept knows that URL only as it was shown; one from before signing values were
    left out of it, by the hash of the whole URL."""
    if bookmark.final_url_hash is not None:
        return bookmark.final_url_hash not in final_url_hashes(final_url, configured, asked_url)
    return bookmark.final_url not in (None, shown_url(final_url, configured, asked_url))


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
