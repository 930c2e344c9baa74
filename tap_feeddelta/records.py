"""Turns a checked feed into the two streams' record dicts (shapes in schemas/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from tap_feeddelta.delta import ItemChange, ItemCounts
from tap_feeddelta.errors import Issue
from tap_feeddelta.models import ContentMode, FetchResult, ParsedFeed, ParsedItem
from tap_feeddelta.parse.graphemes import cluster_boundary
from tap_feeddelta.shownurl import shown_url

ITEM_SCHEMA_VERSION: Final = "feed-item/1"
HEALTH_SCHEMA_VERSION: Final = "feed-health/1"
# An item without a summary shows this much of its content as one (see _summary).
EXCERPT_CHARS: Final = 500


@dataclass(frozen=True, slots=True)
class FeedContext:
    """What every record of one feed check shares."""

    monitor_id: str
    feed_url: str
    checked_at: str


def item_record(
    ctx: FeedContext,
    feed: ParsedFeed,
    final_url: str | None,
    change: ItemChange,
    content_mode: ContentMode,
) -> dict[str, Any]:
    item = change.item
    return {
        "schema_version": ITEM_SCHEMA_VERSION,
        "monitor_id": ctx.monitor_id,
        "feed_url": ctx.feed_url,
        "final_url": final_url,
        "feed_title": feed.title,
        "feed_format": feed.format,
        "checked_at": ctx.checked_at,
        "change_type": change.change_type,
        "delivery_id": change.delivery_id,
        "item_id": change.item_id,
        "id_source": change.id_source,
        "url": item.url,
        "title": item.title,
        "summary": _summary(item) if content_mode != "metadata" else None,
        "content_text": item.content_text if content_mode == "feed_content" else None,
        "authors": [{"name": a.name, "email": a.email, "url": a.url} for a in item.authors],
        # A set, as the fingerprint reads it: sorted, so that a reorder never shows up
        # as a difference between two versions of the item.
        "tags": sorted(item.tags),
        "published_at": item.published_at,
        "updated_at": item.updated_at,
        "enclosures": [
            {"url": e.url, "type": e.type, "length_bytes": e.length_bytes} for e in item.enclosures
        ],
        "fingerprint": change.fingerprint,
        "source_pointer": item.source_pointer or None,
        "issues": [issue.as_record() for issue in change.issues],
    }


def _summary(item: ParsedItem) -> str | None:
    """The item's summary; for an item with content but none (Medium, GitHub, Blogger
    full feeds), the start of its content, else excerpts mode would show no words."""
    if item.summary or not item.content_text:
        return item.summary
    return excerpt(item.content_text)


def excerpt(text: str) -> str:
    """The start of ``text``: at most EXCERPT_CHARS with the ellipsis, at a space where there
    is one near."""
    if len(text) <= EXCERPT_CHARS:
        return text
    room = EXCERPT_CHARS - len("…")
    space = text.rfind(" ", room - 80, room + 1)
    head = text[:space] if space > 0 else text[: cluster_boundary(text, room)]
    return head.rstrip() + "…"


@dataclass(frozen=True, slots=True)
class KnownFacts:
    """What a row knows of the feed's document: the one just read, or for a row that
    read none, what the state keeps of the one read before."""

    counts: ItemCounts = field(default_factory=ItemCounts)
    feed_title: str | None = None  # without a feed: the title the state remembers
    feed_format: str | None = None  # and its format
    newest_item_at: str | None = None
    is_stale: bool | None = None
    last_success_at: str | None = None  # the last check that read the feed or got a 304


@dataclass(frozen=True, slots=True)
class FetchFacts:
    """What a row shows of the check's fetches, whatever came of them."""

    fetch: FetchResult | None = None  # the answer that counts
    final_url: str | None = None  # the fetch's, as shown_url shows it
    fetch_ms: int = 0
    redirects: int = 0
    bytes_received: int = 0
    parse_ms: int = 0
    discovered_from: str | None = None
    advertised_feeds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HealthFacts:
    """Everything a feed_health row reports beyond the shared context."""

    status: str
    known: KnownFacts = field(default_factory=KnownFacts)
    fetched: FetchFacts = field(default_factory=FetchFacts)
    feed: ParsedFeed | None = None
    error: Issue | None = None
    retry_after_at: str | None = None
    consecutive_failures: int = 0
    issues: tuple[Issue, ...] = ()


def health_record(ctx: FeedContext, facts: HealthFacts) -> dict[str, Any]:
    known, fetched, feed = facts.known, facts.fetched, facts.feed
    fetch, counts = fetched.fetch, known.counts
    return {
        "schema_version": HEALTH_SCHEMA_VERSION,
        "monitor_id": ctx.monitor_id,
        "feed_url": ctx.feed_url,
        "final_url": fetched.final_url,
        "checked_at": ctx.checked_at,
        "status": facts.status,
        "http_status": fetch.http_status if fetch else None,
        "error_code": facts.error.code if facts.error else None,
        "error_message": facts.error.message if facts.error else None,
        "feed_title": feed.title if feed else known.feed_title,
        "feed_format": feed.format if feed else known.feed_format,
        "item_counts": {
            "seen": counts.seen,
            "new": counts.new,
            "updated": counts.updated,
            "unchanged": counts.unchanged,
            "emitted": counts.emitted,
            "deferred": counts.deferred,
            "remembered": counts.remembered,
            "duplicates": counts.duplicates,
        },
        "conditional_request": {
            "etag_sent": bool(fetch and fetch.etag_sent),
            "last_modified_sent": bool(fetch and fetch.last_modified_sent),
            "not_modified": bool(fetch and fetch.status == "not_modified"),
        },
        "redirects": fetched.redirects,
        "bytes_received": fetched.bytes_received,
        "fetch_ms": fetched.fetch_ms,
        "parse_ms": fetched.parse_ms,
        "is_stale": known.is_stale,
        "newest_item_at": known.newest_item_at,
        "is_truncated": bool(feed and feed.is_truncated),
        "discovered_from": shown_url(fetched.discovered_from, ctx.feed_url),
        "advertised_feeds": list(fetched.advertised_feeds),
        "retry_after_at": facts.retry_after_at,
        "last_success_at": known.last_success_at,
        "consecutive_failures": facts.consecutive_failures,
        "issues": [issue.as_record() for issue in facts.issues],
    }
