"""The words of HTML in feeds: what markup is dropped with its content, what is kept."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.errors import Issue
from tap_feeddelta.parse import markup, parse_feed
from tap_feeddelta.parse import text as parse_text
from tap_feeddelta.parse.text import decoded_references, html_text, plain_text, shows_markup

URL = "http://example.com/feed"

XHTML_EMPTY_IFRAME = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>
<entry><id>urn:1</id><title>Video post</title><updated>2024-01-15T10:30:00Z</updated>
<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Watch this:</p>
<iframe src="https://www.youtube.com/embed/abc"></iframe>
<p>Most of the article text follows here.</p></div></content></entry></feed>
"""

VOID_EMBED = b"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>x</title><link>http://example.com/</link>
<item><title>embed</title><description>&lt;p&gt;Intro&lt;/p&gt;&lt;embed src="movie.swf"&gt;\
&lt;p&gt;The rest of the post.&lt;/p&gt;</description></item>
<item><title>svg</title><description>&lt;p&gt;Icon &lt;svg viewBox="0 0 1 1"/&gt; \
Download the report.&lt;/p&gt;</description></item>
</channel></rss>
"""


def test_text_after_an_empty_xhtml_iframe_is_kept() -> None:
    feed = parse_feed(XHTML_EMPTY_IFRAME, None, URL)
    assert feed.items[0].content_text == "Watch this: Most of the article text follows here."


def test_text_after_an_html_embed_and_a_self_closed_svg_is_kept() -> None:
    feed = parse_feed(VOID_EMBED, None, URL)
    assert [item.summary for item in feed.items] == [
        "Intro The rest of the post.",
        "Icon Download the report.",
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('a<iframe src="x"/>b', "a b"),
        ("a<script src=x/>b", "a b"),
        ("a<object data='x' />b", "a b"),
        ("a<SVG/>b", "a b"),
        ("a<embed src=x>b", "a b"),
        ("a<embed src=x></embed>b", "a b"),
        ("a<script>alert(1)</script>b", "a b"),  # still dropped with its content
        ('a<iframe src="x/">fallback</iframe>b', "a b"),  # "/" in a value closes nothing
        ("a<svg><text>label</text></svg>b", "a b"),
        ("a<script>never closed", "a"),
    ],
)
def test_dropped_elements(raw: str, expected: str) -> None:
    assert html_text(raw) == expected


def _rss_titles(*escaped_titles: str) -> bytes:
    items = "".join(f"<item><title>{title}</title></item>" for title in escaped_titles)
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Code &lt;T&gt;</title>'
        f"<link>http://example.com/</link>{items}</channel></rss>"
    ).encode()


def test_rss_titles_with_angle_brackets_that_are_no_html_keep_their_words() -> None:
    feed = parse_feed(
        _rss_titles(
            "Understanding Optional&lt;T&gt; in Java",
            "std::vector&lt;int&gt; tips",
            "The &lt;details&gt; element",
            "a &lt; b &amp;&amp; c &gt; d",
            "Fish &amp; Chips",
        ),
        None,
        URL,
    )
    assert feed.title == "Code <T>"
    assert [item.title for item in feed.items] == [
        "Understanding Optional<T> in Java",
        "std::vector<int> tips",
        "The <details> element",
        "a < b && c > d",
        "Fish & Chips",
    ]


def test_rss_titles_that_look_like_html_are_read_as_html() -> None:
    feed = parse_feed(
        _rss_titles(
            "&lt;b&gt;Bold&lt;/b&gt; news",
            "Line&lt;br&gt;two",
            "Line&lt;br/&gt;two",
            "Rule&lt;hr /&gt;d",
            'Pic&lt;img src="x.png"&gt; here',
            "AT&amp;amp;T",
            "caf&amp;eacute; &amp;#8212; &amp;#x41;",
            "&lt;script&gt;alert(1)&lt;/script&gt;Safe",
        ),
        None,
        URL,
    )
    assert [item.title for item in feed.items] == [
        "Bold news",
        "Line two",
        "Line two",
        "Rule d",
        "Pic here",
        "AT&T",
        "café — A",
        "Safe",
    ]


def test_rss_titles_that_name_void_or_end_tags_keep_them() -> None:
    # Tech blogs write about tags: a bare void tag standing as a word, or an end tag whose
    # element was never opened, is the topic, not markup (markup would leave "and" dangling).
    feed = parse_feed(
        _rss_titles(
            "Lazy-loading &lt;img&gt; and &lt;iframe&gt; elements",
            "<![CDATA[Why the </script> tag breaks inline JSON]]>",
            "When to use &lt;hr&gt; vs. CSS borders",
            "&lt;br&gt; or CSS margins?",
            "Closing tags like &lt;/p&gt; are optional",
            "The &lt;wbr&gt; element, the &lt;br&gt; element",
            "Lazy-loading &amp;lt;img&amp;gt; and &amp;lt;iframe&amp;gt;",  # escaped twice
        ),
        None,
        URL,
    )
    assert [item.title for item in feed.items] == [
        "Lazy-loading <img> and <iframe> elements",
        "Why the </script> tag breaks inline JSON",
        "When to use <hr> vs. CSS borders",
        "<br> or CSS margins?",
        "Closing tags like </p> are optional",
        "The <wbr> element, the <br> element",
        "Lazy-loading <img> and <iframe>",
    ]


def test_rss_titles_with_real_markup_around_tag_names_are_still_html() -> None:
    feed = parse_feed(
        _rss_titles(
            "&lt;em&gt;New&lt;/em&gt; release",
            '&lt;a href="https://example.com/"&gt;Linked&lt;/a&gt; title',
            "&lt;B&gt;Loud&lt;/b&gt; news",
            "Title&lt;br&gt;",
            "标题&lt;br&gt;副标题",
            "Line &lt;br /&gt; two",
            "&lt;p&gt;Wrapped&lt;/p&gt;",
        ),
        None,
        URL,
    )
    assert [item.title for item in feed.items] == [
        "New release",
        "Linked title",
        "Loud news",
        "Title",
        "标题 副标题",
        "Line two",
        "Wrapped",
    ]


RAW_MARKUP_WITH_ESCAPED_TEXT = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>
<title>Dev blog</title><link>https://dev.example.com/</link>
<item><title>Escaping HTML</title><guid isPermaLink="false">1</guid>
<description><p>Never put user input in a &lt;script&gt; tag; escape &amp;lt; as well.</p>\
<p>Second paragraph.</p></description>
<content:encoded><p>Write <code>&lt;img src=x onerror=...&gt;</code> to test.</p>\
<p>The end.</p></content:encoded></item></channel></rss>
"""

ATOM_HTML_WITH_CHILDREN = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><id>urn:t</id>
<entry><id>urn:1</id><title>Raw XHTML in html content</title>
<summary type="html"><p>Use the &lt;style&gt; element for CSS. Then more text.</p></summary>
<content><p>Tip: &lt;b&gt; makes bold &amp; &lt;i&gt; italic.</p><p>Done.</p></content>
<updated>2024-01-01T00:00:00Z</updated></entry>
<entry><id>urn:2</id><title>Typepad</title><updated>2024-01-01T00:00:00Z</updated>
<content type="html"><div xmlns="http://www.w3.org/1999/xhtml">Example \
&lt;b&gt;Atom&lt;/b&gt; &amp;amp; more</div></content></entry></feed>
"""


def test_escaped_text_inside_raw_markup_in_rss_stays_text() -> None:
    item = parse_feed(RAW_MARKUP_WITH_ESCAPED_TEXT, None, URL).items[0]
    assert item.summary == (
        "Never put user input in a <script> tag; escape &lt; as well. Second paragraph."
    )
    assert item.content_text == "Write <img src=x onerror=...> to test. The end."


def test_escaped_text_inside_raw_markup_in_atom_html_stays_text() -> None:
    feed = parse_feed(ATOM_HTML_WITH_CHILDREN, None, URL)
    assert feed.items[0].summary == "Use the <style> element for CSS. Then more text."
    assert feed.items[0].content_text == "Tip: <b> makes bold & <i> italic. Done."
    # A lone div holding only text is the "typepad" shape: its text is the escaped source.
    assert feed.items[1].content_text == "Example Atom & more"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('<img src="s.png" alt="Settings > Privacy > Tracking" width="600">Next', "Next"),
        ('Then <a href="/more" title="Read more >>">read more</a>.', "Then read more."),
        ("<p class='a>b'>One</p><p>Two</p>", "One Two"),
        ('a<iframe title="x/>y">fallback</iframe>b', "a b"),  # "/>" in a value closes nothing
        ('a<script data-x=">">alert(1)</script>b', "a b"),
        ('<a title="unbalanced>word</a> more', "word more"),  # the first ">" ends it
        ("<b title='cut", ""),
    ],
)
def test_a_gt_inside_a_quoted_attribute_value_does_not_end_the_tag(raw: str, expected: str) -> None:
    assert html_text(raw) == expected


PREFIXED_XHTML = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<title>T</title><id>urn:t</id><entry><id>urn:1</id><title>Prefixed XHTML</title>
<updated>2024-01-01T00:00:00Z</updated><content type="xhtml"><xhtml:div>\
<xhtml:p>First paragraph.</xhtml:p><xhtml:p>Second paragraph.</xhtml:p><xhtml:ul>\
<xhtml:li>alpha</xhtml:li><xhtml:li>beta</xhtml:li></xhtml:ul>\
<xhtml:script>alert(1)</xhtml:script><xhtml:style>p {}</xhtml:style>End</xhtml:div>\
</content></entry></feed>"""


def test_prefixed_xhtml_tags_are_read_by_their_local_name() -> None:
    feed = parse_feed(PREFIXED_XHTML, None, URL)
    assert feed.items[0].content_text == "First paragraph. Second paragraph. alpha beta End"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("<x:p>one</x:p><x:p>two</x:p>", "one two"),
        ("a<h:br/>b", "a b"),
        ("a<x:script>alert(1)</x:script>b", "a b"),
        ("a<X:SVG a='1'/>b", "a b"),
        ("a<x:b>bold</x:b>b", "aboldb"),
    ],
)
def test_prefixed_tags_in_html_text(raw: str, expected: str) -> None:
    assert html_text(raw) == expected


LONG_DIGITS = "1" * 5000  # past int()'s 4,300-digit limit, where html.unescape raised


@pytest.mark.parametrize(
    ("where", "body", "field"),
    [
        (
            "escaped-in-rss",
            "<rss version='2.0'><channel><title>t</title><item><title>x</title>"
            f"<description>a &amp;amp; b &amp;#{LONG_DIGITS}; c</description></item>"
            "</channel></rss>",
            "summary",
        ),
        (
            "raw-in-rss",  # a malformed reference: the repair escapes its "&"
            "<rss version='2.0'><channel><title>t</title><item><title>x</title>"
            f"<description>a &amp; b &#{LONG_DIGITS}; c</description></item></channel></rss>",
            "summary",
        ),
        (
            "title",
            "<rss version='2.0'><channel><title>t</title><item><title>a &amp;amp; b "
            f"&amp;#{LONG_DIGITS}; c</title></item></channel></rss>",
            "title",
        ),
        (
            "json-content-html",
            '{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [{"id": "1",'
            f' "content_html": "a &amp; b &#{LONG_DIGITS}; c"}}]}}',
            "content_text",
        ),
    ],
    ids=["escaped-in-rss", "raw-in-rss", "title", "json-content-html"],
)
def test_a_decimal_reference_too_long_for_int_is_a_replacement_character(
    where: str, body: str, field: str
) -> None:
    feed = parse_feed(body.encode(), None, URL)
    assert getattr(feed.items[0], field) == "a & b \ufffd c"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("&#" + "0" * 5000 + "65;x", "Ax"),
        ("&#" + "1" * 5000 + ";y", "\ufffdy"),
        ("&#" + "9" * 5000 + "z", "\ufffdz"),
        ("&#99999999; &#65; &amp;", "\ufffd A &"),
    ],
    ids=["leading-zeros", "with-semicolon", "without-semicolon", "with-others"],
)
def test_html_text_reads_any_decimal_reference_as_unescape_would(raw: str, expected: str) -> None:
    assert html_text(raw) == expected
    assert html_text(raw, unescape_twice=True) == expected


# An emoji written as two numeric references to its UTF-16 halves, as commons-lang 2's
# escapeHtml and JavaScript escapers built on charCodeAt write it.
PAIRS = {
    "decimal": "&#55357;&#56832;",
    "hex": "&#xD83D;&#xDE00;",
    "lowercase-hex": "&#xd83d;&#xde00;",
    "mixed": "&#55357;&#xDE00;",
    "no-semicolons": "&#55357&#56832",
    "leading-zeros": "&#055357;&#0056832;",
}


@pytest.mark.parametrize("pair", PAIRS.values(), ids=PAIRS.keys())
def test_a_surrogate_pair_of_references_is_the_one_character(pair: str) -> None:
    """Before, each half became U+FFFD (as html.unescape reads a lone one)."""
    raw = f"Launch {pair} today"
    assert html_text(raw) == "Launch \U0001f600 today"
    if ";" in pair:  # else no well-formed reference, which a second pass leaves as text
        escaped = raw.replace("&", "&amp;")
        assert html_text(escaped, unescape_twice=True) == "Launch \U0001f600 today"
        assert decoded_references(raw) == "Launch \U0001f600 today"


LONE = {
    "high": ("a &#55357; b", "a \ufffd b"),
    "low": ("a &#56832; b", "a \ufffd b"),
    "reversed": ("&#56832;&#55357;", "\ufffd\ufffd"),
    "high-then-pair": ("&#55357;&#55357;&#56832;!", "\ufffd\U0001f600!"),
    "apart": ("&#55357; &#56832;", "\ufffd \ufffd"),
}


@pytest.mark.parametrize(("raw", "expected"), LONE.values(), ids=LONE.keys())
def test_a_lone_surrogate_reference_stays_a_replacement_character(raw: str, expected: str) -> None:
    assert html_text(raw) == expected
    assert decoded_references(raw) == expected


RSS_FIELDS = (
    "<rss version='2.0'><channel><title>t</title><item><guid>g</guid>"
    "<title>Launch {ref} today</title><description>Launch {ref} today</description>"
    "<category>Launch {ref}</category><author>Jane {ref} Doe</author></item></channel></rss>"
)


def _codes(issues: tuple[Issue, ...]) -> set[str]:
    return {issue.code for issue in issues}


def test_reference_pairs_in_rss_fields_are_read_without_an_issue() -> None:
    feed = parse_feed(RSS_FIELDS.format(ref="&amp;#55357;&amp;#56832;").encode(), None, URL)
    item = feed.items[0]
    assert item.title == item.summary == "Launch \U0001f600 today"
    assert item.tags == ("Launch \U0001f600",)
    assert "encoding_replaced" not in _codes(item.issues) | _codes(feed.issues)


@pytest.mark.parametrize("field", ["title", "description", "category", "author"])
def test_a_lone_surrogate_reference_in_a_field_is_reported(field: str) -> None:
    """Before, the U+FFFD it became was silent."""
    body = (
        RSS_FIELDS.format(ref="")
        .replace(f"<{field}>Launch", f"<{field}>Launch &amp;#55357;")
        .replace(f"<{field}>Jane", f"<{field}>Jane &amp;#55357;")
    )
    item = parse_feed(body.encode(), None, URL).items[0]
    assert "encoding_replaced" in _codes(item.issues)


def test_a_lone_surrogate_reference_in_a_json_feed_title_is_reported() -> None:
    body = (
        '{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": ['
        '{"id": "1", "title": "Launch &#55357; today"},'
        '{"id": "2", "title": "Launch &#55357;&#56832; today"}]}'
    )
    lone, paired = parse_feed(body.encode(), None, URL).items
    assert lone.title == "Launch \ufffd today"
    assert "encoding_replaced" in _codes(lone.issues)
    assert paired.title == "Launch \U0001f600 today"
    assert "encoding_replaced" not in _codes(paired.issues)


@pytest.mark.parametrize("cdata", [False, True], ids=["plain", "with-cdata"])
def test_a_surrogate_pair_of_xml_references_is_the_one_character(cdata: bool) -> None:
    """No XML character, so read by recovery: before, each half became U+FFFD."""
    extra = "<description><![CDATA[x]]></description>" if cdata else ""
    body = (
        "<rss version='2.0'><channel><title>t</title><item><guid>g</guid>"
        f"<title>Launch &#55357;&#xDE00; today &#55357;</title>{extra}</item></channel></rss>"
    )
    feed = parse_feed(body.encode(), None, URL)
    assert feed.items[0].title == "Launch \U0001f600 today \ufffd"
    assert "xml_recovered" in _codes(feed.issues)


def _rss_descriptions(*escaped_descriptions: str, channel: str = "bio") -> bytes:
    items = "".join(
        f"<item><guid>{n}</guid><description>{description}</description></item>"
        for n, description in enumerate(escaped_descriptions)
    )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<description>{channel}</description>{items}</channel></rss>"
    ).encode()


def test_plain_text_rss_descriptions_keep_words_that_look_like_tags() -> None:
    """Bluesky's profile RSS (and other bridges of plain-text posts) put a post's raw text
    in <description>: a description whose "<" starts no markup (no end tag, comment or
    attribute value, no element written bare as markup is, no reference) is plain text."""
    feed = parse_feed(
        _rss_descriptions(
            "TIL: Rust's Vec&lt;String&gt; is Java's List&lt;String&gt;.",
            "Math: if a&lt;b and c&gt;d then we are done.",
            "Use &lt;details&gt; and &lt;summary&gt; for disclosure widgets, no JS needed.",
            "Either&lt;A, B&gt; and template&lt;typename T&gt;, AT&amp;T &amp; R&amp;D",
            "Mail &lt;alice@example.com&gt; or see &lt;https://example.com/a&gt; &lt;3",
            "Custom &lt;my-widget&gt; tags,\n  and &lt;Component /&gt; in JSX",
            channel="Code &lt;T&gt; and &lt;String&gt;",
        ),
        None,
        URL,
    )
    assert feed.description == "Code <T> and <String>"
    assert [item.summary for item in feed.items] == [
        "TIL: Rust's Vec<String> is Java's List<String>.",
        "Math: if a<b and c>d then we are done.",
        "Use <details> and <summary> for disclosure widgets, no JS needed.",
        "Either<A, B> and template<typename T>, AT&T & R&D",
        "Mail <alice@example.com> or see <https://example.com/a> <3",
        "Custom <my-widget> tags, and <Component /> in JSX",
    ]
    assert all(not item.issues for item in feed.items)


def test_rss_descriptions_that_show_any_markup_are_read_as_html() -> None:
    """A description that shows one sign of HTML is read as HTML, as before: an end tag, a
    comment, a tag with an attribute value, a void element, one whose end tag is optional
    or an active one (script, style, iframe, svg…) in any shape, a formatting element
    written bare (a fragment cut before its end tag), or a character or entity reference."""
    feed = parse_feed(
        _rss_descriptions(
            "&lt;p&gt;One&lt;p&gt;Two &lt;T&gt;",
            "Line&lt;br&gt;two Vec&lt;String&gt;",
            "&lt;b&gt;Bold intro of a post cut short",
            "&lt;details&gt;Spoiler&lt;/details&gt; &lt;T&gt;",
            "&lt;x-card title=Hi&gt;Card",
            "&lt;!-- note --&gt;Text &lt;T&gt;",
            "Fish &amp;amp; chips &lt;T&gt;",
            "Fish &amp;amp chips &lt;T&gt;",  # a reference without its ";", as HTML reads it
            "Safe &lt;SCRIPT async&gt;alert(1)",
            "Safe &lt;svg:script&gt;alert(1)",
            "Safe &lt;style&gt;p{}",
            "Safe &lt;img/src/onerror=alert(1)&gt;",
            "Safe &lt;scr&#x81;ipt&gt;alert(1)",  # a C1 control, removed from plain text
            # HTML lets an attribute name hold "<": the tag goes on past it to its handler.
            "Safe &lt;details a&lt;1 open ontoggle=alert(1)&gt;Spoiler",
        ),
        None,
        URL,
    )
    assert [item.summary for item in feed.items] == [
        "One Two",
        "Line two Vec",
        "Bold intro of a post cut short",
        "Spoiler",
        "Card",
        "Text",
        "Fish & chips",
        "Fish & chips",
        "Safe",
        "Safe",
        "Safe",
        "Safe",
        "Safe",
        "Safe Spoiler",
    ]


_FRAGMENTS = [
    "<", ">", "/", "!", "?", "=", " ", "\n", "&", "amp;", "#60;", "lt;", "x", "T", "b", "p",
    "script", "SCRIPT", "scr", "ipt", "svg:", "img", "details", "--", "'", '"', "\x81", "\u200b",
]  # fmt: skip
_ACTIVE_TAG = re.compile(r"</?(?:\w+:)?(?:script|style|img|svg)(?![\w-])", re.I)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=16).map("".join))
def test_a_description_reads_as_html_or_as_plain_text_that_shows_no_markup(raw: str) -> None:
    """Whatever a description holds, its summary is its HTML reading, or its plain reading
    when that shows no markup at all: no active tag ever survives the plain reading."""
    escaped = raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = escaped.replace("\x81", "&#x81;")
    body = (
        '<rss version="2.0"><channel><title>t</title><item><guid>1</guid>'
        f"<description>{escaped}</description></item></channel></rss>"
    )
    summary = parse_feed(body.encode(), None, URL).items[0].summary
    if summary == (html_text(raw) or None):
        return
    assert summary == (plain_text(raw) or None)
    assert summary is not None
    assert not shows_markup(summary) and not _ACTIVE_TAG.search(summary)


@pytest.mark.parametrize(
    "sample",
    [
        *(start + "x>" for start in markup._HTML_STARTS),
        *("<" + name + " x=1>" for name in ("p", "br", "img", "a", "div", "x-card")),
        *(
            "<" + name + f"{space}>"
            for name in ("P", "Br", "iframe", "h6", "sup")
            for space in ("", " /")
        ),
        "</b>",
        "<!-- c -->",
        "<?php",
    ],
)
def test_the_quick_checks_tell_only_what_the_rules_tell(
    monkeypatch: pytest.MonkeyPatch, sample: str
) -> None:
    """The usual starts of HTML descriptions and the usual markup, found at once, are each
    markup by the rules that read every "<" one by one."""
    assert markup.rss_description_kind(sample) == "html"
    assert parse_text._USUAL_MARKUP.search(sample) or sample.startswith(markup._HTML_STARTS)
    monkeypatch.setattr(parse_text, "_USUAL_MARKUP", re.compile("(?!)"))
    assert shows_markup(sample)


_TAG_FRAGMENTS = [
    "<", ">", "/", "=", " ", "\n", "\xa0", "p", "P", "br", "img", "a", " href=", "div", "b",
    "h1", "li", "!", "?", "x", ":", "-", "\u017f", "\u212a", "script", "<p>", "<br/",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TAG_FRAGMENTS), max_size=10).map("".join))
def test_the_quick_checks_never_see_markup_the_rules_do_not(raw: str) -> None:
    start = raw.find("<")
    quick = parse_text._USUAL_MARKUP.search(raw) is not None or (
        start >= 0 and raw.startswith(markup._HTML_STARTS, start)
    )
    with mock.patch.object(parse_text, "_USUAL_MARKUP", re.compile("(?!)")):
        assert not quick or shows_markup(raw)
