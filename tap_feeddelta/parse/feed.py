"""``parse_feed``: sniff the document, then read it with its format's module."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue, ParseError
from tap_feeddelta.models import Enclosure, ParsedFeed, ParsedItem
from tap_feeddelta.parse import fields
from tap_feeddelta.parse.atom import atom_feed
from tap_feeddelta.parse.budget import url_budget_bytes
from tap_feeddelta.parse.discovery import advertised_feeds
from tap_feeddelta.parse.encoding import utf8_document, utf8_page
from tap_feeddelta.parse.jsonfeed import json_document, json_feed, json_format
from tap_feeddelta.parse.rss import rss_feed
from tap_feeddelta.parse.sniff import document_kind, feed_format, looks_like_html, root_local_name
from tap_feeddelta.parse.urls import UrlReadings, readings_before, urls_read_as_before
from tap_feeddelta.parse.xmldoc import XmlUnreadable, xml_document

__all__ = ["parse_feed"]

# A document with no feed format nor HTML hint is searched for feed links only if it has one.
_LINK_TAG: Final = re.compile(rb"<link[\s/>]", re.IGNORECASE)


def parse_feed(body: bytes, content_type: str | None, url: str) -> ParsedFeed:
    """The feed in ``body`` (fetched from ``url``), normalized. Raises ``ParseError``."""
    try:
        with readings_before() as readings:
            parsed = _parse(body, content_type, url)
        if readings.lost:
            return _with_urls_read_before(parsed, readings, _as_before(body, content_type, url))
        return _with_urls_read_before(parsed, readings, None) if readings.by_url else parsed
    except ParseError:
        raise
    except (etree.LxmlError, RecursionError) as exc:  # the one place lxml's errors are mapped
        raise ParseError("invalid_feed", "The document could not be read.") from exc


def _not_a_feed(body: bytes, content_type: str | None, data: bytes, url: str) -> ParseError:
    """A web page, with the feeds it advertises (``data`` is the body as a feed's UTF-8)."""
    feeds = advertised_feeds(utf8_page(body, content_type, data), url)
    message = "A web page, not a feed." + (" It advertises feeds." if feeds else "")
    return ParseError("not_a_feed", message, advertised_feeds=feeds)


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
        error = ParseError("not_a_feed", "The XML document is not a feed.")
        raise _no_feed(body, content_type, data, url, error)
    doc.issues[:0] = decoded.issues
    budget = url_budget_bytes(len(data), url, has_xml_base=doc.has_xml_base)
    if fmt.startswith("atom"):
        return atom_feed(doc, fmt, url, url_budget_bytes=budget)
    return rss_feed(doc, fmt, url, url_budget_bytes=budget)


def _with_issues(parsed: ParsedFeed, issues: tuple[Issue, ...]) -> ParsedFeed:
    return replace(parsed, issues=(*issues, *parsed.issues))


def _as_before(body: bytes, content_type: str | None, url: str) -> ParsedFeed | None:
    """The document with its URLs read as versions before this one read them (None when
    it is no feed so read). For a document in which a URL they read reads as none now,
    rare: the item that held it has no URL now to find its reading then by."""
    try:
        with urls_read_as_before():
            return _parse(body, content_type, url)
    except ParseError:
        return None


def _with_urls_read_before(
    parsed: ParsedFeed, readings: UrlReadings, as_before: ParsedFeed | None
) -> ParsedFeed:
    """The feed with ``read_before`` of its items holding the URLs versions before this one
    read otherwise: an item's URL and enclosures as ``as_before`` (the document with its
    URLs so read, when there is one) holds them at the item's place in the document, else
    by the reading now (``readings``, see ``urls.readings_before``); its authors' URLs by
    the reading now (the author cache leaves ``as_before`` the authors as read now)."""
    twins = {item.source_pointer: item for item in as_before.items} if as_before else {}
    items = tuple(
        [
            _item_with_urls_read_before(item, readings.by_url, twins.get(item.source_pointer))
            for item in parsed.items
        ]
    )
    return replace(parsed, items=items)


def _item_with_urls_read_before(
    item: ParsedItem, readings: dict[str, str | None], twin: ParsedItem | None
) -> ParsedItem:
    """``item`` with what versions before read otherwise of its URLs in ``read_before``;
    ``twin``: the item read with its URLs as they read them, if any."""
    earlier = item.fields_read_before()
    enclosures = earlier.get("enclosures", item.enclosures)
    before: fields.ReadBefore = {}
    if twin is not None:
        if twin.url != item.url:
            before["url"] = twin.url
        enclosures = _enclosures_with_urls_of(enclosures, twin.enclosures)
    else:
        if item.url in readings:
            before["url"] = readings[item.url or ""]
        if any(enclosure.url in readings for enclosure in enclosures):
            enclosures = tuple(
                [
                    replace(enclosure, url=url)
                    for enclosure in enclosures
                    if (url := readings.get(enclosure.url, enclosure.url)) is not None
                ]
            )
    if enclosures != item.enclosures:
        before["enclosures"] = enclosures
    authors = earlier.get("authors", item.authors)
    if any(author.url in readings for author in authors):
        before["authors"] = tuple(
            [replace(author, url=readings.get(author.url or "", author.url)) for author in authors]
        )
    if not before:
        return item
    earlier.update(before)
    return fields.with_read_before(item, earlier)


def _enclosures_with_urls_of(
    enclosures: tuple[Enclosure, ...], twins: tuple[Enclosure, ...]
) -> tuple[Enclosure, ...]:
    """The enclosures as read before: ``twins`` (their URLs as read before), with the rest
    of ``enclosures`` (what read_before holds of them, types as read before) one for one
    when no URL is refused now (the same count)."""
    if len(enclosures) != len(twins):
        return twins
    return tuple(
        [
            enclosure if enclosure.url == twin.url else replace(enclosure, url=twin.url)
            for enclosure, twin in zip(enclosures, twins, strict=True)
        ]
    )
