"""Item identity within one document: each item's id, and items sharing one told apart.

Ids come from fingerprints.py and depend on the document alone, never on memory. Items of
one document that share an id but differ take ids of their own (their own link or
enclosure, remembered under a key no other kind of id reaches, else one derived from the
shared id and their title and date, or their content); exact repeats are dropped and
counted. No memory, no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from functools import partial
from typing import Final, NamedTuple, TypeVar

from tap_feeddelta.errors import Issue
from tap_feeddelta.fingerprints import (
    IdSourceOut,
    compared_item,
    content_id,
    fingerprint_bytes,
    id_candidates,
    item_identity,
    key_hash,
    short_hash,
    title_id,
    told_apart_id,
    with_link,
)
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.visitor_ids import drop_visitor_ids, may_hold_visitor_ids

H = TypeVar("H", bound=Hashable)


class Identified(NamedTuple):
    item: ParsedItem
    item_id: str
    id_source: IdSourceOut
    key_hash: int
    fingerprint: bytes
    content_hash: int  # what the state keeps of the fingerprint
    issues: tuple[Issue, ...]


def identify(
    items: Sequence[ParsedItem], ignored: tuple[str, ...] = ()
) -> tuple[list[Identified], int, dict[int, tuple[str, ...]]]:
    """Items with their identity, in document order; how many exact repeats were dropped;
    and by key, the ids items sharing an id were known by before whatever their content
    (see _with_shared_ids_told_apart).

    Ids depend on the document alone, never on memory, so a run without state gives the
    same ids (and new items' delivery_ids). Nothing distinct is dropped: when items share
    an id (a podcast whose every item links to the show's page, a CMS giving every item
    one guid, a status page whose every item links to its home page), each of them takes
    its link or enclosure id when that is its own, else its title id, and those whose
    title ids are shared too take their content id (``shared_id``). An item that repeats
    an earlier one exactly (but for the ``ignored`` fields) is dropped.
    """
    # Chosen once: the default (nothing ignored) costs not even a keyword argument.
    hashed = partial(fingerprint_bytes, ignored=ignored) if ignored else fingerprint_bytes
    entries: list[Identified] = []
    keys: set[int] = set()
    versions: set[tuple[int, bytes]] = set()  # (id hash, fingerprint)
    shared = False
    duplicates = 0
    for item in items:
        # Ids and fingerprint are of the item as compared; the record shows ``item``.
        # compared_item's own checks, inlined: most links have no ``?`` nor ``;``, and
        # those that have one hold no session or click id.
        url = item.url
        if not url or ("?" not in url and ";" not in url) or may_hold_visitor_ids(url) is None:
            compared = item
        else:
            compared = with_link(item, drop_visitor_ids(url))
        item_id, id_source, issues = item_identity(compared, ignored)
        key = key_hash(item_id)
        full = hashed(compared)
        if (key, full) in versions:
            duplicates += 1  # the same item again
            continue
        versions.add((key, full))
        shared = shared or key in keys
        keys.add(key)
        entries.append(
            Identified(
                item,
                item_id,
                id_source,
                key,
                full,
                short_hash(full),
                item.issues + issues if issues else item.issues,
            )
        )
    if shared:
        entries, ids_before = _with_shared_ids_told_apart(entries, ignored)
        return entries, duplicates, ids_before
    return entries, duplicates, {}


def _with_shared_ids_told_apart(
    entries: list[Identified], ignored: tuple[str, ...]
) -> tuple[list[Identified], dict[int, tuple[str, ...]]]:
    """Every item whose id another item shares takes the next of its id_candidates that is
    its own (no other item of the document has it: a guid shared, its link; a link
    shared, its enclosure), so an edit of its title moves no id; else its title id, and
    those whose title ids collide too (only members of one group can: the shared id is
    part of it) their content id, which differs unless the items do (exact repeats are
    gone already).

    Also, by the key of their id, the ids whose memory is the item's whatever its content
    (no other item of the document can have had them): of an item told apart by its link
    or enclosure, the title id versions before gave it (it collided with none) and that
    value as an id (as the version before kept it, or the item while nothing came before
    the value); of an item whose link or enclosure is no longer its own (a newcomer's own
    id is that URL: a permalink guid), the told_apart_id it had, unless another item could
    have been told apart by that value too."""
    shared = _repeated(entry.key_hash for entry in entries)
    title_ids = {
        index: title_id(entry.item, entry.item_id, ignored)
        for index, entry in enumerate(entries)
        if entry.key_hash in shared
    }
    # Those after the shared one (the first; a derived id has none), of the items sharing.
    others = {
        index: id_candidates(compared_item(entries[index].item), ignored)[1:] for index in title_ids
    }
    taken, told_apart_by_several = (
        _taken_ids(entries, ignored, others) if any(others.values()) else (set(), set())
    )
    colliding = _repeated(title_ids.values())
    out = list(entries)
    ids_before: dict[int, tuple[str, ...]] = {}
    for index, its_title_id in title_ids.items():
        entry = entries[index]
        own = [candidate for candidate in others[index] if candidate[0] not in taken]
        if own:
            out[index] = _as_shared(entry, *own[0])
            before = own[0][0]  # the value as an id
            ids_before[out[index].key_hash] = (
                (before,) if its_title_id in colliding else (its_title_id, before)
            )
            continue
        if its_title_id in colliding:
            out[index] = _as_shared(entry, content_id(entry.item_id, entry.fingerprint))
        else:
            out[index] = _as_shared(entry, its_title_id)
        told_apart_by = [
            told_apart_id(value)
            for value, _ in others[index]
            if value != entry.item_id and value not in told_apart_by_several
        ]
        if told_apart_by:
            ids_before[out[index].key_hash] = tuple(told_apart_by)
    return out, ids_before


def _taken_ids(
    entries: list[Identified],
    ignored: tuple[str, ...],
    others: dict[int, list[tuple[str, IdSourceOut]]],
) -> tuple[set[str], set[str]]:
    """The id_candidates more than one item of the document has (each item's counted
    once: a guid that is its link); and the links and enclosures more than one item could
    be told apart by (those that are not its own id). ``others``: the candidates of the
    items sharing an id but their first, by index."""
    values: list[str] = []
    later: list[str] = []
    for index, entry in enumerate(entries):
        own = others.get(index)
        if own is None:
            candidates = {value for value, _ in id_candidates(compared_item(entry.item), ignored)}
        else:
            candidates = {entry.item_id, *(value for value, _ in own)}
        values += candidates
        candidates.discard(entry.item_id)
        later += candidates
    return _repeated(values), _repeated(later)


def _repeated(values: Iterable[H]) -> set[H]:
    """The values that occur more than once."""
    once: set[H] = set()
    repeated: set[H] = set()
    for value in values:
        (repeated if value in once else once).add(value)
    return repeated


_TOLD_APART_BY: Final[dict[IdSourceOut, str]] = {
    "url": "its link",
    "enclosure": "its enclosure's URL",
    "derived": "derived from it and its title and date, or its content",
}


def _as_shared(entry: Identified, item_id: str, id_source: IdSourceOut = "derived") -> Identified:
    issue = Issue(
        "shared_id",
        f"another item of the document has this item's {entry.id_source} id; "
        f"this one's id is {_TOLD_APART_BY[id_source]}",
    )
    key = told_apart_id(item_id) if id_source != "derived" else item_id
    return entry._replace(
        item_id=item_id,
        id_source=id_source,
        key_hash=key_hash(key),
        issues=(*entry.issues, issue),
    )
