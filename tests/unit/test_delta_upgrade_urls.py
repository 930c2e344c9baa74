"""A URL that versions before read otherwise (markup or an invisible character kept as
it was) reads as browsers read it now. A state those versions wrote is read as written:
an item identified by its link or its enclosure, or whose fingerprint holds them, is
unchanged after the upgrade, and an edit after it is an update."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.fingerprints import (
    comparable_enclosure_url,
    fingerprint_bytes,
    item_identity,
    key_hash,
    short_hash,
)
from tap_feeddelta.models import Author, Enclosure, ParsedItem
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import FeedBookmark, pack_items

URL = "https://m.example/feed"
SETTINGS = DeltaSettings("m", URL)


def _rss_items(items_xml: str, url: str = URL) -> list[ParsedItem]:
    body = f'<rss version="2.0"><channel><title>F</title>{items_xml}</channel></rss>'
    return list(parse_feed(body.encode(), None, url).items)


def _json_items(*items: Mapping[str, object]) -> list[ParsedItem]:
    body = json.dumps({"version": "https://jsonfeed.org/version/1.1", "items": list(items)})
    return list(parse_feed(body.encode(), None, URL).items)


def _state(pairs: list[tuple[str, bytes]]) -> FeedBookmark:
    packed = [(key_hash(item_id), short_hash(full)) for item_id, full in pairs]
    return FeedBookmark(success_at="x", items=pack_items(packed))


def _enclosed(url: str) -> tuple[Enclosure, ...]:
    return (Enclosure(url, "audio/mpeg", 5),)


# (the document, its items' fields as the version before read them)
BEFORE: dict[str, tuple[str, dict[str, Any]]] = {
    "link-quotes": (
        '<item><title>T</title><link>https://e.org/p?a="x"&lt;y&gt;</link></item>',
        {"url": 'https://e.org/p?a="x"<y>'},
    ),
    "link-braces": (
        "<item><title>T</title><link>/posts/{slug}</link></item>",
        {"url": "https://m.example/posts/{slug}"},
    ),
    "link-invisible": (
        "<item><title>T</title><link>https://e.org/a\u200bb</link></item>",
        {"url": "https://e.org/a\u200bb"},
    ),
    "link-host-invisible": (
        "<item><title>T</title><link>https://e\u200b.org/a</link></item>",
        {"url": "https://e\u200b.org/a"},
    ),
    "guid-and-link": (
        '<item><guid>g1</guid><title>T</title><link>https://e.org/"x"</link></item>',
        {"url": 'https://e.org/"x"'},
    ),
    "enclosure": (
        '<item><title>T</title><enclosure url="https://cdn.e.org/{ep}.mp3"'
        ' type="audio/mpeg" length="5"/></item>',
        {"enclosures": _enclosed("https://cdn.e.org/{ep}.mp3")},
    ),
    "link-backslash": (
        "<item><title>T</title><link>https://e.org/files\\ep1.html</link></item>",
        {"url": "https://e.org/files\\ep1.html"},
    ),
    "link-backslash-host": (
        "<item><title>T</title><link>https://e.org\\blog\\post</link></item>",
        {"url": "https://e.org\\blog\\post"},
    ),
    "enclosure-backslash": (
        '<item><title>T</title><enclosure url="/audio\\ep1.mp3"'
        ' type="audio/mpeg" length="5"/></item>',
        {"enclosures": _enclosed("https://m.example/audio\\ep1.mp3")},
    ),
    "author": (
        "<item><guid>g1</guid><title>T</title><author><name>A</name>"
        "<uri>https://e.org/~a`</uri></author></item>",
        {"authors": (Author("A", None, "https://e.org/~a`"),)},
    ),
    # A host holding a bidi control is refused now: the author keeps no URL, or is none.
    "author-host-bidi": (
        "<item><guid>g1</guid><title>T</title><author><name>A</name>"
        "<uri>https://e\u202e.org/a</uri></author></item>",
        {"authors": (Author("A", None, "https://e\u202e.org/a"),)},
    ),
    "author-only-a-url-host-bidi": (
        "<item><guid>g1</guid><title>T</title><author>"
        "<uri>https://e\u202e.org/a</uri></author></item>",
        {"authors": (Author(None, None, "https://e\u202e.org/a"),)},
    ),
}


@pytest.mark.parametrize(("document", "fields_before"), BEFORE.values(), ids=BEFORE.keys())
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_urls_were_encoded_sends_nothing_again(
    document: str, fields_before: dict[str, Any], ignored: tuple[str, ...]
) -> None:
    # A feed URL of its own: an author read once is remembered by its link and base, and
    # the reading before is kept with it (see fields.author_readings).
    feed_url = f"{URL}?ignored={','.join(ignored)}"
    (item,) = _rss_items(document, feed_url)
    before = item._replace(read_before=(), **fields_before)
    assert before != item._replace(read_before=())  # the reading did change
    old_id, _, _ = item_identity(before, ignored)
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    state = _state([(old_id, fingerprint_bytes(before, ignored=ignored))])
    upgraded = diff_items(state, [item], settings)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    bookmark = FeedBookmark(success_at="x", items=upgraded.remembered_items)
    (edited,) = _rss_items(document.replace("<title>T</title>", "<title>Edited</title>"), feed_url)
    after = diff_items(bookmark, [edited], settings)
    assert [change.change_type for change in after.changes] == ["updated"]


def test_a_json_item_identified_by_a_link_with_a_bidi_control_keeps_its_id() -> None:
    (item,) = _json_items({"url": "https://e.org/\u202egpj.exe", "title": "T"})
    assert item.url == "https://e.org/%E2%80%AEgpj.exe"
    before = item._replace(read_before=(), url="https://e.org/\u202egpj.exe")
    state = _state([(str(before.url), fingerprint_bytes(before))])
    upgraded = diff_items(state, [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged, upgraded.counts.new) == ((), 1, 0)


def test_an_episode_identified_by_its_enclosure_keeps_its_id() -> None:
    (item,) = _json_items(
        {
            "id": "",
            "title": "Ep",
            "attachments": [{"url": "https://cdn.e.org/<1>.mp3", "mime_type": "audio/mpeg"}],
        }
    )
    assert item.enclosures[0].url == "https://cdn.e.org/%3C1%3E.mp3"
    before = item._replace(
        read_before=(), enclosures=(Enclosure("https://cdn.e.org/<1>.mp3", "audio/mpeg"),)
    )
    old_id = comparable_enclosure_url("https://cdn.e.org/<1>.mp3")
    state = _state([(old_id, fingerprint_bytes(before))])
    upgraded = diff_items(state, [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged, upgraded.counts.new) == ((), 1, 0)


def test_a_url_read_alike_has_no_reading_before() -> None:
    (item,) = _rss_items(
        "<item><title>T</title><link>https://e.org/a%22b?q=%3C</link>"
        '<enclosure url="/ep 1.mp3" type="audio/mpeg" length="5"/></item>'
    )
    assert item.read_before == ()


@pytest.mark.parametrize("host", ["e.org/~a`", "e\u202e.org/a"], ids=["encoded", "refused"])
def test_an_author_read_again_keeps_its_url_as_read_before(host: str) -> None:
    # The authors read are cached for the process: a second reading of one keeps the
    # reading before too.
    document = (
        f"<item><guid>g1</guid><title>T</title><author><name>A</name><uri>https://{host}</uri>"
        "</author></item>"
    )
    first, again = (_rss_items(document, f"{URL}?again")[0] for _ in range(2))
    assert dict(first.read_before) == {"authors": (Author("A", None, f"https://{host}"),)}
    assert again.read_before == first.read_before
