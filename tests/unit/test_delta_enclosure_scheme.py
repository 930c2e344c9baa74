"""An enclosure URL written as http:// on one fetch and https:// on the next (caches
behind a proxy that disagree on the scheme) is no change of the item."""

from __future__ import annotations

import dataclasses

import pytest

from tap_feeddelta.delta import diff_items
from tap_feeddelta.fingerprints import fingerprint_bytes, key_hash, short_hash
from tap_feeddelta.signed_urls import unsigned_url
from tap_feeddelta.state import FeedBookmark, pack_items, unpack_items
from tests.unit.test_delta_signed_urls import (
    SETTINGS,
    Runs,
    _fingerprint_of_the_version_before,
    episode,
)

PATH = "g.example/content/images/2024/01/a1.jpg"
SIGNED = "?token-time=1790000000&token-hash=h1"


@pytest.mark.parametrize("guid", ["ep-1", None], ids=["with-guid", "known-by-enclosure"])
def test_a_scheme_flip_is_no_change(guid: str | None) -> None:
    runs = Runs()
    runs.run([episode(f"http://{PATH}", guid=guid)])
    for scheme in ("https", "http", "https"):
        flipped = runs.run([episode(f"{scheme}://{PATH}", guid=guid)])
        assert (flipped.changes, flipped.counts.unchanged) == ((), 1)
    moved = runs.run([episode(f"https://{PATH.replace('a1', 'a2')}", guid=guid)])
    assert [c.change_type for c in moved.changes] == ["updated" if guid else "new"]


def test_an_https_enclosure_keeps_its_fingerprint() -> None:
    plain = episode(f"https://{PATH}")
    assert fingerprint_bytes(plain) == _fingerprint_of_the_version_before(plain)


@pytest.mark.parametrize("guid", ["ep-1", None], ids=["with-guid", "known-by-enclosure"])
@pytest.mark.parametrize("query", ["", SIGNED], ids=["plain", "signed"])
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_schemes_were_compared_sends_nothing_again(
    guid: str | None, query: str, ignored: tuple[str, ...]
) -> None:
    """The version before (2ff5e7c) hashed, and identified by, the http URL without its
    signature: the same episode is unchanged after the upgrade, its memory moves to the
    new hash and id, and a flip to https is then no change."""
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    http = episode(f"http://{PATH}{query}", guid=guid)
    old_id = guid or unsigned_url(http.enclosures[0].url)
    old_hash = short_hash(fingerprint_bytes(http, keep_tracking_prefixes=True, ignored=ignored))
    if not query and not ignored:
        assert old_hash == short_hash(_fingerprint_of_the_version_before(http))
    bookmark = FeedBookmark(success_at="x", items=pack_items([(key_hash(old_id), old_hash)]))
    upgraded = diff_items(bookmark, [http], settings)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    assert upgraded.remembered_items == diff_items(None, [http], settings).remembered_items
    assert len(unpack_items(upgraded.remembered_items)) == 1
    bookmark = FeedBookmark(success_at="x", items=upgraded.remembered_items)
    https = episode(f"https://{PATH}{query}", guid=guid)
    assert diff_items(bookmark, [https], settings).changes == ()
