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
from tap_feeddelta.delta import Delta, DeltaSettings, as_stale_copy, diff_items, newest_item_at
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
from tap_feeddelta.records import (
    FeedContext,
    HealthFacts,
    KnownFacts,
    health_record,
    item_record,
)
from tap_feeddelta.shownurl import final_url_hashes, shown_url
from tap_feeddelta.state import ITEM_BYTES, FeedBookmark

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


@dataclass(frozen=True, slots=True)
class _Check:
    """What every outcome of one feed's check shares."""

    task: FeedTask
    ctx: FeedContext
    # The state's; check_feed's has its dates ahead of the clock dropped.
    bookmark: FeedBookmark | None
    started: datetime  # the clock: what dates are judged by
    settings: Settings

    def outcome(
        self,
        facts: HealthFacts,
        bookmark: FeedBookmark | None,
        records: list[dict[str, Any]] | None = None,
        adopted: PartitionKey | None = None,
    ) -> FeedOutcome:
        return FeedOutcome(
            task=self.task,
            item_records=records or [],
            health_record=health_record(self.ctx, facts),
            bookmark=bookmark,
            error_code=facts.error.code if facts.error else None,
            status=facts.status,
            adopted=adopted,
        )


async def check_feed(
    task: FeedTask, fetcher: FetchesFeeds, settings: Settings, now: Callable[[], datetime]
) -> FeedOutcome:
    started = now()
    ctx = _check_context(task, settings, started, commits=task.commits)
    check = _Check(task, ctx, _dates_judged_by_clock(task.bookmark, started), started, settings)
    bookmark = check.bookmark
    if bookmark and still_waiting(bookmark.retry_after_at, started):
        issue = Issue(
            "retry_later",
            "not fetched before retry_after_at: the server asked to wait, or the tap waits "
            "after a 429/503 without Retry-After or a 410",
        )
        return _skipped_outcome(_within_bound(check), issue, bookmark.retry_after_at)
    fetcher = OneBudget(fetcher, settings.request_timeout_seconds)  # one for all its fetches
    reading = await read_feed(task.feed_url, bookmark, fetcher, settings)
    if reading.result.status == "not_modified":
        return _not_modified_outcome(_within_bound(check), reading)
    if reading.feed is None:
        return _failed_outcome(_within_bound(check), reading)
    return _read_outcome(check, reading, reading.feed)


def _within_bound(check: _Check) -> _Check:
    """The check with its bookmark's items cut to max_state_items, for an outcome that
    keeps them (a 304, a failure, a skip): a lowered bound holds from the next run, not
    from the feed's next changed document. The items are kept most relevant first (the
    last document's, then older ones), so the cut drops the oldest, as a read does. A
    read compares its document with every item remembered first (delta), then bounds."""
    bookmark = check.bookmark
    limit = check.settings.max_state_items * ITEM_BYTES
    if bookmark is None or len(bookmark.items) <= limit:
        return check
    return replace(check, bookmark=replace(bookmark, items=bookmark.items[:limit]))


def _check_context(
    task: FeedTask, settings: Settings, started: datetime, *, commits: bool
) -> FeedContext:
    """What every record of the check shares: its checked_at is timed by check_time."""
    checked_at = utc_text(check_time(task.bookmark, started, commits=commits), micro=True)
    return FeedContext(settings.monitor_id, task.feed_url, checked_at)


def _not_modified_outcome(check: _Check, reading: Reading) -> FeedOutcome:
    """A 304: the document is the one read before."""
    bookmark, ctx = check.bookmark, check.ctx
    known = replace(
        known_facts(bookmark, check.started, check.settings.stale_after_days),
        last_success_at=ctx.checked_at,
    )
    page_issues = (reading.page_issue,) if reading.page_issue else ()
    issues = page_issues + stale_issues(known.is_stale) + reading.moved
    if reading.discovered_from:  # as a read of the feed found through a page says
        issues += (_feed_discovered(reading),)
    facts = HealthFacts(
        "not_modified",
        known=known,
        fetched=reading.common_facts(check.task.feed_url),
        issues=issues,
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
    return check.outcome(facts, _with_page(kept, reading.page, check.started))


def _skipped_outcome(check: _Check, issue: Issue, retry_after_at: str | None) -> FeedOutcome:
    """A check not sent (``issue``): the feed waits until ``retry_after_at``."""
    facts = failure_facts(
        "skipped",
        issue,
        check.bookmark,
        check.started,
        check.settings,
        retry_after_at=retry_after_at,
    )
    return check.outcome(facts, _bookmark_after_failure(check, retry_after_at))


def _failed_outcome(check: _Check, reading: Reading) -> FeedOutcome:
    """No document read: the error, and one more in the failure streak."""
    error = reading.error
    assert error is not None
    wait = next_check_at(error.code, reading.result.retry_after_at, check.bookmark, check.started)
    if error.code == "retry_later":
        # Not sent: its host answered another feed's fetch with 429 (or 503 with a
        # Retry-After). The row of a feed waiting out a Retry-After of its own.
        return _skipped_outcome(check, error, wait)
    facts = failure_facts(
        "error",
        error,
        check.bookmark,
        check.started,
        check.settings,
        reading.moved + reading.result.notes,
        retry_after_at=wait,
        fetched=reading.common_facts(check.task.feed_url),
    )
    return check.outcome(facts, _bookmark_after_failure(check, wait))


def _bookmark_after_failure(check: _Check, retry_after_at: str | None) -> FeedBookmark:
    """A failure moves only the streak, and after a 429/503 or a 410 when to ask again."""
    kept = with_failure(check.bookmark, check.ctx)
    if retry_after_at is not None:
        kept = replace(kept, retry_after_at=retry_after_at)
    return kept


def _read_outcome(check: _Check, reading: Reading, feed: ParsedFeed) -> FeedOutcome:
    """A document read: its changes as records, its row, and the bookmark after it."""
    task, result, settings = check.task, reading.result, check.settings
    read_url = result.final_url or task.feed_url
    fetched = reading.common_facts(task.feed_url)
    shown_final_url = fetched.final_url or task.feed_url
    read_hashes = final_url_hashes(read_url, task.feed_url, reading.asked_url)
    adopted, adopted_bookmark = _adopted_partition(check, reading, read_hashes)
    # The partition adopted, when there is one, is what this read is compared with.
    bookmark = check.bookmark if adopted_bookmark is None else adopted_bookmark
    # Item dates past this are a typo or a wrong clock: no item is newest by them.
    dates_not_after = utc_text(check.started + FUTURE_DATE_LEEWAY)
    delta = diff_items(
        bookmark,
        feed.items,
        _delta_settings(settings, task.feed_url),
        from_another_feed=_reads_another_feed(check, reading, bookmark, adopted, read_url),
        dates_not_after=dates_not_after,
    )
    newest = newest_item_at(feed.items, dates_not_after)
    kept_from = _stale_copy_of(check, reading, bookmark, delta, newest, read_url)
    if kept_from is not None:
        delta = as_stale_copy(delta, kept_from)
    records = [
        item_record(check.ctx, feed, shown_final_url, change, settings.content_mode)
        for change in delta.changes
    ]
    newest = _kept_newest_item_at(newest, bookmark)
    is_stale = judged_stale(newest, check.started, settings.stale_after_days)
    known = KnownFacts(
        counts=delta.counts,
        newest_item_at=newest,
        is_stale=is_stale,
        last_success_at=check.ctx.checked_at,
    )
    facts = HealthFacts(
        "ok",
        known=known,
        fetched=fetched,
        feed=feed,
        issues=_read_issues(check, reading, feed, delta, is_stale),
    )
    if kept_from is None:
        after = _bookmark_after_read(
            check, reading, feed, delta, newest, shown_final_url, read_hashes[0]
        )
    else:
        after = _bookmark_after_stale_copy(check, reading, kept_from, delta)
    after = _with_page(after, reading.page, check.started)
    return check.outcome(facts, after, records, adopted)


def _adopted_partition(
    check: _Check, reading: Reading, read_hashes: tuple[str, ...]
) -> tuple[PartitionKey | None, FeedBookmark | None]:
    """The partition of a feed no longer configured that this check takes over, and its
    bookmark (its dates ahead of the clock dropped); (None, None) when there is none.

    A feed URL replaced by the web page that advertises it: the feed's partition, of the
    very URL read, is this one's, as a page replaced by its feed keeps it. (Offered while
    the page has read no document: its own partition, if any, holds only the failures of
    its first checks, which this read ends. A partition left by an earlier version may
    hold the hash of the whole signed URL.)"""
    if not reading.discovered_from or check.task.adopt is None:
        return None, None
    for url_hash in read_hashes:
        claimed = check.task.adopt(url_hash)
        if claimed is not None:
            return claimed[0], _dates_judged_by_clock(claimed[1], check.started)
    return None, None


def _reads_another_feed(
    check: _Check,
    reading: Reading,
    bookmark: FeedBookmark | None,
    adopted: PartitionKey | None,
    read_url: str,
) -> bool:
    """Whether the feed read through a web page is another than the one ``bookmark``
    (not an adopted partition's) was read from: its items are then a baseline."""
    return bool(
        reading.discovered_from
        and adopted is None
        and bookmark
        and _another_feed_advertised(
            bookmark, reading.advertised_hash, read_url, check.task.feed_url, reading.asked_url
        )
    )


def _stale_copy_of(
    check: _Check,
    reading: Reading,
    bookmark: FeedBookmark | None,
    delta: Delta,
    newest: str | None,
    read_url: str,
) -> FeedBookmark | None:
    """``bookmark``, to be kept, when the document read is an older copy than the one it
    came from (a CDN edge, a lagging replica), whose state must not move back: compared
    only with a document of the same resource."""
    if bookmark is None or not is_stale_copy(
        bookmark, reading.result.last_modified, delta.counts, newest, check.started
    ):
        return None
    if read_elsewhere(bookmark, read_url, check.task.feed_url, reading.asked_url):
        return None
    return bookmark


def _kept_newest_item_at(newest: str | None, bookmark: FeedBookmark | None) -> str | None:
    """The newest item seen stays so (possible_gap compares with it, staleness is judged
    by it) when a document shows none as new: emptied, undated, or with its newest items
    taken down."""
    if bookmark and bookmark.newest_item_at and (newest or "") < bookmark.newest_item_at:
        return bookmark.newest_item_at
    return newest


def _read_issues(
    check: _Check, reading: Reading, feed: ParsedFeed, delta: Delta, is_stale: bool | None
) -> tuple[Issue, ...]:
    """The issues of a check that read a document, in the row's order."""
    feed_url, result = check.task.feed_url, reading.result
    page_issues = (reading.page_issue,) if reading.page_issue else ()
    issues = page_issues + result.notes + feed.issues + delta.issues + stale_issues(is_stale)
    if not feed.items:
        issues += (Issue("no_items", "the feed has no items"),)
    if reading.discovered_from and "feed_discovered" not in {i.code for i in delta.issues}:
        issues += (_feed_discovered(reading),)
    issues += reading.moved
    if feed.new_feed_url and not names_itself(feed.new_feed_url, feed_url, result):
        where = shown_where(feed.new_feed_url, feed_url)
        issues += (Issue("feed_moved", f"the feed's itunes:new-feed-url names {where}"),)
    return issues


def _bookmark_after_read(
    check: _Check,
    reading: Reading,
    feed: ParsedFeed,
    delta: Delta,
    newest: str | None,
    shown_final_url: str,
    read_hash: str,
) -> FeedBookmark:
    """The bookmark after a document read (without its web page's validators)."""
    result, checked_at, started = reading.result, check.ctx.checked_at, check.started
    # Deferred changes must be fetched again next run: drop the validators so that
    # the server cannot answer 304 before they are out. (A feed naming a new URL keeps
    # them: many such feeds stay live, and a full download every run costs the
    # publisher; the move is told whenever the document is read.)
    keep_validators = delta.counts.deferred == 0
    return FeedBookmark(
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
        checked_at=checked_at,
        success_at=checked_at,
        retry_after_at=None,
        newest_item_at=newest,
        largest_document=delta.largest_document,
        new_held_back=delta.new_held_back,
        items=delta.remembered_items,
    )


def _bookmark_after_stale_copy(
    check: _Check, reading: Reading, kept_from: FeedBookmark, delta: Delta
) -> FeedBookmark:
    """The bookmark after an older copy (see _stale_copy_of), which moves nothing back:
    the validators, the items and what else the newer document gave stay; the next read
    of it is then no change (or a 304)."""
    checked_at = check.ctx.checked_at
    return replace(
        kept_from,
        advertised_url_hash=reading.advertised_hash,
        checked_at=checked_at,
        success_at=checked_at,
        retry_after_at=None,
        failures=0,
        failed_at=None,
        largest_document=delta.largest_document,
        stale_since=kept_from.stale_since or utc_text(check.started),
    )


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
    asked_url: str | None,
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
        return bookmark.final_url not in (None, shown_url(final_url, configured, asked_url))
    return bookmark.advertised_url_hash != advertised_hash and read_elsewhere(
        bookmark, final_url, configured, asked_url
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


def internal_error_outcome(task: FeedTask, settings: Settings, started: datetime) -> FeedOutcome:
    """The outcome of a check that a fault of the tap's own ended: an error row, the
    feed's state kept as it was (nothing is committed, so nothing is lost), and the
    other feeds of the run go on."""
    ctx = _check_context(task, settings, started, commits=False)
    check = _Check(task, ctx, task.bookmark, started, settings)
    issue = Issue(
        "internal_error",
        "The tap failed on this feed; its state is kept and it is checked again next run.",
    )
    facts = failure_facts("error", issue, task.bookmark, started, settings)
    # Nothing is committed, not even the streak: the fault may lie in the state's handling.
    return check.outcome(facts, None)
