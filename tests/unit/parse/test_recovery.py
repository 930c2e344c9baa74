"""Malformed documents read by recovery: what is kept, and that it is always reported."""

from __future__ import annotations

import re

import pytest

from tap_feeddelta.errors import ParseError
from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse import parse_feed
from tests.unit.parse.record_strings import feed_strings

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


RAW_BR = b"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>x</title><link>http://example.com/</link><description>x</description>
<item><title>One</title><description>Line one<br>Line two</description><link>http://example.com/1</link></item>
<item><title>Two</title><link>http://example.com/2</link></item>
<item><title>Three</title><link>http://example.com/3</link></item>
</channel></rss>
"""


def _rss_with_first_item(item: bytes) -> bytes:
    return (
        b'<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">'
        b"<channel><title>x</title>" + item + b"<item><title>Two</title></item>"
        b"<item><title>Three</title></item></channel></rss>"
    )


def test_unescaped_html_in_a_description_does_not_swallow_the_next_items() -> None:
    feed = parse_feed(RAW_BR, None, URL)
    assert [item.title for item in feed.items] == ["One", "Two", "Three"]
    first = feed.items[0]
    assert first.summary == "Line one Line two"
    assert first.url == "http://example.com/1"
    assert "xml_recovered" in _codes(feed)


def test_a_template_writing_a_start_tag_for_the_end_tag_keeps_every_item() -> None:
    # "<title>Post<title>": recovery nested each item in the one before (1 of 1,000 read).
    item = (
        b"<item><title>Post %d<title><link>http://example.com/%d</link>"
        b"<description>text</description></item>"
    )
    items = b"".join(item % (n, n) for n in range(3))
    feed = parse_feed(RSS_HEAD + items + b"</channel></rss>", None, URL)
    assert [(item.title, item.url, item.summary) for item in feed.items] == [
        (f"Post {n}", f"http://example.com/{n}", "text") for n in range(3)
    ]
    assert "A text element left open was closed." in {issue.message for issue in feed.issues}
    assert not feed.is_truncated


@pytest.mark.parametrize("end", [b"</item>", b"</channel>"])
def test_a_text_element_left_open_ends_with_its_item(end: bytes) -> None:
    body = RSS_HEAD + b"<item><title>One" + end.replace(b"channel", b"item")
    body += b"<item><title>Two</title><link>http://example.com/2</link></item>"
    body += b"<item><description>Three" + end + b"</rss>"
    feed = parse_feed(body, None, URL)
    assert [(item.title, item.summary) for item in feed.items] == [
        ("One", None),
        ("Two", None),
        (None, "Three"),
    ]
    assert feed.items[1].url == "http://example.com/2"
    assert "xml_recovered" in _codes(feed)


@pytest.mark.parametrize(
    ("item", "field", "expected"),
    [
        (
            b'<item><description>See <img src="a.png" alt="a & b"> here</description></item>',
            "summary",
            "See here",
        ),
        (b"<item><description><p>Open paragraph</description></item>", "summary", "Open paragraph"),
        (
            b"<item><content:encoded><p>One<br>two</content:encoded></item>",
            "content_text",
            "One two",
        ),
        (b"<item><title>Big <b>news<br></title></item>", "title", "Big news"),
        (
            b"<item><description><![CDATA[<p>kept ]]>as<br>is</description></item>",
            "summary",
            "kept as is",
        ),
        (
            b"<item><description>a &lt;b&gt;bold&lt;/b&gt;<br>c</description></item>",
            "summary",
            "a bold c",
        ),
    ],
    ids=["img", "unclosed-p", "content-encoded", "title", "cdata-then-raw", "escaped-and-raw"],
)
def test_raw_markup_in_rss_text_is_read_as_html_source(
    item: bytes, field: str, expected: str
) -> None:
    feed = parse_feed(_rss_with_first_item(item), None, URL)
    assert [item.title for item in feed.items][1:] == ["Two", "Three"]
    assert getattr(feed.items[0], field) == expected
    assert "xml_recovered" in _codes(feed)


def test_atom_xhtml_content_keeps_its_child_elements_in_recovery() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>A & B</title>'
        b'<entry><id>urn:1</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">'
        b"x<b>y</b></div></title>"
        b'<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>One</p>'
        b"<p>Two</p></div></content></entry></feed>"
    )
    feed = parse_feed(body, None, URL)
    assert "xml_recovered" in _codes(feed)
    assert feed.items[0].title == "xy"
    assert feed.items[0].content_text == "One Two"


PHP_WARNING = (
    b"<br />\n<b>Deprecated</b>:  Function create_function() is deprecated in "
    b"<b>/var/www/wp-content/plugins/x.php</b> on line <b>12</b><br />\n"
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<rss version="2.0"><channel><title>WP</title><link>http://example.com/</link>'
    b"<description>x</description>\n"
    b"<item><title>Post</title><link>http://example.com/p</link></item></channel></rss>\n"
)


def test_a_server_warning_in_html_before_the_declaration_is_skipped() -> None:
    feed = parse_feed(PHP_WARNING, None, URL)
    assert feed.format == "rss-2.0"
    assert feed.title == "WP"
    assert [item.url for item in feed.items] == ["http://example.com/p"]
    assert any(
        issue.code == "xml_recovered" and issue.message == "Text before the XML was skipped."
        for issue in feed.issues
    )


def test_a_server_warning_before_a_declaration_and_doctype_is_skipped() -> None:
    body = PHP_WARNING.replace(b"<rss", b'<!DOCTYPE rss [<!ENTITY a "b">]>\n<rss')
    feed = parse_feed(body, None, URL)
    assert feed.title == "WP"
    assert "doctype_ignored" in _codes(feed)


@pytest.mark.parametrize(
    "prolog",
    [
        b"<!-- made from <?xml version='1.0'?> by hand -->\n",
        b'<?xml-stylesheet type="text/xsl" href="s.xsl"?>\n<!-- a -->\n',
        b"<!DOCTYPE rss>\n",
    ],
    ids=["comment-quoting-a-declaration", "stylesheet-pi", "doctype"],
)
def test_a_prolog_before_the_root_is_not_cut(prolog: bytes) -> None:
    body = (
        prolog + b"<rss version='2.0'><channel><title>A & B</title><description><![CDATA["
        b"<?xml version='1.0'?> in a code sample]]></description>"
        b"<item><title>i</title></item></channel></rss>"
    )
    feed = parse_feed(body, None, URL)
    assert feed.title == "A & B"
    assert feed.description == "in a code sample"
    assert [item.title for item in feed.items] == ["i"]
    assert "Text before the XML was skipped." not in {issue.message for issue in feed.issues}


PLAIN_NOTICE = (
    b"\nDeprecated: Function create_function() is deprecated in "
    b"/var/www/wp-content/plugins/old-widget/widget.php on line 42\n"
)


@pytest.mark.parametrize(
    "junk",
    [PLAIN_NOTICE * 9, b"\n" * 1500, b"\n" * 5000 + PLAIN_NOTICE * 20],
    ids=["notices-over-1-kib", "blank-lines", "blank-lines-then-notices"],
)
def test_text_before_the_declaration_is_skipped_within_the_junk_window(junk: bytes) -> None:
    feed = parse_feed(junk + PHP_WARNING[PHP_WARNING.index(b"<?xml") :], None, URL)
    assert feed.title == "WP"
    is_reported = "Text before the XML was skipped." in {issue.message for issue in feed.issues}
    assert is_reported == bool(junk.strip())  # blank lines are no junk


def test_text_past_the_junk_window_is_not_a_feed() -> None:
    with pytest.raises(ParseError) as raised:
        parse_feed(PLAIN_NOTICE * 40 + RSS_HEAD + b"</channel></rss>", None, URL)
    assert raised.value.code == "not_a_feed"


ATOM_HEAD = b'<feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title><id>urn:b</id>\n'
ATOM_REST = (
    b'<entry><id>urn:2</id><title>Two</title><link href="http://example.com/2"/>'
    b'<content type="html">&lt;p&gt;Second&lt;/p&gt;</content></entry>\n'
    b"<entry><id>urn:3</id><title>Three</title></entry></feed>\n"
)


@pytest.mark.parametrize(
    "content",
    [
        b'<content type="html"><p>Hello<br>world <img src="/a.png"></p></content>',
        b'<content type="text/html"><p>Hello<BR>world<hr class="x"></p></content>',
        b'<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">'
        b"<p>Hello<br>world</p></div></content>",
        b'<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">'
        b"<p>Hello<br></br>world<br></p></div></content>",
        b'<summary type="html">Hello<br>world<wbr></summary>',
    ],
    ids=["html", "media-type", "xhtml", "xhtml-closed-br", "summary"],
)
def test_raw_html_void_tags_in_atom_do_not_swallow_the_next_entries(content: bytes) -> None:
    entry = (
        b'<entry><id>urn:1</id><title>One</title><link href="http://example.com/1"/>'
        + content
        + b"</entry>\n"
    )
    feed = parse_feed(ATOM_HEAD + entry + ATOM_REST, None, URL)
    assert [item.title for item in feed.items] == ["One", "Two", "Three"]
    first = feed.items[0]
    assert (first.content_text or first.summary) == "Hello world"
    assert first.url == "http://example.com/1"
    assert "xml_recovered" in _codes(feed)


@pytest.mark.parametrize(
    "element",
    ["itunes:summary", "dc:description", "media:description", "itunes:subtitle", "media:text"],
)
def test_raw_html_void_tags_in_any_rss_text_element_keep_the_next_items(element: str) -> None:
    name = element.encode()
    item = (
        b"<item><title>One</title><link>http://example.com/1</link><"
        + name
        + b'>Show notes:<br>guest <b>Sam</b><br><img src="/s.png"></'
        + name
        + b"></item>"
    )
    body = _rss_with_first_item(item).replace(
        b"<rss ",
        b'<rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
        b'xmlns:dc="http://purl.org/dc/elements/1.1/" '
        b'xmlns:media="http://search.yahoo.com/mrss/" ',
    )
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["One", "Two", "Three"]
    assert feed.items[0].url == "http://example.com/1"
    # The raw HTML is kept as the source text it is; how it reads is the reader's call
    # (itunes:summary and media:description are plain text to it, dc:description HTML).
    if element == "dc:description":
        assert feed.items[0].summary == "Show notes: guest Sam"
    assert "xml_recovered" in _codes(feed)


def test_a_void_tag_among_feed_elements_is_closed_where_it_stands() -> None:
    item = b"<item><title>One</title><br><link>http://example.com/1</link></item>"
    body = _rss_with_first_item(item)
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["One", "Two", "Three"]
    assert feed.items[0].url == "http://example.com/1"


# Character references to surrogates are no XML characters: the strict parse refuses them,
# and libxml2's recovery writes them as bytes that are no UTF-8 (lxml then raised
# UnicodeDecodeError on reading the text or attribute, and the whole run died).
_SURROGATE_REFS = [
    "&#xD800;", "&#xdfff;", "&#XDBFF;", "&#x0D800;", "&#x00dc00;", "&#55296;", "&#57343;",
    "&#0055296;", "&#056000;",
]  # fmt: skip
_SURROGATE_PLACES = {
    "title": "<item><title>a {ref} b</title><guid>g</guid></item>",
    "description": "<item><guid>g</guid><description>a {ref} b</description></item>",
    "guid": "<item><title>t</title><guid>g{ref}</guid></item>",
    "category": "<item><guid>g</guid><category>a{ref}</category></item>",
    "link-href": '<item><guid>g</guid><atom:link href="http://e.x/{ref}"/></item>',
    "enclosure-type": (
        '<item><guid>g</guid><enclosure url="http://e.x/a.mp3" type="audio/{ref}"/></item>'
    ),
    "cdata-path": "<item><guid>g</guid><title>a {ref}</title><!-- c --><![CDATA[x]]></item>",
}
_SURROGATE_ENCODINGS = ["utf-8", "iso-8859-1", "gb18030"]


@pytest.mark.parametrize("encoding", _SURROGATE_ENCODINGS)
@pytest.mark.parametrize("place", list(_SURROGATE_PLACES))
@pytest.mark.parametrize("ref", _SURROGATE_REFS)
def test_a_reference_to_a_surrogate_is_replaced_never_raised(
    ref: str, place: str, encoding: str
) -> None:
    item = _SURROGATE_PLACES[place].format(ref=ref)
    document = (
        f'<?xml version="1.0" encoding="{encoding}"?>'
        '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>T</title>'
        f"{item}</channel></rss>"
    ).encode(encoding)
    feed = parse_feed(document, None, URL)
    assert "xml_recovered" in _codes(feed)
    strings = feed_strings(feed)
    assert not any(_SURROGATE.search(text) for text in strings)
    (parsed,) = feed.items
    if place in ("title", "cdata-path"):
        assert parsed.title is not None and parsed.title.startswith("a \ufffd")
    elif place == "description":
        assert parsed.summary == "a \ufffd b"
    elif place == "guid":
        assert parsed.native_id == "g\ufffd"
    elif place == "category":
        assert parsed.tags == ("a\ufffd",)


_SURROGATE = re.compile("[\ud800-\udfff]")


_PODCAST_NS = (
    b'<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
    b'xmlns:googleplay="http://www.google.com/schemas/play-podcasts/1.0" '
    b'xmlns:podcast="https://podcastindex.org/namespace/1.0">'
)


def _episodes(first_notes: bytes) -> bytes:
    """Three episodes; the first holds ``first_notes`` before its enclosure."""
    items = b"".join(
        b"<item><title>Episode %d</title><guid>ep-%d</guid>%s"
        b'<enclosure url="http://example.com/%d.mp3" type="audio/mpeg"/></item>'
        % (n, n, first_notes if n == 3 else b"", n)
        for n in (3, 2, 1)
    )
    return RSS_HEAD.replace(b'<rss version="2.0">', _PODCAST_NS) + items + b"</channel></rss>"


@pytest.mark.parametrize(
    "notes",
    [
        b"<itunes:summary><p>In this episode:<ul><li>Intro<li>Guest</ul></itunes:summary>",
        b"<itunes:subtitle><p>Intro<ul><li>Guest</ul></itunes:subtitle>",
        b"<googleplay:description><p>In this episode:<li>Intro</googleplay:description>",
        b'<podcast:person role="host"><b>Jane</podcast:person>',
        b'<podcast:person role="guest"><i>Sam <p>Roe</podcast:person>',
    ],
    ids=["itunes-summary", "itunes-subtitle", "googleplay-description", "person-b", "person-i-p"],
)
def test_raw_html_left_open_in_any_podcast_element_keeps_the_next_episodes(notes: bytes) -> None:
    # Recovery nested every later episode inside the open <li> (or <b>): 1 of 3 was read,
    # and nothing said so.
    feed = parse_feed(_episodes(notes), None, URL)
    assert [item.title for item in feed.items] == ["Episode 3", "Episode 2", "Episode 1"]
    assert [item.enclosures[0].url for item in feed.items] == [
        f"http://example.com/{n}.mp3" for n in (3, 2, 1)
    ]
    assert not feed.is_truncated
    assert "xml_recovered" in _codes(feed)
    if notes.startswith(b"<itunes:summary>"):
        assert feed.items[0].summary == "In this episode: Intro Guest"


def test_items_recovery_nested_inside_another_item_are_never_lost_silently() -> None:
    # An element of no known kind left open, and its item with it: recovery puts the next
    # items inside it. (Left open in an item that is closed, it ends with the item.)
    body = RSS_HEAD + FIRST_ITEM
    body += b"<item><title>Two</title><x:note>unclosed"
    body += b"<item><title>Three</title></item><item><title>Four</title></item></channel></rss>"
    feed = parse_feed(body, None, URL)
    assert feed.is_truncated
    assert {"xml_recovered", "document_truncated"} <= _codes(feed)
    assert [item.title for item in feed.items] == ["One"]  # "Two" lost its end


def test_items_recovery_nested_away_keeps_the_items_before_in_and_beside_the_channel() -> None:
    # The items kept are those before the one that holds the nested ones, in document
    # order across the root and the channel.
    body = RSS_HEAD.replace(b"<channel>", b"<item><title>Zero</title></item><channel>")
    body += FIRST_ITEM + b"<item><title>Two</title><x:note>unclosed"
    body += b"<item><title>Three</title></item><item><title>Four</title></item></channel></rss>"
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["Zero", "One"]
    assert feed.is_truncated
    assert "document_truncated" in _codes(feed)


def test_items_recovery_nested_away_before_the_first_is_an_error() -> None:
    body = RSS_HEAD + b"<x:note>unclosed<item><title>One</title></item></channel></rss>"
    with pytest.raises(ParseError) as caught:
        parse_feed(body, None, URL)
    assert caught.value.code == "invalid_feed"
    assert "inside" in str(caught.value)


def test_atom_entries_recovery_nested_away_are_never_lost_silently() -> None:
    body = (
        ATOM_HEAD + b"<entry><id>urn:1</id><title>One</title></entry>\n"
        b"<entry><id>urn:0</id><title>Zero</title><x:note>open\n" + ATOM_REST
    )
    feed = parse_feed(body, None, URL)
    assert feed.is_truncated
    assert "document_truncated" in _codes(feed)
    assert [item.native_id for item in feed.items] == ["urn:1"]


def test_raw_html_left_open_in_atom_content_keeps_the_next_entries() -> None:
    entry = (
        b'<entry><id>urn:1</id><title>One</title><content type="html"><p>Hi<ul><li>a<li>b</ul>'
        b"</content></entry>\n"
    )
    feed = parse_feed(ATOM_HEAD + entry + ATOM_REST, None, URL)
    assert [item.title for item in feed.items] == ["One", "Two", "Three"]
    assert feed.items[0].content_text == "Hi a b"
    assert not feed.is_truncated


_ESCAPED_ITEM = (
    b"<item><title>AT&amp;T &amp; the &lt;Phone&gt; &quot;Co&quot; &apos;23</title>"
    b"<link>http://example.com/e?id=1&amp;utm_source=rss</link>"
    b"<description>&lt;p&gt;Ma &amp;amp; Pa&nbsp;Bell &eacute;t&eacute;.&lt;/p&gt;</description>"
    b"<guid><![CDATA[g&amp;1]]></guid><category>R&AMP;B &LT;live&GT; &QUOT;</category>"
    b'<enclosure url="http://example.com/e.mp3?a=1&amp;b=&QUOT;2" type="audio/mpeg"/></item>'
)


@pytest.mark.parametrize(
    "malformed",
    [
        b'<item><title>x</title><enclosure url="http://example.com/a.mp3" length="5" length="5"/>',
        b"<item><title>x</title><enclosure url=http://example.com/a.mp3 length=5/>",
        b"<item><title>x</title><guid>x</link>",
        b"<item><title>x</title><author>Jane <jane@example.com></author>",
        b'<item><title>x</title><enclosure url="http://example.com/a.mp3" async/>',
    ],
    ids=["duplicated-attribute", "unquoted-attribute", "mismatched-end", "raw-email", "no-value"],
)
def test_references_after_a_malformed_tag_are_kept(malformed: bytes) -> None:
    # After libxml2's recovery met one malformed tag, it dropped every later &amp; &lt;
    # &gt; &quot; &apos; ("AT&amp;T" read "ATT", links lost the "&" between parameters).
    body = RSS_HEAD + malformed + b"</item>\n" + _ESCAPED_ITEM + b"</channel></rss>"
    feed = parse_feed(body, None, URL)
    assert "xml_recovered" in _codes(feed)
    item = feed.items[-1]
    assert item.title == 'AT&T & the <Phone> "Co" \'23'
    assert item.url == "http://example.com/e?id=1&utm_source=rss"
    assert item.summary == "Ma & Pa Bell été."
    assert item.native_id == "g&amp;1"  # a CDATA section is text as it stands
    assert item.tags == ('R&B <live> "',)  # HTML names of markup characters, too
    assert item.enclosures[0].url == "http://example.com/e.mp3?a=1&b=%222"  # as browsers encode it


def test_a_control_character_in_a_cdata_section_is_removed_before_recovery() -> None:
    # Recovery handed back undecodable bytes for the CDATA text after it (a
    # UnicodeDecodeError out of the parser: every item of the feed lost on every run).
    doc = (
        b"<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel><title>t</title>"
        b"<item><guid>g1</guid><title>fine</title></item>"
        b"<item><guid>g2</guid><title><![CDATA[Rust: \x01 lone surrogates like &#xD800;]]>"
        b"</title></item></channel></rss>"
    )
    feed = parse_feed(doc, "application/rss+xml", "https://example.org/f")
    assert feed.items[0].title == "fine"
    second = feed.items[1].title or ""
    assert second.startswith("Rust: lone surrogates like") and "\x01" not in second


def _atom_entries(stray: bytes, where: str) -> bytes:
    """Five entries; the first holds ``stray`` at ``where``."""
    entries = []
    for n in range(1, 6):
        at = {"summary": b"", "title": b"", "between": b""}
        if n == 1:
            at[where] = stray
        entries.append(
            b"<entry><id>urn:e:%d</id><title type='text'>%stitle %d</title>"
            b"<link href='http://example.com/%d'/><summary type='html'>%ssummary %d</summary>"
            b"%s<updated>2025-01-0%dT00:00:00Z</updated></entry>"
            % (n, at["title"], n, n, at["summary"], n, at["between"], n)
        )
    return ATOM_HEAD + b"".join(entries) + b"</feed>"


def _rss_items(stray: bytes) -> bytes:
    items = b"".join(
        b"<item><guid>urn:i:%d</guid><title>title %d</title><link>http://example.com/%d</link>"
        b"<description>d %d</description>%s<pubDate>Mon, 0%d Jan 2025 00:00:00 GMT</pubDate>"
        b"</item>" % (n, n, n, n, stray if n == 1 else b"", n)
        for n in range(1, 6)
    )
    return RSS_HEAD + items + b"</channel></rss>"


def _rdf_items(stray: bytes) -> bytes:
    lis = [b'<rdf:li rdf:resource="http://example.com/%d"/>' % n for n in range(1, 7)]
    items = b"".join(
        b'<item rdf:about="http://example.com/%d"><title>title %d</title>'
        b"<link>http://example.com/%d</link></item>" % (n, n, n)
        for n in range(1, 7)
    )
    return (
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://purl.org/rss/1.0/"><channel rdf:about="http://example.com/">'
        b"<title>t</title><link>http://example.com/</link><items><rdf:Seq>"
        + b"".join([*lis[:2], stray, *lis[2:]])
        + b"</rdf:Seq></items></channel>"
        + items
        + b"</rdf:RDF>"
    )


_STRAY_END_TAGS = {
    "atom-summary": _atom_entries(b"</p>", "summary"),
    "atom-title": _atom_entries(b"</p>", "title"),
    "atom-between": _atom_entries(b"</p>", "between"),
    "atom-two-prefixed": _atom_entries(b"</x:div></span >", "between"),
    "atom-nameless": _atom_entries(b"</ p></3>", "between"),
    "rss-between": _rss_items(b"</p>"),
    "rss-stray-item-end": _rss_items(b"</item>"),
    "rss-1.0-seq": _rdf_items(b"</p>"),
}


@pytest.mark.parametrize("body", list(_STRAY_END_TAGS.values()), ids=list(_STRAY_END_TAGS))
def test_a_stray_end_tag_hides_no_item(body: bytes) -> None:
    # libxml2's recovery closed the enclosing element at the stray end tag, and each later
    # end tag one more: the root ended inside the first item and no later item was read,
    # with nothing but xml_recovered to say so.
    feed = parse_feed(body, None, URL)
    count = 6 if b"rdf:RDF" in body else 5
    urls = [f"http://example.com/{n}" for n in range(1, count + 1)]
    assert [item.url for item in feed.items] == urls
    assert not feed.is_truncated
    assert "xml_recovered" in _codes(feed)
    assert "document_truncated" not in _codes(feed)
    first = feed.items[0]
    if count == 5:  # keeps what follows the tag
        assert first.title == "title 1"
        assert first.updated_at or first.published_at
    if b"<summary" in body:
        assert first.summary == "summary 1"


@pytest.mark.parametrize(
    "first",
    [
        b"<item><guid>g</link><title>One</title><link>http://example.com/1</link></item>",
        b"<item><title>One</title><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubdate>"
        b"<link>http://example.com/1</link></item>",
        b"<item><title>One</title><link>http://example.com/1</link></ITEM>",
        b"<item><title>One</title><x:note>left open<link>http://example.com/1</link></item>",
    ],
    ids=["misspelt-end", "end-in-other-case", "item-end-in-other-case", "left-open"],
)
def test_an_element_closed_by_a_wrong_end_tag_or_its_parent_keeps_the_next_items(
    first: bytes,
) -> None:
    body = RSS_HEAD + first + b"<item><title>Two</title></item><item><title>Three</title></item>"
    feed = parse_feed(body + b"</channel></rss>", None, URL)
    assert [item.title for item in feed.items] == ["One", "Two", "Three"]
    assert not feed.is_truncated
    if b"left open" not in first:
        assert feed.items[0].url == "http://example.com/1"


def test_items_recovery_left_out_are_never_lost_silently() -> None:
    # An attribute value whose quote is never closed: recovery reads the rest of the
    # document as the value, and no item after it.
    body = _rss_items(b"").replace(b"<link>http://example.com/2</link>", b"<x:a b='2>")
    feed = parse_feed(body, None, URL)
    assert feed.is_truncated
    assert {"xml_recovered", "document_truncated"} <= _codes(feed)
    assert [item.url for item in feed.items] == ["http://example.com/1"]


@pytest.mark.parametrize(
    "stray",
    [b"</rss>", b"</channel>", b"</item></item>"],
    ids=["root", "channel", "items"],
)
def test_a_stray_end_tag_of_an_element_open_further_out_hides_no_item(stray: bytes) -> None:
    body = _rss_items(stray)
    feed = parse_feed(body, None, URL)
    assert [item.url for item in feed.items] == [f"http://example.com/{n}" for n in range(1, 6)]
    assert not feed.is_truncated
    assert feed.items[0].published_at is not None


def test_a_reference_to_nul_in_an_attribute_hides_no_item() -> None:
    # Recovery ended the start tag at "&#0;"; the element's end tag then closed the item,
    # the item's the channel, and the later items stood where no item is read.
    first = b'<item><category domain="a&#0;">c</category><link>http://example.com/1</link></item>'
    body = RSS_HEAD + first + b"<item><title>Two</title></item><item><title>Three</title></item>"
    feed = parse_feed(body + b"</channel></rss>", None, URL)
    assert [item.title for item in feed.items] == [None, "Two", "Three"]
    assert feed.items[0].url == "http://example.com/1"
    assert feed.items[0].tags == ("c",)
    assert not feed.is_truncated


_THREE_ITEMS = b"".join(
    b"<item><title>title %d</title><link>http://example.com/%d</link></item>" % (n, n)
    for n in range(1, 4)
)
_ATOM_DOCUMENT = (
    b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
    b"<id>urn:f</id><updated>2025-01-01T00:00:00Z</updated>"
    + b"".join(
        b"<entry><id>urn:e:%d</id><title>title %d</title>"
        b"<updated>2025-01-0%dT00:00:00Z</updated></entry>" % (n, n, n)
        for n in range(1, 4)
    )
    + b"</feed>"
)
_RSS_DOCUMENT = RSS_HEAD + _THREE_ITEMS + b"</channel></rss>"
_AFTER_THE_ROOT = {
    "document-twice": _RSS_DOCUMENT + b"\n" + _RSS_DOCUMENT,
    "fragment": _RSS_DOCUMENT + b"<!-- cache --><item>",
    "atom-fragment": _ATOM_DOCUMENT + b"<entry><title>x</title>",
}


@pytest.mark.parametrize("body", list(_AFTER_THE_ROOT.values()), ids=list(_AFTER_THE_ROOT))
def test_items_after_the_root_cost_no_item(body: bytes) -> None:
    # Start tags after the root's end (a document output twice, a cache's fragment) are
    # no items recovery failed to read: the last item read was left out as incomplete.
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["title 1", "title 2", "title 3"]
    assert not feed.is_truncated
    assert "document_truncated" not in _codes(feed)


@pytest.mark.parametrize("read", [1, 3])
def test_an_early_channel_end_keeps_every_item(read: int) -> None:
    # The channel's own end tag follows the items after the early one: that one moves
    # there, and the items between stay in the channel.
    items = [
        b"<item><title>title %d</title><link>http://example.com/%d</link></item>" % (n, n)
        for n in range(1, read + 3)
    ]
    body = RSS_HEAD + b"".join(items[:read]) + b"</channel>" + b"".join(items[read:])
    feed = parse_feed(body + b"</channel></rss>", None, URL)
    assert [item.title for item in feed.items] == [f"title {n}" for n in range(1, read + 3)]
    assert not feed.is_truncated
    assert "xml_recovered" in _codes(feed)


def test_an_early_channel_end_moves_past_a_stray_one_inside_a_later_item() -> None:
    # The stray </channel> inside the second item is dropped; the early one after the
    # first item still moves to the channel's own end (a dropped end tag is no end of
    # the channel): two of three items were lost without a word.
    items = [
        b"<item><guid>urn:i:%d</guid><title>title %d</title></item>" % (n, n) for n in range(3)
    ]
    second = items[1].replace(b"<item>", b"<item></channel>")
    body = RSS_HEAD + items[0] + b"</channel>" + second + items[2] + b"</channel></rss>"
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["title 0", "title 1", "title 2"]
    assert not feed.is_truncated


@pytest.mark.parametrize(
    "body",
    [
        _rss_items(b"</item><category>c</category>"),
        _atom_entries(b"</entry><category term='c'/>", "between"),
    ],
    ids=["rss", "atom"],
)
def test_an_item_end_written_early_keeps_the_fields_after_it(body: bytes) -> None:
    feed = parse_feed(body, None, URL)
    assert [item.url for item in feed.items] == [f"http://example.com/{n}" for n in range(1, 6)]
    first = feed.items[0]
    assert first.tags == ("c",)
    assert first.published_at or first.updated_at
    assert not feed.is_truncated
    assert "xml_recovered" in _codes(feed)


def test_an_early_end_moves_only_to_the_next_end_tag_of_its_name() -> None:
    # The stray </title> after the second item is no end of the channel's title: titles
    # stand between them.
    body = _rss_items(b"").replace(
        b"</item><item><guid>urn:i:3", b"</item></title><item><guid>urn:i:3"
    )
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == [f"title {n}" for n in range(1, 6)]
    assert [item.summary for item in feed.items] == [f"d {n}" for n in range(1, 6)]
    assert feed.title == "T"
    assert not feed.is_truncated


def test_an_item_recovery_ended_early_is_left_out_with_the_items_after_it() -> None:
    # Stray end tags the balancing leaves: recovery closed the third item inside its
    # title, its link and date went to the channel, and its own end tag closed the channel.
    body = _rss_items(b"").replace(b"title 3</title>", b"title 3</item></title>")
    body = body.replace(b"d 4</description>", b"d 4</rss></description>")
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["title 1", "title 2"]
    assert feed.is_truncated
    assert "document_truncated" in _codes(feed)


def test_a_root_closed_early_is_no_end_of_the_document() -> None:
    # The rest of the document follows the root's end tag, up to one more: its items are
    # lost to recovery (it reads nothing after the root), and that is said.
    items = [
        b"<item><title>title %d</title><link>http://example.com/%d</link></item>" % (n, n)
        for n in range(1, 4)
    ]
    body = RSS_HEAD + items[0] + b"</channel></rss>" + items[1] + items[2]
    feed = parse_feed(body + b"</channel></rss>", None, URL)
    assert [item.title for item in feed.items] == ["title 1"]
    assert feed.is_truncated
    assert "document_truncated" in _codes(feed)


def test_two_misspelt_end_tags_of_a_name_never_opened_are_no_crash() -> None:
    # The first </b> ends the guid open there (a misspelt end tag): it closed no element
    # named b, so the second is no end of one written early (this raised KeyError).
    body = RSS_HEAD + b"<item><title>One</title><guid>g</b></b></item>"
    body += b"<item><title>Two</title></item></channel></rss>"
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["One", "Two"]
    assert "xml_recovered" in _codes(feed)


_CHANNEL_ITEMS = (
    b"<item><title>A & B</title><guid>a</guid></item><item><title>B</title><guid>b</guid>"
)
_OUTSIDE_THE_CHANNEL = {
    "root-item-after-image": (
        RSS_HEAD
        + _CHANNEL_ITEMS
        + b"</item><image><url>https://x.org/i.png</url><title>t</title></image>"
        + b"</channel><item><title>R</title><guid>r</guid></item></rss>",
        ["A & B", "B", "R"],
    ),
    "root-item-after-channel": (
        RSS_HEAD + _CHANNEL_ITEMS + b"</item></channel><item><title>R</title></item></rss>",
        ["A & B", "B", "R"],
    ),
    "root-item-before-channel": (
        b'<rss version="2.0"><item><title>R</title></item><channel>'
        + b"<title>T</title>"
        + _CHANNEL_ITEMS
        + b"</item></channel></rss>",
        ["R", "A & B", "B"],
    ),
    "undeclared-prefix-item-inside": (
        RSS_HEAD + _CHANNEL_ITEMS + b"<x:item>z</x:item></item></channel></rss>",
        ["A & B", "B"],
    ),
    "declared-prefix-item-inside": (
        RSS_HEAD + _CHANNEL_ITEMS + b'<y:item xmlns:y="urn:y">z</y:item></item></channel></rss>',
        ["A & B", "B"],
    ),
}


@pytest.mark.parametrize(
    ("body", "titles"), list(_OUTSIDE_THE_CHANNEL.values()), ids=list(_OUTSIDE_THE_CHANNEL)
)
def test_items_recovery_keeps_in_place_cost_no_item(body: bytes, titles: list[str]) -> None:
    # An item written beside the channel is read, in document order, and an element named
    # item of another namespace inside one is no item: neither is an item recovery lost.
    # (They cost the last item and reported the document truncated, on the recovery path.)
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == titles
    assert not feed.is_truncated
    assert "document_truncated" not in _codes(feed)
    assert "xml_recovered" in _codes(feed)
    if b"<x:" not in body:  # (an undeclared prefix is never well-formed)
        well_formed = parse_feed(body.replace(b"A & B", b"A and B"), None, URL)
        assert "xml_recovered" not in _codes(well_formed)
        assert [item.title for item in well_formed.items] == [
            title.replace("A & B", "A and B") for title in titles
        ]


def test_items_recovery_moved_out_of_the_channel_are_lost_never_silently() -> None:
    # Recovery ends the channel inside the third item; the items after it land beside an
    # item written outside the channel, and are still reported lost.
    body = _rss_items(b"").replace(b"title 3</title>", b"title 3</item></title>")
    body = body.replace(b"d 4</description>", b"d 4</rss></description>")
    body = body.replace(b"</channel></rss>", b"</channel><item><title>R</title></item></rss>")
    feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["title 1", "title 2"]
    assert feed.is_truncated
    assert "document_truncated" in _codes(feed)


# Text that holds an address or a URL in angle brackets, unescaped, as mailing-list
# archives, hand-written feeds and changelog generators write it.
_IN_ANGLE_BRACKETS = (
    "Jane Doe <jane@example.org>",
    "Get it from <https://example.org/dl?v=2> and write to <mailto:bugs@example.org>.",
)
_RSS_PLACES = {
    "author": "<author>{}</author>",
    "dc-creator": "<dc:creator>{}</dc:creator>",
    "itunes-author": "<itunes:author>{}</itunes:author>",
    "category": "<category>{}</category>",
    "guid": '<guid isPermaLink="false">{}</guid>',
    "title": "<title>{}</title>",
    "description": "<description>{}</description>",
}
_ATOM_PLACES = {
    "author-name": "<author><name>{}</name></author>",
    "summary": "<summary>{}</summary>",
    "content": "<content>{}</content>",
    "title": "<title>{}</title>",
}


def _rss_document(element: str) -> str:
    return (
        '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>t</title>'
        "<link>https://example.org/</link>"
        f"<item><link>https://example.org/1</link>{element}</item>"
        "<item><link>https://example.org/2</link><title>Two</title></item></channel></rss>"
    )


def _atom_document(element: str) -> str:
    return (
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>'
        f"<entry><id>urn:1</id><title>One</title>{element}</entry>"
        "<entry><id>urn:2</id><title>Two</title></entry></feed>"
    )


_ANGLE_CASES = [
    (document(place.format(text)), f"{kind}-{name}-{number}")
    for kind, document, places in (
        ("rss", _rss_document, _RSS_PLACES),
        ("atom", _atom_document, _ATOM_PLACES),
    )
    for name, place in places.items()
    for number, text in enumerate(_IN_ANGLE_BRACKETS)
]


@pytest.mark.parametrize("body", [c[0] for c in _ANGLE_CASES], ids=[c[1] for c in _ANGLE_CASES])
def test_an_address_in_angle_brackets_reads_as_when_escaped(body: str) -> None:
    # "<jane@example.org>" and "<https://...>" can never start an element (a name holds no
    # "@", and no name is followed by "://"): recovery read them as tags and kept what
    # followed ("Jane Doe @example.org>", the email lost).
    escaped = re.sub(r"<([^\s<>/!?]*(?:@|://)[^\s<>]*)>", r"&lt;\1&gt;", body)
    assert escaped != body
    strict = parse_feed(escaped.encode(), None, URL)
    assert "xml_recovered" not in _codes(strict)
    recovered = parse_feed(body.encode(), None, URL)
    assert "xml_recovered" in _codes(recovered)
    assert recovered.items == strict.items
    assert not recovered.is_truncated
