"""What a feed's check knows and tells apart from fetching and reading: when it is timed,
whether the feed is stale or waiting out a Retry-After, its failure streak, the issues a
move gives, and the feed to read when a web page leads to none. Pure: the clock comes in
as an argument."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Final
from urllib.parse import urlsplit

from tap_feeddelta.config import Settings
from tap_feeddelta.delta import ItemCounts
from tap_feeddelta.errors import Issue, message_url
from tap_feeddelta.fetch.headers import RETRY_AFTER_CAP, WAIT_WITHOUT_RETRY_AFTER, http_date
from tap_feeddelta.fetch.urls import display_url
from tap_feeddelta.models import FetchResult
from tap_feeddelta.records import FeedContext, FetchFacts, HealthFacts, KnownFacts
from tap_feeddelta.shownurl import as_fetched, remembered_url, shown_url
from tap_feeddelta.state import MAX_FAILURES, FeedBookmark

# An item dated up to this far past the check counts for staleness (a publisher's clock
# or time zone a little off); a later date is not taken as the newest item.
FUTURE_DATE_LEEWAY: Final = timedelta(days=1)
# A check the clock times before the feed's last one (the clock was set back since, or
# was ahead then) is timed this long after it: a feed's checked_at never goes back.
CHECK_AFTER: Final = timedelta(microseconds=1)
# A feed gone (410) is checked again after this: a publisher may bring it back.
GONE_WAIT: Final = RETRY_AFTER_CAP
# The longest wait without Retry-After of a feed that never answered (see backoff_wait):
# one request an hour costs a publisher little.
NEVER_ANSWERED_WAIT: Final = timedelta(hours=1)
# Documents older than the one read are taken for stale copies (a CDN edge, a lagging
# replica) for at most this long in a row: past it they are the publisher's (its clock
# went back, or it sends dates at random), and an edit they hold is not kept back longer.
STALE_COPY_WINDOW: Final = timedelta(days=1)


def utc_text(moment: datetime, *, micro: bool = False) -> str:
    """``moment`` (UTC) as ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``: what ``strftime`` gives, from
    ``isoformat``, which costs a fraction of it (this runs three times a feed)."""
    naive = moment.replace(tzinfo=None)
    return naive.isoformat(timespec="microseconds" if micro else "seconds") + "Z"


def still_waiting(retry_after_at: str | None, now: datetime) -> bool:
    """Whether a stored Retry-After still holds. A time past the cap from now cannot
    come from an answer read with a right clock (it is capped when read): a clock that
    was wrong then, or an edited state. It is ignored, so that no feed is skipped for
    longer than the cap."""
    if not retry_after_at:
        return False
    return utc_text(now) < retry_after_at <= utc_text(now + RETRY_AFTER_CAP)


def next_check_at(
    code: str, told: str | None, bookmark: FeedBookmark | None, now: datetime
) -> str | None:
    """The retry_after_at a failed or skipped check (``code``) leaves: the feed is not
    asked for before then. The server's Retry-After (``told``; its host's, for a feed not
    asked for as its host rests); without one, after a 429 or 503, a wait that doubles
    with the failure streak (backoff_wait); a day for a feed gone (410), which may come
    back. None after any other failure (a 5xx, 404, timeout): monitoring checks it on
    every run."""
    if code == "feed_gone":
        return utc_text(now + GONE_WAIT)
    if code not in ("rate_limited", "retry_later"):
        return None
    if told is not None:
        return told
    return utc_text(now + backoff_wait(bookmark, now))


def backoff_wait(bookmark: FeedBookmark | None, now: datetime) -> timedelta:
    """How long a feed waits after a 429 or 503 without Retry-After: 5 minutes doubled
    with each failure in the streak (this one included), at most a day (the Retry-After
    cap, past which still_waiting ignores a time), and never longer than the feed has
    gone without an answer. Skipped checks count in the streak (consecutive_failures):
    on a schedule more frequent than the wait, the streak grows faster than the
    requests, and that bound keeps the wait doubling once per request instead. A feed
    that never answered (just configured) has no such time: it waits at most
    ``NEVER_ANSWERED_WAIT``, so that a short outage of its host (skips counted, its
    streak outgrew its requests) does not leave it unchecked for a day."""
    doublings = min(failure_streak(bookmark) - 1, 16)  # 5 min × 2^9 is past the cap already
    wait = min(WAIT_WITHOUT_RETRY_AFTER * (1 << doublings), RETRY_AFTER_CAP)
    answered = _instant(bookmark.checked_at) if bookmark else None
    if answered is None:
        return min(wait, NEVER_ANSWERED_WAIT)
    return min(wait, max(now - answered, WAIT_WITHOUT_RETRY_AFTER))


def check_time(bookmark: FeedBookmark | None, clock: datetime, *, commits: bool = True) -> datetime:
    """When a check made while the clock reads ``clock`` is timed (its checked_at): then,
    or just after the feed's last check in the state when the clock is not past it.

    Warehouses order an item's versions and a feed's rows by checked_at: a check timed
    before the last one would make an older version the current one. Only the timing
    moves: dates (staleness, dates ahead of now, Retry-After) are judged by the clock,
    so a state written by a clock years ahead does not freeze them.

    A check that ``commits`` nothing (a run of feed_health alone, internal_error) is
    timed by the clock: it orders no item version, and pinned after a state that does not
    move, every such check would share one checked_at, its row's key. (The state refuses
    a last check at the last moment a date-time can name: none could follow it.)"""
    last = last_check_at(bookmark)
    if last is None or clock > last or not commits:
        return clock
    return last + CHECK_AFTER


def last_check_at(bookmark: FeedBookmark | None) -> datetime | None:
    """When the state says the feed was last checked, whatever came of it."""
    if bookmark is None:
        return None
    last: datetime | None = None
    for text in (bookmark.checked_at, bookmark.failed_at):
        # Compared as instants: "…:00Z" and "…:00.5Z" do not sort as text.
        moment = _instant(text)
        if moment is not None and (last is None or moment > last):
            last = moment
    return last


def _instant(text: str | None) -> datetime | None:
    """A time the state keeps, as an instant; None when there is none or it is no date
    (the state checks the shape, not the calendar)."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def known_facts(bookmark: FeedBookmark | None, now: datetime, stale_after_days: int) -> KnownFacts:
    """What a row that read no document (not_modified, error, skipped) shows: what the
    state keeps of the document read before, and when the feed last answered (a 200
    read or a 304: the bookmark's checked_at)."""
    if bookmark is None:
        return KnownFacts()
    newest = usable_newest_item_at(bookmark, now)
    return KnownFacts(
        counts=ItemCounts(remembered=bookmark.item_count),
        feed_title=bookmark.title,
        feed_format=bookmark.format,
        newest_item_at=newest,
        is_stale=judged_stale(newest, now, stale_after_days),
        last_success_at=bookmark.checked_at,
    )


def usable_newest_item_at(bookmark: FeedBookmark, now: datetime) -> str | None:
    """The state's newest_item_at, unless it is more than FUTURE_DATE_LEEWAY after
    ``now``, as no item's date counts then: written while the clock was ahead, by an
    earlier version that took future dates, or edited. Kept, it would keep a dead feed
    fresh and hide every gap (no item is newer) until the clock reached it."""
    newest = bookmark.newest_item_at
    if newest and newest > utc_text(now + FUTURE_DATE_LEEWAY):
        return None
    return newest


def failure_streak(bookmark: FeedBookmark | None) -> int:
    """The failure streak with this check: one more than the state's."""
    return min((bookmark.failures if bookmark else 0) + 1, MAX_FAILURES)


def failure_facts(
    status: str,
    error: Issue,
    bookmark: FeedBookmark | None,
    now: datetime,
    settings: Settings,
    moved: tuple[Issue, ...] = (),
    *,
    retry_after_at: str | None = None,
    fetched: FetchFacts | None = None,
) -> HealthFacts:
    """The row of a check that failed or was skipped: its error, the streak with it, and
    what the state keeps of the document read before (staleness included); ``moved``:
    the URL redirects permanently; ``fetched``: the facts of its fetches, when any was
    sent."""
    known = known_facts(bookmark, now, settings.stale_after_days)
    return HealthFacts(
        status,
        known=known,
        fetched=fetched or FetchFacts(),
        error=error,
        retry_after_at=retry_after_at,
        consecutive_failures=failure_streak(bookmark),
        issues=(error, *stale_issues(known.is_stale), *moved),
    )


def with_failure(bookmark: FeedBookmark | None, ctx: FeedContext) -> FeedBookmark:
    """The bookmark after a failed or skipped check: one more in the streak, and when."""
    return replace(
        bookmark or FeedBookmark(), failures=failure_streak(bookmark), failed_at=ctx.checked_at
    )


def judged_stale(newest: str | None, now: datetime, stale_after_days: int) -> bool | None:
    """Whether the newest item is older than ``stale_after_days``; None when undated."""
    if newest is None:
        return None
    return newest < utc_text(now - timedelta(days=stale_after_days))


def moved_issues(result: FetchResult, configured: str) -> tuple[Issue, ...]:
    """``feed_moved`` when the ``configured`` URL's first redirects were permanent: naming
    where they led as scheme, host and path (a token the redirect handed out is not
    shown)."""
    if result.moved_to is None:
        return ()
    where = shown_where(result.moved_to, configured)
    return (Issue("feed_moved", f"the URL redirects permanently (301/308) to {where}"),)


def names_itself(new_feed_url: str, configured: str, result: FetchResult) -> bool:
    """Whether an ``itunes:new-feed-url`` names a URL the feed was asked for by: the
    ``configured`` one, one the redirects to the document went through (a vanity URL
    that redirects temporarily to the host's feed) or the document's own. Compared as
    the fetcher asks for them (a host in capitals is the same host)."""
    named = as_fetched(new_feed_url)
    asked = (configured, *result.redirected_from, result.final_url or configured)
    return any(named == as_fetched(url) for url in asked)


def shown_where(url: str, configured: str) -> str:
    """Where a feed moved, as messages name it: as ``final_url`` shows it (without the
    ``;jsessionid=…`` a redirect added to the path), as scheme, host and path, with
    nothing a server put in its path that could be read as markup."""
    return message_url(display_url(shown_url(url, configured) or url))


def last_modified_before(read: str | None, remembered: str | None) -> bool:
    """Whether a document's Last-Modified (``read``) names an earlier time than the one
    the state remembers. False when either is missing or is no HTTP date: no evidence."""
    if not read or not remembered:
        return False
    read_at, remembered_at = http_date(read), http_date(remembered)
    return read_at is not None and remembered_at is not None and read_at < remembered_at


def is_stale_copy(
    bookmark: FeedBookmark | None,
    last_modified: str | None,
    counts: ItemCounts,
    newest: str | None,
    now: datetime,
) -> bool:
    """Whether a document read is an older copy than the one the state came from, which
    must not move items back to earlier versions: its Last-Modified is earlier than the
    remembered one, it would move some item (``counts``: it has ``updated`` ones) and has
    nothing newer: no item unseen, none dated (``newest``) after the newest seen. Not
    past ``STALE_COPY_WINDOW`` of such copies in a row (nor with the streak's start ahead
    of the clock). On the first run, or without dates to compare, it is no such copy."""
    if bookmark is None or not bookmark.has_baseline:
        return False
    if counts.new or not counts.updated or (newest or "") > (bookmark.newest_item_at or ""):
        return False
    if bookmark.stale_since is not None:
        since = _instant(bookmark.stale_since)
        if since is None or not since <= now < since + STALE_COPY_WINDOW:
            return False
    return last_modified_before(last_modified, bookmark.last_modified)


def stale_issues(is_stale: bool | None) -> tuple[Issue, ...]:
    """``stale_feed`` when the feed is judged stale."""
    if is_stale:
        return (Issue("stale_feed", "the newest item is older than stale_after_days"),)
    return ()


def remembered_feed(
    bookmark: FeedBookmark | None,
    settings: Settings,
    error: Issue,
    result: FetchResult,
    page_feed_links: tuple[str, ...],
    configured: str,
) -> str | None:
    """The feed to read when the web page at ``configured`` led to none (``error``;
    ``result`` is its fetch, and it advertised ``page_feed_links``): the one the bookmark read
    through it, when it names the whole URL read (see remembered_url). Not after a
    429/503 (the server asked us to wait), nor when the page was not asked for (its host
    rests: the check is skipped), or with the feed's time budget spent, nor when
    that feed is what was just fetched: the configured URL (a page replaced by its feed
    keeps the page's partition), or a URL its redirects went through or ended at (a page
    that now redirects to its feed): asking again would only fetch it twice, and call a
    second answer that happens to succeed the page's ``discovery_failed``."""
    if (
        not settings.discover_from_websites
        or bookmark is None
        or bookmark.advertised_url_hash is None
        or page_feed_links
        or error.code in ("rate_limited", "retry_later", "timeout")
    ):
        return None
    remembered = remembered_url(bookmark.final_url, bookmark.final_url_hash, configured)
    if remembered is None or names_itself(remembered, configured, result):
        return None
    return remembered


def feed_of_unchanged_page(
    bookmark: FeedBookmark | None, settings: Settings, configured: str
) -> str | None:
    """The feed to read when the web page at ``configured`` answers 304 on its own
    validators: the one read through it last, from the very link it advertised (the
    bookmark keeps the page's validators only then). None when the page is not to be
    asked on them: no discovery, or no validators of the page's kept (a feed read
    directly, a partition from before they were kept), or the feed not named whole."""
    if (
        not settings.discover_from_websites
        or bookmark is None
        or bookmark.page_url_hash is None
        or bookmark.advertised_url_hash is None
    ):
        return None
    return remembered_url(bookmark.final_url, bookmark.final_url_hash, configured)


def on_another_host(result: FetchResult, configured: str) -> bool:
    """Whether the ``configured`` URL's redirects led to another host."""
    return urlsplit(result.final_url or configured).hostname != urlsplit(configured).hostname


def page_failure(error: Issue, elsewhere: bool) -> str:
    """What went wrong with the web page, for an issue: never its URL."""
    if error.code not in ("not_a_feed", "invalid_feed"):
        return f"the web page could not be read ({error.code})"
    if elsewhere:
        return "the web page redirects to a page on another host that advertises no feed"
    return "the web page advertises no feed"
