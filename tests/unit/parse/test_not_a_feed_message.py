"""What a not_a_feed message says of an XML document that is no feed: its root element's
name, made safe, and what the usual ones are (a sitemap given for a feed)."""

from __future__ import annotations

import pytest

from tap_feeddelta.errors import ParseError
from tap_feeddelta.parse import parse_feed


def _message(body: bytes) -> str:
    with pytest.raises(ParseError) as raised:
        parse_feed(body, "application/xml", "https://site.example/feed")
    assert raised.value.code == "not_a_feed"
    return str(raised.value)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url/></urlset>',
            "its root element is urlset: a sitemap",
        ),
        (b"<sitemapindex><sitemap/></sitemapindex>", "its root element is sitemapindex: a sitemap"),
        (b'<opml version="2.0"><body/></opml>', "its root element is opml: an OPML list"),
        (b"<note><to>x</to></note>", "its root element is note)"),
        (b'<x:doc xmlns:x="urn:x"/>', "its root element is doc)"),
    ],
)
def test_an_xml_document_that_is_no_feed_is_named_by_its_root(body: bytes, says: str) -> None:
    assert says in _message(body)


def test_a_root_name_is_shown_safe_and_short() -> None:
    name = "n\u202e" + "a" * 200
    message = _message(f"<{name}/>".encode())
    assert "\u202e" not in message and "a" * 40 not in message
