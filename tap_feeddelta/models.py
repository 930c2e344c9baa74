"""Frozen values that travel between the layers (fetch → parse → delta → records).

Dates are strings in one fixed shape, ``YYYY-MM-DDTHH:MM:SSZ`` (RFC 3339, UTC, whole
seconds), so that they compare correctly as strings and serialize without work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple, TypedDict, cast

from tap_feeddelta.errors import Issue

FeedFormat = Literal[
    "rss-0.9x",
    "rss-1.0",
    "rss-2.0",
    "atom-0.3",
    "atom-1.0",
    "json-feed-1.0",
    "json-feed-1.1",
]
IdSource = Literal["guid", "atom_id", "json_id"]
# Config choices that delta and records act on (config.py documents them).
FirstRunMode = Literal["baseline_only", "emit_recent", "emit_all"]
ContentMode = Literal["metadata", "excerpts", "feed_content"]


@dataclass(frozen=True, slots=True)
class Author:
    name: str | None = None
    email: str | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class Enclosure:
    url: str
    type: str | None = None
    length_bytes: int | None = None


CutDigest = tuple[str, str, str]  # see ParsedItem.cut_digests


class ReadBefore(TypedDict, total=False):
    """What versions before this one read otherwise of an item's fields, with their
    values then (``ParsedItem.read_before``), filled by the readers while they read an
    item; ``<field>_cuts``: the cut_digests entries of that field's reading then."""

    url: str | None
    title: str | None
    title_cuts: tuple[CutDigest, ...]
    summary: str | None
    summary_cuts: tuple[CutDigest, ...]
    authors: tuple[Author, ...]
    tags: tuple[str, ...]
    published_at: str | None
    updated_at: str | None
    enclosures: tuple[Enclosure, ...]


class ParsedItem(NamedTuple):
    """One entry as the document states it, normalized to plain text and safe URLs.

    A named tuple, not a frozen dataclass like the others: one is built per item read,
    and a frozen dataclass takes about six times as long to build (each field is set
    through ``object.__setattr__``).
    """

    native_id: str | None = None  # the feed's own id (guid, atom:id, JSON id)
    native_id_source: IdSource | None = None
    url: str | None = None
    title: str | None = None
    summary: str | None = None
    content_text: str | None = None
    authors: tuple[Author, ...] = ()
    tags: tuple[str, ...] = ()
    published_at: str | None = None
    updated_at: str | None = None
    enclosures: tuple[Enclosure, ...] = ()
    source_pointer: str = ""  # where the item stands in the document, e.g. "/rss/channel/item[3]"
    issues: tuple[Issue, ...] = ()
    # (field, digest of its whole text, the digest as earlier versions computed it)
    # for each text field cut to its cap (title, summary, content_text): the fingerprint
    # covers what was cut off too. Not in records.
    cut_digests: tuple[tuple[str, str, str], ...] = ()
    # The fields versions before this one read otherwise, with their values then (a
    # ReadBefore's items, kept as a tuple so that the item stays hashable): one person
    # named by several RSS elements (<author> and <dc:creator>) listed once per element,
    # markup kept in a title, summary or tag, markup or a hidden character kept in a URL,
    # an extension's elements under a namespace name they did not know (parse/aliases.py).
    # The fingerprints and ids they remembered are made of ``as_read_before()`` too
    # (fingerprints.py). Not in records.
    read_before: tuple[tuple[str, Any], ...] = ()

    def fields_read_before(self) -> ReadBefore:
        """``read_before`` as the ReadBefore it was made of."""
        return cast(ReadBefore, dict(self.read_before))

    def as_read_before(self) -> ParsedItem:
        """The item as versions before read it (``read_before``): each field read
        otherwise ("title", "summary"…) with the cut_digests entries of that reading
        ("title_cuts"…) in place of the field's own."""
        earlier: dict[str, Any] = dict(self.read_before)
        cuts = {
            key[: -len("_cuts")]: earlier.pop(key) for key in list(earlier) if key.endswith("_cuts")
        }
        item = self._replace(read_before=(), **earlier)
        if not cuts:
            return item
        others = tuple(cut for cut in self.cut_digests if cut[0] not in cuts)
        return item._replace(
            cut_digests=others + tuple(cut for read in cuts.values() for cut in read)
        )


# The fields of an item a user can see, which its fingerprint covers (fingerprints.py), in this
# order; also the names ignored_changes takes (config.py).
FINGERPRINT_FIELDS: Final = (
    "url",
    "title",
    "summary",
    "content_text",
    "authors",
    "tags",
    "published_at",
    "updated_at",
    "enclosures",
)


@dataclass(frozen=True, slots=True)
class ParsedFeed:
    format: FeedFormat
    title: str | None = None
    link: str | None = None
    description: str | None = None
    language: str | None = None
    updated_at: str | None = None
    items: tuple[ParsedItem, ...] = ()
    is_truncated: bool = False
    # Where the feed says it moved (RSS itunes:new-feed-url); never the document's own URL.
    new_feed_url: str | None = None
    issues: tuple[Issue, ...] = field(default=())


FetchStatus = Literal["ok", "not_modified", "error"]


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What one fetch of one URL gave: a body, a 304, or an error code.

    ``error`` is set exactly when ``status == "error"``; its code comes from
    ``errors.CODES``. ``body`` is set only for ``ok``. Nothing here carries a header
    value other than the validators (and, in ``notes``, a label made safe to show), nor
    a URL's userinfo.
    """

    status: FetchStatus
    requested_url: str
    final_url: str | None = None  # after redirects
    http_status: int | None = None
    content_type: str | None = None
    body: bytes | None = None
    etag: str | None = None  # validators, only from a 200
    last_modified: str | None = None
    etag_sent: bool = False
    last_modified_sent: bool = False
    redirects: int = 0
    # Where the URL moved: the target of its first redirects while they are permanent
    # (301, 308) that passed its checks and answered, as final_url spells it; None when
    # the first answer is no such redirect, or the redirects loop back.
    moved_to: str | None = None
    # The URLs that redirected on the way to final_url, in order: names the feed goes by.
    redirected_from: tuple[str, ...] = ()
    bytes_received: int = 0  # decoded body bytes
    fetch_ms: int = 0
    retry_after_at: str | None = None  # from 429/503 Retry-After, capped at a day
    error: Issue | None = None
    # What the fetch read past without failing, for the feed's row: a Content-Encoding
    # label that names no coding (shown as printable ASCII, cut short).
    notes: tuple[Issue, ...] = ()
