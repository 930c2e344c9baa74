"""Checks one feed: fetch (conditional) → discovery → parse → delta → records + bookmark.

Runs as a coroutine on the fetcher's event loop: it reads only its own task and never
touches the Singer state or writes messages. A usual document is parsed on the loop
too, between awaits; a big one on one worker thread, so that its parse (up to seconds
for a hostile body) never stops the loop while other feeds' deadlines run. Either way
one document of each kind at a time, so memory stays flat however many fetches are in
flight. The outcome's bookmark is applied by the main thread after the feed's records
have been written (at-least-once).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final, Protocol, TypeVar

from tap_feeddelta.checkfacts import (
    FUTURE_DATE_LEEWAY,
    check_time,
    failure_facts,
    judged_stale,
    known_facts,
    moved_issues,
    names_itself,
    on_another_host,
    page_failure,
    remembered_feed,
    shown_where,
    stale_issues,
    still_waiting,
    utc_text,
    with_failure,
)
from tap_feeddelta.config import Settings
from tap_feeddelta.delta import DeltaSettings, diff_items, newest_item_at
from tap_feeddelta.errors import Issue, ParseError
from tap_feeddelta.fetch.headers import usable_last_modified
from tap_feeddelta.fetch.urls import upgraded_to_https
from tap_feeddelta.models import FetchResult, ParsedFeed
from tap_feeddelta.records import FeedContext, HealthFacts, health_record, item_record
from tap_feeddelta.shownurl import (
    advertised_url_hash,
    echoes,
    final_url_hash,
    redirect_tokens,
    shown_url,
    without_echo,
)
from tap_feeddelta.state import FeedBookmark

T = TypeVar("T")

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


class FeedFetcher(FetchesFeeds, Protocol):
    """What a run needs: fetches, run on the fetcher's loop, and closed at the end."""

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]: ...

    def close(self) -> None: ...


PartitionKey = tuple[str, str]  # (monitor_id, feed_url)
# The partition of a feed no longer configured whose document was read from the URL
# with this final_url_hash, handed over once (see run.py's _Unconfigured).
Adopt = Callable[[str], tuple[PartitionKey, FeedBookmark] | None]


@dataclass(frozen=True, slots=True)
class FeedTask:
    position: int
    feed_url: str
    bookmark: FeedBookmark | None
    adopt: Adopt | None = None  # for a feed without a partition of its own


@dataclass(frozen=True, slots=True)
class FeedOutcome:
    task: FeedTask
    item_records: list[dict[str, Any]]
    health_record: dict[str, Any]
    bookmark: FeedBookmark | None  # None: leave the feed's state exactly as it was
    error_code: str | None
    status: str
    # The partition of a feed no longer configured that this feed's bookmark replaces.
    adopted: PartitionKey | None = None


async def check_feed(
    task: FeedTask, fetcher: FetchesFeeds, settings: Settings, now: Callable[[], datetime]
) -> FeedOutcome:
    started = now()  # the clock: what dates are judged by
    checked_at = utc_text(check_time(task.bookmark, started), micro=True)
    ctx = FeedContext(settings.monitor_id, task.feed_url, checked_at)
    bookmark = task.bookmark
    if bookmark and bookmark.last_modified != usable_last_modified(bookmark.last_modified, started):
        # Kept by an earlier version, which stored future dates: not sent, nor kept.
        bookmark = replace(bookmark, last_modified=None)
    fetcher = _OneBudget(fetcher, settings.request_timeout_seconds)  # one for all its fetches
    if bookmark and still_waiting(bookmark.retry_after_at, started):
        issue = Issue("retry_later", "the server asked not to be fetched before retry_after_at")
        facts = failure_facts(
            "skipped", issue, bookmark, started, settings, retry_after_at=bookmark.retry_after_at
        )
        return _outcome(task, ctx, facts, with_failure(bookmark, ctx))

    result = await _fetch(fetcher, task.feed_url, bookmark, task.feed_url, None, False)
    fetch_ms, redirects, received = result.fetch_ms, result.redirects, result.bytes_received
    # The configured URL's, not that of a feed a page links.
    moved = moved_issues(result, task.feed_url)

    parse_ms = 0
    discovered_from: str | None = None
    advertised: tuple[str, ...] = ()
    # What a redirect handed the page (a session id), which its links may echo, and the
    # feed URL it advertised, unless it echoes one: a URL the page published.
    handed: frozenset[str] = frozenset()
    published: str | None = None
    chosen: str | None = None  # the feed link of the page's that is read
    upgraded = False  # the page's http:// feed link asked for over https
    feed: ParsedFeed | None = None
    error: Issue | None = result.error
    if result.status == "ok":
        feed, parse_ms, error, advertised = await _read(
            result, shown_url(result.final_url, task.feed_url)
        )
        if advertised:
            handed = redirect_tokens(result.final_url, task.feed_url)
        if (
            error is not None
            and error.code == "not_a_feed"
            and advertised
            and settings.discover_from_websites
        ):
            # Loaded already: the page was just parsed.
            from tap_feeddelta.parse.discovery import chosen_feed

            discovered_from = result.final_url or task.feed_url
            chosen = chosen_feed(advertised, discovered_from)
            # A page read over https has its http:// feed link asked for over https: the
            # feed is read no less safely than the page (advertised_feeds shows the link).
            asked = chosen
            if discovered_from.startswith("https:"):
                asked = upgraded_to_https(asked)
                upgraded = asked != chosen
            published = None if echoes(asked, handed) else asked
            result = await _fetch(fetcher, asked, bookmark, task.feed_url, published, True)
            fetch_ms += result.fetch_ms
            redirects += result.redirects
            received += result.bytes_received
            error = result.error
            feed = None
            if result.status == "ok":
                feed, more_ms, error, _ = await _read(
                    result, shown_url(result.final_url, task.feed_url, published)
                )
                parse_ms += more_ms

    # The feed the page advertised, as advertised_feeds shows it, for the bookmark.
    advertised_hash = advertised_url_hash(without_echo(chosen, handed)) if chosen else None
    page_issue: Issue | None = None  # the page led to no feed: the one it led to before is read
    if error is not None and feed is None and discovered_from is None:
        elsewhere = on_another_host(result, task.feed_url)
        remembered = remembered_feed(bookmark, settings, error, advertised, task.feed_url)
        if remembered is not None:
            again = await _fetch(fetcher, remembered, bookmark, task.feed_url, remembered, True)
            fetch_ms += again.fetch_ms
            redirects += again.redirects
            received += again.bytes_received
            read: ParsedFeed | None = None
            if again.status == "ok":
                read, more_ms, _, _ = await _read(
                    again, shown_url(again.final_url, task.feed_url, remembered)
                )
                parse_ms += more_ms
            if read is not None or again.status == "not_modified":
                assert bookmark is not None
                cause = page_failure(error, elsewhere)
                message = f"{cause}: the feed it led to before was read"
                page_issue = Issue("discovery_failed", message)
                result, feed, error, published = again, read, None, remembered
                advertised_hash = bookmark.advertised_url_hash
        if error is not None and error.code == "not_a_feed" and elsewhere:
            message = f"{error.message} The configured URL redirects to another host."
            error = Issue(error.code, message)
    page_issues = (page_issue,) if page_issue else ()

    # The URL read, as records and the bookmark show it (see shown_url).
    shown_final_url = shown_url(result.final_url, task.feed_url, published)
    common: dict[str, Any] = {
        "fetch": result,
        "final_url": shown_final_url,
        "fetch_ms": fetch_ms,
        "redirects": redirects,
        "bytes_received": received,
        "parse_ms": parse_ms,
        "discovered_from": discovered_from,
        "advertised_feeds": tuple(without_echo(url, handed) for url in advertised),
    }
    if result.status == "not_modified":
        # The document is the one read before.
        known = known_facts(bookmark, started, settings.stale_after_days)
        known["last_success_at"] = ctx.checked_at
        issues = page_issues + stale_issues(known["is_stale"]) + moved
        facts = HealthFacts("not_modified", issues=issues, **known, **common)
        kept = replace(
            bookmark or FeedBookmark(),
            advertised_url_hash=advertised_hash,
            checked_at=ctx.checked_at,
            retry_after_at=None,
            failures=0,
            failed_at=None,
        )
        return _outcome(task, ctx, facts, kept)

    if feed is None:
        assert error is not None
        facts = failure_facts(
            "error",
            error,
            bookmark,
            started,
            settings,
            moved,
            retry_after_at=result.retry_after_at,
            **common,
        )
        # A failure moves only the streak, and after a 429/503 when the server lets us back.
        kept = with_failure(bookmark, ctx)
        if error.code == "rate_limited" and result.retry_after_at:
            kept = replace(kept, retry_after_at=result.retry_after_at)
        return _outcome(task, ctx, facts, kept)

    shown_final_url = shown_final_url or task.feed_url
    read_hash = final_url_hash(result.final_url or task.feed_url, task.feed_url, published)
    adopted: PartitionKey | None = None
    if discovered_from and bookmark is None and task.adopt is not None:
        # A feed URL replaced by the web page that advertises it: the feed's partition,
        # of the very URL read, is this one's, as a page replaced by its feed keeps it.
        claimed = task.adopt(read_hash)
        if claimed is not None:
            adopted, bookmark = claimed
    # Item dates past this are a typo or a wrong clock: no item is newest by them.
    dates_not_after = utc_text(started + FUTURE_DATE_LEEWAY)
    delta = diff_items(
        bookmark,
        feed.items,
        _delta_settings(settings, task.feed_url),
        from_another_feed=bool(
            discovered_from
            and adopted is None
            and bookmark
            and _another_feed_advertised(
                bookmark,
                advertised_hash,
                result.final_url or task.feed_url,
                task.feed_url,
                published,
            )
        ),
        dates_not_after=dates_not_after,
    )
    records = [
        item_record(ctx, feed, shown_final_url, change, settings.content_mode)
        for change in delta.changes
    ]
    newest = newest_item_at(feed.items, dates_not_after)
    if bookmark and bookmark.newest_item_at and (newest or "") < bookmark.newest_item_at:
        # The newest item seen stays so (possible_gap compares with it, staleness is
        # judged by it) when a document shows none as new: emptied, undated, or with
        # its newest items taken down.
        newest = bookmark.newest_item_at
    is_stale = judged_stale(newest, started, settings.stale_after_days)
    issues = page_issues + feed.issues + delta.issues + stale_issues(is_stale)
    if not feed.items:
        issues += (Issue("no_items", "the feed has no items"),)
    if discovered_from and "feed_discovered" not in {issue.code for issue in delta.issues}:
        how = " (its http:// link was asked for over https)" if upgraded else ""
        issues += (Issue("feed_discovered", f"the feed was found through a web page{how}"),)
    issues += moved
    if feed.new_feed_url and not names_itself(feed.new_feed_url, task.feed_url, result):
        where = shown_where(feed.new_feed_url, task.feed_url)
        issues += (Issue("feed_moved", f"the feed's itunes:new-feed-url names {where}"),)
    facts = HealthFacts(
        "ok",
        feed=feed,
        counts=delta.counts,
        newest_item_at=newest,
        is_stale=is_stale,
        last_success_at=ctx.checked_at,
        issues=issues,
        **common,
    )
    # Deferred changes must be fetched again next run: drop the validators so that
    # the server cannot answer 304 before they are out. (A feed naming a new URL keeps
    # them: many such feeds stay live, and a full download every run costs the
    # publisher; the move is told whenever the document is read.)
    keep_validators = delta.counts.deferred == 0
    new_bookmark = FeedBookmark(
        etag=result.etag if keep_validators else None,
        last_modified=usable_last_modified(result.last_modified, started)
        if keep_validators
        else None,
        # As the records show it: a signed token a redirect handed out is not stored.
        final_url=shown_final_url,
        final_url_hash=read_hash,
        advertised_url_hash=advertised_hash,
        title=feed.title,
        format=feed.format,
        checked_at=ctx.checked_at,
        success_at=ctx.checked_at,
        retry_after_at=None,
        newest_item_at=newest,
        largest_document=delta.largest_document,
        items=delta.remembered_items,
    )
    return _outcome(task, ctx, facts, new_bookmark, records, adopted)


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
    if result.status != "not_modified" or not _read_elsewhere(
        bookmark, result.final_url or url, feed_url, published
    ):
        return result
    again = await fetcher.fetch_async(url, advertised=advertised)
    return replace(
        again,
        fetch_ms=result.fetch_ms + again.fetch_ms,
        redirects=result.redirects + again.redirects,
        bytes_received=result.bytes_received + again.bytes_received,
    )


def _read_elsewhere(
    bookmark: FeedBookmark, final_url: str, configured: str, asked: str | None
) -> bool:
    """Whether ``final_url``, reached from the ``configured`` URL by asking for ``asked``
    (the feed a page advertised), is another resource than the one the bookmark's
    document was read from. A bookmark from before the hash was kept knows that URL only
    as it was shown."""
    if bookmark.final_url_hash is not None:
        return bookmark.final_url_hash != final_url_hash(final_url, configured, asked)
    return bookmark.final_url not in (None, shown_url(final_url, configured, asked))


def _another_feed_advertised(
    bookmark: FeedBookmark,
    advertised_hash: str | None,
    final_url: str,
    configured: str,
    asked: str | None,
) -> bool:
    """Whether the web page now advertises another feed than the one the bookmark's
    document was read through, on robust evidence only: that feed's items are then read
    as a baseline, which would lose them if it were the same feed, while a switch
    missed emits a backlog once. The page's link must name another feed than before
    (``advertised_url_hash``; a redirect on the way that adds a new token on every visit,
    a pre-signed URL or a session id, changes the URL read but not the feed), and lead
    to another resource. A bookmark of a document read directly, or from before that
    hash was kept, knows only the URL read, as it was shown (a query a redirect added
    left out)."""
    if bookmark.advertised_url_hash is None:
        return bookmark.final_url not in (None, shown_url(final_url, configured, asked))
    return bookmark.advertised_url_hash != advertised_hash and _read_elsewhere(
        bookmark, final_url, configured, asked
    )


class _OneBudget:
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


def _delta_settings(settings: Settings, feed_url: str) -> DeltaSettings:
    return DeltaSettings(
        monitor_id=settings.monitor_id,
        feed_url=feed_url,
        first_run_mode=settings.first_run_mode,
        max_initial_items=settings.max_initial_items,
        max_items_per_run=settings.max_items_per_run,
        max_state_items=settings.max_state_items,
        start_date=settings.start_date,
        ignored_changes=settings.ignored_changes,
    )


def _outcome(
    task: FeedTask,
    ctx: FeedContext,
    facts: HealthFacts,
    bookmark: FeedBookmark | None,
    records: list[dict[str, Any]] | None = None,
    adopted: PartitionKey | None = None,
) -> FeedOutcome:
    return FeedOutcome(
        task=task,
        item_records=records or [],
        health_record=health_record(ctx, facts),
        bookmark=bookmark,
        error_code=facts.error.code if facts.error else None,
        status=facts.status,
        adopted=adopted,
    )


def failed_check(task: FeedTask, settings: Settings, started: datetime) -> FeedOutcome:
    """The outcome of a check that a fault of the tap's own ended: an error row, the
    feed's state kept as it was (nothing is committed, so nothing is lost), and the
    other feeds of the run go on."""
    checked_at = utc_text(check_time(task.bookmark, started), micro=True)
    ctx = FeedContext(settings.monitor_id, task.feed_url, checked_at)
    issue = Issue(
        "internal_error",
        "The tap failed on this feed; its state is kept and it is checked again next run.",
    )
    facts = failure_facts("error", issue, task.bookmark, started, settings)
    # Nothing is committed, not even the streak: the fault may lie in the state's handling.
    return _outcome(task, ctx, facts, None)
