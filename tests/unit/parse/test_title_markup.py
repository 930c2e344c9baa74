"""No markup reaches a title or a tag: a JSON Feed title is read as an RSS title is
(HTML when it shows markup), and a title or tag whose text still shows markup after its
declared unescaping (escaped once more, or a plain-text field holding it) is read once
more as HTML. Text that names a tag ("Why the </script> tag breaks") keeps its words."""

from __future__ import annotations

import json
import re
import time
from xml.sax.saxutils import escape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.models import ParsedItem
from tap_feeddelta.parse import fields, markup, parse_feed
from tap_feeddelta.parse.text import html_text

URL = "https://m.example/feed"

# (title as the publisher wrote it, the title read)
TITLES = [
    ("<script>alert(1)</script>Hi", "Hi"),
    ("<em>New</em> post", "New post"),
    ("<img src=x onerror=alert(1)>Pic", "Pic"),
    ("AT&amp;amp;T", "AT&T"),
    ("Tom &amp; Jerry", "Tom & Jerry"),
    ("Don&#8217;t", "Don\u2019t"),
    ("x &lt;b&gt; y", "x <b> y"),  # a tag named, escaped once: the topic
    ("Why the </script> tag breaks", "Why the </script> tag breaks"),
    ("When to use <hr> vs. borders", "When to use <hr> vs. borders"),
    ("Vec<String> and Option<T>", "Vec<String> and Option<T>"),
    ("a<b and c>d", "a<b and c>d"),
    ("Plain", "Plain"),
]


def _json(title: str, tags: list[str] | None = None) -> bytes:
    item = {"id": "1", "title": title, "content_text": "c", "tags": tags or []}
    return json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "title": title, "items": [item]}
    ).encode()


def _rss(title_xml: str, tags_xml: str = "") -> bytes:
    return (
        f'<rss version="2.0"><channel><title>{title_xml}</title><item><guid>1</guid>'
        f"<title>{title_xml}</title>{tags_xml}</item></channel></rss>"
    ).encode()


def _only_item(body: bytes) -> ParsedItem:
    (item,) = parse_feed(body, None, URL).items
    return item


@pytest.mark.parametrize(("written", "read"), TITLES, ids=[t for t, _ in TITLES])
def test_a_json_feed_title_is_read_as_an_rss_title(written: str, read: str) -> None:
    feed = parse_feed(_json(written), "application/feed+json", URL)
    rss = parse_feed(_rss(escape(written)), None, URL)
    assert (feed.title, feed.items[0].title) == (read, read)
    assert (rss.title, rss.items[0].title) == (read, read)


@pytest.mark.parametrize(
    ("title_xml", "read"),
    [
        ("&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;Hi", "Hi"),
        ("&amp;lt;b&amp;gt;New&amp;lt;/b&amp;gt; post", "New post"),
        ("&amp;lt;img src=x onerror=alert(1)&amp;gt;Pic", "Pic"),
        ("The &amp;lt;b&amp;gt; tag", "The <b> tag"),  # one tag named: the topic
    ],
)
def test_markup_escaped_once_more_than_read_leaves_no_tag(title_xml: str, read: str) -> None:
    assert _only_item(_rss(title_xml)).title == read


def _nested(depth: int) -> str:
    """Markup holding markup escaped once more, ``depth`` levels deep, around "Deep"."""
    text = "Deep"
    for level in range(depth):
        text = f"<i{level}>{escape(text)}</i{level}>"
    return text


@pytest.mark.parametrize("depth", range(1, markup.MAX_MARKUP_READINGS + 1))
def test_markup_nested_at_each_level_of_escaping_leaves_no_tag(depth: int) -> None:
    # Each reading as HTML takes one level off: read until no markup shows.
    written = _nested(depth)
    assert _only_item(_json(written, [written])).title == "Deep"
    assert _only_item(_json("T", [written])).tags == ("Deep",)
    assert _only_item(_rss(escape(written))).title == "Deep"


def test_an_atom_text_title_holding_markup_keeps_its_words_only() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><entry><id>1</id>'
        b'<title type="text">&lt;b onclick="x()"&gt;Bold&lt;/b&gt; move</title>'
        b'<title type="html">&amp;lt;i&amp;gt;second&amp;lt;/i&amp;gt;</title></entry></feed>'
    )
    assert _only_item(body).title == "Bold move"


def test_a_title_of_markup_alone_is_no_title() -> None:
    assert _only_item(_json("<script>alert(1)</script>")).title is None


TAGS = [
    ("<b>News</b>", "News"),
    ("<b>&lt;i&gt;Nested&lt;/i&gt;</b>", "Nested"),
    ('<a href="javascript:x()">Link</a>', "Link"),
    ("Vec<String>", "Vec<String>"),
    ("c<d", "c<d"),
    ("</script>", "</script>"),  # an end tag alone: a name
]


@pytest.mark.parametrize(("written", "read"), TAGS, ids=[t for t, _ in TAGS])
def test_a_tag_showing_markup_keeps_its_words(written: str, read: str) -> None:
    atom = (
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><entry><id>1</id>'
        f'<title>T</title><category term="{escape(written, {chr(34): "&quot;"})}"/></entry></feed>'
    ).encode()
    rss = _rss("T", f"<category>{escape(written)}</category>")
    media = _rss(
        "T",
        '<media:keywords xmlns:media="http://search.yahoo.com/mrss/">'
        f"{escape(written)}</media:keywords>",
    )
    for body in (_json("T", [written]), rss, atom, media):
        assert _only_item(body).tags == (read,)


def test_tags_that_read_alike_are_one_and_one_without_words_is_none() -> None:
    item = _only_item(_json("T", ["<b>News</b>", "News", "<script>x()</script>", "Other"]))
    assert item.tags == ("News", "Other")


def test_items_read_as_versions_before_read_them_carry_nothing_more() -> None:
    # read_before is only for items some field of which reads otherwise now.
    assert _only_item(_json("Plain <hr> title", ["a", "b"])).read_before == ()
    assert _only_item(_rss("Tom &amp;amp; Jerry", "<category>x</category>")).read_before == ()
    json_item = _only_item(_json("<em>New</em>", ["<b>x</b>"]))
    assert dict(json_item.read_before) == {
        "title": "<em>New</em>",
        "title_cuts": (),
        "tags": ("<b>x</b>",),
    }


# Tags active as written, closed or not: read away in titles, tags and names alike.
ACTIVE = [
    ('<a href="javascript:alert(1)">Read', "Read"),
    ("<img/src/onerror=alert(1)>Hi", "Hi"),
    ("<b onclick = x()>Bold", "Bold"),
    ("Hi <img src=x onerror=alert(1)//", "Hi"),  # cut before its ">"
    ("Hi <script>alert(1)", "Hi"),  # unclosed: the rest is code
    ("Hi <svg:style>x{}", "Hi"),
    ('Hi <math><mi xlink:href="javascript:x()">', "Hi"),
    # HTML's tag names run to a space, "/" or ">": any element takes a handler.
    ("<a;b onclick=alert(1)>Hi", "Hi"),
    ('<x" onmouseover=alert(1)>Hi', "Hi"),
    ("Hi <amp;/href=", "Hi"),
]
# Text that only looks like a tag stays as it is.
INERT = ["x<y means x = y - 1", "a<b and c>d", "Vec<T> = Vec::new()", "Use <details open>"]


@pytest.mark.parametrize(("written", "read"), ACTIVE, ids=[t for t, _ in ACTIVE])
def test_a_tag_active_as_written_leaves_titles_tags_and_names(written: str, read: str) -> None:
    item = _only_item(_json(written, [written]))
    assert (item.title, item.tags) == (read, (read,))
    assert _only_item(_rss(escape(written))).title == read
    creator = (
        f'<dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">{escape(written)}</dc:creator>'
    )
    (author,) = _only_item(_rss("T", creator)).authors
    assert author.name == read


@pytest.mark.parametrize("written", INERT)
def test_text_that_only_looks_like_a_tag_keeps_it(written: str) -> None:
    item = _only_item(_json(written, [written]))
    assert (item.title, item.tags) == (written, (written,))
    assert _only_item(_rss(escape(written))).title == written


@pytest.mark.parametrize(
    "name_xml",
    [
        "&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;Jo",  # escaped once more
        "&lt;&lt;b&gt;&lt;/b&gt;script&gt;alert(1)&lt;&lt;/b&gt;/script&gt;Jo",  # rejoined
    ],
)
def test_an_author_name_is_read_until_no_markup_shows(name_xml: str) -> None:
    creator = f'<dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">{name_xml}</dc:creator>'
    (author,) = _only_item(_rss("T", creator)).authors
    assert author.name == "Jo"


def test_fields_of_no_declared_kind_read_an_active_tag_as_html() -> None:
    itunes = (
        '<itunes:summary xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">'
        '&lt;a href="javascript:x()"&gt;Show notes</itunes:summary>'
    )
    assert _only_item(_rss("T", itunes)).summary == "Show notes"
    body = json.dumps(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "items": [{"id": "1", "summary": '<a href="javascript:x()">Summary'}],
        }
    ).encode()
    assert _only_item(body).summary == "Summary"


@pytest.mark.parametrize("control", ["\x7f", "&#127;", "&#1;", "&#x1b;"])
def test_a_control_after_a_less_than_sign_makes_no_tag(control: str) -> None:
    # Removed before the tags are read (as a JSON reader removes it), not after.
    description = f"<description>&lt;{control}img src=x onerror=alert(1)&gt;Hi</description>"
    assert _only_item(_rss("T", description)).summary == "Hi"
    content = (
        '<content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/">'
        f"&lt;p&gt;&lt;{control}img src=x onerror=alert(1)&gt;Hi&lt;/p&gt;</content:encoded>"
    )
    assert _only_item(_rss("T", content)).content_text == "Hi"


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("audio/mpeg", "audio/mpeg"),
        ("Audio/MPEG; charset=UTF-8", "audio/mpeg; charset=utf-8"),
        (
            'video/mp4; codecs="avc1.42E01E, mp4a.40.2"',
            'video/mp4; codecs="avc1.42e01e, mp4a.40.2"',
        ),
        ("audio/mpeg;<svg onload=alert(1)>", "audio/mpeg"),
        ('audio/mpeg; x="<script>alert(1)</script>"', "audio/mpeg"),
        ("audio/mpeg; \u202e", "audio/mpeg"),
        ("video/mp4; codecs=avc1.42E01E, mp4a.40.2", "video/mp4; codecs=avc1.42e01e, mp4a.40.2"),
        ("audio/mpeg;", "audio/mpeg;"),  # as versions before kept it
        ("audio/mpeg<script>", None),  # no type followed by markup
        ("mpeg", None),
    ],
)
def test_an_enclosure_type_keeps_only_real_parameters(written: str, read: str | None) -> None:
    quoted = escape(written, {'"': "&quot;"})
    enclosure = f'<enclosure url="https://m.example/a.mp3" length="5" type="{quoted}"/>'
    (found,) = _only_item(_rss("T", enclosure)).enclosures
    assert found.type == read


_PIECES = [
    "<", ">", "/", "=", " ", "&", "amp;", "lt;", "gt;", "#127;", "\x7f", '"', "x", "a", "b",
    "script", "style", "svg", "img", "on", "load", "href", "src", "javascript:", "</",
]  # fmt: skip
# An oracle apart from the parser's own rules: a script or style start tag, or a tag
# holding an event handler or a URL attribute before its ">" (or the end).
_RUNNING = re.compile(r"<(?:\w+:)?(?:script|style)(?![\w.:-])", re.I)
_HANDLER = re.compile(r"<[A-Za-z][^>]*?[\s/](?:on\w+|href|src)\s*=", re.I)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_no_title_tag_or_name_shows_an_active_tag(written: str) -> None:
    creator = '<dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">{}</dc:creator>'
    json_item = _only_item(_json(written, [written]))
    body = {"version": "https://jsonfeed.org/version/1.1", "items": [
        {"id": "1", "title": "t", "authors": [{"name": written}]}
    ]}  # fmt: skip
    json_names = [a.name for a in _only_item(json.dumps(body).encode()).authors]
    xml = escape(written).replace("\x7f", "&#127;")
    rss_item = _only_item(_rss(xml, creator.format(xml)))
    texts = [json_item.title, *json_item.tags, rss_item.title, *rss_item.tags, *json_names]
    texts += [author.name for author in rss_item.authors]
    for text in filter(None, texts):
        assert not _RUNNING.search(text), text
        assert not _HANDLER.search(text), text


def test_a_tag_or_name_of_invisible_characters_only_is_none() -> None:
    body = {"version": "https://jsonfeed.org/version/1.1", "items": [
        {"id": "1", "title": "t", "tags": ["\u200b", "\u200b\u00ad", "a\u200b"],
         "authors": [{"name": "\u200b\u2060"}, {"name": "Jo\u200b"}]}
    ]}  # fmt: skip
    item = _only_item(json.dumps(body).encode())
    assert item.tags == ("a\u200b",)
    assert [author.name for author in item.authors] == ["Jo\u200b"]


def test_markup_nested_past_the_readings_allowed_leaves_nothing() -> None:
    # Hundreds of levels, a few characters each: a few readings, then no title at all
    # (not one reading per level, which took seconds on a long title).
    written = _nested(40)
    item = _only_item(_json(written, [written]))
    assert item.title is None
    assert not any("<" in tag and markup.shows_tags(tag) for tag in item.tags)


def test_a_long_title_escaped_level_upon_level_is_read_in_a_few_readings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    readings = 0

    def counting(text: str, *, unescape_twice: bool = False) -> str:
        nonlocal readings
        readings += 1
        return html_text(text, unescape_twice=unescape_twice)

    monkeypatch.setattr(fields, "html_text", counting)
    monkeypatch.setattr(markup, "html_text", counting)
    body = {"version": "https://jsonfeed.org/version/1.1", "items": [
        {"id": "1", "title": "x" * 100_000 + _nested(300)}
    ]}  # fmt: skip
    assert _only_item(json.dumps(body).encode()).title is None
    assert readings <= markup.MAX_MARKUP_READINGS + 1  # the first reading, then the bound


@pytest.mark.parametrize("piece", ["<a", "<a=", "<a\u00e9", "<a<", "<x;"])
def test_a_long_run_of_tag_starts_is_judged_in_linear_time(piece: str) -> None:
    # Each "<" of a run without a space, "/" or ">" starts a tag name that runs to the
    # run's end: scanning that name again from every "<" took minutes on 60 KB.
    written = piece * (200_000 // len(piece)) + "="
    started = time.process_time()
    markup.shows_tags(written)
    assert time.process_time() - started < 2.0
