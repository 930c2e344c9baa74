"""A state written before enclosure URLs were compared without tracking prefixes and with
http read as https (2ff5e7c) is read as written, also for items that share an id."""

from __future__ import annotations

import dataclasses

import pytest

from tap_feeddelta.delta import diff_items
from tap_feeddelta.fingerprints import content_id, derived_id, key_hash, short_hash
from tap_feeddelta.models import Enclosure, ParsedItem
from tap_feeddelta.state import FeedBookmark, pack_items
from tests.unit.test_delta_signed_urls import SETTINGS, _fingerprint_of_the_version_before

OLD_URLS = {
    "podtrac": "https://dts.podtrac.com/redirect.mp3/cdn.example/ep.mp3",
    "http": "http://cdn.example/ep.mp3",
    "podtrac-http": "http://dts.podtrac.com/redirect.mp3/cdn.example/ep.mp3",
}


def _episode(
    url: str, title: str, *, guid: str | None = None, link: str | None = None
) -> ParsedItem:
    return ParsedItem(
        guid,
        "guid" if guid else None,
        link,
        title,
        "Notes.",
        published_at=None if link else f"2026-09-0{len(title) % 9 + 1}T07:00:00Z",
        enclosures=(Enclosure(url, "audio/mpeg", 1000),),
    )


def _memory(entries: list[tuple[str, ParsedItem]]) -> FeedBookmark:
    """What the version before remembered: (its id of the item, the item as it read it)."""
    packed = [
        (key_hash(item_id), short_hash(_fingerprint_of_the_version_before(item)))
        for item_id, item in entries
    ]
    return FeedBookmark(success_at="x", items=pack_items(packed))


@pytest.mark.parametrize("old_url", OLD_URLS.values(), ids=OLD_URLS.keys())
def test_episodes_sharing_their_enclosure_keep_their_memory(old_url: str) -> None:
    """Two guid-less episodes on one file (a re-run): the version before told them apart
    by title ids made from the enclosure URL as it compared it."""
    items = [_episode(old_url, "Trailer"), _episode(old_url, "Trailer again")]
    old = [
        (derived_id([old_url, item.title or "", item.published_at or ""]), item) for item in items
    ]
    delta = diff_items(_memory(old), items, SETTINGS)
    assert (delta.changes, delta.counts.unchanged) == ((), 2)


@pytest.mark.parametrize("old_url", OLD_URLS.values(), ids=OLD_URLS.keys())
def test_items_told_apart_by_content_keep_their_memory(old_url: str) -> None:
    """Items sharing link and title (undated) have content ids, made from the fingerprint
    the version before computed with the enclosure URL as it compared it."""
    link = "https://show.example/episodes"
    items = [
        _episode(old_url, "Episode", link=link)._replace(summary=f"Part {n}.") for n in range(3)
    ]
    old = [(content_id(link, _fingerprint_of_the_version_before(item)), item) for item in items]
    delta = diff_items(_memory(old), items, SETTINGS)
    assert (delta.changes, delta.counts.unchanged) == ((), 3)


@pytest.mark.parametrize("guid", ["ep-1", None], ids=["with-guid", "known-by-enclosure"])
def test_an_http_enclosure_read_as_https_after_the_upgrade_is_no_change(guid: str | None) -> None:
    """The version before read the feed with http:// enclosures; the first document this
    version reads spells them https:// (the flip is no change)."""
    before = _episode("http://cdn.example/ep.mp3", "Episode 1", guid=guid)
    after = dataclasses.replace(before.enclosures[0], url="https://cdn.example/ep.mp3")
    now = before._replace(enclosures=(after,))
    delta = diff_items(_memory([(guid or "http://cdn.example/ep.mp3", before)]), [now], SETTINGS)
    assert (delta.changes, delta.counts.unchanged) == ((), 1)
