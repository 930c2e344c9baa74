"""Hypothesis: an item is read the same whether the rest of its document is well-formed or
not. The same document with one bare ``&`` in another item goes through recovery; the
items left as they were must come out exactly as the strict parse read them (comments,
processing instructions, CDATA and raw HTML in their text elements included), or an
unrelated broken item turns every untouched one into an ``updated`` record."""

from __future__ import annotations

from xml.sax.saxutils import escape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.models import ParsedFeed, ParsedItem
from tap_feeddelta.parse import parse_feed

URL = "https://example.org/feed.xml"
HEAD = (
    '<?xml version="1.0"?><rss version="2.0" '
    'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
    'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">'
    "<channel><title>t</title><link>https://example.org/</link>"
)
# One item that makes the document malformed: a bare "&" sends it through recovery.
BROKEN = "<item><guid>broken</guid><title>AT&T earnings</title></item>"

# Well-formed XML content of a text element: text as written (escaped once or twice),
# comments, processing instructions, CDATA sections, and raw HTML elements holding more.
_LEAVES = [
    "Q &amp; A", "Q&amp;amp;A", "&lt;b&gt;bold&lt;/b&gt;", "caf&#233;", "a > b", "Read",
    " Me ", "<!-- sponsored -->", "<!-- </title></description> -->", "<!---->",
    "<?php echo 1; ?>", "<?x?>", "<![CDATA[<b>x</b> & y]]>", "<![CDATA[]]>", "<br/>",
    '<img src="a.png?x=1&amp;y=2" alt="a &amp; b"/>', "<p/>", "",
]  # fmt: skip
_TAGS = ["p", "b", "div", "span", "a href='https://example.org/?a=1&amp;b=2'", "em", "li"]
_TEXT_ELEMENTS = ["title", "description", "content:encoded", "itunes:summary"]


words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=8)


def _element(tag: str, inner: list[str]) -> str:
    return f"<{tag}>{''.join(inner)}</{tag.split()[0]}>"


content = st.recursive(
    st.sampled_from(_LEAVES) | words.map(escape),
    lambda inner: (
        st.builds(_element, st.sampled_from(_TAGS), st.lists(inner, max_size=3))
        | st.lists(inner, min_size=2, max_size=3).map("".join)
    ),
    max_leaves=8,
)
item_fields = st.lists(st.tuples(st.sampled_from(_TEXT_ELEMENTS), content), max_size=4)


def _document(items: list[list[tuple[str, str]]], *, broken: bool) -> bytes:
    body = "".join(
        f"<item><guid>urn:i:{n}</guid>"
        + "".join(f"<{name}>{text}</{name}>" for name, text in fields)
        + "</item>"
        for n, fields in enumerate(items)
    )
    return (HEAD + body + (BROKEN if broken else "") + "</channel></rss>").encode()


def _untouched(feed: ParsedFeed) -> list[ParsedItem]:
    return [item for item in feed.items if item.native_id != "broken"]


def _assert_read_alike(items: list[list[tuple[str, str]]]) -> None:
    well_formed = parse_feed(_document(items, broken=False), None, URL)
    recovered = parse_feed(_document(items, broken=True), None, URL)
    assert "xml_recovered" not in {issue.code for issue in well_formed.issues}
    assert "xml_recovered" in {issue.code for issue in recovered.issues}
    assert not recovered.is_truncated
    assert _untouched(recovered) == _untouched(well_formed)


@pytest.mark.parametrize(
    "fields",
    [
        [("title", "Hello<!-- sponsored --> World"), ("description", "Read<!-- more -->Me")],
        [("description", "<p>Our Q&amp;amp;A session</p>")],
        [("description", "<p>a &lt;b&gt; c</p>")],
        [("title", "a<!-- </title> -->b"), ("description", "x<?pi </description>?>y")],
        [("title", "One <?php echo 1; ?>two")],
        [("description", "<div>Tom &amp;lt;b&amp;gt;</div>")],  # typepad: the div holds source
        [("content:encoded", "<p>x<!-- c --></p><p>&amp;amp;</p>")],
        [("itunes:summary", "<a href='https://e.org/?a=1&amp;b=2'>link</a> &amp;amp; more")],
    ],
    ids=[
        "comments",
        "double-escaped-in-html",
        "escaped-tag-in-html",
        "end-tags-in-comment-and-pi",
        "pi-in-title",
        "typepad-div",
        "content-encoded",
        "itunes-summary",
    ],
)
def test_an_untouched_item_reads_alike_on_both_paths(fields: list[tuple[str, str]]) -> None:
    _assert_read_alike([fields, [("title", "Second")]])


@settings(max_examples=200, deadline=None)
@given(st.lists(item_fields, min_size=1, max_size=4))
def test_untouched_items_read_alike_on_both_paths(items: list[list[tuple[str, str]]]) -> None:
    _assert_read_alike(items)
