"""The URL text a document's items hold once resolved is bounded by the document's size.

A one-character relative URL resolved against a long base (an ``xml:base`` of some 1,900
characters, or a long document URL: a redirect's final URL) becomes a string of that
length: 32 enclosures an item made 65 MB of records from a 1.27 MB document. The items
whose URLs would pass twice the document (its UTF-8 bytes) plus 1 MiB are not read.
"""

from __future__ import annotations

import json

import pytest

from tap_feeddelta.models import ParsedFeed, ParsedItem
from tap_feeddelta.parse import parse_feed

MIB = 1 << 20
SHORT_URL = "https://pod.example/feed"
LONG_BASE = "https://pod.example/" + "d" * 1900 + "/"
LONG_URL = LONG_BASE + "feed"  # a redirect's final URL, as long as a URL may be
ITEMS = 60  # 60 items of 32 such URLs hold 3.6 MB of URL text, from some 80 KB


def _budget(body: bytes) -> int:
    """The bound docs/reliability.md states: twice the document (UTF-8 bytes) plus 1 MiB."""
    return 2 * len(body) + MIB


def _url_bytes(item: ParsedItem, feed_authors: tuple[object, ...] = ()) -> int:
    urls = [item.url] + [enclosure.url for enclosure in item.enclosures]
    if item.authors != feed_authors:
        urls += [author.url for author in item.authors]
    return sum(len(url.encode()) for url in urls if url)


def _codes(feed: ParsedFeed) -> list[str]:
    return [issue.code for issue in feed.issues]


def _rss_media(base: str) -> bytes:
    contents = "".join(f'<media:content url="{n}" type="audio/mpeg"/>' for n in range(32))
    items = "".join(
        f"<item><guid>g{i}</guid><title>t</title>{contents}</item>" for i in range(ITEMS)
    )
    return (
        f'<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">'
        f"<channel{base}><title>x</title>{items}</channel></rss>"
    ).encode()


def _rss_enclosures() -> bytes:
    enclosures = "".join(f'<enclosure url="{n}"/>' for n in range(32))
    items = "".join(
        f"<item><guid>g{i}</guid><link>p</link>{enclosures}</item>" for i in range(ITEMS)
    )
    return f'<rss version="2.0"><channel><title>x</title>{items}</channel></rss>'.encode()


def _atom() -> bytes:
    links = "".join(f'<link rel="enclosure" href="{n}"/>' for n in range(32))
    people = "".join(f"<author><name>a</name><uri>{n}</uri></author>" for n in range(16))
    entries = "".join(
        f'<entry><id>g{i}</id><title>t</title><link href="p"/>{links}{people}</entry>'
        for i in range(ITEMS)
    )
    return (
        f'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="{LONG_BASE}"><title>x</title>'
        f"{entries}</feed>"
    ).encode()


def _json_feed() -> bytes:
    item = {"url": "p", "attachments": [{"url": str(n)} for n in range(32)]}
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "items": [{"id": f"g{i}", **item} for i in range(ITEMS)],
    }
    return json.dumps(document, separators=(",", ":")).encode()


ATTACKS = [
    pytest.param(_rss_media(f' xml:base="{LONG_BASE}"'), SHORT_URL, id="rss-xml-base"),
    pytest.param(_atom(), SHORT_URL, id="atom-xml-base"),
    pytest.param(_rss_media(""), LONG_URL, id="rss-media-long-document-url"),
    pytest.param(_rss_enclosures(), LONG_URL, id="rss-enclosures-long-document-url"),
    pytest.param(_json_feed(), LONG_URL, id="json-feed-long-document-url"),
]


@pytest.mark.parametrize(("body", "url"), ATTACKS)
def test_urls_resolved_against_a_long_base_stay_within_the_budget(body: bytes, url: str) -> None:
    feed = parse_feed(body, None, url)
    assert sum(_url_bytes(item) for item in feed.items) <= _budget(body)
    assert feed.is_truncated
    assert "limit_exceeded" in _codes(feed)
    # The items kept are the first ones, in document order, each read whole.
    assert 0 < len(feed.items) < ITEMS
    assert [item.native_id for item in feed.items] == [f"g{i}" for i in range(len(feed.items))]
    assert all(len(item.enclosures) == 32 for item in feed.items)
    assert parse_feed(body, None, url) == feed  # the same document reads the same


@pytest.mark.parametrize(("body", "url"), ATTACKS)
def test_the_message_of_the_cut_quotes_no_url(body: bytes, url: str) -> None:
    feed = parse_feed(body, None, url)
    (issue,) = [issue for issue in feed.issues if issue.code == "limit_exceeded"]
    assert "pod.example" not in issue.message and "ddd" not in issue.message
    assert f"Only the first {len(feed.items):,} " in issue.message


def test_an_ordinary_document_with_xml_base_reads_as_with_absolute_urls() -> None:
    """Relative links under an xml:base, 500 items: nothing is cut, and the items are
    those the same document gives with every URL written out."""

    def rss(base: str, prefix: str) -> bytes:
        items = "".join(
            f"<item><guid>https://blog.example/2024/{i}.html</guid><title>Post {i}</title>"
            f"<link>{prefix}{i}.html</link><description>Words about post {i}.</description>"
            f'<enclosure url="{prefix}{i}.mp3" type="audio/mpeg" length="1"/></item>'
            for i in range(500)
        )
        return (
            f'<rss version="2.0"><channel{base}><title>Blog</title>'
            f"<link>https://blog.example/</link>{items}</channel></rss>"
        ).encode()

    relative = parse_feed(rss(' xml:base="https://blog.example/2024/"', ""), None, SHORT_URL)
    absolute = parse_feed(rss("", "https://blog.example/2024/"), None, SHORT_URL)
    assert not relative.is_truncated and relative.issues == ()
    assert relative.items == absolute.items
    assert relative.items[499].url == "https://blog.example/2024/499.html"


def test_the_feeds_authors_given_to_every_item_are_counted_once() -> None:
    """Items that name no author share the feed's: their URLs are no new text."""
    author = f"<author><name>A</name><uri>{'a' * 1990}</uri></author>"
    entries = "".join(f"<entry><id>g{i}</id><title>t</title></entry>" for i in range(5000))
    body = (
        f'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://blog.example/">'
        f"<title>x</title>{author}{entries}</feed>"
    ).encode()
    feed = parse_feed(body, None, SHORT_URL)
    assert len(feed.items) == 5000 and not feed.is_truncated and feed.issues == ()
    assert feed.items[-1].authors[0].url == "https://blog.example/" + "a" * 1990


def test_an_ordinary_json_feed_at_a_long_url_reads_as_with_absolute_urls() -> None:
    """A document URL over 128 bytes (a signed CDN URL) turns the count on: relative
    links of ordinary length are never cut."""
    long_url = "https://cdn.example/feeds/blog.json?" + "sig=" + "x" * 200

    def feed(prefix: str) -> bytes:
        items = [
            {
                "id": str(i),
                "url": f"{prefix}posts/{i}.html",
                "title": f"Post {i}",
                "authors": [{"name": "Jane", "url": f"{prefix}jane"}],
                "attachments": [{"url": f"{prefix}{i}.mp3", "mime_type": "audio/mpeg"}],
            }
            for i in range(500)
        ]
        version = "https://jsonfeed.org/version/1.1"
        return json.dumps({"version": version, "items": items}).encode()

    relative = parse_feed(feed(""), None, long_url)
    absolute = parse_feed(feed("https://cdn.example/feeds/"), None, long_url)
    assert not relative.is_truncated and relative.issues == ()
    assert relative.items == absolute.items
