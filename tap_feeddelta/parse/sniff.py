"""What kind of document the bytes are, from the bytes themselves (never the media type:
feeds are often served as text/html or text/plain)."""

from __future__ import annotations

import re
from typing import Final, Literal

from lxml import etree

from tap_feeddelta.models import FeedFormat
from tap_feeddelta.parse.atom import atom_format
from tap_feeddelta.parse.rss import rss_format
from tap_feeddelta.parse.xmldoc import JUNK_SEARCH_BYTES

DocumentKind = Literal["json", "markup", "other"]

_LEADING_SPACE: Final = re.compile(rb"\s*")
_HTML_HINT: Final = re.compile(rb"<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<meta\s", re.I)


def document_kind(data: bytes) -> DocumentKind:
    """JSON, markup or something else, from the first non-blank byte (``data`` is UTF-8).

    Markup is looked for in the window where the XML reader skips text before the XML
    (a server's warnings), so that every document it could read is passed to it.
    """
    blank = _LEADING_SPACE.match(data)
    start = blank.end() if blank else 0
    if data.startswith(b"{", start):
        return "json"
    if data.find(b"<", start, start + JUNK_SEARCH_BYTES) >= 0:
        return "markup"
    return "other"


def looks_like_html(data: bytes) -> bool:
    return _HTML_HINT.search(data, 0, 4096) is not None


def root_local_name(root: etree._Element) -> str:
    tag = root.tag
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2].rpartition(":")[2]


def feed_format(root: etree._Element) -> FeedFormat | None:
    """The feed format a root element starts, or ``None`` when it starts none."""
    local = root_local_name(root)
    if local == "feed":
        return atom_format(root)
    if local == "RDF" or local == "rdf":
        return "rss-1.0"
    if local.lower() == "rss":
        return rss_format("rss", root)
    if local == "channel":
        return "rss-0.9x"
    return None
