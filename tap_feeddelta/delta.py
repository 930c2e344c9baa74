"""Pure change detection: (old bookmark, parsed feed, settings) → changes + new item memory.

Identity of an item: the feed's own id; else its URL; else its first enclosure's URL (a
podcast episode without guid or link); else a hash of its title, date and summary
(``derived``). Items of one document that share an id but differ take ids derived from it
(see _identify); exact repeats are dropped. Its fingerprint covers what a user sees of it
(see FINGERPRINT_FIELDS), whatever content_mode says, so changing that never makes items
look updated; the fields ignored_changes lists are left out. Enclosure URLs are compared,
and identify items, without their signature and expiry parameters (signed_urls), which
private feeds re-issue on every fetch, and without the tracking prefixes podcast hosts add
and drop (tracking_prefixes). No clock, no I/O.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final, Literal, NamedTuple, TypeVar

from tap_feeddelta.config import FirstRunMode
from tap_feeddelta.errors import Issue
from tap_feeddelta.models import FINGERPRINT_FIELDS, ParsedItem
from tap_feeddelta.signed_urls import unsigned_url
from tap_feeddelta.state import ITEM_BYTES, FeedBookmark, pack_items, unpack_items
from tap_feeddelta.tracking_prefixes import without_tracking_prefixes

H = TypeVar("H", bound=Hashable)
IdSourceOut = Literal["guid", "atom_id", "json_id", "url", "enclosure", "derived"]
ChangeType = Literal["new", "updated"]

FINGERPRINT_VERSION: Final = "v1"
# FINGERPRINT_FIELDS: the fields of a record a user can see, in the fingerprint's order;
# text is already plain text with collapsed whitespace, so markup- or whitespace-only
# edits do not change it.
_FIELD_INDEX: Final = {name: index for index, name in enumerate(FINGERPRINT_FIELDS)}
# What an ignored field (ignored_changes) is hashed as: no field's value can be it (no
# text of an item holds a control character) nor can a missing field's (_NONE).
_IGNORED: Final = "\x1a"
# Items remembered per feed: at least its largest document's, and history of gone
# items up to this many times that, or this many more (see _memory_bound).
HISTORY_FACTOR: Final = 4
MIN_HISTORY_ITEMS: Final = 100
_SEP: Final = "\x1f"
_NONE: Final = "\x00"
# Characters that change no reading of a text: soft hyphen, zero-width space, direction
# marks and embeddings, word joiner, BOM. (Zero-width joiner and non-joiner are kept:
# they change how emoji and some scripts render.)
_INVISIBLE: Final = re.compile("[\u00ad\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


@dataclass(frozen=True, slots=True)
class DeltaSettings:
    monitor_id: str
    feed_url: str
    first_run_mode: FirstRunMode = "baseline_only"
    max_initial_items: int = 20
    max_items_per_run: int = 500
    max_state_items: int = 5_000
    start_date: str | None = None  # YYYY-MM-DDTHH:MM:SSZ
    # Fields of FINGERPRINT_FIELDS whose edits do not make an item updated.
    ignored_changes: tuple[str, ...] = ()


# Built per item: a NamedTuple is immutable too, and five times cheaper to make than a
# frozen dataclass.
class ItemChange(NamedTuple):
    item: ParsedItem
    item_id: str
    id_source: IdSourceOut
    change_type: ChangeType
    fingerprint: str
    delivery_id: str
    issues: tuple[Issue, ...]  # the item's own plus those found here


@dataclass(frozen=True, slots=True)
class ItemCounts:
    seen: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    emitted: int = 0
    deferred: int = 0
    remembered: int = 0
    duplicates: int = 0  # exact repeats of an earlier item of the document, dropped


@dataclass(frozen=True, slots=True)
class Delta:
    changes: tuple[ItemChange, ...]
    counts: ItemCounts
    remembered_items: bytes
    issues: tuple[Issue, ...]  # feed-level
    largest_document: int  # items of the feed's largest document so far (tracked ones)


class _Identified(NamedTuple):
    item: ParsedItem
    item_id: str
    id_source: IdSourceOut
    key_hash: int
    fingerprint: bytes
    content_hash: int  # what the state keeps of the fingerprint
    issues: tuple[Issue, ...]


def item_identity(item: ParsedItem) -> tuple[str, IdSourceOut, tuple[Issue, ...]]:
    """The item's id, where it came from, and an issue when it had to be derived."""
    if item.native_id and item.native_id_source:
        return item.native_id, item.native_id_source, ()
    if item.url:
        return item.url, "url", ()
    if item.enclosures:  # what podcast apps use for an episode without guid or link
        issue = Issue("derived_id", "the item has no id or link; its id is its enclosure's URL")
        return comparable_enclosure_url(item.enclosures[0].url), "enclosure", (issue,)
    issue = Issue("derived_id", "the item has no id or link; its id is a hash of its content")
    return _derived_id(_text_parts(item)), "derived", (issue,)


def comparable_enclosure_url(url: str) -> str:
    """An enclosure URL as change detection sees it: without signature or expiry and
    without tracking prefixes; the same object when it has none."""
    return unsigned_url(without_tracking_prefixes(url))


def _text_parts(item: ParsedItem) -> list[str]:
    date = item.published_at or item.updated_at
    return [item.title or _NONE, date or _NONE, item.summary or _NONE]


def _derived_id(parts: list[str]) -> str:
    digest = hashlib.blake2b(_SEP.join(parts).encode("utf-8"), digest_size=16).hexdigest()
    return f"derived:{digest}"


def _title_id(item: ParsedItem, shared_id: str) -> str:
    """The id of an item that shares ``shared_id`` with other items of its document: from
    it, the title and the publication date (not the update date, which an edit moves)."""
    return _derived_id([shared_id, item.title or _NONE, item.published_at or _NONE])


def _content_id(shared_id: str, fingerprint: bytes) -> str:
    """The id of an item whose title id is shared too: from its whole content."""
    return _derived_id([shared_id, fingerprint.hex()])


def fingerprint_bytes(
    item: ParsedItem,
    *,
    tags_in_document_order: bool = False,
    keep_signatures: bool = False,
    keep_tracking_prefixes: bool = False,
    text_as_given: bool = False,
    ignored: Collection[str] = (),
) -> bytes:
    """The item's content hash, with the fields named in ``ignored`` (ignored_changes)
    left out: each hashed as a placeholder. The other keyword arguments give the hashes
    earlier versions computed (see _earlier_content_hashes)."""
    # Tags are a set: a feed that lists them in another order on every request (built
    # from a hash set, say) would otherwise give an update on every run.
    tags = item.tags if tags_in_document_order or len(item.tags) < 2 else sorted(item.tags)
    # A signature re-issued on every fetch, or a tracking prefix added or dropped, is no
    # edit. An enclosure URL without either goes in as it is, so the hash of an ordinary
    # item is the one earlier versions remembered. (Signatures were dropped before
    # prefixes, so keeping them keeps the prefixes too.)
    if keep_signatures:
        comparable = _as_given
    elif keep_tracking_prefixes:
        comparable = unsigned_url
    else:
        comparable = comparable_enclosure_url
    parts: list[str] = [
        item.url or _NONE,
        item.title or _NONE,
        item.summary or _NONE,
        item.content_text or _NONE,
        _SEP.join([f"{a.name or ''}|{a.email or ''}|{a.url or ''}" for a in item.authors]),
        _SEP.join(tags),
        item.published_at or _NONE,
        item.updated_at or _NONE,
        _SEP.join(
            [f"{comparable(e.url)}|{e.type or ''}|{e.length_bytes or ''}" for e in item.enclosures]
        ),
    ]
    if ignored:
        for name in ignored:
            parts[_FIELD_INDEX[name]] = _IGNORED
    material = "\x1e".join(parts)
    if not text_as_given and not material.isascii():
        material = _as_read(material)
    return hashlib.blake2b(material.encode("utf-8"), digest_size=16).digest()


def _as_read(text: str) -> str:
    """``text`` as a reader sees it: the same characters however composed (NFC: "é" as
    one code point or as "e" and a combining accent), without the invisible ones."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return _INVISIBLE.sub("", text)


def _as_given(url: str) -> str:
    return url


def _earlier_content_hashes(item: ParsedItem, ignored: tuple[str, ...] = ()) -> list[int]:
    """What runs with another ignored_changes (see _hashes_under_other_lists) and earlier
    versions of the tap remembered of this content, where it differs from this run's
    hash. Earlier versions: the hash with tracking prefixes kept (before they were
    dropped), of the text as given too (before it was hashed as read), also with enclosure
    URLs as given (before signatures were dropped), and with tags in document order too
    (before tags were sorted). Only for items that look changed or renamed, so it costs
    nothing on unchanged ones."""
    hashes = [_short(full) for full in _hashes_under_other_lists(item, ignored)]
    prefixed = any(
        without_tracking_prefixes(enclosure.url) is not enclosure.url
        for enclosure in item.enclosures
    )
    if prefixed:
        hashes.append(_short(fingerprint_bytes(item, keep_tracking_prefixes=True, ignored=ignored)))
    as_given = fingerprint_bytes(item, text_as_given=True, keep_tracking_prefixes=prefixed)
    if as_given != fingerprint_bytes(item, keep_tracking_prefixes=prefixed):  # see _as_read
        hashes.append(_short(as_given))
    if any(unsigned_url(enclosure.url) is not enclosure.url for enclosure in item.enclosures):
        hashes.append(_short(fingerprint_bytes(item, keep_signatures=True, text_as_given=True)))
    if len(item.tags) > 1 and list(item.tags) != sorted(item.tags):
        legacy = fingerprint_bytes(
            item, tags_in_document_order=True, keep_signatures=True, text_as_given=True
        )
        hashes.append(_short(legacy))
    return hashes


def _hashes_under_other_lists(item: ParsedItem, ignored: tuple[str, ...]) -> list[bytes]:
    """The item's hash as a run with an ignored_changes one step from ``ignored``
    remembered it: with nothing ignored (so turning the setting on, with any number of
    fields, gives no wave of updates), with one field fewer, and with one field more (so
    turning it off from one field gives none either). At most ten hashes."""
    lists: list[tuple[str, ...]] = []
    if ignored:
        lists.append(())
        if len(ignored) > 1:
            lists += [tuple(other for other in ignored if other != name) for name in ignored]
    lists += [(*ignored, name) for name in FINGERPRINT_FIELDS if name not in ignored]
    return [fingerprint_bytes(item, ignored=names) for names in lists]


def fingerprint(item: ParsedItem) -> str:
    return f"{FINGERPRINT_VERSION}:{fingerprint_bytes(item).hex()}"


def delivery_id(monitor_id: str, feed_url: str, item_id: str, item_fingerprint: str) -> str:
    material = _SEP.join([monitor_id, feed_url, item_id, item_fingerprint])
    return hashlib.blake2b(material.encode("utf-8"), digest_size=16).hexdigest()


def _delivery_prefix(monitor_id: str, feed_url: str) -> hashlib.blake2b:
    """``delivery_id``'s hash with one feed's part already fed in (copied per item)."""
    return hashlib.blake2b(f"{monitor_id}{_SEP}{feed_url}{_SEP}".encode(), digest_size=16)


def _key_hash(item_id: str) -> int:
    digest = hashlib.blake2b(item_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _identify(
    items: Sequence[ParsedItem], ignored: tuple[str, ...] = ()
) -> tuple[list[_Identified], int]:
    """Items with their identity, in document order; and how many exact repeats were dropped.

    Ids depend on the document alone, never on memory, so a run without state gives the
    same ids (and delivery_ids). Nothing distinct is dropped: when items share an id (a
    status page whose every item links to its home page, a CMS giving every item one
    guid), each of them takes its title id instead, and those whose title ids are shared
    too take their content id (``shared_id``). An item that repeats an earlier one
    exactly (but for the ``ignored`` fields) is dropped.
    """
    # Chosen once: the default (nothing ignored) costs not even a keyword argument.
    hashed = partial(fingerprint_bytes, ignored=ignored) if ignored else fingerprint_bytes
    entries: list[_Identified] = []
    keys: set[int] = set()
    versions: set[tuple[int, bytes]] = set()  # (id hash, fingerprint)
    shared = False
    duplicates = 0
    for item in items:
        item_id, id_source, issues = item_identity(item)
        key = _key_hash(item_id)
        full = hashed(item)
        if (key, full) in versions:
            duplicates += 1  # the same item again
            continue
        versions.add((key, full))
        shared = shared or key in keys
        keys.add(key)
        entries.append(
            _Identified(
                item,
                item_id,
                id_source,
                key,
                full,
                _short(full),
                item.issues + issues if issues else item.issues,
            )
        )
    if shared:
        entries = _with_shared_ids_told_apart(entries)
    return entries, duplicates


def _with_shared_ids_told_apart(entries: list[_Identified]) -> list[_Identified]:
    """Every item whose id another item shares takes its title id; those whose title ids
    collide too (only members of one group can: the shared id is part of it) take their
    content id, which differs unless the items do (exact repeats are gone already)."""
    shared = _repeated(entry.key_hash for entry in entries)
    title_ids = {
        index: _title_id(entry.item, entry.item_id)
        for index, entry in enumerate(entries)
        if entry.key_hash in shared
    }
    colliding = _repeated(title_ids.values())
    out = list(entries)
    for index, title_id in title_ids.items():
        entry = entries[index]
        if title_id in colliding:
            title_id = _content_id(entry.item_id, entry.fingerprint)
        out[index] = _as_shared(entry, title_id)
    return out


def _repeated(values: Iterable[H]) -> set[H]:
    """The values that occur more than once."""
    once: set[H] = set()
    repeated: set[H] = set()
    for value in values:
        (repeated if value in once else once).add(value)
    return repeated


def _primary_id(entry: _Identified) -> str:
    return item_identity(entry.item)[0]


def _as_shared(entry: _Identified, item_id: str) -> _Identified:
    issue = Issue(
        "shared_id",
        f"another item of the document has this item's {entry.id_source} id; "
        "this one's id is derived from it and its title and date, or its content",
    )
    return entry._replace(
        item_id=item_id,
        id_source="derived",
        key_hash=_key_hash(item_id),
        issues=(*entry.issues, issue),
    )


def _earlier_ids(entry: _Identified) -> list[str]:
    """The ids the item may have had before: its own, title and content ids (it shared
    its id then, or no longer does); for an item identified by its enclosure, the hash of
    its text (before enclosures identified items), its URL with tracking prefixes (before
    they were dropped) and its signed URL (before signatures were dropped)."""
    primary = _primary_id(entry)
    ids = [primary, _title_id(entry.item, primary), _content_id(primary, entry.fingerprint)]
    if entry.id_source == "enclosure":
        ids.append(_derived_id(_text_parts(entry.item)))
        signed = entry.item.enclosures[0].url
        if (prefixed := unsigned_url(signed)) != primary:
            ids.append(prefixed)
        if signed not in (primary, prefixed):
            ids.append(signed)
    return [item_id for item_id in ids if item_id != entry.item_id]


def _carry_over_renamed(
    identified: list[_Identified], remembered: dict[int, int], ignored: tuple[str, ...]
) -> None:
    """Items whose id changed (they began or stopped sharing one, or an earlier version
    gave them another) with their content remembered under an earlier id (as this version
    or an earlier one hashed it): moved to their id in ``remembered``, so they are
    unchanged, and the earlier id is forgotten (it could later match another item)."""
    for entry in identified:
        if remembered.get(entry.key_hash) == entry.content_hash:
            continue
        earlier_hashes: list[int] | None = None
        for item_id in _earlier_ids(entry):
            key = _key_hash(item_id)
            old = remembered.get(key)
            if old is None:
                continue
            if old != entry.content_hash:
                if earlier_hashes is None:
                    earlier_hashes = _earlier_content_hashes(entry.item, ignored)
                if old not in earlier_hashes:
                    continue
            del remembered[key]
            remembered[entry.key_hash] = entry.content_hash
            break


def _item_date(item: ParsedItem) -> str | None:
    return item.published_at or item.updated_at


def _latest_date(item: ParsedItem) -> str | None:
    if item.published_at and item.updated_at:
        return max(item.published_at, item.updated_at)
    return item.published_at or item.updated_at


def newest_item_at(items: Iterable[ParsedItem], not_after: str) -> str | None:
    """The newest date the items state (see _newest_date). Staleness and the bookmark's
    newest_item_at (which possible_gap compares with) both read this value."""
    newest = ""
    for item in items:
        date = _newest_date(item, not_after)
        if date and newest < date:
            newest = date
    return newest or None


def _newest_date(item: ParsedItem, not_after: str | None) -> str | None:
    """How new the item is: the later of its published and updated dates (an entry
    published long ago and edited today is news today), leaving out dates after
    ``not_after`` (``None``: none is left out). A date years ahead is a typo or a wrong
    clock: taken as newest it would keep a dead feed fresh for ever, or win emit_recent
    over the items of this week."""
    newest = ""
    for date in (item.published_at, item.updated_at):
        if date and newest < date and (not_after is None or date <= not_after):
            newest = date
    return newest or None


def _newest_first(candidates: list[_Identified], not_after: str | None) -> list[_Identified]:
    """Items newest first as newest_item_at reads them, then those without such a date
    (undated, or dated only ahead of ``not_after``) in document order."""
    dated: list[tuple[str, _Identified]] = []
    undated: list[_Identified] = []
    for candidate in candidates:
        date = _newest_date(candidate.item, not_after)
        if date:
            dated.append((date, candidate))
        else:
            undated.append(candidate)
    dated.sort(key=lambda pair: pair[0], reverse=True)
    return [c for _, c in dated] + undated


def diff_items(
    bookmark: FeedBookmark | None,
    items: Sequence[ParsedItem],
    settings: DeltaSettings,
    *,
    from_another_feed: bool = False,
    dates_not_after: str | None = None,
) -> Delta:
    """Compare a document's items with what the bookmark remembers.

    ``dates_not_after``: item dates after it are a typo or a wrong clock, and do not make
    an item the newest (emit_recent), as newest_item_at leaves them out.

    ``from_another_feed``: the document is not the one the bookmark was last read from
    (a web page now advertises another feed first). If none of its items is remembered,
    it is a feed never read before, and its items are read as on a first run.
    """
    ignored = settings.ignored_changes
    identified, duplicates = _identify(items, ignored)
    remembered = unpack_items(bookmark.items) if bookmark else {}
    # Only as many items as can be remembered are tracked: an item that cannot be
    # remembered would come out as new on every run.
    untracked = max(0, len(identified) - settings.max_state_items)
    if untracked:
        identified = _newest_tracked(identified, settings.max_state_items, dates_not_after)
    if remembered:
        _carry_over_renamed(identified, remembered, ignored)
    is_first_run = bookmark is None or not bookmark.has_baseline
    issues: list[Issue] = []
    if (
        from_another_feed
        and not is_first_run
        and identified
        and not any(entry.key_hash in remembered for entry in identified)
    ):
        is_first_run = True
        issues.append(
            Issue(
                "feed_discovered",
                "the web page advertises another feed than before; its items were read "
                "as on a first run",
            )
        )

    changed: list[tuple[_Identified, ChangeType]] = []
    unchanged = 0
    for entry in identified:
        old = remembered.get(entry.key_hash)
        if old is None:
            changed.append((entry, "new"))
        elif old != entry.content_hash and old not in _earlier_content_hashes(entry.item, ignored):
            changed.append((entry, "updated"))
        else:
            unchanged += 1

    to_emit = _select_for_emission(changed, is_first_run, settings, dates_not_after)
    if len(to_emit) > settings.max_items_per_run:
        # New items go first: a wave of updates (every enclosure URL of an archive
        # changed) must not hold back this week's episode for runs. New items go oldest
        # first: a feed that keeps publishing at the cap's pace would otherwise push its
        # backlog back run after run until it leaves the feed. Updates go newest first:
        # a feed that changes its whole archive on every fetch (dynamic ad insertion
        # announcing another enclosure length) would otherwise give the same oldest
        # items run after run and never an edit of this week's. A deferred update keeps
        # its old hash, so it comes again next run.
        updated = [entry for entry, kind in to_emit if kind == "updated"]
        to_emit = _oldest_first([c for c in to_emit if c[1] == "new"]) + [
            (entry, "updated") for entry in _newest_first(updated, dates_not_after)
        ]
    emit_ids = {id(entry) for entry, _ in to_emit[: settings.max_items_per_run]}
    deferred = [entry for entry, _ in to_emit[settings.max_items_per_run :]]
    deferred_ids = {id(entry) for entry in deferred}

    prefix = _delivery_prefix(settings.monitor_id, settings.feed_url)
    # Emitted in document order, whatever order chose them.
    changes = tuple(
        [
            _change(entry, change_type, prefix)
            for entry, change_type in changed
            if id(entry) in emit_ids
        ]
    )
    largest = max(len(identified), (bookmark.largest_document or 0) if bookmark else 0)
    memory = _remember(
        identified, remembered, deferred_ids, _memory_bound(largest, settings.max_state_items)
    )

    new_count = sum(1 for _, kind in changed if kind == "new")
    if (
        not is_first_run
        and remembered
        and 1 < len(identified) == new_count
        and _mostly_newer(identified, bookmark.newest_item_at if bookmark else None)
    ):
        # The document moved on past everything it showed before: a feed that publishes
        # faster than it is read loses the items that came and went between runs.
        issues.append(
            Issue(
                "possible_gap",
                f"none of the document's {new_count} items was seen before and most are "
                "newer than the newest seen: items published and gone between runs may "
                "have been missed",
            )
        )
    if duplicates:
        issues.append(
            Issue("duplicate_id", f"{duplicates} items repeat an earlier item exactly (dropped)")
        )
    if deferred:
        issues.append(Issue("items_deferred", f"{len(deferred)} changes are left for a later run"))
    if untracked:
        issues.append(
            Issue(
                "state_trimmed",
                f"{untracked} items past the newest max_state_items (by date, else document "
                "order) are not tracked",
            )
        )
    counts = ItemCounts(
        seen=len(items),
        new=new_count,
        updated=len(changed) - new_count,
        unchanged=unchanged + untracked,
        emitted=len(changes),
        deferred=len(deferred),
        remembered=len(memory) // ITEM_BYTES,
        duplicates=duplicates,
    )
    return Delta(changes, counts, memory, tuple(issues), largest)


def _newest_tracked(
    identified: list[_Identified], limit: int, not_after: str | None
) -> list[_Identified]:
    """The ``limit`` newest items (as emit_recent ranks them: undated ones after the dated,
    in document order), in document order. Ranked by date, not by place in the document:
    an archive that lists its first episode first appends each new one at its end."""
    keep = {id(entry) for entry in _newest_first(identified, not_after)[:limit]}
    return [entry for entry in identified if id(entry) in keep]


def _mostly_newer(identified: list[_Identified], newest_seen: str | None) -> bool:
    """Whether most dated items (more than half, and some are dated) are newer than the
    newest item seen before: new ids on old items are a feed renaming its ids, not a
    gap; one backdated item among new ones does not hide a gap."""
    if not newest_seen:
        return False
    dates = [date for entry in identified if (date := _item_date(entry.item))]
    return 2 * sum(1 for date in dates if date > newest_seen) > len(dates)


def _memory_bound(largest_document: int, max_state_items: int) -> int:
    """How many items a feed remembers: its largest document's and some history.

    History (items gone from the document) guards against items that come back: a
    document cut short for a run, items rotating in and out, a deleted item letting an
    older one back in. Kept without bound, an ordinary 20-item feed would grow towards
    max_state_items (80 KB of state) over the years. It is bounded by the largest
    document the feed has had, so a document cut short for a run loses nothing.
    """
    return min(
        max_state_items,
        max(HISTORY_FACTOR * largest_document, largest_document + MIN_HISTORY_ITEMS),
    )


def _oldest_first(
    changes: list[tuple[_Identified, ChangeType]],
) -> list[tuple[_Identified, ChangeType]]:
    """Dated changes oldest first, then undated ones from the end of the document (feeds
    list newest first)."""
    dated = [c for c in changes if _item_date(c[0].item)]
    undated = [c for c in changes if not _item_date(c[0].item)]
    dated.sort(key=lambda c: _item_date(c[0].item) or "")
    return dated + undated[::-1]


def _short(full: bytes) -> int:
    return int.from_bytes(full[:4], "big")


def _select_for_emission(
    changed: list[tuple[_Identified, ChangeType]],
    is_first_run: bool,
    settings: DeltaSettings,
    dates_not_after: str | None,
) -> list[tuple[_Identified, ChangeType]]:
    """Changes that should be emitted, in emission order (before the per-run cap)."""
    if is_first_run:
        if settings.first_run_mode == "baseline_only":
            return []
        if settings.first_run_mode == "emit_recent":
            newest = _newest_first([entry for entry, _ in changed], dates_not_after)
            recent = newest[: settings.max_initial_items]
            keep = {id(entry) for entry in recent}
            changed = [(entry, kind) for entry, kind in changed if id(entry) in keep]
    if settings.start_date is not None:
        # Only new items: an edit of an item already remembered happens now, whatever
        # the item's own dates say.
        start = settings.start_date
        changed = [
            (entry, kind)
            for entry, kind in changed
            if kind == "updated" or (_latest_date(entry.item) or start) >= start
        ]
    return changed


def _change(entry: _Identified, change_type: ChangeType, prefix: hashlib.blake2b) -> ItemChange:
    item_fingerprint = f"{FINGERPRINT_VERSION}:{entry.fingerprint.hex()}"
    hashed = prefix.copy()  # == delivery_id(monitor_id, feed_url, item_id, item_fingerprint)
    hashed.update(f"{entry.item_id}{_SEP}{item_fingerprint}".encode())
    return ItemChange(
        entry.item,
        entry.item_id,
        entry.id_source,
        change_type,
        item_fingerprint,
        hashed.hexdigest(),
        entry.issues,
    )


def _remember(
    identified: list[_Identified],
    remembered: dict[int, int],
    deferred_ids: set[int],
    max_items: int,
) -> bytes:
    """The new item memory: this document's (tracked) items first, then older ones.

    A deferred new item is not remembered (it must come out as new later); a deferred
    update keeps its old content hash (it must come out as updated later).
    """
    pairs: list[tuple[int, int]] = []
    current: set[int] = set()
    for entry in identified:
        current.add(entry.key_hash)
        if id(entry) in deferred_ids:
            old = remembered.get(entry.key_hash)
            if old is not None:
                pairs.append((entry.key_hash, old))
            continue
        pairs.append((entry.key_hash, entry.content_hash))
    for key, content in remembered.items():
        if len(pairs) >= max_items:
            break
        if key not in current:
            pairs.append((key, content))
    return pack_items(pairs[:max_items])
