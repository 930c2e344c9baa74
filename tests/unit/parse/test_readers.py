"""The format readers: which elements give which fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tap_feeddelta.models import Author
from tap_feeddelta.parse import parse_feed

URL = "http://example.com/feed"


@pytest.mark.parametrize(
    "namespace", ["http://www.w3.org/2005/Atom", "http://example.com/ns/custom"]
)
def test_rss_under_a_foreign_default_namespace_is_read(namespace: str) -> None:
    body = f"""<?xml version="1.0"?>
<rss version="2.0" xmlns="{namespace}"><channel><title>Atom NS</title>
<link>http://example.com/</link><description>x</description>
<item><title>Item</title><link>http://example.com/a</link>
<pubDate>Mon, 15 Jan 2024 10:30:00 GMT</pubDate></item></channel></rss>""".encode()
    feed = parse_feed(body, None, URL)
    assert (feed.title, feed.link, feed.description) == ("Atom NS", "http://example.com/", "x")
    item = feed.items[0]
    assert (item.title, item.url, item.published_at) == (
        "Item",
        "http://example.com/a",
        "2024-01-15T10:30:00Z",
    )


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_rdf_namespace_of_an_rss_1_root_is_no_rss_home(scheme: str) -> None:
    body = f"""<rdf:RDF xmlns:rdf="{scheme}://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="http://purl.org/rss/1.0/"><channel><title>t</title></channel>
<item><title>i</title><rdf:Description>not the description</rdf:Description>
<description>the description</description></item></rdf:RDF>""".encode()
    feed = parse_feed(body, None, URL)
    assert feed.items[0].summary == "the description"


@pytest.mark.parametrize(
    "namespace",
    ["http://purl.org/rss/1.0/", "http://purl.org/rss/1.0", "https://purl.org/rss/1.0/"],
    ids=["canonical", "no-trailing-slash", "https"],
)
def test_an_rss_1_namespace_is_read_with_either_scheme_and_trailing_slash(namespace: str) -> None:
    body = f"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="{namespace}" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://example.com/"><title>RDF</title><link>http://example.com/</link></channel>
<item rdf:about="http://example.com/1"><title>One</title><link>http://example.com/1</link>
<dc:date>2024-05-01T00:00:00Z</dc:date></item>
<item rdf:about="http://example.com/2"><title>Two</title><link>http://example.com/2</link></item>
</rdf:RDF>""".encode()
    feed = parse_feed(body, None, URL)
    assert (feed.title, feed.link) == ("RDF", "http://example.com/")
    assert [(item.title, item.url) for item in feed.items] == [
        ("One", "http://example.com/1"),
        ("Two", "http://example.com/2"),
    ]
    assert feed.items[0].published_at == "2024-05-01T00:00:00Z"


def _channel(title: str, *guids: str) -> str:
    items = "".join(f"<item><guid>{guid}</guid><title>Item {guid}</title></item>" for guid in guids)
    return f"<channel><title>{title}</title><link>http://example.com/</link>{items}</channel>"


def test_the_items_of_every_channel_are_read_in_document_order() -> None:
    body = f"""<rss version="2.0">{_channel("News", "a", "b")}{_channel("More", "c")}</rss>"""
    feed = parse_feed(body.encode(), None, URL)
    assert feed.title == "News"  # the feed's own fields are the first channel's
    assert [(item.native_id, item.source_pointer) for item in feed.items] == [
        ("a", "/rss/channel[1]/item[1]"),
        ("b", "/rss/channel[1]/item[2]"),
        ("c", "/rss/channel[2]/item[1]"),
    ]
    assert feed.issues == ()


def test_an_empty_first_channel_hides_no_items() -> None:
    body = f"""<rss version="2.0">{_channel("Header")}{_channel("News", "a", "b")}</rss>"""
    feed = parse_feed(body.encode(), None, URL)
    assert [item.native_id for item in feed.items] == ["a", "b"]


_RSS_1 = (
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns="http://purl.org/rss/1.0/">{}</rdf:RDF>'
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '<rss version="2.0"><item><guid>r1</guid></item>'
            f"{_channel('News', 'a', 'b')}<item><guid>r2</guid></item></rss>",
            [
                ("r1", "/rss/item[1]"),
                ("a", "/rss/channel/item[1]"),
                ("b", "/rss/channel/item[2]"),
                ("r2", "/rss/item[2]"),
            ],
        ),
        (
            _RSS_1.format(f'{_channel("News", "a")}<item rdf:about="r1"/><item rdf:about="r2"/>'),
            [
                ("a", "/rdf:RDF/channel/item[1]"),
                ("r1", "/rdf:RDF/item[1]"),
                ("r2", "/rdf:RDF/item[2]"),
            ],
        ),
        (
            f'<rss version="2.0">{_channel("News", "a")}<item><guid>r1</guid></item>'
            f"{_channel('More', 'c')}</rss>",
            [
                ("a", "/rss/channel[1]/item[1]"),
                ("r1", "/rss/item[1]"),
                ("c", "/rss/channel[2]/item[1]"),
            ],
        ),
    ],
    ids=["rss-2-both-sides", "rss-1-channel-and-root", "between-two-channels"],
)
def test_items_beside_a_channel_that_has_items_are_read_in_document_order(
    body: str, expected: list[tuple[str, str]]
) -> None:
    # Generators that mix RSS 0.90/1.0 and 2.0 write items beside the channel as well as
    # in it: all are the feed's (they were lost without an issue).
    feed = parse_feed(body.encode(), None, URL)
    assert [(item.native_id, item.source_pointer) for item in feed.items] == expected
    assert not feed.is_truncated
    assert feed.issues == ()


def test_the_item_limit_counts_items_in_and_beside_the_channel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("tap_feeddelta.parse.rss.MAX_ITEMS_READ", 3)
    body = f'<rss version="2.0"><item><guid>r1</guid></item>{_channel("News", "a", "b", "c")}</rss>'
    feed = parse_feed(body.encode(), None, URL)
    assert [item.native_id for item in feed.items] == ["r1", "a", "b"]
    assert feed.is_truncated
    assert [issue.code for issue in feed.issues] == ["too_many_items"]


def test_the_items_of_a_channel_that_is_the_root_are_read() -> None:
    # RSS 0.9x written without <rss>: its items were all lost, with no issue.
    body = _channel("News", "a", "b")
    feed = parse_feed(body.encode(), None, URL)
    assert [(item.native_id, item.source_pointer) for item in feed.items] == [
        ("a", "/channel/item[1]"),
        ("b", "/channel/item[2]"),
    ]


def test_the_items_of_one_channel_keep_their_pointers() -> None:
    body = f"""<rss version="2.0">{_channel("News", "a", "b")}</rss>"""
    feed = parse_feed(body.encode(), None, URL)
    assert [item.source_pointer for item in feed.items] == [
        "/rss/channel/item[1]",
        "/rss/channel/item[2]",
    ]


def test_an_empty_first_link_does_not_hide_a_later_one() -> None:
    body = b"""<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>
<title>x</title><link/><link>http://example.com/</link>
<item><title>x</title><link/><link>http://example.com/real</link></item>
<item><title>y</title><link> </link><link>http://example.com/y</link></item>
</channel></rss>"""
    feed = parse_feed(body, None, URL)
    assert feed.link == "http://example.com/"
    assert [item.url for item in feed.items] == ["http://example.com/real", "http://example.com/y"]


def test_an_empty_first_copy_hides_no_later_one_in_rss() -> None:
    body = b"""<rss version="2.0"><channel><title>C</title><description/>
<description>The channel</description>
<item><title></title><title>Real title</title><link></link><link>http://example.com/p1</link>
<guid isPermaLink="false"></guid><guid isPermaLink="false">post-123</guid>
<description></description><description>Real description</description>
<content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/"/>
<content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/">Body</content:encoded>
</item>
<item><guid> </guid><guid>http://example.com/p2</guid>
<description><![CDATA[ ]]></description><description>Second</description></item>
</channel></rss>"""
    feed = parse_feed(body, None, URL)
    assert feed.description == "The channel"
    assert [(item.native_id, item.url, item.summary, item.content_text) for item in feed.items] == [
        ("post-123", "http://example.com/p1", "Real description", "Body"),
        ("http://example.com/p2", "http://example.com/p2", "Second", None),
    ]


def test_an_empty_first_copy_hides_no_later_one_in_atom() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title/><title>F</title>
<subtitle></subtitle><subtitle>Sub</subtitle>
<entry><title></title><title>Real title</title><id></id><id>urn:uuid:1234</id>
<link href="http://example.com/p1"/><summary></summary><summary>Real summary</summary>
<content type="html"></content><content type="html">&lt;p&gt;Real body&lt;/p&gt;</content>
</entry></feed>"""
    feed = parse_feed(body, None, URL)
    assert (feed.title, feed.description) == ("F", "Sub")
    item = feed.items[0]
    assert (item.native_id, item.summary, item.content_text) == (
        "urn:uuid:1234",
        "Real summary",
        "Real body",
    )


def test_items_without_an_empty_first_copy_read_as_before() -> None:
    # The first filled copy wins as before, and a lone empty one is still none: what
    # items of ordinary documents are (and so their fingerprints) does not change.
    rss = b"""<rss version="2.0"><channel><title>C</title>
<item><guid isPermaLink="false">a</guid><guid>b</guid><description>One</description>
<description>Two</description><description/></item>
<item><guid></guid><link>http://example.com/2</link><description></description>
<dc:description xmlns:dc="http://purl.org/dc/elements/1.1/"/></item>
</channel></rss>"""
    assert [
        (item.native_id, item.url, item.summary) for item in parse_feed(rss, None, URL).items
    ] == [
        ("a", None, "One"),
        (None, "http://example.com/2", None),
    ]
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title>
<entry><id>urn:1</id><id>urn:2</id><summary>One</summary><summary>Two</summary>
<content>First</content><content>Second</content></entry>
<entry><id/><link href="http://example.com/2"/><summary/><content src="http://example.com/c"/>
<content>After a src</content></entry></feed>"""
    assert [
        (item.native_id, item.url, item.summary, item.content_text)
        for item in parse_feed(atom, None, URL).items
    ] == [
        ("urn:1", None, "One", "First"),
        (None, "http://example.com/2", None, "After a src"),
    ]


def test_an_atom_self_link_under_an_atom_default_namespace_does_not_hide_the_link() -> None:
    body = b"""<rss version="2.0" xmlns="http://www.w3.org/2005/Atom"
 xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>x</title>
<atom:link rel="self" href="http://example.com/feed"/><link>http://example.com/</link>
</channel></rss>"""
    assert parse_feed(body, None, URL).link == "http://example.com/"


def test_atom_published_in_an_rss_item_is_its_published_date() -> None:
    body = b"""<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"
 xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>x</title>
<item><title>y</title><atom:published>2024-01-15T10:30:00Z</atom:published></item>
<item><title>z</title><dc:date>2024-02-01T00:00:00Z</dc:date>
<atom:published>2024-01-15T10:30:00Z</atom:published></item>
<item><title>w</title><pubDate>Tue, 16 Jan 2024 10:30:00 GMT</pubDate>
<atom:published>2024-01-15T10:30:00Z</atom:published></item>
</channel></rss>"""
    feed = parse_feed(body, None, URL)
    assert [(item.published_at, item.updated_at) for item in feed.items] == [
        ("2024-01-15T10:30:00Z", None),
        ("2024-01-15T10:30:00Z", "2024-02-01T00:00:00Z"),
        ("2024-01-16T10:30:00Z", None),
    ]


def test_a_pub_date_with_an_offset_and_a_zone_name_is_read() -> None:
    body = b"""<rss version="2.0"><channel><title>x</title><item><title>x</title>
<pubDate>Mon, 15 Jan 2024 10:30:00 +0000 GMT</pubDate></item></channel></rss>"""
    item = parse_feed(body, None, URL).items[0]
    assert item.published_at == "2024-01-15T10:30:00Z"
    assert not item.issues


def test_a_php_zero_date_is_no_date() -> None:
    body = b"""<rss version="2.0"><channel><title>x</title><item><title>x</title>
<pubDate>Wed, 30 Nov -0001 00:00:00 +0000</pubDate></item></channel></rss>"""
    item = parse_feed(body, None, URL).items[0]
    assert item.published_at is None
    assert [issue.code for issue in item.issues] == ["invalid_date"]


ATOM_PLANET = b"""<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Planet</title><id>urn:p</id>
<author><name>Planet Admin</name></author>
<entry><id>urn:1</id><title>From blog</title><source><id>urn:blog</id><title>Blog</title>
<author><name>Blog Author</name><uri>/about</uri></author></source></entry>
<entry><id>urn:2</id><author><name>Own Author</name></author>
<source><author><name>Blog Author</name></author></source></entry>
<entry><id>urn:3</id><source><title>No authors</title></source></entry>
</feed>"""


def test_an_atom_entry_takes_its_source_authors_before_the_feed_authors() -> None:
    feed = parse_feed(ATOM_PLANET, None, "http://example.com/planet.xml")
    assert [[author.name for author in item.authors] for item in feed.items] == [
        ["Blog Author"],
        ["Own Author"],
        ["Planet Admin"],
    ]
    assert feed.items[0].authors[0].url == "http://example.com/about"


def test_an_html_alternate_link_is_preferred_to_other_types() -> None:
    body = b"""<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>
<link rel="alternate" type="application/atom+xml" href="http://example.com/feed.atom"/>
<link rel="alternate" type="text/html" href="http://example.com/"/>
<entry><id>urn:1</id>
<link rel="alternate" type="application/json" href="http://example.com/1.json"/>
<link rel="alternate" type="text/html" href="http://example.com/1.html"/></entry>
<entry><id>urn:2</id><link type="application/pdf" href="http://example.com/2.pdf"/>
<link href="http://example.com/2.html"/><link href="http://example.com/2-other.html"/></entry>
<entry><id>urn:3</id><link href="http://example.com/3.html"/>
<link type="TEXT/HTML" href="http://example.com/3-second.html"/></entry>
<entry><id>urn:4</id><link type="application/pdf" href="http://example.com/4.pdf"/></entry>
</feed>"""
    feed = parse_feed(body, None, URL)
    assert feed.link == "http://example.com/"
    assert [item.url for item in feed.items] == [
        "http://example.com/1.html",
        "http://example.com/2.html",
        "http://example.com/3.html",
        "http://example.com/4.pdf",
    ]


@pytest.mark.parametrize("raw_id", ["NaN", "Infinity", "-Infinity"])
def test_a_json_feed_id_that_is_no_finite_number_is_ignored(raw_id: str) -> None:
    body = (
        '{"version": "https://jsonfeed.org/version/1.1", "title": "T", "items": '
        f'[{{"id": {raw_id}, "url": "https://example.com/a", "title": "A"}}]}}'
    ).encode()
    [item] = parse_feed(body, None, URL).items
    assert item.native_id is None
    assert "invalid_value" in {issue.code for issue in item.issues}


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_json_integer_past_pythons_digit_limit_spoils_only_its_own_field(sign: str) -> None:
    # Python's int() refuses more than 4,300 digits: such a number, even in an "_x"
    # extension readers ignore, made the whole document invalid_feed.
    huge = sign + "9" * 5000
    body = (
        '{"version": "https://jsonfeed.org/version/1.1", "title": "T", '
        f'"_x": {{"n": {huge}}}, "items": ['
        f'{{"id": "a", "title": "A", "_x": [{huge}]}}, '
        f'{{"id": {huge}, "url": "https://example.com/b", "title": "B", "attachments": '
        f'[{{"url": "https://example.com/b.mp3", "mime_type": "audio/mpeg", '
        f'"size_in_bytes": {huge}, "duration_in_seconds": {huge}}}]}}, '
        '{"id": 12345678901234567890, "title": "C"}]}'
    ).encode()
    feed = parse_feed(body, None, URL)
    first, second, third = feed.items
    assert (first.native_id, first.title, first.issues) == ("a", "A", ())
    assert second.native_id is None and second.title == "B"
    assert [enclosure.length_bytes for enclosure in second.enclosures] == [None]
    assert {issue.code for issue in second.issues} == {"invalid_value"}
    assert third.native_id == "12345678901234567890"


YOUTUBE_ENTRY = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns:media="http://search.yahoo.com/mrss/" xmlns="http://www.w3.org/2005/Atom">
<id>yt:channel:UCabc</id><title>Some Channel</title>
<entry><id>yt:video:1</id><title>My video &amp; more</title>
<link rel="alternate" href="https://www.youtube.com/watch?v=1"/>
<updated>2024-05-02T08:30:00+00:00</updated>
<media:group><media:title>My video &amp; more</media:title>
<media:content url="https://www.youtube.com/v/1" type="application/x-shockwave-flash"/>
<media:description>In this video I explain things.
Links: https://example.com</media:description></media:group></entry>
<entry><id>yt:video:2</id><title>Own title</title><summary>Own summary</summary>
<updated>2024-05-02T08:30:00+00:00</updated>
<media:group><media:title>Media title</media:title>
<media:description>Media description</media:description></media:group></entry>
</feed>"""


def test_a_youtube_entry_takes_its_summary_from_media_description() -> None:
    feed = parse_feed(YOUTUBE_ENTRY, None, URL)
    assert feed.items[0].summary == "In this video I explain things. Links: https://example.com"
    assert (feed.items[1].title, feed.items[1].summary) == ("Own title", "Own summary")


MEDIA_RSS = b"""<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>V</title>
<item><title>Clip</title><guid isPermaLink="false">1</guid>
<media:group><media:content url="https://cdn.example.com/1.mp4" type="video/mp4"/>
<media:description type="html">&lt;b&gt;Great&lt;/b&gt; clip</media:description></media:group>
</item>
<item><media:title>Only media title</media:title><guid isPermaLink="false">2</guid>
<media:description>Only media description &lt;b&gt;</media:description>
<media:content url="https://cdn.example.com/p.jpg" medium="image"/></item>
<item><guid isPermaLink="false">3</guid>
<media:content url="https://cdn.example.com/3.jpg"><media:title>Content title</media:title>
<media:description>Content description</media:description></media:content></item>
<item><guid isPermaLink="false">4</guid>
<media:group><media:content url="https://cdn.example.com/4.mp4">
<media:description>Rendition</media:description></media:content>
<media:description> </media:description></media:group>
<media:description>Item level</media:description></item>
<item><title>Real title</title><description>Real description</description>
<guid isPermaLink="false">5</guid><media:title>Media title</media:title>
<media:description>Media description</media:description></item>
</channel></rss>"""


def test_rss_items_without_title_or_description_fall_back_to_media_rss() -> None:
    items = parse_feed(MEDIA_RSS, None, URL).items
    assert [(item.title, item.summary) for item in items] == [
        ("Clip", "Great clip"),
        ("Only media title", "Only media description <b>"),
        ("Content title", "Content description"),
        (None, "Item level"),
        ("Real title", "Real description"),
    ]


@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("slash", ["", "/"])
def test_known_namespaces_are_read_with_either_scheme_and_trailing_slash(
    scheme: str, slash: str
) -> None:
    namespaces = {
        "itunes": "www.itunes.com/dtds/podcast-1.0.dtd",
        "dc": "purl.org/dc/elements/1.1",
        "media": "search.yahoo.com/mrss",
        "content": "purl.org/rss/1.0/modules/content",
    }
    declared = " ".join(
        f'xmlns:{prefix}="{scheme}://{uri}{slash}"' for prefix, uri in namespaces.items()
    )
    body = f"""<rss version="2.0" {declared}><channel><title>Pod</title>
<item><title>Ep</title><dc:creator>Guest</dc:creator>
<itunes:summary>Summary only in itunes</itunes:summary>
<media:content url="https://pod.example.com/ep.mp4" type="video/mp4"/>
<content:encoded>&lt;p&gt;Notes&lt;/p&gt;</content:encoded></item></channel></rss>""".encode()
    item = parse_feed(body, None, URL).items[0]
    assert [author.name for author in item.authors] == ["Guest"]
    assert (item.summary, item.content_text) == ("Summary only in itunes", "Notes")
    assert [enclosure.url for enclosure in item.enclosures] == ["https://pod.example.com/ep.mp4"]


def test_an_empty_description_does_not_stop_the_itunes_summary_fallback() -> None:
    body = b"""<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>Pod</title>
<item><title>Ep 9</title><description></description>
<itunes:summary>What this episode is about.</itunes:summary></item>
<item><title>Ep 10</title><description><![CDATA[ ]]></description>
<itunes:summary>Episode ten summary.</itunes:summary></item>
<item><title>Ep 11</title><description><![CDATA[<p> </p>]]></description>
<itunes:summary>Episode eleven.</itunes:summary></item>
<item><title>Ep 12</title><description>Own words</description>
<itunes:summary>Not this.</itunes:summary></item>
</channel></rss>"""
    assert [item.summary for item in parse_feed(body, None, URL).items] == [
        "What this episode is about.",
        "Episode ten summary.",
        "Episode eleven.",
        "Own words",
    ]


EMPTY_TITLES_RSS = b"""<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"
xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title/><dc:title>Channel dc:title</dc:title>
<item><title></title><guid>v1</guid><media:group><media:title>In media:group</media:title>
<media:content url="https://v.example/1.mp4" type="video/mp4"/></media:group></item>
<item><title/><guid>v2</guid><dc:title>dc:title after an empty title</dc:title></item>
<item><title>  </title><guid>v3</guid>
<itunes:title>Episode 170: only itunes:title</itunes:title></item>
<item><guid>v4</guid><itunes:title>Ep 4 (itunes)</itunes:title>
<media:title>Ep 4 (media)</media:title></item>
<item><title><![CDATA[<p> </p>]]></title><guid>v5</guid><itunes:title>Ep 5</itunes:title></item>
<item><title>Own title</title><guid>v6</guid><itunes:title>Not this</itunes:title>
<media:title>Nor this</media:title></item>
<item><guid>v7</guid><itunes:title> </itunes:title><media:title>Ep 7 (media)</media:title></item>
</channel></rss>"""

EMPTY_TITLE_ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/"
xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><title>V</title><id>urn:x</id>
<entry><id>urn:1</id><title></title><media:group><media:title>Atom media title</media:title>
</media:group></entry>
<entry><id>urn:2</id><title type="html">  </title><itunes:title>Atom itunes title</itunes:title>
</entry>
<entry><id>urn:3</id><title>Own</title><media:title>Not this</media:title></entry>
</feed>"""


def test_an_empty_title_does_not_stop_the_fallback_titles() -> None:
    # The item's own title (title, dc:title), then itunes:title, then Media RSS.
    feed = parse_feed(EMPTY_TITLES_RSS, None, URL)
    assert feed.title == "Channel dc:title"
    assert [(item.native_id, item.title) for item in feed.items] == [
        ("v1", "In media:group"),
        ("v2", "dc:title after an empty title"),
        ("v3", "Episode 170: only itunes:title"),
        ("v4", "Ep 4 (itunes)"),
        ("v5", "Ep 5"),
        ("v6", "Own title"),
        ("v7", "Ep 7 (media)"),
    ]
    atom = parse_feed(EMPTY_TITLE_ATOM, None, URL)
    assert [item.title for item in atom.items] == [
        "Atom media title",
        "Atom itunes title",
        "Own",
    ]


def _json_feed(document: dict[str, Any]) -> bytes:
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", **document}).encode()


def test_json_feed_c1_controls_are_windows_1252_and_other_controls_are_removed() -> None:
    body = _json_feed(
        {
            "title": "Caf\u00e9\u0092s feed",
            "home_page_url": "https://example.com/\u0001home",
            "items": [
                {
                    "id": "a\u0001b\u0092",
                    "url": "https://example.com/\u0092post",
                    "title": "It\u0092s here \u0096 now",
                    "summary": "don\u0092t\u0001",
                    "content_html": "<p>don\u0092t\u0001 \ud800\ufffe</p>",
                    "date_published": "2024-01-02T03:04:05Z\u0001",
                    "authors": [{"name": "Ann\u0096Lee\u0001"}],
                }
            ],
        }
    )
    feed = parse_feed(body, None, URL)
    assert (feed.title, feed.link) == ("Café’s feed", "https://example.com/home")
    item = feed.items[0]
    assert (item.native_id, item.url) == ("ab", "https://example.com/post")
    assert (item.title, item.summary, item.content_text) == ("It’s here – now", "don’t", "don’t")
    assert item.published_at == "2024-01-02T03:04:05Z"
    assert [author.name for author in item.authors] == ["Ann–Lee"]


def test_json_feed_authors_mailto_url_and_empty_authors() -> None:
    body = _json_feed(
        {
            "authors": [{"name": "Site"}],
            "items": [
                {"id": "1", "authors": [{"name": "Ann", "url": "mailto:ann@example.com"}]},
                {"id": "2", "authors": [], "author": {"name": "Real Writer"}},
                {"id": "3", "authors": []},
            ],
        }
    )
    items = parse_feed(body, None, URL).items
    assert items[0].authors == (Author(name="Ann", email="ann@example.com", url=None),)
    assert not items[0].issues  # no unsafe_url for an address
    assert [[author.name for author in item.authors] for item in items[1:]] == [
        ["Real Writer"],
        ["Site"],
    ]


def test_an_atom_rel_written_as_its_iana_uri_is_that_relation() -> None:
    iana = "http://www.iana.org/assignments/relation/"
    body = f"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>
<link rel="{iana}self" href="https://example.com/feed"/>
<link rel="{iana}alternate" href="https://example.com/"/>
<entry><title>IANA rel only</title><id>urn:1</id><updated>2024-05-02T00:00:00Z</updated>
<link rel="{iana}alternate" href="https://example.com/post"/>
<link rel="{iana}enclosure" href="https://example.com/a.mp3" type="audio/mpeg"/>
</entry></feed>""".encode()
    feed = parse_feed(body, None, URL)
    assert feed.link == "https://example.com/"
    assert feed.items[0].url == "https://example.com/post"
    assert [enclosure.url for enclosure in feed.items[0].enclosures] == [
        "https://example.com/a.mp3"
    ]


def test_references_in_cdata_categories_and_author_names_are_decoded() -> None:
    body = b"""<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
<title>Site</title><item><title>Post</title>
<dc:creator><![CDATA[Sean O&#8217;Brien]]></dc:creator>
<category><![CDATA[News &amp; Events]]></category>
<category><![CDATA[Rock &#039;n&#039; Roll]]></category>
<category><![CDATA[AT&T]]></category><category>Fish &amp; Chips</category>
</item><item><title>Plain</title><dc:creator>Barnes &amp; Noble</dc:creator></item>
</channel></rss>"""
    items = parse_feed(body, None, URL).items
    assert [author.name for author in items[0].authors] == ["Sean O’Brien"]
    assert items[0].tags == ("News & Events", "Rock 'n' Roll", "AT&T", "Fish & Chips")
    assert [author.name for author in items[1].authors] == ["Barnes & Noble"]


_ED = "<managingEditor>hosts@devhour.fm</managingEditor>"
_NAMED_ED = "<managingEditor>ed@devhour.fm (Ed Itor)</managingEditor>"
_HOST = "<itunes:author>Jane Host</itunes:author>"


@pytest.mark.parametrize(
    ("channel", "expected"),
    [
        (_ED + _HOST, Author("Jane Host")),
        (_HOST + _ED, Author("Jane Host")),
        (_NAMED_ED + _HOST, Author("Jane Host")),
        (_HOST + _NAMED_ED, Author("Jane Host")),
        (_ED + _NAMED_ED, Author("Ed Itor", "ed@devhour.fm")),
        (_ED, Author(None, "hosts@devhour.fm")),
    ],
    ids=["email-first", "name-first", "named-editor-first", "named-editor-last", "editors",
         "email-only"],
)  # fmt: skip
def test_the_show_s_author_does_not_depend_on_element_order(channel: str, expected: Author) -> None:
    # A bare-email managingEditor before itunes:author gave every episode {name: null}.
    body = f"""<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>Dev Hour</title>{channel}
<item><title>Ep 1</title><guid>e1</guid></item></channel></rss>""".encode()
    assert parse_feed(body, None, URL).items[0].authors == (expected,)


_ITUNES = 'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'


@pytest.mark.parametrize(
    ("element", "expected"),
    [
        ("https://new.example/show.xml", "https://new.example/show.xml"),
        (" /moved/feed.xml ", "http://example.com/moved/feed.xml"),  # resolved on the base
        ("https://user:pw@new.example/rss", "https://new.example/rss"),  # no credentials
        (URL, None),  # the document's own URL: no move
        ("", None),
        ("javascript:alert(1)", None),
    ],
    ids=["absolute", "relative", "credentials", "itself", "empty", "unsafe"],
)
def test_itunes_new_feed_url_is_where_the_show_says_it_moved(
    element: str, expected: str | None
) -> None:
    body = f"""<rss version="2.0" {_ITUNES}><channel><title>Show</title>
<itunes:new-feed-url>{element}</itunes:new-feed-url>
<item><title>Ep 1</title><guid>e1</guid></item></channel></rss>""".encode()
    feed = parse_feed(body, None, URL)
    assert feed.new_feed_url == expected


def test_an_item_s_itunes_new_feed_url_is_no_move_of_the_feed() -> None:
    body = f"""<rss version="2.0" {_ITUNES}><channel><title>Show</title>
<item><title>Ep 1</title><guid>e1</guid>
<itunes:new-feed-url>https://new.example/rss</itunes:new-feed-url></item>
</channel></rss>""".encode()
    assert parse_feed(body, None, URL).new_feed_url is None


def test_podcast_episode_fields_are_not_carried_and_their_edits_are_no_change() -> None:
    """As docs/reading-feeds.md says (feed_items): episode type, duration, season and number,
    artwork, transcript, chapters and alternate enclosures are not read, so a trailer turned into
    the full episode, or a transcript added, reads as the same item."""

    def episode(kind: str, extra: str) -> bytes:
        return f"""<rss version="2.0" {_ITUNES}
 xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Show</title>
<item><title>Ep 1</title><guid>e1</guid>
<itunes:episodeType>{kind}</itunes:episodeType><itunes:duration>01:02:03</itunes:duration>
<itunes:season>2</itunes:season><itunes:episode>7</itunes:episode>{extra}
<enclosure url="https://cdn.example/1.mp3" length="5" type="audio/mpeg"/></item>
</channel></rss>""".encode()

    later = (
        '<itunes:image href="https://img.example/e1.jpg"/>'
        '<podcast:transcript url="https://t.example/1.vtt" type="text/vtt"/>'
        '<podcast:chapters url="https://t.example/1.json" type="application/json+chapters"/>'
        '<podcast:alternateEnclosure type="audio/opus" length="3">'
        '<podcast:source uri="https://cdn.example/1.opus"/></podcast:alternateEnclosure>'
    )
    trailer = parse_feed(episode("trailer", ""), None, URL).items
    full = parse_feed(episode("full", later), None, URL).items
    assert trailer == full
