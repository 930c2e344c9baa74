"""A 200 that is an older copy than the document the state came from (a CDN edge or a
lagging replica serving yesterday's file) moves no item back: no `updated` records, the
state kept, and the row says `stale_copy`. Anything that may be newer reads as before."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tap_feeddelta.check import FeedOutcome, FeedTask, check_feed
from tap_feeddelta.checkfacts import STALE_COPY_WINDOW, is_stale_copy, last_modified_before
from tap_feeddelta.config import Settings
from tap_feeddelta.delta import ItemCounts
from tap_feeddelta.models import FetchResult
from tap_feeddelta.state import FeedBookmark, encode_bookmark
from tests.feedserver import rss
from tests.unit.test_check_budget import FEED_URL, ScriptedFetcher

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
EARLY = "Tue, 14 Nov 2023 22:13:20 GMT"
LATE = "Tue, 14 Nov 2023 22:30:00 GMT"
LATER = "Tue, 14 Nov 2023 23:00:00 GMT"
A = rss([("id-1", "One", "first"), ("id-2", "Two", "second")]).encode()
B = rss([("id-1", "One (edited)", "first"), ("id-2", "Two", "second")]).encode()
NEWEST = "2024-01-03T10:00:00Z"  # of id-2, in A and B alike


@pytest.mark.parametrize(
    ("read", "remembered", "before"),
    [
        (EARLY, LATE, True),
        (LATE, LATE, False),
        (LATER, LATE, False),
        ("Tue, 14 Nov 2023 22:30:00 +0000", LATE, False),  # the same instant spelled otherwise
        ("Tuesday, 14-Nov-23 22:13:20 GMT", LATE, True),  # RFC 850, an HTTP date too
        (None, LATE, False),
        (EARLY, None, False),
        ("yesterday", LATE, False),
        (EARLY, "v7", False),  # a remembered value that is no date (kept for servers)
    ],
    ids=[
        "earlier",
        "equal",
        "later",
        "equal-other-zone-spelling",
        "earlier-rfc850",
        "none-read",
        "none-remembered",
        "unreadable-read",
        "unreadable-remembered",
    ],
)
def test_only_a_readable_earlier_last_modified_is_before(
    read: str | None, remembered: str | None, before: bool
) -> None:
    assert last_modified_before(read, remembered) is before


def _state(**changed: Any) -> FeedBookmark:
    fields: dict[str, Any] = {
        "last_modified": LATE,
        "success_at": "2026-03-01T11:00:00Z",
        "newest_item_at": NEWEST,
    }
    return FeedBookmark(**(fields | changed))


UPDATES = ItemCounts(seen=2, updated=1, unchanged=1)


@pytest.mark.parametrize(
    ("bookmark", "last_modified", "counts", "newest", "stale"),
    [
        (_state(), EARLY, UPDATES, NEWEST, True),
        (_state(), LATE, UPDATES, NEWEST, False),  # as new: a constant Last-Modified
        (_state(), None, UPDATES, NEWEST, False),  # no date to compare
        (_state(), EARLY, replace(UPDATES, new=1, seen=3), NEWEST, False),  # an item unseen
        (_state(), EARLY, ItemCounts(seen=2, unchanged=2), NEWEST, False),  # nothing moves back
        (_state(), EARLY, UPDATES, "2024-01-04T10:00:00Z", False),  # an item dated later
        (_state(newest_item_at=None), EARLY, UPDATES, NEWEST, False),  # dated, the state not
        (_state(newest_item_at=None), EARLY, UPDATES, None, True),  # undated both
        (None, EARLY, UPDATES, NEWEST, False),  # first run
        (_state(success_at=None), EARLY, UPDATES, NEWEST, False),  # no baseline yet
        (_state(stale_since="2026-03-01T00:00:00Z"), EARLY, UPDATES, NEWEST, True),
        (_state(stale_since="2026-02-28T12:00:00Z"), EARLY, UPDATES, NEWEST, False),  # a day
        (_state(stale_since="2026-03-01T13:00:00Z"), EARLY, UPDATES, NEWEST, False),  # ahead
    ],
    ids=[
        "older",
        "equal-date",
        "no-date",
        "new-item",
        "no-change",
        "newer-item-date",
        "dated-unlike-state",
        "undated",
        "first-run",
        "no-baseline",
        "streak-within-window",
        "streak-past-window",
        "streak-ahead-of-clock",
    ],
)
def test_the_stale_copy_rule(
    bookmark: FeedBookmark | None,
    last_modified: str | None,
    counts: ItemCounts,
    newest: str | None,
    stale: bool,
) -> None:
    assert is_stale_copy(bookmark, last_modified, counts, newest, NOW) is stale


def _ok(body: bytes, last_modified: str) -> FetchResult:
    etag = '"a"' if body == A else '"b"'
    return FetchResult(
        "ok", FEED_URL, FEED_URL, 200, "application/rss+xml", body, etag, last_modified
    )


def _check(bookmark: FeedBookmark | None, answer: FetchResult, now: datetime) -> FeedOutcome:
    settings = Settings(feed_urls=(FEED_URL,))
    task = FeedTask(0, FEED_URL, bookmark)
    return asyncio.run(check_feed(task, ScriptedFetcher([answer]), settings, lambda: now))


def _codes(outcome: FeedOutcome) -> list[str]:
    return [issue["code"] for issue in outcome.health_record["issues"]]


def test_a_stale_copy_keeps_the_state_and_a_streak_past_a_day_reads_as_usual() -> None:
    """The state after a stale copy is the one before but for when it was checked and
    since when copies have been older; a day of nothing but older copies is the
    publisher's document (its clock went back, or it sends dates at random): read it."""
    base = _check(None, _ok(A, EARLY), NOW - timedelta(hours=2)).bookmark
    fresh = _check(base, _ok(B, LATE), NOW - timedelta(hours=1))
    assert [r["change_type"] for r in fresh.item_records] == ["updated"]
    assert fresh.bookmark is not None and fresh.bookmark.stale_since is None
    assert "stale_since" not in encode_bookmark(fresh.bookmark)  # no bytes outside a streak

    stale = _check(fresh.bookmark, _ok(A, EARLY), NOW)
    assert stale.item_records == []
    assert "stale_copy" in _codes(stale)
    assert stale.health_record["status"] == "ok"
    counts = stale.health_record["item_counts"]
    assert (counts["updated"], counts["unchanged"], counts["emitted"]) == (0, 2, 0)
    assert stale.bookmark == replace(
        fresh.bookmark,
        checked_at=stale.health_record["checked_at"],
        success_at=stale.health_record["checked_at"],
        stale_since="2026-03-01T12:00:00Z",
    )

    again = _check(stale.bookmark, _ok(A, EARLY), NOW + timedelta(hours=23))
    assert again.item_records == [] and "stale_copy" in _codes(again)
    assert again.bookmark is not None and again.bookmark.stale_since == "2026-03-01T12:00:00Z"

    back = _check(again.bookmark, _ok(B, LATE), NOW + timedelta(hours=23, minutes=30))
    assert back.item_records == [] and "stale_copy" not in _codes(back)
    assert back.bookmark is not None and back.bookmark.stale_since is None

    held = _check(again.bookmark, _ok(A, EARLY), NOW + STALE_COPY_WINDOW)
    assert [(r["change_type"], r["title"]) for r in held.item_records] == [("updated", "One")]
    assert "stale_copy" not in _codes(held)


def test_an_older_document_of_another_resource_is_read_as_usual() -> None:
    """The remembered Last-Modified is of the URL read before: a redirect to another one
    (a mirror, a new host) is not compared with it."""
    base = _check(None, _ok(A, EARLY), NOW - timedelta(hours=2)).bookmark
    fresh = _check(base, _ok(B, LATE), NOW - timedelta(hours=1)).bookmark
    mirror = "https://mirror.example/feed.xml"
    moved = replace(_ok(A, EARLY), final_url=mirror, redirected_from=(FEED_URL,), redirects=1)
    outcome = _check(fresh, moved, NOW)
    assert [r["change_type"] for r in outcome.item_records] == ["updated"]
    assert "stale_copy" not in _codes(outcome)
