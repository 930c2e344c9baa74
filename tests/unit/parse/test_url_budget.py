"""The URL text a document's items hold once resolved is bounded by the document's size.

A one-character relative URL resolved against a long base (an ``xml:base`` of some 1,900
characters, or a long document URL: a redirect's final URL) becomes a string of that
length: 32 enclosures an item made 65 MB of records from a 1.27 MB document. The items
whose URLs would pass twice the document (its UTF-8 bytes) plus 1 MiB are not read.
"""

from __future__ import annotations

import json
from collections.abc import Callable

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


def _rss_under(base: str) -> bytes:
    enclosures = "".join(f'<enclosure url="{n}"/>' for n in range(32))
    items = "".join(
        f"<item><guid>g{i}</guid><title>t</title>{enclosures}</item>" for i in range(ITEMS)
    )
    channel = f'<channel xml:base="{base}"><title>x</title>{items}</channel>'
    return f'<rss version="2.0">{channel}</rss>'.encode()


def _atom_under(base: str) -> bytes:
    links = "".join(f'<link rel="enclosure" href="{n}"/>' for n in range(32))
    people = "".join(f"<author><name>a</name><uri>{n}</uri></author>" for n in range(16))
    entries = "".join(
        f'<entry><id>g{i}</id><title>t</title><link href="p"/>{links}{people}</entry>'
        for i in range(ITEMS)
    )
    return (
        f'<feed xmlns="http://www.w3.org/2005/Atom" xml:base="{base}"><title>x</title>'
        f"{entries}</feed>"
    ).encode()


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


def _json_feed() -> bytes:
    item = {"url": "p", "attachments": [{"url": str(n)} for n in range(32)]}
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "items": [{"id": f"g{i}", **item} for i in range(ITEMS)],
    }
    return json.dumps(document, separators=(",", ":")).encode()


ATTACKS = [
    pytest.param(_rss_media(f' xml:base="{LONG_BASE}"'), SHORT_URL, id="rss-xml-base"),
    pytest.param(_atom_under(LONG_BASE), SHORT_URL, id="atom-xml-base"),
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


# An xml:base whose host holds a bidi control: refused now, so relative URLs resolve on
# the short document URL, but read by versions before (``safe_url_before``), so each
# relative URL as read before (``ParsedItem.read_before``) is some 1,900 characters.
BIDI_BASE = "https://h\u202e.example/" + "p" * 1900 + "/"


def _held_url_bytes(items: tuple[ParsedItem, ...]) -> int:
    """The bytes of the distinct URL strings the items hold, as read now and as read
    before: a string several readings (or items) share is counted once."""
    held: dict[int, str] = {}
    for item in items:
        before = item.fields_read_before()
        urls = [item.url, before.get("url")]
        for enclosures in (item.enclosures, before.get("enclosures", ())):
            urls += [enclosure.url for enclosure in enclosures]
        for authors in (item.authors, before.get("authors", ())):
            urls += [author.url for author in authors]
        held.update((id(url), url) for url in urls if url)
    return sum(len(url.encode()) for url in held.values())


@pytest.mark.parametrize("document", [_rss_under, _atom_under], ids=["rss", "atom"])
def test_urls_as_read_before_count_against_the_budget(document: Callable[[str], bytes]) -> None:
    """URLs as versions before read them are held too: they stay within the same budget.
    Past it an item keeps no URLs as read before (upgrade safety is best effort for such
    a document), but every item is read: the URLs read now are short."""
    body = document(BIDI_BASE)
    feed = parse_feed(body, None, SHORT_URL)
    assert len(feed.items) == ITEMS and not feed.is_truncated
    assert _held_url_bytes(feed.items) <= _budget(body)
    # Within the budget, the URLs as read before are kept: the first item has them.
    first_before = feed.items[0].fields_read_before()
    assert len(first_before.get("enclosures", ())) == 32
    assert all(BIDI_BASE[8:] in enclosure.url for enclosure in first_before["enclosures"])


def test_urls_as_read_before_never_cost_an_item() -> None:
    """Long URLs read now fill the budget: the items whose URLs as read before (under
    their own xml:base, refused now) also took part of it give it back. Items are cut
    only where the URLs read now pass it, and read as without those xml:base."""
    enclosures = "".join(f'<enclosure url="{n}"/>' for n in range(32))

    def rss(item_base: str) -> bytes:
        items = "".join(
            f"<item{item_base if i < 20 else ''}><guid>g{i}</guid>{enclosures}</item>"
            for i in range(ITEMS)
        )
        return (
            f'<rss version="2.0"><channel xml:base="{LONG_BASE}"><title>x</title>{items}'
            "</channel></rss>"
        ).encode()

    body = rss(f' xml:base="{BIDI_BASE}"')
    feed = parse_feed(body, None, SHORT_URL)
    plain = parse_feed(rss(""), None, SHORT_URL)
    assert 0 < len(feed.items) < 20 and feed.is_truncated
    read_now = sum(_url_bytes(item) for item in feed.items)
    assert read_now <= _budget(body) < read_now + _url_bytes(feed.items[0])
    assert _held_url_bytes(feed.items) <= _budget(body)
    stripped = [item._replace(read_before=()) for item in feed.items]
    assert stripped[: len(plain.items)] == list(plain.items)


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
