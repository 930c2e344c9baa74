"""Media RSS (``media:``): an item's title and description when it gives none itself.

YouTube's Atom feed and many video and photo feeds say what an item is only in Media RSS
elements, which may sit on the item, in a ``media:group`` or in a ``media:content``.
Podcast items may name themselves only in ``itunes:title``, which comes before them.
"""

from __future__ import annotations

from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue
from tap_feeddelta.parse import fields
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


def fallback_title(
    key: TagKey,
    itunes_title: str | None,
    elements: list[etree._Element],
    issues: list[Issue],
    *,
    unescape_twice: bool,
) -> str | None:
    """The title of an item whose own title (RSS ``title`` or ``dc:title``, Atom ``title``)
    is missing or has no words: its ``itunes:title``, else its Media RSS title.

    itunes:title comes first: it names the episode, the item itself, where a media:title
    names a media object (and a deeper one a single rendition). itunes:title has no
    declared kind: it is read as an RSS title is, HTML only when it shows markup."""
    if itunes_title:
        found = fields.title(
            itunes_title, fields.rss_title_kind(itunes_title), issues, unescape_twice=unescape_twice
        )
        if found is not None:
            return found
    if not elements:
        return None
    raw, kind = media_text(key, elements, "media:title")
    return fields.title(raw, kind, issues, unescape_twice=unescape_twice)
