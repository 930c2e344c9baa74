"""Media RSS (``media:``): an item's title and description when it gives none itself.

YouTube's Atom feed and many video and photo feeds say what an item is only in Media RSS
elements, which may sit on the item, in a ``media:group`` or in a ``media:content``.
"""

from __future__ import annotations

from typing import Final

from lxml import etree

from tap_feeddelta.parse.fields import TextKind
from tap_feeddelta.parse.names import TagKey, markup_of, text_of

_HOLDERS: Final = frozenset({"media:group", "media:content"})
# Item → group or content → a group's content.
_LEVELS: Final = 3


def media_text(
    key: TagKey, elements: list[etree._Element], name: str
) -> tuple[str | None, TextKind]:
    """The text of the first non-empty ``name`` (``media:title``, ``media:description``)
    among an item's media elements (its ``media:`` children), and how to read it. The one
    closest to the item wins: the spec lets a deeper one describe a single rendition."""
    level = elements
    for _ in range(_LEVELS):
        for element in level:
            if key[element.tag] == name and text_of(element).strip():
                return _text(element)
        level = [child for element in level if key[element.tag] in _HOLDERS for child in element]
    return None, "text"


def _text(element: etree._Element) -> tuple[str, TextKind]:
    """A Media RSS text element: ``type="html"`` holds escaped HTML, any other is plain."""
    if (element.get("type") or "").strip().lower() == "html":
        return markup_of(element, is_text_markup=True), "html"
    return text_of(element), "text"
