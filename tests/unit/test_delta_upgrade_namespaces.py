"""A namespace name that versions before did not know for an extension they read (Media
RSS as Squarespace names it, Dublin Core as GlobeNewswire does) is read now: its items gain
enclosures, titles, authors, dates. A state those versions wrote is read as written: the
upgrade sends nothing again, and an edit after it is an update."""

from __future__ import annotations

import dataclasses

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import FeedBookmark

URL = "https://m.example/feed"
SETTINGS = DeltaSettings("m", URL, first_run_mode="emit_all")
# A namespace no version knows: read as versions before read the one now known.
UNKNOWN = "urn:x-unknown"

SQUARESPACE = """<rss xmlns:media="http://www.rssboard.org/media-rss" version="2.0"><channel>
<title>Journal</title>
<item><title>Spring collection</title><link>https://m.example/journal/spring</link>
<guid isPermaLink="false">5a1b:65a1</guid><description>New arrivals.</description>
<media:content type="image/jpeg" url="https://cdn.m.example/1.jpg" medium="image"
 isDefault="true"><media:title type="plain">Spring collection</media:title></media:content>
</item><item><link>https://m.example/journal/visit</link><guid isPermaLink="false">5a1b:65a2</guid>
<description>Photos.</description><media:content medium="image" url="https://cdn.m.example/2.jpg">
<media:title>Studio visit</media:title></media:content></item></channel></rss>"""

# Items with no guid nor link: known by their enclosure now, by their text before.
SOURCEFORGE = """<rss xmlns:media="http://video.search.yahoo.com/mrss/" version="2.0"><channel>
<title>Files</title>
<item><title>/app-1.2.zip</title><pubDate>Mon, 15 Jan 2024 10:00:00 GMT</pubDate>
<media:content type="application/zip" url="https://downloads.m.example/app-1.2.zip"/></item>
<item><title>/app-1.1.zip</title><pubDate>Mon, 08 Jan 2024 10:00:00 GMT</pubDate>
<media:content type="application/zip" url="https://downloads.m.example/app-1.1.zip">
<media:description>Old release.</media:description><media:keywords>app, zip</media:keywords>
</media:content></item></channel></rss>"""

DUBLIN_CORE = """<rss xmlns:dc="http://dublincore.org/documents/dcmi-namespace/" version="2.0">
<channel><title>News</title><dc:creator>Newsroom</dc:creator>
<item><guid>n-1</guid><title>Results</title><dc:creator>Acme Inc.</dc:creator>
<dc:date>2024-01-15T10:00:00Z</dc:date><dc:subject>Earnings</dc:subject></item>
<item><title>Dividend</title><description>Paid.</description>
<dcterms:modified xmlns:dcterms="http://purl.org/dc/terms/">2024-01-02T00:00:00Z</dcterms:modified>
<dc:date>2024-01-01T00:00:00Z</dc:date></item></channel></rss>"""

ITUNES = """<rss xmlns:itunes="http://example.com/DTDs/PodCast-1.0.dtd" version="2.0"><channel>
<title>Show</title><itunes:author>Host</itunes:author>
<item><itunes:title>Episode 1</itunes:title><itunes:summary>Notes.</itunes:summary>
<itunes:keywords>talk</itunes:keywords>
<enclosure url="https://cdn.m.example/1.mp3" type="audio/mpeg" length="9"/></item>
</channel></rss>"""

ATOM = """<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://www.rssboard.org/media-rss">
<title>F</title><entry><id>urn:1</id><title>One</title>
<media:group><media:content url="https://cdn.m.example/1.jpg" medium="image"/>
<media:description>An image.</media:description></media:group></entry>
<entry><id>urn:2</id><media:title>Two</media:title></entry></feed>"""

# (the document, the namespace name versions before did not know, an edit of one item)
DOCUMENTS = {
    "squarespace": (SQUARESPACE, "http://www.rssboard.org/media-rss", "Studio visit"),
    "known-by-enclosure": (SOURCEFORGE, "http://video.search.yahoo.com/mrss/", "Old release"),
    "dublin-core": (DUBLIN_CORE, "http://dublincore.org/documents/dcmi-namespace/", "Acme"),
    "itunes": (ITUNES, "http://example.com/DTDs/PodCast-1.0.dtd", "Episode 1"),
    "atom": (ATOM, "http://www.rssboard.org/media-rss", "An image"),
}


def _items(body: str) -> list[ParsedItem]:
    return list(parse_feed(body.encode(), None, URL).items)


def _as_read(items: list[ParsedItem]) -> list[ParsedItem]:
    return [item._replace(read_before=()) for item in items]


@pytest.mark.parametrize(("body", "namespace", "edited"), DOCUMENTS.values(), ids=DOCUMENTS.keys())
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_the_namespace_was_known_sends_nothing_again(
    body: str, namespace: str, edited: str, ignored: tuple[str, ...]
) -> None:
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    before = _items(body.replace(namespace, UNKNOWN))
    now = _items(body)
    assert _as_read(now) != _as_read(before)  # the reading did change
    first = diff_items(None, before, settings)
    assert len(first.changes) == len(before)
    bookmark = FeedBookmark(success_at="x", items=first.remembered_items)
    upgraded = diff_items(bookmark, now, settings)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), len(now))
    # What it remembers now is the reading now: an edit is an update, nothing else.
    bookmark = FeedBookmark(success_at="y", items=upgraded.remembered_items)
    assert diff_items(bookmark, now, settings).changes == ()
    after = diff_items(bookmark, _items(body.replace(edited, edited + ", edited")), settings)
    assert [change.change_type for change in after.changes] == ["updated"]


def test_items_of_the_known_namespace_record_no_earlier_reading() -> None:
    spec = SQUARESPACE.replace("http://www.rssboard.org/media-rss", "http://search.yahoo.com/mrss/")
    assert [item.read_before for item in _items(spec)] == [(), ()]
