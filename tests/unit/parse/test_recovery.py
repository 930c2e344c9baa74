"""Malformed documents read by recovery: what is kept, and that it is always reported."""

from __future__ import annotations

import pytest

from tap_feeddelta.errors import ParseError
from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse import parse_feed

URL = "http://example.com/feed"
RSS_HEAD = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>T</title>'
    b"<link>http://example.com/</link><description>d</description>\n"
)
FIRST_ITEM = b"<item><title>One</title><link>http://example.com/1</link></item>\n"


def _codes(feed: ParsedFeed) -> set[str]:
    return {issue.code for issue in feed.issues}


@pytest.mark.parametrize(
    "cut_item",
    [
        b"<item><title>Two</title><link>http://example.com/2</link><pubDa",
        b'<item><title>Two</title><enclosure url="http://example.com/2.mp',
        b"<item><title>Two</title><description><![CDATA[<p>Long article text that is cut",
        b"<item><title>Two</title><!-- a comment that is cut",
        b"<item><title>Two</title></ite",
        b"<item><title>Two</title></item></channel></rs",
        b"<item><title>Two</title><title>Th",  # the one libxml2 itself calls premature
    ],
    ids=["in-tag", "in-attribute", "in-cdata", "in-comment", "in-end-tag", "in-root-end", "text"],
)
def test_a_document_that_breaks_off_keeps_its_complete_items(cut_item: bytes) -> None:
    feed = parse_feed(RSS_HEAD + FIRST_ITEM + cut_item, None, URL)
    assert feed.is_truncated
    assert {"xml_recovered", "document_truncated"} <= _codes(feed)
    expected = ["One", "Two"] if cut_item.endswith(b"</rs") else ["One"]
    assert [item.title for item in feed.items] == expected


def test_a_document_that_breaks_off_inside_its_first_item_is_an_error() -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(RSS_HEAD + b"<item><title>One</title><pubDa", None, URL)
    assert caught.value.code == "invalid_feed"


def test_an_atom_document_that_breaks_off_inside_a_tag_is_truncated() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
        b"<entry><id>urn:1</id><title>One</title></entry>"
        b'<entry><id>urn:2</id><link href="http://example.com/2'
    )
    feed = parse_feed(body, None, URL)
    assert feed.is_truncated
    assert "document_truncated" in _codes(feed)
    assert [item.native_id for item in feed.items] == ["urn:1"]


@pytest.mark.parametrize(
    "tail",
    [
        b"</channel></rss>\n<!-- cached 2024-01-15 --><?x done?>\n",
        b"</channel></rss>\n<br />\n<b>Warning</b>: something on line <b>3</b><br />\n",
        b"</channel></rss>\nWarning: something on line 3\n",
    ],
    ids=["comment-and-pi", "html-warning", "text-warning"],
)
def test_text_after_the_root_element_is_no_truncation(tail: bytes) -> None:
    # A stray "&" makes the strict parse fail, so that recovery reads the document.
    body = RSS_HEAD + b"<item><title>A & B</title></item>\n" + tail
    feed = parse_feed(body, None, URL)
    assert not feed.is_truncated
    assert "document_truncated" not in _codes(feed)
    assert [item.title for item in feed.items] == ["A & B"]


def test_a_root_end_tag_without_its_closing_bracket_loses_nothing() -> None:
    feed = parse_feed(RSS_HEAD + FIRST_ITEM + b"</channel>\n</rss", None, URL)
    assert not feed.is_truncated
    assert [item.title for item in feed.items] == ["One"]


def test_a_prefixed_root_that_is_closed_is_no_truncation() -> None:
    body = (
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://purl.org/rss/1.0/"><channel><title>t</title></channel>'
        b"<item><title>A & B</title></item></rdf:RDF >\n"
    )
    feed = parse_feed(body, None, URL)
    assert not feed.is_truncated
    assert [item.title for item in feed.items] == ["A & B"]
