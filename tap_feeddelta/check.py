"""Checks one feed: fetch (conditional) → discovery → parse (reading.py) → delta →
records + bookmark.

Runs as a coroutine on the fetcher's event loop: it reads only its own task and never
touches the Singer state or writes messages. The outcome's bookmark is applied by the
main thread after the feed's records have been written (at-least-once).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol, TypeVar

from tap_feeddelta.checkfacts import (
    FUTURE_DATE_LEEWAY,
    as_stale_copy,
    check_time,
    failure_facts,
    is_stale_copy,
    judged_stale,
    known_facts,
    names_itself,
    next_check_at,
    shown_where,
    stale_issues,
    still_waiting,
    usable_newest_item_at,
    utc_text,
    with_failure,
)
from tap_feeddelta.config import Settings
from tap_feeddelta.delta import DeltaSettings, diff_items, newest_item_at
from tap_feeddelta.errors import Issue
from tap_feeddelta.fetch.headers import usable_last_modified
from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.reading import (
    FetchesFeeds,
    OneBudget,
    PageValidators,
    Reading,
    read_elsewhere,
    read_feed,
)
from tap_feeddelta.records import FeedContext, HealthFacts, health_record, item_record
from tap_feeddelta.shownurl import final_url_hashes, shown_url
from tap_feeddelta.state import FeedBookmark

T = TypeVar("T")


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
    # For a feed without a partition of its own, or with one of failures only.
    adopt: Adopt | None = None
    # Its bookmark is committed (feed_items is selected): see check_time.
    commits: bool = True


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
    checked_at = utc_text(check_time(task.bookmark, started, commits=task.commits), micro=True)
    ctx = FeedContext(settings.monitor_id, task.feed_url, checked_at)
    bookmark = _dates_judged_by_clock(task.bookmark, started)
    if bookmark and still_waiting(bookmark.retry_after_at, started):
        issue = Issue(
            "retry_later",
            "not fetched before retry_after_at: the server asked to wait, or the tap waits "
            "after a 429/503 without Retry-After or a 410",
        )
        facts = failure_facts(
            "skipped", issue, bookmark, started, settings, retry_after_at=bookmark.retry_after_at
        )
        return _outcome(task, ctx, facts, with_failure(bookmark, ctx))
    fetcher = OneBudget(fetcher, settings.request_timeout_seconds)  # one for all its fetches
    reading = await read_feed(task.feed_url, bookmark, fetcher, settings)
    if reading.result.status == "not_modified":
        return _not_modified_outcome(task, ctx, reading, bookmark, started, settings)
    if reading.feed is None:
        return _failed_outcome(task, ctx, reading, bookmark, started, settings)
    return _read_outcome(task, ctx, reading, reading.feed, bookmark, started, settings)


def _not_modified_outcome(
    task: FeedTask,
    ctx: FeedContext,
    reading: Reading,
    bookmark: FeedBookmark | None,
    started: datetime,
    settings: Settings,
) -> FeedOutcome:
    """A 304: the document is the one read before."""
    known = known_facts(bookmark, started, settings.stale_after_days)
    known["last_success_at"] = ctx.checked_at
    page_issues = (reading.page_issue,) if reading.page_issue else ()
    issues = page_issues + stale_issues(known["is_stale"]) + reading.moved
    facts = HealthFacts(
        "not_modified", issues=issues, **known, **reading.common_facts(task.feed_url)
    )
    kept = replace(
        bookmark or FeedBookmark(),
        advertised_url_hash=reading.advertised_hash,
        checked_at=ctx.checked_at,
        retry_after_at=None,
        failures=0,
        failed_at=None,
        stale_since=None,  # the document read before is still served
    )
    return _outcome(task, ctx, facts, _with_page(kept, reading.page, started))


def _failed_outcome(
    task: FeedTask,
    ctx: FeedContext,
    reading: Reading,
    bookmark: FeedBookmark | None,
    started: datetime,
    settings: Settings,
) -> FeedOutcome:
    """No document read: the error, and one more in the failure streak."""
    error = reading.error
    assert error is not None
    wait = next_check_at(error.code, reading.result.retry_after_at, bookmark, started)
    if error.code == "retry_later":
        # Not sent: its host answered another feed's fetch with 429 (or 503 with a
        # Retry-After). The row of a feed waiting out a Retry-After of its own.
        facts = failure_facts("skipped", error, bookmark, started, settings, retry_after_at=wait)
    else:
        facts = failure_facts(
            "error",
            error,
            bookmark,
            started,
            settings,
            reading.moved + reading.result.notes,
            retry_after_at=wait,
            **reading.common_facts(task.feed_url),
        )
    # A failure moves only the streak, and after a 429/503 or a 410 when to ask again.
    kept = with_failure(bookmark, ctx)
    if wait is not None:
        kept = replace(kept, retry_after_at=wait)
    return _outcome(task, ctx, facts, kept)


def _read_outcome(
    task: FeedTask,
    ctx: FeedContext,
    reading: Reading,
    feed: ParsedFeed,
    bookmark: FeedBookmark | None,
    started: datetime,
    settings: Settings,
) -> FeedOutcome:
    """A document read: its changes as records, its row, and the bookmark after it."""
    result, discovered_from, published = reading.result, reading.discovered_from, reading.published
    common = reading.common_facts(task.feed_url)
    shown_final_url = common["final_url"] or task.feed_url
    read_hashes = final_url_hashes(result.final_url or task.feed_url, task.feed_url, published)
    read_hash = read_hashes[0]
    adopted: PartitionKey | None = None
    if discovered_from and task.adopt is not None:
        # A feed URL replaced by the web page that advertises it: the feed's partition,
        # of the very URL read, is this one's, as a page replaced by its feed keeps it.
        # (Offered while the page has read no document: its own partition, if any, holds
        # only the failures of its first checks, which this read ends. A partition left
        # by an earlier version may hold the hash of the whole signed URL.)
        for url_hash in read_hashes:
            claimed = task.adopt(url_hash)
            if claimed is not None:
                adopted, bookmark = claimed[0], _dates_judged_by_clock(claimed[1], started)
                break
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
                reading.advertised_hash,
                result.final_url or task.feed_url,
                task.feed_url,
                published,
            )
        ),
        dates_not_after=dates_not_after,
    )
    newest = newest_item_at(feed.items, dates_not_after)
    # The state an older copy than its document must not move back (a CDN edge, a
    # lagging replica): compared only with a document of the same resource.
    read_url = result.final_url or task.feed_url
    kept_from = (
        bookmark
        if bookmark is not None
        and is_stale_copy(bookmark, result.last_modified, delta.counts, newest, started)
        and not read_elsewhere(bookmark, read_url, task.feed_url, published)
        else None
    )
    if kept_from is not None:
        delta = as_stale_copy(delta, kept_from)
    records = [
        item_record(ctx, feed, shown_final_url, change, settings.content_mode)
        for change in delta.changes
    ]
    if bookmark and bookmark.newest_item_at and (newest or "") < bookmark.newest_item_at:
        # The newest item seen stays so (possible_gap compares with it, staleness is
        # judged by it) when a document shows none as new: emptied, undated, or with
        # its newest items taken down.
        newest = bookmark.newest_item_at
    is_stale = judged_stale(newest, started, settings.stale_after_days)
    page_issues = (reading.page_issue,) if reading.page_issue else ()
    issues = page_issues + result.notes + feed.issues + delta.issues + stale_issues(is_stale)
    if not feed.items:
        issues += (Issue("no_items", "the feed has no items"),)
    if discovered_from and "feed_discovered" not in {issue.code for issue in delta.issues}:
        issues += (_feed_discovered(reading),)
    issues += reading.moved
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
        advertised_url_hash=reading.advertised_hash,
        title=feed.title,
        format=feed.format,
        checked_at=ctx.checked_at,
        success_at=ctx.checked_at,
        retry_after_at=None,
        newest_item_at=newest,
        largest_document=delta.largest_document,
        items=delta.remembered_items,
    )
    if kept_from is not None:
        # An older copy moves nothing back: the validators, the items and what else the
        # newer document gave stay; the next read of it is then no change (or a 304).
        new_bookmark = replace(
            kept_from,
            advertised_url_hash=reading.advertised_hash,
            checked_at=ctx.checked_at,
            success_at=ctx.checked_at,
            retry_after_at=None,
            failures=0,
            failed_at=None,
            largest_document=delta.largest_document,
            stale_since=kept_from.stale_since or utc_text(started),
        )
    new_bookmark = _with_page(new_bookmark, reading.page, started)
    return _outcome(task, ctx, facts, new_bookmark, records, adopted)


def _feed_discovered(reading: Reading) -> Issue:
    """How the feed read was found through a web page."""
    how = []
    if reading.upgraded:
        how.append("its http:// link was asked for over https")
    if reading.page_unchanged:
        how.append("the page answered 304, not modified: the feed it led to last was read")
    said = f" ({'; '.join(how)})" if how else ""
    return Issue("feed_discovered", f"the feed was found through a web page{said}")


def _with_page(
    bookmark: FeedBookmark, page: PageValidators | None, started: datetime
) -> FeedBookmark:
    """``bookmark`` with the validators of the web page its feed was found through (a
    Last-Modified ahead of the clock left out, as the feed's is) and which page they
    belong to; with none when the page has none to send, or for a feed read directly."""
    etag = page.etag if page else None
    last_modified = usable_last_modified(page.last_modified, started) if page else None
    url_hash = page.url_hash if page and (etag or last_modified) else None
    if (etag, last_modified, url_hash) == (
        bookmark.page_etag,
        bookmark.page_last_modified,
        bookmark.page_url_hash,
    ):
        return bookmark
    return replace(
        bookmark, page_etag=etag, page_last_modified=last_modified, page_url_hash=url_hash
    )


def _dates_judged_by_clock(bookmark: FeedBookmark | None, started: datetime) -> FeedBookmark | None:
    """The bookmark without the dates ahead of the clock that earlier versions, a clock
    that was ahead or an edit stored: a Last-Modified, the feed's or its web page's
    (usable_last_modified: not sent, nor kept), and a newest_item_at
    (usable_newest_item_at: one value for the row, staleness, possible_gap and the
    bookmark after the check)."""
    if bookmark is None:
        return None
    last_modified = usable_last_modified(bookmark.last_modified, started)
    page_last_modified = usable_last_modified(bookmark.page_last_modified, started)
    newest_item_at = usable_newest_item_at(bookmark, started)
    if (last_modified, page_last_modified, newest_item_at) == (
        bookmark.last_modified,
        bookmark.page_last_modified,
        bookmark.newest_item_at,
    ):
        return bookmark
    return replace(
        bookmark,
        last_modified=last_modified,
        page_last_modified=page_last_modified,
        newest_item_at=newest_item_at,
    )


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
    return bookmark.advertised_url_hash != advertised_hash and read_elsewhere(
        bookmark, final_url, configured, asked
    )


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
    checked_at = utc_text(check_time(task.bookmark, started, commits=False), micro=True)
    ctx = FeedContext(settings.monitor_id, task.feed_url, checked_at)
    issue = Issue(
        "internal_error",
        "The tap failed on this feed; its state is kept and it is checked again next run.",
    )
    facts = failure_facts("error", issue, task.bookmark, started, settings)
    # Nothing is committed, not even the streak: the fault may lie in the state's handling.
    return _outcome(task, ctx, facts, None)
