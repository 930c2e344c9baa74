"""Items of a document that names a known namespace otherwise (``names.ALIASES``), as
versions before read them: they read those elements as nothing.

Such an item gains what the elements give (Squarespace's images as enclosures, an
untitled post's media:title), so its fingerprint, and for an item known by its enclosure
its id, differ from what a state those versions wrote holds. ``ParsedItem.read_before``
keeps their reading of each field that differs: an unchanged item stays unchanged across
the upgrade (fingerprints.py). The readers read the item a second time for it, with a
``TagKey`` that knows no alias, only in a document that uses one.
"""

from __future__ import annotations

from typing import Any, Final, cast

from tap_feeddelta.models import ParsedItem, ReadBefore

# The fields an extension's elements give (ReadBefore can hold each): the readers read
# no id and no content from the namespaces that have aliases.
_FIELDS: Final = (
    "url",
    "title",
    "summary",
    "authors",
    "tags",
    "published_at",
    "updated_at",
    "enclosures",
)
# The fields whose cut_digests entries go with them (ReadBefore's "<field>_cuts").
_CUT_FIELDS: Final = frozenset({"title", "summary"})


def with_reading_without_aliases(item: ParsedItem, then: ParsedItem) -> ParsedItem:
    """``item`` with, in ``read_before``, each field ``then`` (the same item read without
    the aliases, as versions before read it) holds otherwise, as ``then`` holds it: its
    cut_digests entries with a title or summary. ``item`` itself when none differs."""
    if then == item:
        return item
    earlier: dict[str, Any] = dict(item.read_before)
    changed = False
    for field in _FIELDS:
        value = getattr(then, field)
        if value != getattr(item, field):
            earlier[field] = value
            changed = True
            if field in _CUT_FIELDS:
                earlier[f"{field}_cuts"] = tuple(
                    [cut for cut in then.cut_digests if cut[0] == field]
                )
    if not changed:
        return item
    return item._replace(read_before=tuple(cast(ReadBefore, earlier).items()))
