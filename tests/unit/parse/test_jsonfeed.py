"""The JSON Feed reader: the shapes generators give its fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tap_feeddelta.models import ParsedItem
from tap_feeddelta.parse import parse_feed

URL = "https://blog.example/feed.json"


def _items(*items: dict[str, Any], version: str = "1.1") -> tuple[ParsedItem, ...]:
    document = {"version": f"https://jsonfeed.org/version/{version}", "title": "T", "items": items}
    return parse_feed(json.dumps(document).encode(), None, URL).items


def _codes(item: ParsedItem) -> list[str]:
    return [issue.code for issue in item.issues]


_HUGO_SUMMARY = (
    '<p>First paragraph with <em>emphasis</em> and a <a href="https://x.example">link</a>.</p>\n'
)
_HUGO_TEXT = "First paragraph with emphasis and a link."


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        (_HUGO_SUMMARY, _HUGO_TEXT),
        (_HUGO_SUMMARY.replace("<p>", '<p class="summary">'), _HUGO_TEXT),
        ("First <b>bold</b> word", "First bold word"),
        ("Line one<br>Line two", "Line one Line two"),
        ("&lt;b&gt; stays a word in <em>HTML</em>", "<b> stays a word in HTML"),
        ('A <a href="https://x.example">link</a>', "A link"),
        ('A picture <img src="https://x.example/a.png">', "A picture"),
        ("  <p>Cut before its end", "Cut before its end"),
    ],
    ids=["hugo", "hugo-with-class", "end-tag", "void-tag", "escaped-tag", "link", "image",
         "html-start"],
)  # fmt: skip
def test_a_json_feed_summary_holding_html_is_read_as_html(summary: str, expected: str) -> None:
    # Hugo's .Summary and Jekyll's post.excerpt put HTML in the summary, which the spec
    # makes plain text: its tags stayed in the record, and a markup-only edit was an update.
    [item] = _items({"id": "1", "summary": summary})
    assert (item.summary, item.issues) == (expected, ())


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("Vec<String> is a type", "Vec<String> is a type"),
        ("x<y means x = y - 1", "x<y means x = y - 1"),
        ("<T> where T = int", "<T> where T = int"),
        ("Use <details> to fold", "Use <details> to fold"),
        ("a<b and c>d &amp; e", "a<b and c>d & e"),
        ("Tom &amp; Jerry <3", "Tom & Jerry <3"),
        ("if a<b && c>d then", "if a<b && c>d then"),
        ("Simple isn&#8217;t easy [&hellip;]", "Simple isn\u2019t easy [\u2026]"),
        ("  two   spaces\n line ", "two spaces line"),
        ("AT&T <T> news", "AT&T <T> news"),
        ("\u00c6r\u00f8 a<b", "\u00c6r\u00f8 a<b"),
        ("if n<p then q", "if n<p then q"),
        ("Why the </script> tag breaks", "Why the </script> tag breaks"),
        ("When to use <hr> vs. borders", "When to use <hr> vs. borders"),
        ("Use <b> for bold", "Use <b> for bold"),
    ],
)
def test_a_plain_text_json_feed_summary_reads_as_before(summary: str, expected: str) -> None:
    # Plain text by the spec: an "=", a reference or a tag cut at the end ("a<b", as the
    # contract fuzzer writes) is no sign of HTML there, only a tag written as markup, so
    # the summaries (and fingerprints) of plain-text feeds stay what they were.
    [item] = _items({"id": "1", "summary": summary})
    assert (item.summary, item.issues) == (expected, ())


def test_json_feed_tags_that_are_whole_numbers_are_kept_and_others_reported() -> None:
    # YAML front matter "tags: [2024, travel]" through Hugo's or Jekyll's jsonify gives
    # [2024, "travel"]: the number was dropped without an issue.
    plain, odd = _items(
        {"id": "1", "tags": [2024, "travel", 7.0, None]},
        {"id": "2", "tags": ["travel", True, 3.5, {"a": 1}, ["b"], 1e300]},
    )
    assert (plain.tags, _codes(plain)) == (("2024", "travel", "7"), [])
    assert (odd.tags, _codes(odd)) == (("travel",), ["invalid_value"])


def test_a_json_feed_size_written_as_digits_is_read_as_an_rss_length_is() -> None:
    # "size_in_bytes": "{{ post.size }}" in a Liquid template: the same digits are read
    # in an RSS enclosure length, and were refused here.
    sizes = ["123456", " 42 ", "", "12kB", "\u0661\u0662\u0663", "-5", "1" * 19]
    items = _items(
        *(
            {"id": str(n), "attachments": [{"url": "https://t.example/a.mp3", "size_in_bytes": s}]}
            for n, s in enumerate(sizes)
        )
    )
    assert [item.enclosures[0].length_bytes for item in items] == [123456, 42] + [None] * 5
    assert [_codes(item) for item in items] == [[], [], []] + [["invalid_value"]] * 4


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("https://jsonfeed.org/version/1", "json-feed-1.0"),
        ("https://jsonfeed.org/version/1.0", "json-feed-1.0"),
        ("https://jsonfeed.org/version/1 ", "json-feed-1.0"),
        ("https://jsonfeed.org/version/1/", "json-feed-1.0"),
        ("http://jsonfeed.org/version/1.0/ ", "json-feed-1.0"),
        ("https://jsonfeed.org/version/1.1", "json-feed-1.1"),
        ("https://jsonfeed.org/version/1.1/", "json-feed-1.1"),
        ("https://jsonfeed.org/version/11", "json-feed-1.1"),
    ],
)
def test_a_json_feed_version_1_0_in_any_spelling_is_json_feed_1_0(
    version: str, expected: str
) -> None:
    # A Java library's VERSION_1_0 writes ".../version/1.0": it was labelled 1.1.
    document = {"version": version, "title": "T", "items": []}
    assert parse_feed(json.dumps(document).encode(), None, URL).format == expected


def test_a_null_json_feed_author_is_absent() -> None:
    # Serializers that write every field give the deprecated "author" as null next to
    # "authors": each item carried "An author is not an object".
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "T",
        "author": None,
        "authors": [{"name": "Site"}],
        "items": [
            {"id": "1", "author": None, "authors": None},
            {"id": "2", "author": None},
            {"id": "3", "authors": None, "author": {"name": "Ann"}},
        ],
    }
    feed = parse_feed(json.dumps(document).encode(), None, URL)
    assert feed.issues == ()
    assert [[a.name for a in item.authors] for item in feed.items] == [["Site"], ["Site"], ["Ann"]]
    assert [item.issues for item in feed.items] == [(), (), ()]
    document.update(author=None, authors=None)
    feed = parse_feed(json.dumps(document).encode(), None, URL)
    assert (feed.issues, feed.items[0].authors, feed.items[0].issues) == ((), (), ())


@pytest.mark.parametrize(
    ("raw_id", "expected"),
    [
        ("123", "123"),
        ('"123"', "123"),
        ("123.0", "123"),
        ("1e2", "100"),
        ("-5.0", "-5"),
        ("-0.0", "0"),
        ("9007199254740991.0", "9007199254740991"),
        ("12345678901234567890", "12345678901234567890"),
        ("1.5", "1.5"),
        ("9007199254740992.0", "9007199254740992.0"),
        ("1e300", "1e+300"),
    ],
)
def test_a_json_feed_id_that_is_an_integral_number_reads_as_javascript_writes_it(
    raw_id: str, expected: str
) -> None:
    # A pandas column that once held a NaN is float64: its ids come out 123.0 until the
    # NaN is gone, and each item came out new under "123.0", then again under "123".
    # JavaScript's String() writes an integral Number below 2**53 as its digits; other
    # numbers read as they did (Python's str()).
    body = (
        '{"version": "https://jsonfeed.org/version/1.1", "title": "T", '
        f'"items": [{{"id": {raw_id}, "title": "A"}}]}}'
    ).encode()
    [item] = parse_feed(body, None, URL).items
    assert (item.native_id, item.native_id_source, item.issues) == (expected, "json_id", ())


def test_json_feed_content_text_stands_in_for_content_html_without_words() -> None:
    # A photo post: only an <img> in content_html, the caption in content_text. The
    # caption was dropped, and its edits never seen.
    photo = '<p><img src="https://photos.example/p1.jpg" width="600"></p>'
    items = _items(
        {"id": "1", "content_html": photo, "content_text": "Sunset over the harbour"},
        {"id": "2", "content_html": "<p> </p>&nbsp;", "content_text": "Caption"},
        {"id": "3", "content_html": "<p>The <b>words</b></p>", "content_text": "Other words"},
        {"id": "4", "content_html": photo},
        {"id": "5", "content_html": photo, "content_text": ""},
    )
    assert [item.content_text for item in items] == [
        "Sunset over the harbour",
        "Caption",
        "The words",  # HTML with words: as before, content_text is its other form
        None,
        None,
    ]
    assert [item.issues for item in items] == [()] * 5
