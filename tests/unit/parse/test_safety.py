"""Hostile and oversized documents: refused or read within bounds, in bounded time."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tap_feeddelta.errors import ParseError
from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.limits import (
    MAX_CONTENT_BYTES,
    MAX_ITEMS_READ,
    MAX_JSON_CONTAINERS,
    MAX_SUMMARY_BYTES,
    MAX_TITLE_BYTES,
)

URL = "https://example.org/feed"


def _parse_quickly(body: bytes, seconds: float = 5.0) -> ParsedFeed | ParseError:
    """The parse, which must take under ``seconds`` of CPU: a bound for quadratic or worse
    work (the cases here took a minute or more when they were), set far above their
    linear time. CPU time, not wall time: other tests running beside this one on a busy
    machine must not fail it."""
    started = time.process_time()
    try:
        result: ParsedFeed | ParseError = parse_feed(body, None, URL)
    except ParseError as exc:
        result = exc
    assert time.process_time() - started < seconds
    return result


def _parse(body: bytes) -> ParsedFeed | ParseError:
    try:
        return parse_feed(body, None, URL)
    except ParseError as exc:
        return exc


def _codes(feed: ParsedFeed) -> set[str]:
    return {issue.code for issue in feed.issues}


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<rss version="2.0"><channel><title>&lol9;</title>
<item><title>&lol9;</title><description>&lol9;</description><guid>&lol9;</guid></item>
</channel></rss>"""


def test_billion_laughs_is_read_without_expansion() -> None:
    feed = _parse_quickly(BILLION_LAUGHS)
    assert isinstance(feed, ParsedFeed)
    assert "doctype_ignored" in _codes(feed)
    assert feed.title == "&lol9;"
    assert feed.items[0].title == "&lol9;"
    assert feed.items[0].native_id == "&lol9;"


def test_quadratic_blowup_is_read_without_expansion() -> None:
    entity = b"A" * 100_000
    refs = b"&a;" * 20_000
    body = (
        b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "' + entity + b'">]>'
        b"<rss><channel><item><description>" + refs + b"</description></item></channel></rss>"
    )
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    summary = feed.items[0].summary
    assert summary is not None
    assert "A" not in summary
    assert len(summary.encode()) <= MAX_SUMMARY_BYTES


def test_external_entity_is_never_fetched_or_read() -> None:
    body = (
        b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">'
        b'<!ENTITY y SYSTEM "http://127.0.0.1:9/x">]>'
        b"<rss><channel><title>&x;&y;</title></channel></rss>"
    )
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    assert feed.title == "&x;&y;"


def test_parameter_entities_in_doctype_are_ignored() -> None:
    body = (
        b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p.dtd">'
        b"%p;]><rss><channel><title>ok</title></channel></rss>"
    )
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    assert feed.title == "ok"


def test_more_than_the_item_limit_keeps_the_first_ones() -> None:
    items = b"".join(
        b"<item><guid>%d</guid></item>" % number for number in range(MAX_ITEMS_READ + 5)
    )
    feed = _parse_quickly(b'<rss version="2.0"><channel>' + items + b"</channel></rss>", 20)
    assert isinstance(feed, ParsedFeed)
    assert len(feed.items) == MAX_ITEMS_READ
    assert feed.is_truncated
    assert "too_many_items" in _codes(feed)
    assert feed.items[-1].native_id == str(MAX_ITEMS_READ - 1)
    assert feed.items[-1].source_pointer == f"/rss/channel/item[{MAX_ITEMS_READ}]"


def test_more_json_items_than_the_limit() -> None:
    items = ",".join(f'{{"id": "{n}"}}' for n in range(MAX_ITEMS_READ + 1))
    body = ('{"version": "https://jsonfeed.org/version/1.1", "items": [' + items + "]}").encode()
    feed = _parse_quickly(body, 20)
    assert isinstance(feed, ParsedFeed)
    assert len(feed.items) == MAX_ITEMS_READ
    assert feed.is_truncated


@pytest.mark.parametrize("depth", [300, 100_000])
def test_deep_nesting_is_bounded(depth: int) -> None:
    body = (
        b"<rss><channel><item><title>kept</title></item><item><x:nest xmlns:x='urn:x'>"
        + b"<x:div>" * depth
        + b"x"
        + b"</x:div>" * depth
        + b"</x:nest></item><item><title>after</title></item></channel></rss>"
    )
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    assert "limit_exceeded" in _codes(feed)
    assert [item.title for item in feed.items] == ["kept", None, "after"]
    assert not feed.is_truncated


@pytest.mark.parametrize(("depth", "is_flattened"), [(256, False), (257, True)], ids=["256", "257"])
def test_xml_nesting_is_read_to_libxml2s_depth_of_256(depth: int, is_flattened: bool) -> None:
    # The limit is libxml2's own (kept on by parsing without XML_PARSE_HUGE): an element
    # 256 deep is read as it is; a document with one deeper is read again with the tags
    # deeper than MAX_XML_DEPTH made spaces (it was cut there, and the items after lost).
    body = (
        b"<rss><channel><item><title>kept</title></item><item><title>deep</title>"
        + b"<x:div xmlns:x='urn:x'>"
        + b"<x:div>" * (depth - 4)
        + b"x"
        + b"</x:div>" * (depth - 3)
        + b"</item><item><title>after</title></item></channel></rss>"
    )
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    assert [item.title for item in feed.items] == ["kept", "deep", "after"]
    assert ("limit_exceeded" in _codes(feed)) is is_flattened
    assert not feed.is_truncated


def _atom_with_deep_entry(depth: int, title: str = "Deep") -> bytes:
    entry = "<entry><id>urn:{0}</id><title>{0}</title></entry>"
    deep = (
        f"<entry><id>urn:deep</id><title>{title}</title><content type='xhtml'>"
        "<div xmlns='http://www.w3.org/1999/xhtml'>"
        + "<div><p>word</p>" * depth
        + "end"
        + "</div>" * depth
        + "</div></content></entry>"
    )
    return (
        "<feed xmlns='http://www.w3.org/2005/Atom'><title>F</title><id>urn:f</id>"
        + entry.format("E1")
        + deep
        + entry.format("E2")
        + entry.format("E3")
        + "</feed>"
    ).encode()


@pytest.mark.parametrize("title", ["Deep", "A & B"], ids=["well-formed", "recovered"])
@pytest.mark.parametrize("depth", [300, 20_000])
def test_an_entry_nested_past_the_depth_limit_keeps_the_entries_after_it(
    depth: int, title: str
) -> None:
    # Nested XHTML content past libxml2's 256 cut the feed there: the deep entry and every
    # entry after it were lost (reported limit_exceeded, is_truncated).
    feed = _parse_quickly(_atom_with_deep_entry(depth, title))
    assert isinstance(feed, ParsedFeed)
    assert [item.native_id for item in feed.items] == ["urn:E1", "urn:deep", "urn:E2", "urn:E3"]
    assert feed.items[1].title == title
    content = feed.items[1].content_text
    assert content is not None
    # The words past the depth kept apart (a long content cut at its cap).
    assert " ".join(["word"] * depth + ["end"]).startswith(content)
    assert content.endswith("end") is (depth == 300)
    assert "limit_exceeded" in _codes(feed)
    assert not feed.is_truncated


@pytest.mark.parametrize("depth", [300, 100_000])
def test_deeply_nested_raw_html_in_an_rss_description_is_read_as_text(depth: int) -> None:
    body = (
        b"<rss><channel><item><title>kept</title></item><item><title>too</title><description>"
        + b"<div>" * depth
        + b"x"
        + b"</div>" * depth
        + b"</description></item></channel></rss>"
    )
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    assert not feed.is_truncated
    # Balanced, it is read as XML, the tags past the depth limit made spaces.
    assert "limit_exceeded" in _codes(feed)
    assert [item.title for item in feed.items] == ["kept", "too"]
    summary = feed.items[1].summary
    assert summary is not None
    assert summary.split()[0] == "x"  # the deepest source is cut at MAX_RAW_TEXT_CHARS


def test_deep_json_nesting_is_refused() -> None:
    body = b'{"version": "https://jsonfeed.org/version/1", "items": ' + b"[" * 100_000
    result = _parse_quickly(body)
    assert isinstance(result, ParseError)
    assert result.code == "invalid_feed"


@pytest.mark.parametrize("empty", [b"[]", b"{}"])
def test_json_with_too_many_arrays_and_objects_is_refused_before_it_is_built(
    monkeypatch: pytest.MonkeyPatch, empty: bytes
) -> None:
    # Built, an empty container costs some 20 times its bytes (11 M took 850 MB).
    built: list[int] = []
    loads = json.loads

    def counting_loads(text: str, **kwargs: Any) -> Any:
        built.append(len(text))
        return loads(text, **kwargs)

    monkeypatch.setattr(json, "loads", counting_loads)
    head = b'{"version": "https://jsonfeed.org/version/1.1", "title": "t", "x": ['
    body = head + b",".join([empty] * MAX_JSON_CONTAINERS) + b'], "items": []}'
    result = _parse(body)
    assert isinstance(result, ParseError)
    assert result.code == "invalid_feed"
    assert "arrays and objects" in result.message
    assert built == []
    within = head + b",".join([empty] * (MAX_JSON_CONTAINERS - 10)) + b'], "items": [{"id": "1"}]}'
    feed = _parse(within)
    assert isinstance(feed, ParsedFeed)
    assert [item.native_id for item in feed.items] == ["1"]


def test_huge_text_node_never_reaches_a_record_silently() -> None:
    body = (
        b"<rss><channel><item><title>first</title></item><item><title>cut</title><description>"
        + b"x" * (11 * 1024 * 1024)
        + b"</description></item><item><title>after</title></item></channel></rss>"
    )
    feed = _parse_quickly(body, 20)
    assert isinstance(feed, ParsedFeed)
    assert feed.is_truncated
    assert "limit_exceeded" in _codes(feed)
    assert [item.title for item in feed.items] == ["first"]


def test_large_text_is_capped_and_reported() -> None:
    body = (
        b"<rss><channel><item><title>"
        + b"t" * 5000
        + b"</title><description>"
        + b"d " * 10_000
        + b"</description><content:encoded xmlns:content='http://purl.org/rss/1.0/modules/content/'>"
        + "é".encode() * 100_000
        + b"</content:encoded></item></channel></rss>"
    )
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    item = feed.items[0]
    assert item.title is not None and len(item.title.encode()) <= MAX_TITLE_BYTES
    assert item.summary is not None and len(item.summary.encode()) <= MAX_SUMMARY_BYTES
    assert item.content_text is not None
    assert len(item.content_text.encode()) <= MAX_CONTENT_BYTES
    assert {"title_truncated", "summary_truncated", "content_truncated"} <= {
        issue.code for issue in item.issues
    }


def test_many_tags_are_bounded() -> None:
    body = b"<rss><channel><item><title>a</title></item>" + b"<x/>" * 1_100_000 + b"</channel>"
    feed = _parse_quickly(body, 20)
    assert isinstance(feed, ParsedFeed)
    assert feed.is_truncated
    assert "limit_exceeded" in _codes(feed)


@pytest.mark.parametrize(
    ("root", "first"),
    [(b"<rss><channel>", "item"), (b'<feed xmlns="http://www.w3.org/2005/Atom">', "entry")],
)
def test_a_document_with_too_many_tags_before_its_first_item_says_so(
    root: bytes, first: str
) -> None:
    body = root + b"<x/>" * 1_100_000 + b"<item><title>a</title></item><entry/>"
    result = _parse_quickly(body, 20)
    assert isinstance(result, ParseError)
    assert result.code == "invalid_feed"
    assert result.message == f"The document has more than 1,000,000 tags before its first {first}."


@pytest.mark.parametrize(
    "body",
    [b"", b"   ", b"\x00\x01\x02", b"<", b"<<<>>>", b"{", b"[1, 2]", b"null", b"<?xml?>"],
)
def test_garbage_is_a_parse_error(body: bytes) -> None:
    result = _parse_quickly(body)
    assert isinstance(result, ParseError)
    assert result.code in ("invalid_feed", "not_a_feed")


def test_many_comments_after_a_recovered_root_are_read_in_bounded_time() -> None:
    body = (
        b"<rss><channel><item><title>A & B</title></item></channel></rss>"
        + b"<!-- c -->\n<?pi x?>\n" * 200_000
    )
    feed = _parse_quickly(body)  # about 1 s of CPU
    assert isinstance(feed, ParsedFeed)
    assert not feed.is_truncated
    assert [item.title for item in feed.items] == ["A & B"]


@pytest.mark.parametrize(
    "piece", ["<script", "<p", "<br", "</p", "<iframe src=x/", "<p title='", "<xhtml:p"]
)
def test_html_full_of_unclosed_tags_is_read_in_bounded_time(piece: str) -> None:
    # A megabyte of tag starts with no ">": each must not scan to the end of the text
    # (that was quadratic: about a minute for "<script").
    html = piece * ((1 << 20) // len(piece))
    escaped = html.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    body = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
        f"<item><title>x</title><description>{escaped}</description></item>"
        "</channel></rss>"
    ).encode()
    feed = _parse_quickly(body)
    assert isinstance(feed, ParsedFeed)
    assert feed.items[0].title == "x"


@pytest.mark.parametrize(
    "piece",
    [b"<br>", b"<x:y>", b"<x:y><br>", b"<p><br>", b"<br></br>", b"<summary><br>", b"<![CDATA[<br>"],
)
def test_open_void_tags_are_repaired_in_bounded_time(piece: bytes) -> None:
    # A megabyte of tags for the raw-HTML repair: each element's content is read at most
    # once more, however the tags nest or fail to close. (Thousands of open elements then
    # hit the nesting limit: a parse error, in bounded time too.)
    filler = piece * ((1 << 20) // len(piece))
    body = (
        b'<rss version="2.0"><channel><title>T</title><item><title>x</title><x:note>'
        + filler
        + b"</x:note></item><item><title>y</title></item></channel></rss>"
    )
    _parse_quickly(body)


@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_namespace_name_longer_than_a_url_is_refused(quote: str) -> None:
    # lxml copies an element's whole "{namespace}name" each time its tag is read: one
    # megabyte-long namespace on thousands of short prefixed elements took gigabytes.
    long_ns = "urn:x:" + "a" * 1_000_000
    items = "".join(f"<item><x:t>{n}</x:t><title>t{n}</title></item>" for n in range(3))
    body = (
        f"<rss version='2.0' xmlns:x={quote}{long_ns}{quote}><channel><title>T</title>"
        f"{items}</channel></rss>"
    ).encode()
    with pytest.raises(ParseError) as caught:
        parse_feed(body, None, URL)
    assert caught.value.code == "invalid_feed"
    assert "namespace" in caught.value.message
    assert len(caught.value.message) < 200


def test_namespace_names_of_any_usual_length_are_read() -> None:
    namespace = "https://example.org/ns/" + "a" * 1900
    body = (
        f"<rss version='2.0' xmlns:x='{namespace}'><channel><title>T</title>"
        "<item><x:t>1</x:t><title>one</title></item></channel></rss>"
    ).encode()
    assert [item.title for item in parse_feed(body, None, URL).items] == ["one"]
