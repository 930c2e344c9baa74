"""Pure change detection: (old bookmark, parsed feed, settings) → changes + new item memory.

Each item's identity comes from identity.py (ids, items sharing one told apart, exact
repeats dropped) and its fingerprint from fingerprints.py. The fingerprint covers what a
user sees of an item whatever content_mode says, so changing that never makes items look
updated. No clock, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, NamedTuple

from tap_feeddelta.errors import Issue
from tap_feeddelta.fingerprints import (
    FINGERPRINT_VERSION,
    SEP,
    IdSourceOut,
    compared_item,
    delivery_prefix,
    earlier_content_hashes,
    earlier_ids,
    fingerprint_bytes,
    key_hash,
    short_hash,
    site_move_spellings,
)
from tap_feeddelta.identity import Identified, identify
from tap_feeddelta.models import FirstRunMode, ParsedItem
from tap_feeddelta.state import (
    ITEM_BYTES,
    FeedBookmark,
    held_back_key,
    pack_held_back,
    pack_items,
    unpack_held_back,
    unpack_items,
)

ChangeType = Literal["new", "updated"]

# Items remembered per feed: at least its largest document's, and history of gone
# items up to this many times that, or this many more (see _memory_bound).
HISTORY_FACTOR: Final = 4
MIN_HISTORY_ITEMS: Final = 100


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
    # New items left for a later run, not remembered (the bookmark's new_held_back).
    new_held_back: bytes = b""


def _carry_over_renamed(
    identified: list[Identified],
    remembered: dict[int, int],
    ignored: tuple[str, ...],
    ids_before: dict[int, tuple[str, ...]],
) -> list[Identified]:
    """Items whose id changed (they began or stopped sharing one, or an earlier version
    gave them another) with their content remembered under an earlier id (as this version
    or an earlier one hashed it): moved to their id in ``remembered``, so they are
    unchanged, and the earlier id is forgotten (it could later match another item).
    An item sharing an id takes the memory of the first of ``ids_before`` (by its key)
    remembered whatever the content: no other item of the document can have had that
    id (identity's _with_shared_ids_told_apart), so the content that differs is an edit
    of it (an update). Returns the items remembered under none of their ids, in
    document order."""
    unmatched: list[Identified] = []
    for entry in identified:
        if entry.key_hash in remembered:
            # Remembered under its own id: unchanged, or an update of what it remembers
            # (another id's memory is no business of it, and its ids cost to build).
            continue
        earlier_hashes: list[int] | None = None
        ids = earlier_ids(entry.item, entry.item_id, entry.id_source, entry.fingerprint, ignored)
        for item_id in ids:
            key = key_hash(item_id)
            old = remembered.get(key)
            if old is None:
                continue
            if old != entry.content_hash:
                if earlier_hashes is None:
                    earlier_hashes = earlier_content_hashes(entry.item, ignored)
                if old not in earlier_hashes:
                    continue
            del remembered[key]
            remembered[entry.key_hash] = entry.content_hash
            break
        else:
            before_key = _first_remembered(ids_before.get(entry.key_hash, ()), remembered)
            if before_key is None:
                unmatched.append(entry)
            else:
                remembered[entry.key_hash] = remembered.pop(before_key)
    return unmatched


def _first_remembered(
    ids: Iterable[str], remembered: dict[int, int], listed_keys: Container[int] = ()
) -> int | None:
    """The key of the first of ``ids`` remembered and not in ``listed_keys`` (the
    document's own), if any."""
    for item_id in ids:
        key = key_hash(item_id)
        if key in remembered and key not in listed_keys:
            return key
    return None


def _carry_over_moved_ids(
    unmatched: list[Identified],
    listed_keys: set[int],
    remembered: dict[int, int],
    newest_seen: str | None,
) -> list[Identified]:
    """Items known by a link (their own, or a permalink guid) remembered under that link
    as spelled before their site moved (site_move_spellings: another scheme, ``www.``,
    a trailing slash), a spelling gone from the document: that item, whatever else
    changed with the move (a new theme or platform rewrites every item's content). Its
    new id gets that memory, an update where the item changed; the old spelling keeps
    it too, so links flipping back (caches that disagree on the scheme) are no change.
    Not an item dated after the newest item seen (``newest_seen``): a new post. Returns
    the items still unmatched."""
    still: list[Identified] = []
    for entry in unmatched:
        date = _newest_date(entry.item, None)
        if newest_seen is not None and date is not None and date > newest_seen:
            still.append(entry)
            continue
        spellings = site_move_spellings(entry.item_id)
        before_key = _first_remembered(spellings, remembered, listed_keys)
        if before_key is None:
            still.append(entry)
        else:
            remembered[entry.key_hash] = remembered[before_key]
    return still


def _carry_over_by_content(
    unmatched: list[Identified],
    listed_keys: set[int],
    tracked: int,
    held_back: set[int],
    remembered: dict[int, int],
    newest_seen: str | None,
    ignored: tuple[str, ...],
) -> None:
    """Items remembered under no id they may have had (``unmatched``) whose content is
    exactly that of a remembered item gone from the document (not in ``listed_keys``: all
    its items', tracked or not): that item under a new id. A guid made anew on every fetch (a
    timestamp, a session id) or a publisher moving from numeric guids to permalinks
    would otherwise give every item as new, on every run or once. The memory moves to
    the new id, so the item is unchanged.

    An item whose content is that of a gone item but for its link, spelled as before a
    site moved (site_move_spellings: to https, without www.), is that item too: a site
    that moves respells the link of every item, the id of those without guid. It keeps
    the memory as it was, so it comes out updated (its url changed), not new.

    Only items not dated after the newest item seen (``newest_seen``; ``None`` for a feed
    whose items never had dates, when only undated items are): a new post is, and is
    never taken for a renamed one (the content hash is 32 bits). Undated items are taken:
    scraped and generated feeds, the ones that make guids anew, often have no dates, and
    would give every item as new on every run. Each gone item is taken once (of gone
    items of one content, each by another item). And only in a wholesale rename: when
    more than half of the document's ``tracked`` items (two at least) are matched so. A
    guid identifies its item (RSS): one item under a new id among items that keep theirs
    is a post deleted and published again, or another post, and is new. Untracked items
    (past max_state_items) do not count: they are never compared, and would make the
    rename of a document longer than that never wholesale. The new items the last run
    held back (``held_back``, their held_back_key; max_items_per_run) were never
    remembered and come back unmatched: those under their ids (stable guids) are new
    items that keep their ids, no candidates, and count against a rename; those under
    new ids (guids made anew) would make the rename of a feed with a backlog never
    wholesale (the same few items new on every run, the others never), so as many as did
    not come back under their ids are left out of the count, at most as many as
    unmatched items match no gone one; with some left out, one item matched is enough
    (a cap of one a run).

    The risk taken with undated items, which no date tells from a new post: a new undated
    item whose content (link, title, text, …) is exactly that of an item that just left
    the document (or whose 32-bit content hash is one's), in a document where more than
    half of the tracked items are so at once, is taken for that item and not emitted: a
    feed of undated alerts alike but for their guids, turning over all at once. One such
    item among items that keep their ids is new.
    """
    others = unmatched
    if held_back:
        others = [entry for entry in unmatched if held_back_key(entry.key_hash) not in held_back]
    renamed_away = max(len(held_back) - (len(unmatched) - len(others)), 0)
    candidates = [entry for entry in others if _may_be_renamed(entry.item, newest_seen)]
    if not _is_wholesale(len(candidates), tracked, min(renamed_away, len(others))):
        return  # too few to be a wholesale rename, however many match
    # Gone items by content, each list the most recently seen last (taken first): items
    # of one content (undated ones alike) are as many gone items, each taken once.
    gone_by_content: dict[int, list[int]] = {}
    for key, content in reversed(remembered.items()):  # the most recently seen last
        if key not in listed_keys:
            gone_by_content.setdefault(content, []).append(key)
    # (item, the gone item's key, whether it keeps the content remembered: an update)
    matches: list[tuple[Identified, int, bool]] = []
    moved: list[Identified] = []
    for entry in candidates:
        gone = _take(gone_by_content, entry.content_hash)
        if gone is not None:
            matches.append((entry, gone, False))
        elif entry.item.url and "url" not in ignored:
            moved.append(entry)
    for entry in moved:  # after every exact match: those take precedence
        compared = compared_item(entry.item)
        for spelling in site_move_spellings(compared.url or ""):
            before = fingerprint_bytes(compared._replace(url=spelling), ignored=ignored)
            gone = _take(gone_by_content, short_hash(before))
            if gone is not None:
                matches.append((entry, gone, True))
                break
    if not _is_wholesale(len(matches), tracked, min(renamed_away, len(others) - len(matches))):
        return
    for entry, gone, keeps_content in matches:
        content = remembered.pop(gone)
        remembered[entry.key_hash] = content if keeps_content else entry.content_hash


def _may_be_renamed(item: ParsedItem, newest_seen: str | None) -> bool:
    """Whether the item may be a remembered one under a new id: undated, or dated not
    after the newest item seen (a feed without ``newest_seen`` never had dates)."""
    date = _newest_date(item, None)
    return date is None or (newest_seen is not None and date <= newest_seen)


def _take(gone_by_content: dict[int, list[int]], content: int) -> int | None:
    """The key of the most recently seen gone item of that content not taken yet, taken
    now."""
    keys = gone_by_content.get(content)
    return keys.pop() if keys else None


def _is_wholesale(renamed: int, tracked: int, left_out: int) -> bool:
    """Whether ``renamed`` items of a document of ``tracked`` items, ``left_out`` of them
    new items held back by the last run under new ids, are a wholesale rename: more than
    half of the others, two at least (one, beside items left out)."""
    return renamed >= (1 if left_out else 2) and 2 * renamed > tracked - left_out


def _item_date(item: ParsedItem) -> str | None:
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


def _listed_oldest_first(entries: Iterable[Identified]) -> bool:
    """Whether the document lists its items oldest first: more of its dated items are
    newer than the dated item listed before them than older. Without a sign (no two dates
    differ), feeds list newest first. Items of one date, and undated ones, are told apart
    by their place in the document, as the feed lists them."""
    rising = falling = 0
    previous = ""
    for entry in entries:
        date = _item_date(entry.item)
        if not date:
            continue
        if previous and date != previous:
            if date > previous:
                rising += 1
            else:
                falling += 1
        previous = date
    return rising > falling


def _newest_first(
    candidates: list[Identified], not_after: str | None, oldest_listed_first: bool
) -> list[Identified]:
    """Items newest first as newest_item_at reads them, then those without such a date
    (undated, or dated only ahead of ``not_after``); items of one date, and the undated
    ones, the newest listed first (the first of a feed listing newest first)."""
    dated: list[tuple[str, Identified]] = []
    undated: list[Identified] = []
    # The sort is stable: ties keep this order.
    for candidate in candidates[::-1] if oldest_listed_first else candidates:
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
    identified, duplicates, ids_before = identify(items, ignored)
    remembered = unpack_items(bookmark.items) if bookmark else {}
    listed = identified  # tracked or not
    identified, untracked = _tracked(identified, settings.max_state_items, dates_not_after)
    if remembered:
        unmatched = _carry_over_renamed(identified, remembered, ignored, ids_before)
        if unmatched:  # new items, or items whose id changed: told apart here
            listed_keys = {entry.key_hash for entry in listed}
            newest = bookmark.newest_item_at if bookmark else None
            unmatched = _carry_over_moved_ids(unmatched, listed_keys, remembered, newest)
            if unmatched:
                tracked = len(identified)
                held_back = unpack_held_back(bookmark.new_held_back) if bookmark else set()
                _carry_over_by_content(
                    unmatched, listed_keys, tracked, held_back, remembered, newest, ignored
                )
    is_first_run, issues = _first_run(bookmark, identified, remembered, from_another_feed)
    changed, unchanged = _classified(identified, remembered, ignored)
    to_emit = _select_for_emission(changed, is_first_run, settings, dates_not_after, identified)
    emit_ids, deferred = _capped(to_emit, identified, settings.max_items_per_run, dates_not_after)

    prefix = delivery_prefix(settings.monitor_id, settings.feed_url)
    # Emitted in document order, whatever order chose them.
    changes = tuple(
        [
            _change(entry, change_type, prefix, remembered)
            for entry, change_type in changed
            if id(entry) in emit_ids
        ]
    )
    largest = max(len(identified), (bookmark.largest_document or 0) if bookmark else 0)
    deferred_ids = {id(entry) for entry in deferred}
    memory = _remember(
        identified, remembered, deferred_ids, _memory_bound(largest, settings.max_state_items)
    )

    new_count = sum(1 for _, kind in changed if kind == "new")
    if not is_first_run and remembered:
        newest_seen = bookmark.newest_item_at if bookmark else None
        issues += _gap_issue(identified, new_count, newest_seen)
    issues += _count_issues(duplicates, len(deferred), untracked)
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
    # Deferred new items are the deferred items not remembered (_classified).
    new_held_back = pack_held_back(
        entry.key_hash for entry in deferred if entry.key_hash not in remembered
    )
    return Delta(changes, counts, memory, tuple(issues), largest, new_held_back)


def _tracked(
    identified: list[Identified], max_state_items: int, not_after: str | None
) -> tuple[list[Identified], int]:
    """The items tracked, and how many are not. Only as many items as can be remembered
    are tracked: an item that cannot be remembered would come out as new on every run."""
    untracked = max(0, len(identified) - max_state_items)
    if untracked:
        return _newest_tracked(identified, max_state_items, not_after), untracked
    return identified, 0


def _first_run(
    bookmark: FeedBookmark | None,
    identified: list[Identified],
    remembered: dict[int, int],
    from_another_feed: bool,
) -> tuple[bool, list[Issue]]:
    """Whether the items are read as on a first run; and feed_discovered, for a document
    of another feed than the bookmark's (see diff_items)."""
    is_first_run = bookmark is None or not bookmark.has_baseline
    if not (from_another_feed and not is_first_run and identified):
        return is_first_run, []
    if not any(entry.key_hash in remembered for entry in identified):
        is_first_run = True
        how = "its items were read as on a first run"
    else:  # a feed read before (a page switching back), or the same one moved
        how = "some of its items are remembered, and they were compared as usual"
    issue = Issue("feed_discovered", f"the web page advertises another feed than before; {how}")
    return is_first_run, [issue]


def _classified(
    identified: list[Identified], remembered: dict[int, int], ignored: tuple[str, ...]
) -> tuple[list[tuple[Identified, ChangeType]], int]:
    """The new and updated items, in document order; and how many are unchanged."""
    changed: list[tuple[Identified, ChangeType]] = []
    unchanged = 0
    for entry in identified:
        old = remembered.get(entry.key_hash)
        if old is None:
            changed.append((entry, "new"))
        elif old != entry.content_hash and old not in earlier_content_hashes(entry.item, ignored):
            changed.append((entry, "updated"))
        else:
            unchanged += 1
    return changed, unchanged


def _capped(
    to_emit: list[tuple[Identified, ChangeType]],
    identified: list[Identified],
    max_items_per_run: int,
    not_after: str | None,
) -> tuple[set[int], list[Identified]]:
    """Of the changes to emit (in emission order), the ``id`` of those emitted this run,
    and those left for a later one; ``identified`` tells how the document lists items."""
    if len(to_emit) > max_items_per_run:
        # New items go first: a wave of updates (every enclosure URL of an archive
        # changed) must not hold back this week's episode for runs. New items go oldest
        # first: a feed that keeps publishing at the cap's pace would otherwise push its
        # backlog back run after run until it leaves the feed. Updates go newest first:
        # a feed that changes its whole archive on every fetch (dynamic ad insertion
        # announcing another enclosure length) would otherwise give the same oldest
        # items run after run and never an edit of this week's. A deferred update keeps
        # its old hash, so it comes again next run.
        updated = [entry for entry, kind in to_emit if kind == "updated"]
        oldest_listed_first = _listed_oldest_first(identified)
        to_emit = _oldest_first([c for c in to_emit if c[1] == "new"], oldest_listed_first) + [
            (entry, "updated") for entry in _newest_first(updated, not_after, oldest_listed_first)
        ]
    emit_ids = {id(entry) for entry, _ in to_emit[:max_items_per_run]}
    return emit_ids, [entry for entry, _ in to_emit[max_items_per_run:]]


def _gap_issue(
    identified: list[Identified], new_count: int, newest_seen: str | None
) -> list[Issue]:
    """possible_gap, when the document moved on past everything it showed before: a feed
    that publishes faster than it is read loses the items that came and went between
    runs. For a feed with items remembered, not read as on a first run."""
    if not (1 < len(identified) == new_count and _mostly_newer(identified, newest_seen)):
        return []
    return [
        Issue(
            "possible_gap",
            f"none of the document's {new_count} items was seen before and most are "
            "newer than the newest seen: items published and gone between runs may "
            "have been missed",
        )
    ]


def _count_issues(duplicates: int, deferred: int, untracked: int) -> list[Issue]:
    """The issues of items dropped, left for a later run, or not tracked."""
    issues: list[Issue] = []
    if duplicates:
        issues.append(
            Issue("duplicate_id", f"{duplicates} items repeat an earlier item exactly (dropped)")
        )
    if deferred:
        issues.append(Issue("items_deferred", f"{deferred} changes are left for a later run"))
    if untracked:
        issues.append(
            Issue(
                "state_trimmed",
                f"{untracked} items past the newest max_state_items (by date, else document "
                "order) are not tracked",
            )
        )
    return issues


def _newest_tracked(
    identified: list[Identified], limit: int, not_after: str | None
) -> list[Identified]:
    """The ``limit`` newest items (as emit_recent ranks them, but items of one date and
    undated ones always in document order), in document order. Ranked by date, not by
    place in the document: an archive that lists its first episode first appends each new
    one at its end. Not by the guess of how the document is listed, which one item can
    turn: the tracked ties would change with it, and the unchanged ones let go of before
    come out ``new``."""
    ranked = _newest_first(identified, not_after, False)
    keep = {id(entry) for entry in ranked[:limit]}
    return [entry for entry in identified if id(entry) in keep]


def _mostly_newer(identified: list[Identified], newest_seen: str | None) -> bool:
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
    changes: list[tuple[Identified, ChangeType]], oldest_listed_first: bool
) -> list[tuple[Identified, ChangeType]]:
    """Dated changes oldest first, then undated ones; changes of one date, and the
    undated ones, the oldest listed first (the last of a feed listing newest first): a
    date-only feed publishing at the cap's pace would otherwise push back its backlog."""
    listed = changes if oldest_listed_first else changes[::-1]
    dated = [c for c in listed if _item_date(c[0].item)]
    undated = [c for c in listed if not _item_date(c[0].item)]
    dated.sort(key=lambda c: _item_date(c[0].item) or "")  # stable: ties keep their order
    return dated + undated


def _select_for_emission(
    changed: list[tuple[Identified, ChangeType]],
    is_first_run: bool,
    settings: DeltaSettings,
    dates_not_after: str | None,
    identified: list[Identified],
) -> list[tuple[Identified, ChangeType]]:
    """Changes that should be emitted, in emission order (before the per-run cap);
    ``identified``: the document's items, which tell how it lists them."""
    if is_first_run:
        if settings.first_run_mode == "baseline_only":
            return []
        if settings.first_run_mode == "emit_recent":
            newest = _newest_first(
                [entry for entry, _ in changed], dates_not_after, _listed_oldest_first(identified)
            )
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
            if kind == "updated" or (_newest_date(entry.item, None) or start) >= start
        ]
    return changed


def _change(
    entry: Identified,
    change_type: ChangeType,
    prefix: hashlib.blake2b,
    remembered: dict[int, int],
) -> ItemChange:
    """The change to send. Its delivery_id (fingerprints.delivery_id) covers, for an
    update, the content hash the state keeps of the version it replaces: an edit
    reverted (A, B, A) is a version of its own, not the first A again, while a run sent
    again from the same state gives the same ids. A new item's covers no memory, so a
    run without state (--full-refresh) gives it the id it had."""
    item_fingerprint = f"{FINGERPRINT_VERSION}:{entry.fingerprint.hex()}"
    hashed = prefix.copy()
    if change_type == "new":
        hashed.update(f"{entry.item_id}{SEP}{item_fingerprint}".encode())
    else:  # remembered, with another content hash (_classified)
        replaced = remembered[entry.key_hash]
        hashed.update(f"{entry.item_id}{SEP}{item_fingerprint}{SEP}{replaced:08x}".encode())
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
    identified: list[Identified],
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


def as_stale_copy(delta: Delta, bookmark: FeedBookmark) -> Delta:
    """The delta of a stale copy: no changes, the state's memory kept, and its items
    counted unchanged (none moves); a ``stale_copy`` issue in place of deferrals."""
    counts = delta.counts
    older = counts.updated
    issue = Issue(
        "stale_copy",
        f"the document is older than the one read before (an earlier Last-Modified): "
        f"{older} items in it show an earlier version, not sent and not remembered",
    )
    kept = tuple(issue for issue in delta.issues if issue.code != "items_deferred")
    return Delta(
        changes=(),
        counts=replace(
            counts,
            updated=0,
            unchanged=counts.unchanged + older,
            emitted=0,
            deferred=0,
            remembered=bookmark.item_count,
        ),
        remembered_items=bookmark.items,
        issues=(*kept, issue),
        largest_document=delta.largest_document,
        new_held_back=bookmark.new_held_back,
    )
