"""``parse_feed``: sniff the document, then read it with its format's module."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue, ParseError, shown_label
from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse.atom import atom_feed
from tap_feeddelta.parse.budget import url_budget_bytes
from tap_feeddelta.parse.discovery import advertised_feeds
from tap_feeddelta.parse.encoding import utf8_document, utf8_page
from tap_feeddelta.parse.jsonfeed import json_document, json_feed, json_format
from tap_feeddelta.parse.rss import rss_feed
from tap_feeddelta.parse.sniff import document_kind, feed_format, looks_like_html, root_local_name
from tap_feeddelta.parse.xmldoc import XmlUnreadable, xml_document

__all__ = ["parse_feed"]

# A document with no feed format nor HTML hint is searched for feed links only if it has one.
_LINK_TAG: Final = re.compile(rb"<link[\s/>]", re.IGNORECASE)


def parse_feed(body: bytes, content_type: str | None, url: str) -> ParsedFeed:
    """The feed in ``body`` (fetched from ``url``), normalized. Raises ``ParseError``."""
    try:
        return _parse(body, content_type, url)
    except ParseError:
        raise
    except (etree.LxmlError, RecursionError) as exc:  # the one place lxml's errors are mapped
        raise ParseError("invalid_feed", "The document could not be read.") from exc


def _not_a_feed(body: bytes, content_type: str | None, data: bytes, url: str) -> ParseError:
    """A web page, with the feeds it advertises (``data`` is the body as a feed's UTF-8)."""
    feeds = advertised_feeds(utf8_page(body, content_type, data), url)
    message = "A web page, not a feed." + (" It advertises feeds." if feeds else "")
    return ParseError("not_a_feed", message, advertised_feeds=feeds)


# XML documents given for a feed by mistake, by their root element's name.
_KNOWN_ROOTS: Final = {
    "urlset": "a sitemap",
    "sitemapindex": "a sitemap",
    "opml": "an OPML list of feeds: list them in feed_urls",
}


def _not_a_feed_xml(root_name: str) -> str:
    """The message for an XML document that is no feed: its root element's name (shown
    safe, it is the document's), and what such a document usually is."""
    what = _KNOWN_ROOTS.get(root_name.lower())
    shown = shown_label(root_name, 32)
    return f"The XML document is not a feed (its root element is {shown}" + (
        f": {what})." if what else ")."
    )


def _no_feed(
    body: bytes, content_type: str | None, data: bytes, url: str, error: ParseError
) -> ParseError:
    """``error``, for a document that is no feed, unless it is a web page that advertises
    feeds past where HTML is recognised (behind a server's warnings)."""
    if _LINK_TAG.search(data) is None:
        return error
    found = _not_a_feed(body, content_type, data, url)
    return found if found.advertised_feeds else error


def _parse(body: bytes, content_type: str | None, url: str) -> ParsedFeed:
    if not body or not body.strip():
        raise ParseError("invalid_feed", "The document is empty.")
    decoded = utf8_document(body, content_type)
    data = decoded.data
    kind = document_kind(data)
    if kind == "json":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError("invalid_feed", "The JSON is not valid UTF-8.") from exc
        document = json_document(text)
        budget = url_budget_bytes(len(data), url, has_xml_base=False)
        parsed = json_feed(document, json_format(document), url, url_budget_bytes=budget)
        if decoded.issues:
            return _with_issues(parsed, decoded.issues)
        return parsed
    if kind == "other":
        error = ParseError("not_a_feed", "The document is neither XML nor JSON.")
        raise _no_feed(body, content_type, data, url, error)
    try:
        doc = xml_document(data)
    except XmlUnreadable as exc:
        if looks_like_html(data):
            raise _not_a_feed(body, content_type, data, url) from exc
        error = ParseError("invalid_feed", "The document could not be read as XML.")
        raise _no_feed(body, content_type, data, url, error) from exc
    fmt = feed_format(doc.root)
    if fmt is None:
        if root_local_name(doc.root).lower() == "html" or looks_like_html(data):
            raise _not_a_feed(body, content_type, data, url)
        error = ParseError("not_a_feed", _not_a_feed_xml(root_local_name(doc.root)))
        raise _no_feed(body, content_type, data, url, error)
    doc.issues[:0] = decoded.issues
    budget = url_budget_bytes(len(data), url, has_xml_base=doc.has_xml_base)
    if fmt.startswith("atom"):
        return atom_feed(doc, fmt, url, url_budget_bytes=budget)
    return rss_feed(doc, fmt, url, url_budget_bytes=budget)


def _with_issues(parsed: ParsedFeed, issues: tuple[Issue, ...]) -> ParsedFeed:
    return replace(parsed, issues=(*issues, *parsed.issues))
