"""Tracking prefixes on enclosure URLs: adding or dropping one is no change of the episode."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tap_feeddelta.delta import diff_items
from tap_feeddelta.fingerprints import fingerprint_bytes, key_hash, short_hash
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.state import FeedBookmark, pack_items, unpack_items
from tap_feeddelta.tracking_prefixes import MAX_STACKED_PREFIXES, without_tracking_prefixes
from tests.unit.test_delta_signed_urls import (
    SETTINGS,
    Runs,
    _fingerprint_of_the_version_before,
    episode,
)

FILE = "traffic.libsyn.com/secure/show/ep1.mp3?dest-id=77"
AUDIO = f"https://{FILE}"

PREFIXES = {
    "podtrac": "dts.podtrac.com/redirect.mp3/",
    "podtrac-pts": "www.podtrac.com/pts/redirect.m4a/",
    "podtrac-play": "play.podtrac.com/npr-510289/",
    "chartable": "chrt.fm/track/A1B2C3/",
    "chartable-old": "chtbl.com/track/9F8E7/",
    "op3": "op3.dev/e/",
    "op3-guid": "op3.dev/e,pg=917393e3-1b1e-5cef-ace4-edaa54e1f810/",
    "podsights": "pdst.fm/e/",
    "spotify": "prfx.byspotify.com/e/",
    "podscribe": "verifi.podscribe.com/rss/p/",
    "magellan": "mgln.ai/e/167/",
    "claritas": "clrtpod.com/m/",
    "blubrry": "media.blubrry.com/myshow/",
    "blubrry-p": "media.blubrry.com/myshow/p/",
    "swap": "tracking.swap.fm/track/xyz/",
    "upper-case-host": "DTS.Podtrac.com/redirect.mp3/",
    "stacked": "op3.dev/e/dts.podtrac.com/redirect.mp3/chrt.fm/track/A1/",
    "wrapped-with-scheme": "op3.dev/e/https://",
}


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=PREFIXES.keys())
def test_the_prefix_is_dropped(prefix: str) -> None:
    assert without_tracking_prefixes(f"https://{prefix}{FILE}") == AUDIO
    assert without_tracking_prefixes(f"http://{prefix}{FILE}") == f"http://{FILE}"


@pytest.mark.parametrize(
    "url",
    [
        AUDIO,
        "https://op3.dev/e",  # the service's own pages
        "https://op3.dev/e/",
        "https://media.blubrry.com/myshow/ep1.mp3",  # no host after the prefix
        "https://dts.podtrac.com/redirect.mp3/ep1.mp3",
        "https://dts.podtrac.com/other/cdn.example/ep1.mp3",  # another path on its host
        "https://cdn.example/dts.podtrac.com/redirect.mp3/cdn.example/ep1.mp3",  # not in front
        "https://chrt.fm:8443/track/A1/cdn.example/ep1.mp3",
        "dts.podtrac.com/redirect.mp3/cdn.example/ep1.mp3",
        "",
    ],
)
def test_a_url_without_a_prefix_in_front_is_returned_as_it_is(url: str) -> None:
    assert without_tracking_prefixes(url) is url


def test_prefixes_stacked_beyond_the_bound_stay() -> None:
    stacked = "op3.dev/e/" * (MAX_STACKED_PREFIXES + 2)
    url = f"https://{stacked}{FILE}"
    assert without_tracking_prefixes(url) == "https://op3.dev/e/op3.dev/e/" + FILE


@given(st.text(alphabet="/.:?#=,ep3oda-tc", max_size=60))
def test_any_url_comes_out_as_itself_or_shorter(tail: str) -> None:
    url = f"https://op3.dev/e/{tail}"
    out = without_tracking_prefixes(url)
    assert out is url or (out.startswith("https://") and url.endswith(out[len("https://") :]))


@pytest.mark.parametrize("guid", ["ep-1", None], ids=["with-guid", "known-by-enclosure"])
@pytest.mark.parametrize("prefix", ["dts.podtrac.com/redirect.mp3/", PREFIXES["stacked"]])
def test_adding_or_dropping_a_prefix_is_no_change(guid: str | None, prefix: str) -> None:
    """Before, every episode came out again: updated, or (known by its enclosure) new
    under a new id, the whole archive at once."""
    prefixed = f"https://{prefix}{FILE}"
    runs = Runs()
    [baseline] = runs.run([episode(prefixed, guid=guid)]).changes
    dropped = runs.run([episode(AUDIO, guid=guid)])
    assert (dropped.changes, dropped.counts.unchanged) == ((), 1)
    assert runs.run([episode(prefixed, guid=guid)]).changes == ()
    # An edit is still one, under the same id, and the record shows the URL as given.
    [edited] = runs.run([episode(prefixed, guid=guid, notes="Notes, fixed.")]).changes
    assert (edited.change_type, edited.item_id) == ("updated", baseline.item_id)
    assert edited.item.enclosures[0].url == prefixed
    if guid is None:
        assert baseline.item_id == AUDIO


def test_another_file_behind_the_same_prefix_is_a_change() -> None:
    runs = Runs()
    runs.run([episode("https://dts.podtrac.com/redirect.mp3/cdn.example/ep1.mp3")])
    moved = runs.run([episode("https://dts.podtrac.com/redirect.mp3/cdn.example/ep1-v2.mp3")])
    assert [change.change_type for change in moved.changes] == ["updated"]


@pytest.mark.parametrize("guid", ["ep-1", None], ids=["with-guid", "known-by-enclosure"])
@pytest.mark.parametrize("title", ["Episode 1", "Épisode 1\u200b"], ids=["ascii", "as-read"])
def test_a_state_from_before_prefixes_were_dropped_sends_nothing_again(
    guid: str | None, title: str
) -> None:
    """The version before remembered the prefixed URL (in the fingerprint, and as the id
    of an episode known by its enclosure): the same episode is unchanged after the
    upgrade, its memory moves to the new id and hash, and dropping the prefix later is
    no change either."""
    prefixed = episode(f"https://chrt.fm/track/A1/{FILE}", guid=guid)._replace(title=title)
    old_id = guid or prefixed.enclosures[0].url
    old_hash = short_hash(fingerprint_bytes(prefixed, keep_tracking_prefixes=True))
    if title.isascii():  # the copy of the version before knows no text "as read"
        assert old_hash == short_hash(_fingerprint_of_the_version_before(prefixed))
    runs = Runs(FeedBookmark(success_at="x", items=pack_items([(key_hash(old_id), old_hash)])))
    upgraded = runs.run([prefixed])
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    assert runs.bookmark is not None
    assert runs.bookmark.items == diff_items(None, [prefixed], SETTINGS).remembered_items
    assert len(unpack_items(runs.bookmark.items)) == 1
    assert runs.run([episode(AUDIO, guid=guid)._replace(title=title)]).changes == ()


def test_an_ordinary_enclosure_keeps_its_fingerprint() -> None:
    plain: ParsedItem = episode(AUDIO)
    assert fingerprint_bytes(plain) == _fingerprint_of_the_version_before(plain)


def test_with_ignored_changes_a_state_from_before_sends_nothing_again() -> None:
    settings = dataclasses.replace(SETTINGS, ignored_changes=("updated_at",))
    prefixed = episode(f"https://pdst.fm/e/{FILE}")
    old_hash = short_hash(
        fingerprint_bytes(prefixed, keep_tracking_prefixes=True, ignored=("updated_at",))
    )
    bookmark = FeedBookmark(success_at="x", items=pack_items([(key_hash("ep-1"), old_hash)]))
    upgraded = diff_items(
        bookmark, [prefixed._replace(updated_at="2026-09-02T00:00:00Z")], settings
    )
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
