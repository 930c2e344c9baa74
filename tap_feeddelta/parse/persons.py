"""Authors written as elements: Atom persons, and RSS authors written the same way; and
one person named by several elements of an item made one author."""

from __future__ import annotations

from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import Author
from tap_feeddelta.parse import fields
from tap_feeddelta.parse.limits import MAX_AUTHORS
from tap_feeddelta.parse.names import TagKey, text_of
from tap_feeddelta.parse.xmldoc import Bases, child_bases

_URI_PARTS: Final = frozenset({"uri", "url", "homepage"})
_PARTS: Final = _URI_PARTS | {"name", "email"}


def person(
    key: TagKey,
    element: etree._Element,
    bases: Bases,
    has_xml_base: bool,
    issues: list[Issue],
) -> tuple[Author | None, Author | None]:
    """A person: ``name``, ``email`` and ``uri`` children (0.3: ``url``), or a bare text
    that is the name; with the person as versions before read it (``bases``: the base
    now and as they read it), the same object when they read it alike."""
    name = email = uri = None
    for child in element:
        part = key[child.tag]
        if part == "name" and name is None:
            name = text_of(child)
        elif part == "email" and email is None:
            email = text_of(child)
        elif part in _URI_PARTS and uri is None:
            uri = text_of(child)
    if name is None and email is None and uri is None and not len(element):
        name = element.text
    if uri and uri.lstrip()[:7].lower() == "mailto:":
        email, uri = email or uri, None  # an address, not a page (as in JSON Feed)
    if uri and has_xml_base:
        bases = child_bases(element, *bases, issues)
    return fields.author_readings(name, email, uri, *bases, issues)


def is_person(key: TagKey, element: etree._Element) -> bool:
    """Whether an element holds a part of a person (an RSS ``<author>`` written as Atom
    writes one), not only markup around a name."""
    return any(key[child.tag] in _PARTS for child in element)


def merged_authors(found: list[Author]) -> list[Author]:
    """The authors of one item with a person named by several elements (``<author>``
    and ``<dc:creator>``) listed once, where the first of that name stands, with the
    email and the page any of them gives: whatever the order of the elements. Authors of
    one name whose emails (or pages) differ are two people; nameless ones are kept as
    they are. ``found`` itself when no two merge. Past ``MAX_AUTHORS`` + 1 authors no
    more are added (the rest are cut anyway, and reported so): each is compared with at
    most that many."""
    if len(found) == 2:  # the usual case (an <author> and a <dc:creator>), made quick
        first, other = found
        is_one_name = first.name == other.name and first.name is not None
        one = _one_person(first, other) if is_one_name else None
        return found if one is None else [one]
    if len({found_one.name for found_one in found}) == len(found):
        return found  # no name twice: nothing to merge
    merged: list[Author] = []
    is_merged = False
    for found_one in found:
        name = found_one.name
        if name is not None:
            for at, kept in enumerate(merged):
                if kept.name == name and (one := _one_person(kept, found_one)) is not None:
                    merged[at] = one
                    is_merged = True
                    break
            else:
                if len(merged) <= MAX_AUTHORS:
                    merged.append(found_one)
        elif len(merged) <= MAX_AUTHORS:
            merged.append(found_one)
    return merged if is_merged else found


def _one_person(first: Author, other: Author) -> Author | None:
    """The two authors of one name as one, or ``None`` when their emails or pages differ."""
    if first.email and other.email and first.email != other.email:
        return None
    if first.url and other.url and first.url != other.url:
        return None
    if (first.email or not other.email) and (first.url or not other.url):
        return first  # the other adds nothing (no new author: one is slow to build)
    if (other.email or not first.email) and (other.url or not first.url):
        return other
    return Author(first.name, first.email or other.email, first.url or other.url)
