"""Namespaces declared below the root: elements written without a prefix are read."""

from __future__ import annotations

import pytest

from tap_feeddelta.parse import parse_feed

URL = "http://example.com/feed"
HEAD = '<rss version="2.0"><channel><title>C</title><link>http://example.com/</link>'


def _item(number: int, attributes: str = "", description_attributes: str = "") -> str:
    return (
        f"<item{attributes}><guid>g{number}</guid><title>Item {number}</title>"
        f"<link>http://example.com/{number}</link>"
        f"<description{description_attributes}>Text of item {number}</description></item>"
    )


# An aggregator copying an item keeps its source's default namespace.
COPIED = ["http://backend.userland.com/RSS2", "http://example.com/ns/copied"]


@pytest.mark.parametrize("namespace", COPIED, ids=["userland", "unknown"])
def test_an_item_under_its_own_default_namespace_is_read(namespace: str) -> None:
    body = HEAD + _item(1) + _item(2, f' xmlns="{namespace}"') + _item(3) + "</channel></rss>"
    feed = parse_feed(body.encode(), None, URL)
    assert [(item.native_id, item.summary) for item in feed.items] == [
        ("g1", "Text of item 1"),
        ("g2", "Text of item 2"),
        ("g3", "Text of item 3"),
    ]
    assert feed.issues == ()


@pytest.mark.parametrize("namespace", COPIED, ids=["userland", "unknown"])
def test_a_channel_under_its_own_default_namespace_is_read(namespace: str) -> None:
    body = f'<rss version="2.0"><channel xmlns="{namespace}"><title>C</title>'
    body += _item(1) + _item(2) + "</channel></rss>"
    feed = parse_feed(body.encode(), None, URL)
    assert feed.title == "C"
    assert [item.native_id for item in feed.items] == ["g1", "g2"]


def test_a_description_under_the_xhtml_default_namespace_is_read() -> None:
    body = HEAD + _item(1, description_attributes=' xmlns="http://www.w3.org/1999/xhtml"')
    body += "</channel></rss>"
    assert parse_feed(body.encode(), None, URL).items[0].summary == "Text of item 1"


def test_an_unknown_namespace_bound_to_a_prefix_is_still_not_read() -> None:
    # Google's product feeds: g:title, g:link and g:description are no item fields.
    body = """<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel><title>C</title>
<item><guid>g1</guid><g:title>Not the title</g:title><g:link>http://example.com/g</g:link>
<g:description>Not the summary</g:description></item></channel></rss>"""
    item = parse_feed(body.encode(), None, URL).items[0]
    assert (item.title, item.url, item.summary) == (None, None, None)


@pytest.mark.parametrize("namespace", ["*", "urn:*"])
def test_a_namespace_with_an_asterisk_is_no_wildcard(namespace: str) -> None:
    # lxml reads "{*}item" as any item: an extension's x:item is still not an item.
    body = HEAD + _item(1) + f'<x:item xmlns:x="{namespace}"><x:title>No</x:title></x:item>'
    feed = parse_feed((body + "</channel></rss>").encode(), None, URL)
    assert [item.native_id for item in feed.items] == ["g1"]
    body = HEAD + _item(1) + _item(2, f' xmlns="{namespace}"') + "</channel></rss>"
    feed = parse_feed(body.encode(), None, URL)
    assert [item.native_id for item in feed.items] == ["g1", "g2"]


def test_an_atom_entry_under_its_own_default_namespace_is_read() -> None:
    body = """<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title>
<entry><id>urn:1</id><title>One</title></entry>
<entry xmlns="http://example.com/ns/copied"><id>urn:2</id><title>Two</title></entry></feed>"""
    feed = parse_feed(body.encode(), None, URL)
    assert [(item.native_id, item.title) for item in feed.items] == [
        ("urn:1", "One"),
        ("urn:2", "Two"),
    ]


def test_items_in_another_format_s_namespace_are_reported_not_dropped_silently() -> None:
    # Atom has no <item>: the Atom namespace on one is a mistake the tap cannot read past.
    body = HEAD + _item(1) + _item(2, ' xmlns="http://www.w3.org/2005/Atom"') + "</channel></rss>"
    feed = parse_feed(body.encode(), None, URL)
    assert [item.native_id for item in feed.items] == ["g1"]
    assert [issue.code for issue in feed.issues] == ["items_ignored"]


# Keys that depend on no document are kept from one document to the next (names.py);
# those that depend on the document must not be.


def test_an_unknown_namespace_is_read_as_each_document_writes_it() -> None:
    namespace = "http://example.com/ns/kept-apart"
    prefixed = HEAD + _item(1).replace("<description>", f'<x:description xmlns:x="{namespace}">')
    prefixed = prefixed.replace("</description>", "</x:description>") + "</channel></rss>"
    unprefixed = HEAD + _item(2, f' xmlns="{namespace}"') + "</channel></rss>"
    for _ in range(2):  # in both orders, twice
        assert parse_feed(prefixed.encode(), None, URL).items[0].summary is None
        assert parse_feed(unprefixed.encode(), None, URL).items[0].summary == "Text of item 2"


def test_a_namespace_alias_is_noted_in_every_document_that_uses_it() -> None:
    media = "http://www.rssboard.org/media-rss"  # an alias of Media RSS
    body = (
        f'<rss version="2.0" xmlns:media="{media}"><channel><title>C</title>'
        "<item><guid>g1</guid><media:title>Seen</media:title></item></channel></rss>"
    ).encode()
    first = parse_feed(body, None, URL)
    again = parse_feed(body, None, URL)
    assert first == again
    assert first.items[0].title == "Seen"
    assert first.items[0].read_before is not None  # versions before read no title there
