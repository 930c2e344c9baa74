"""Authors written as elements: Atom persons, and RSS authors written the same way."""

from __future__ import annotations

from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import Author
from tap_feeddelta.parse import fields
from tap_feeddelta.parse.names import TagKey, text_of
from tap_feeddelta.parse.xmldoc import child_base

_URI_PARTS: Final = frozenset({"uri", "url", "homepage"})
_PARTS: Final = _URI_PARTS | {"name", "email"}


def person(
    key: TagKey, element: etree._Element, base: str | None, has_xml_base: bool, issues: list[Issue]
) -> Author | None:
    """A person: ``name``, ``email`` and ``uri`` children (0.3: ``url``), or a bare text
    that is the name."""
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
        base = child_base(element, base, issues)
    return fields.author(name, email, uri, base, issues)


def is_person(key: TagKey, element: etree._Element) -> bool:
    """Whether an element holds a part of a person (an RSS ``<author>`` written as Atom
    writes one), not only markup around a name."""
    return any(key[child.tag] in _PARTS for child in element)
