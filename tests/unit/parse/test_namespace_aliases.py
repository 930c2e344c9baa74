"""Namespace names that generators write for the extensions the readers know, other than
the one each spec gives: read as that one (Squarespace's Media RSS, SourceForge's)."""

from __future__ import annotations

import pytest

from tap_feeddelta.models import Author, Enclosure
from tap_feeddelta.parse import parse_feed

URL = "https://studio.example/journal?format=rss"
IMAGE = "https://images.squarespace-cdn.com/content/v1/5a1b/65a1/photo.jpg?format=1500w"


def _squarespace(media_namespace: str) -> bytes:
    """Squarespace's shape: one image per post, with a media:title, the second untitled."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:media="{media_namespace}" version="2.0">
<channel><title>Journal</title><link>https://studio.example/journal/</link>
<item><title>Spring collection</title><dc:creator>Jane Maker</dc:creator>
<pubDate>Mon, 15 Jan 2024 10:00:00 GMT</pubDate><link>https://studio.example/journal/spring</link>
<guid isPermaLink="false">5a1b:65a1</guid>
<description><![CDATA[<p>New arrivals.</p>]]></description>
<media:content type="image/jpeg" url="{IMAGE}" medium="image" isDefault="true" width="1500"
 height="1000"><media:title type="plain">Spring collection</media:title></media:content></item>
<item><pubDate>Sun, 14 Jan 2024 10:00:00 GMT</pubDate><link>https://studio.example/journal/x</link>
<guid isPermaLink="false">5a1b:65a2</guid><description>Photos.</description>
<media:content medium="image" url="{IMAGE}2"><media:title>Studio visit</media:title>
</media:content></item></channel></rss>""".encode()


MEDIA_RSS = {
    "spec": "http://search.yahoo.com/mrss/",
    "rssboard": "http://www.rssboard.org/media-rss",  # Squarespace
    "rssboard-https": "https://www.rssboard.org/media-rss/",
    "video-search": "http://video.search.yahoo.com/mrss/",  # SourceForge
    "tools-search": "http://tools.search.yahoo.com/mrss/",  # Yahoo's video search
    "search-rss": "http://search.yahoo.com/rss",
}


@pytest.mark.parametrize("namespace", MEDIA_RSS.values(), ids=MEDIA_RSS.keys())
def test_media_rss_under_its_other_names_gives_enclosures_and_titles(namespace: str) -> None:
    feed = parse_feed(_squarespace(namespace), "application/rss+xml", URL)
    assert [item.enclosures for item in feed.items] == [
        (Enclosure(IMAGE, "image/jpeg"),),
        (Enclosure(IMAGE + "2"),),
    ]
    assert [item.title for item in feed.items] == ["Spring collection", "Studio visit"]


ITUNES = {
    "spec": "http://www.itunes.com/dtds/podcast-1.0.dtd",
    "apple-capitals": "http://www.itunes.com/DTDs/PodCast-1.0.dtd",
    "example": "http://example.com/DTDs/PodCast-1.0.dtd",  # copied from an example
}


@pytest.mark.parametrize("namespace", ITUNES.values(), ids=ITUNES.keys())
def test_itunes_under_its_other_names_gives_the_episode_title(namespace: str) -> None:
    body = f"""<rss xmlns:itunes="{namespace}" version="2.0"><channel><title>Show</title>
<item><guid>ep-1</guid><itunes:title>Episode 1</itunes:title><itunes:author>Ann</itunes:author>
<enclosure url="https://cdn.example/1.mp3" type="audio/mpeg" length="9"/></item></channel></rss>"""
    (item,) = parse_feed(body.encode(), None, URL).items
    assert (item.title, item.authors) == ("Episode 1", (Author("Ann"),))


DUBLIN_CORE = {
    "spec": "http://purl.org/dc/elements/1.1/",
    "dcmi-page": "http://dublincore.org/documents/dcmi-namespace/",  # GlobeNewswire
}


@pytest.mark.parametrize("namespace", DUBLIN_CORE.values(), ids=DUBLIN_CORE.keys())
def test_dublin_core_under_its_other_names_gives_author_and_date(namespace: str) -> None:
    body = f"""<rss xmlns:dc="{namespace}" version="2.0"><channel><title>News</title>
<item><guid>n-1</guid><title>Results</title><dc:creator>Acme Inc.</dc:creator>
<dc:date>2024-01-15T10:00:00Z</dc:date><dc:subject>Earnings</dc:subject></item></channel></rss>"""
    (item,) = parse_feed(body.encode(), None, URL).items
    assert (item.authors, item.published_at, item.tags) == (
        (Author("Acme Inc."),),
        "2024-01-15T10:00:00Z",
        ("Earnings",),
    )


def test_media_rss_under_another_name_in_atom_gives_the_enclosure() -> None:
    body = f"""<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://www.rssboard.org/media-rss">
<title>F</title><entry><id>urn:1</id><title>One</title>
<media:group><media:content url="{IMAGE}" medium="image"/></media:group></entry></feed>"""
    (item,) = parse_feed(body.encode(), None, URL).items
    assert item.enclosures == (Enclosure(IMAGE),)
