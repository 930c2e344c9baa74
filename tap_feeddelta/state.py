"""Versioned, compact, validated codec for one feed's bookmark (a Singer state partition).

A partition is plain JSON inside ``bookmarks.feed_items.partitions``::

    {"context": {"monitor_id": "default", "feed_url": "https://…"},
     "v": 1, "etag": "…", "last_modified": "…", "final_url": "…", "final_url_hash": "v1:…",
     "advertised_url_hash": "v1:…", "page_etag": "…", "page_last_modified": "…",
     "page_url_hash": "v1:…", "title": "…", "format": "rss-2.0",
     "checked_at": "…Z", "success_at": "…Z", "failed_at": "…Z", "retry_after_at": null,
     "newest_item_at": "…Z", "largest_document": 20, "failures": 2,
     "new_held_back": "<base64>", "items": "<base64>"}

``items`` packs each remembered item into 12 bytes (a 64-bit identity hash and a 32-bit
content hash), so it costs exactly 16 characters of base64 per item. Decoding checks every
field: a state this module cannot read raises StateError, never a silent re-baseline.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from tap_feeddelta.errors import PRINTABLE_ASCII, StateError, shown_label

STATE_VERSION: Final = 1
ITEM_BYTES: Final = 12
_ITEM: Final = struct.Struct(">QI")
# An item held back is known by the first 32 bits of its identity hash: a clash only
# counts one item wrongly in the next rename test (delta._carry_over_by_content).
HELD_BYTES: Final = 4
_HELD: Final = struct.Struct(">I")
_MAX_TEXT: Final = 4096
_MAX_ITEMS: Final = 10_000
# A failure streak stops counting here (over 27 years of checks every ten minutes).
MAX_FAILURES: Final = 1_500_000
_URL_HASH: Final = re.compile(r"v1:[0-9a-f]{16}")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")
# A feed's next check is timed after its last one: none can follow this.
_LAST_MOMENT: Final = "9999-12-31T23:59:59.999999Z"
_FORMATS: Final = frozenset(
    {"rss-0.9x", "rss-1.0", "rss-2.0", "atom-0.3", "atom-1.0", "json-feed-1.0", "json-feed-1.1"}
)
_TEXT_FIELDS: Final = (
    "etag",
    "last_modified",
    "final_url",
    "title",
    "page_etag",
    "page_last_modified",
)
# Hashes of URLs (``v1:`` and 16 hex digits): what the state knows of a URL that may
# hold a token, without the token.
_URL_HASH_FIELDS: Final = ("final_url_hash", "advertised_url_hash", "page_url_hash")
_DATE_FIELDS: Final = (
    "checked_at",
    "success_at",
    "failed_at",
    "retry_after_at",
    "newest_item_at",
    "stale_since",
)
_KNOWN_KEYS: Final = frozenset(
    {
        "context",
        "v",
        "format",
        "items",
        "largest_document",
        "failures",
        "new_held_back",
        *_URL_HASH_FIELDS,
        *_TEXT_FIELDS,
        *_DATE_FIELDS,
    }
)


@dataclass(frozen=True, slots=True)
class FeedBookmark:
    """What the tap remembers of one feed between runs."""

    etag: str | None = None
    last_modified: str | None = None
    final_url: str | None = None
    # Which resource the validators belong to: a hash of the whole URL read (see
    # shownurl.final_url_hash), which final_url may show only in part. None in partitions
    # written before it was kept.
    final_url_hash: str | None = None
    # Which feed the web page advertised when the feed was last read through it (see
    # shownurl.advertised_url_hash): a page that advertises another one has switched
    # feeds. None for a feed read directly, and in partitions written before it was kept.
    advertised_url_hash: str | None = None
    # The web page's own validators when the feed was last found through it, and which
    # page they belong to (a final_url_hash): the page is asked on them, and a 304 from
    # it reads the feed it led to then. Only for a feed read from the very link the page
    # advertised; None for a feed read directly, and in partitions written before.
    page_etag: str | None = None
    page_last_modified: str | None = None
    page_url_hash: str | None = None
    # The feed's title when last read: a 304's health row shows it. None in partitions
    # written before it was kept.
    title: str | None = None
    format: str | None = None
    # Not a record's checked_at (every check's time): the last check that read the
    # feed's document or got a 304 (a 200 that is no feed does not set it). A row that
    # reads no document shows it as last_success_at; backoff_wait reads it as when the
    # feed last answered. (success_at: the last that read a document, no 304.)
    checked_at: str | None = None
    success_at: str | None = None  # last run that read a document
    # Last check that failed or was skipped, while failures > 0 (None once it answers): with
    # checked_at, when the feed was last checked at all (how long a removed feed is kept).
    failed_at: str | None = None
    retry_after_at: str | None = None
    newest_item_at: str | None = None
    # When the documents read began to be older copies than the one the state came from
    # (see checkfacts.is_stale_copy), by the clock; None outside such a streak, and in
    # partitions written before it was kept.
    stale_since: str | None = None
    # Items of the largest document read so far: bounds how much history is kept. None in
    # partitions written before it was kept.
    largest_document: int | None = None
    # Checks in a row that ended in error or were skipped since checked_at (runs that
    # move the state count them). 0, and no key, in partitions written before it was kept.
    failures: int = 0
    # The new items the last read left for a later run (max_items_per_run), packed
    # (held_back_key): not remembered, they come back unmatched, and the next read's
    # rename test tells those back under their ids from those under new ones (see
    # delta._carry_over_by_content). Empty, and no key, when none were, and in partitions
    # written before it was kept.
    new_held_back: bytes = b""
    items: bytes = b""  # packed (identity hash, content hash) pairs, most relevant first

    @property
    def has_baseline(self) -> bool:
        return self.success_at is not None

    @property
    def has_read_a_document(self) -> bool:
        """Whether a check ever read the feed's document: a partition without one holds
        only a failure streak (checks that failed or were skipped)."""
        return self.success_at is not None or bool(self.items)

    @property
    def item_count(self) -> int:
        """How many items are remembered."""
        return len(self.items) // ITEM_BYTES


def pack_items(pairs: list[tuple[int, int]]) -> bytes:
    return b"".join(_ITEM.pack(key, content) for key, content in pairs)


def held_back_key(key: int) -> int:
    """What the bookmark keeps of a held-back item's identity hash."""
    return key >> 32


def pack_held_back(keys: Iterable[int]) -> bytes:
    return b"".join(_HELD.pack(held_back_key(key)) for key in keys)


def unpack_held_back(packed: bytes) -> set[int]:
    return {key for (key,) in _HELD.iter_unpack(packed)}


def unpack_items(packed: bytes) -> dict[int, int]:
    """Identity hash → content hash, in remembered order."""
    return {key: content for key, content in _ITEM.iter_unpack(packed)}


def encode_bookmark(bookmark: FeedBookmark) -> dict[str, Any]:
    """The JSON fields of a partition (without its ``context``)."""
    data: dict[str, Any] = {"v": STATE_VERSION}
    for name in (*_TEXT_FIELDS, *_URL_HASH_FIELDS, "format", *_DATE_FIELDS):
        value = getattr(bookmark, name)
        if value is not None:
            data[name] = value
    if bookmark.largest_document is not None:
        data["largest_document"] = bookmark.largest_document
    if bookmark.failures:
        data["failures"] = bookmark.failures
    if bookmark.new_held_back:
        data["new_held_back"] = base64.b64encode(bookmark.new_held_back).decode("ascii")
    data["items"] = base64.b64encode(bookmark.items).decode("ascii")
    return data


# Keys a refusal names, at most, and the characters it shows of each: a state's keys are
# whatever the file holds (another tool's, an edited one's), of any length.
_SHOWN_KEYS: Final = 5
_SHOWN_KEY_CHARS: Final = 40


def shown_keys(keys: Iterable[str]) -> str:
    """The first few of ``keys``, sorted, each cut short and with only printable ASCII
    shown (anything else as "?"), for a message: ``['a', 'b', …]``."""
    ordered = sorted(keys)
    shown = [
        shown_label(key, _SHOWN_KEY_CHARS, PRINTABLE_ASCII, "…") for key in ordered[:_SHOWN_KEYS]
    ]
    more = ", …" if len(ordered) > _SHOWN_KEYS else ""
    return "[" + ", ".join(repr(key) for key in shown) + more + "]"


def decode_bookmark(partition: Any, where: str) -> FeedBookmark:
    """Read a partition written by ``encode_bookmark``; StateError on any doubt."""
    if not isinstance(partition, dict):
        raise StateError(f"{where}: a partition must be an object")
    if not _KNOWN_KEYS.issuperset(partition):
        unknown = set(partition) - _KNOWN_KEYS
        raise StateError(
            f"{where}: unknown keys {shown_keys(unknown)} (a newer version of the tap?)",
            "state_unsupported",
        )
    version = partition.get("v")
    if version != STATE_VERSION:
        raise StateError(
            f"{where}: state version {version!r} is not supported (this tap reads "
            f"version {STATE_VERSION})",
            "state_unsupported",
        )
    values: dict[str, Any] = {}
    for name in _TEXT_FIELDS:
        values[name] = _optional_text(partition, name, where)
    for name in _DATE_FIELDS:
        value = _optional_text(partition, name, where)
        if value is not None and not _DATE.fullmatch(value):
            raise StateError(f"{where}: '{name}' is not a UTC RFC 3339 date-time")
        if value == _LAST_MOMENT and name in ("checked_at", "failed_at"):
            raise StateError(
                f"{where}: '{name}' is the last moment a date-time can name: no check can"
                " be timed after it (an edited or damaged state)"
            )
        values[name] = value
    for name in _URL_HASH_FIELDS:
        url_hash = _optional_text(partition, name, where)
        if url_hash is not None and not _URL_HASH.fullmatch(url_hash):
            raise StateError(f"{where}: '{name}' is not a v1 URL hash")
        values[name] = url_hash
    feed_format = _optional_text(partition, "format", where)
    if feed_format is not None and feed_format not in _FORMATS:
        raise StateError(f"{where}: 'format' is not a known feed format")
    values["format"] = feed_format
    largest = partition.get("largest_document")
    if largest is not None and (type(largest) is not int or not 0 <= largest <= _MAX_ITEMS):
        raise StateError(f"{where}: 'largest_document' must be an integer from 0 to {_MAX_ITEMS}")
    values["largest_document"] = largest
    failures = partition.get("failures", 0)
    if type(failures) is not int or not 0 <= failures <= MAX_FAILURES:
        raise StateError(f"{where}: 'failures' must be an integer from 0 to {MAX_FAILURES}")
    values["failures"] = failures
    held_back = partition.get("new_held_back")
    if held_back is not None:
        values["new_held_back"] = _decoded_packed(held_back, "new_held_back", HELD_BYTES, where)
    values["items"] = _decoded_packed(partition.get("items"), "items", ITEM_BYTES, where)
    return FeedBookmark(**values)


def _optional_text(partition: dict[str, Any], name: str, where: str) -> str | None:
    value = partition.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > _MAX_TEXT:
        raise StateError(f"{where}: '{name}' must be a string of at most {_MAX_TEXT} chars")
    return value


def _decoded_packed(value: Any, name: str, size: int, where: str) -> bytes:
    """A base64 string of at most _MAX_ITEMS entries of ``size`` bytes, decoded."""
    if not isinstance(value, str):
        raise StateError(f"{where}: '{name}' must be a base64 string")
    try:
        packed = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise StateError(f"{where}: '{name}' is not valid base64") from exc
    if len(packed) % size:
        raise StateError(f"{where}: '{name}' is truncated")
    if len(packed) // size > _MAX_ITEMS:
        raise StateError(f"{where}: '{name}' holds more than {_MAX_ITEMS} entries")
    return packed


_UTF16_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")


def not_utf8_text(head: bytes) -> str:
    """What is wrong with a file that does not decode as UTF-8, from its first bytes: the
    end of a message about it (never quoting the file)."""
    if head.startswith(_UTF16_BOMS):
        return (
            "is UTF-16 text, not UTF-8 (as Windows PowerShell 5.1's `>` saves it): save it "
            "as UTF-8, e.g. with Out-File -Encoding utf8"
        )
    return "is not UTF-8 text"


def partition_key(partition: Any, where: str) -> tuple[str, str]:
    """(monitor_id, feed_url) of a partition's context; StateError if malformed."""
    if not isinstance(partition, dict):
        raise StateError(f"{where}: a partition must be an object")
    context = partition.get("context")
    if not isinstance(context, dict) or set(context) != {"monitor_id", "feed_url"}:
        raise StateError(f"{where}: 'context' must hold exactly monitor_id and feed_url")
    monitor_id, feed_url = context["monitor_id"], context["feed_url"]
    if not isinstance(monitor_id, str) or not isinstance(feed_url, str):
        raise StateError(f"{where}: context values must be strings")
    return monitor_id, feed_url


def index_partitions(
    stream_state: Any, *, validate: bool = True
) -> dict[tuple[str, str], dict[str, Any]]:
    """Index the stream state's partitions by (monitor_id, feed_url).

    With ``validate`` every partition is decoded once, so a damaged state stops the run
    before anything is emitted; without it only the shape and the keys are checked.
    """
    if not isinstance(stream_state, dict):
        raise StateError("state: bookmarks.feed_items must be an object")
    partitions = stream_state.get("partitions", [])
    if not isinstance(partitions, list):
        raise StateError("state: bookmarks.feed_items.partitions must be a list")
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for position, partition in enumerate(partitions):
        where = f"state: bookmarks.feed_items.partitions[{position}]"
        key = partition_key(partition, where)
        if key in index:
            raise StateError(f"{where}: the same feed appears twice")
        if validate:
            decode_bookmark(partition, where)
        index[key] = partition
    return index


def feed_items_state(tap_state: Any) -> Any:
    """The feed_items part of a whole Singer state, or None; StateError if misshapen.

    Only an empty object, or one whose only key is ``currently_syncing``, may lack
    ``bookmarks``: any other object without them is some other JSON (a STATE message
    line, Meltano's stored form), and reading it as "no state" would take a new baseline
    and lose the changes since the last run.
    """
    if not isinstance(tap_state, dict):
        raise StateError("state: the state must be a JSON object")
    if "bookmarks" not in tap_state and not tap_state.keys() <= {"currently_syncing"}:
        raise StateError(_not_a_singer_state(tap_state))
    if "bookmarks" not in tap_state:
        return None
    bookmarks = tap_state["bookmarks"]
    if not isinstance(bookmarks, dict):  # null too: the SDK's own reading fails on it
        raise StateError("state: 'bookmarks' must be an object")
    if not _OUR_STREAMS.issuperset(bookmarks):
        # Read as no state, another tap's bookmarks would start every feed over and be
        # carried forward (the SDK writes only its streams' bookmarks, by their names).
        foreign = set(bookmarks) - _OUR_STREAMS
        raise StateError(
            f"state: its bookmarks hold streams this tap never writes {shown_keys(foreign)} "
            "(another tap's state, under this state id?)"
        )
    for stream, bookmark in bookmarks.items():
        where = f"bookmarks.{stream}"
        if not isinstance(bookmark, dict):
            raise StateError(f"state: {where} must be an object")
        partitions = bookmark.get("partitions")
        if partitions is not None and not (
            isinstance(partitions, list) and all(isinstance(p, dict) for p in partitions)
        ):
            raise StateError(f"state: the partitions of {where} must be a list of objects")
    feed_items = bookmarks.get("feed_items")
    if feed_items is not None and not _STREAM_KEYS.issuperset(feed_items):
        unknown = set(feed_items) - _STREAM_KEYS
        raise StateError(
            f"state: bookmarks.feed_items holds keys this tap never writes {shown_keys(unknown)} "
            "(another tap's state, under this state id?)"
        )
    return feed_items


_OUR_STREAMS: Final = frozenset({"feed_items", "feed_health"})
# What a stream bookmark of feed_items may hold: the tap's partitions, and the progress
# keys singer-sdk itself writes into a stream's bookmark during a run (it takes them out
# again at the end; an incremental stream's replication_key and replication_key_value
# are not among them: feed_items has no replication key). A bookmark with any other key
# is another tap's (replication_key_value, say): read as empty, it would start every
# feed over.
_STREAM_KEYS: Final = frozenset(
    {"partitions", "progress_markers", "replication_key_signpost", "starting_replication_value"}
)


def _not_a_singer_state(tap_state: dict[str, Any]) -> str:
    if isinstance(tap_state.get("singer_state"), dict):
        return (
            "state: this is Meltano's stored form; pass the object under 'singer_state' "
            "(meltano run does)"
        )
    if tap_state.get("type") == "STATE" and isinstance(tap_state.get("value"), dict):
        return "state: this is a STATE message; pass the object under its 'value'"
    return "state: a Singer state holds a 'bookmarks' object, and this one has none"
