"""The feed's authors, which items without their own inherit: every person the feed's
author element names (podcast co-hosts), as an item's own element reads, in every format."""

from __future__ import annotations

import json

import pytest

from tap_feeddelta.models import Author, ParsedItem
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.limits import MAX_AUTHORS

URL = "https://pod.example/feed"
HOSTS = (Author("Jane Host"), Author("John Cohost"))
_ITUNES = 'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'
_DC = 'xmlns:dc="http://purl.org/dc/elements/1.1/"'


def _rss(channel: str, item: str = "") -> tuple[ParsedItem, ...]:
    body = f"""<rss version="2.0" {_ITUNES} {_DC}><channel><title>Show</title>{channel}
<item><title>Ep 1</title><guid>e1</guid>{item}</item></channel></rss>"""
    return parse_feed(body.encode(), None, URL).items


CO_HOSTS = {
    "itunes-author": "<itunes:author>Jane Host &amp; John Cohost</itunes:author>",
    "dc-creator": "<dc:creator>Jane Host and John Cohost</dc:creator>",
    "author": "<author>Jane Host &amp; John Cohost</author>",
    "managing-editor": "<managingEditor>Jane Host &amp; John Cohost</managingEditor>",
    "email-editor-first": "<managingEditor>hosts@pod.example</managingEditor>"
    "<itunes:author>Jane Host &amp; John Cohost</itunes:author>",
    "first-named-element": "<itunes:author>Jane Host &amp; John Cohost</itunes:author>"
    "<dc:creator>Ed Itor</dc:creator>",
}


@pytest.mark.parametrize("channel", CO_HOSTS.values(), ids=CO_HOSTS.keys())
def test_an_episode_inherits_every_host_the_channel_names(channel: str) -> None:
    (inheriting,) = _rss(channel)
    assert inheriting.authors == HOSTS
    # The same text on the item reads alike.
    (own,) = _rss("", "<itunes:author>Jane Host &amp; John Cohost</itunes:author>")
    assert own.authors == HOSTS


def test_an_episode_s_own_author_is_not_the_channel_s() -> None:
    channel = "<itunes:author>Jane Host &amp; John Cohost</itunes:author>"
    (item,) = _rss(channel, "<itunes:author>Guest Star</itunes:author>")
    assert item.authors == (Author("Guest Star"),)


def test_the_channel_s_authors_are_capped_as_an_item_s_are() -> None:
    names = ", ".join(f'<a href="https://pod.example/{n}">Host {n}</a>' for n in range(40))
    channel = f"<dc:creator>{names.replace('<', '&lt;')}</dc:creator>"
    feed = parse_feed(
        f"""<rss version="2.0" {_DC}><channel><title>Show</title>{channel}
<item><title>Ep 1</title><guid>e1</guid></item></channel></rss>""".encode(),
        None,
        URL,
    )
    (item,) = feed.items
    assert [author.name for author in item.authors] == [f"Host {n}" for n in range(MAX_AUTHORS)]
    assert "limit_exceeded" in [issue.code for issue in feed.issues]


def test_an_atom_entry_inherits_every_author_of_the_feed() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><id>urn:f</id>
<author><name>Jane Host</name></author><author><name>John Cohost</name></author>
<entry><id>urn:e1</id><title>Ep 1</title></entry></feed>"""
    (entry,) = parse_feed(body, None, URL).items
    assert entry.authors == HOSTS


def test_a_json_feed_item_inherits_every_author_of_the_feed() -> None:
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "F",
        "authors": [{"name": "Jane Host"}, {"name": "John Cohost"}],
        "items": [{"id": "e1", "title": "Ep 1"}],
    }
    (item,) = parse_feed(json.dumps(document).encode(), None, URL).items
    assert item.authors == HOSTS
