"""Text past the caps (title 1 KiB, summary 4 KiB, content 64 KiB): the record keeps the
cut text, but an edit anywhere in the text as read is an update (a full-text RSS feed
puts the whole post in <description>, which is cut to 4 KiB)."""

from __future__ import annotations

import dataclasses

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.fingerprints import fingerprint_bytes, key_hash, short_hash
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import FeedBookmark, pack_items

URL = "https://d.example/feed"
SETTINGS = DeltaSettings("m", URL)
WORDS = "This paragraph is part of a long article about feeds. "


def _rss(description: str = "", encoded: str = "", title: str = "Long post") -> bytes:
    return (
        '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">'
        "<channel><title>D</title><item><guid>post-1</guid>"
        f"<title>{title}</title><description><![CDATA[{description}]]></description>"
        f"<content:encoded><![CDATA[{encoded}]]></content:encoded></item></channel></rss>"
    ).encode()


def _item(**kw: str) -> ParsedItem:
    (item,) = parse_feed(_rss(**kw), None, URL).items
    return item


# Each field with its text past the cap, then edited past the cap only.
CUT = {
    "summary": (
        {"description": f"<p>{WORDS * 90}</p><p>Price: $10</p>"},
        {"description": f"<p>{WORDS * 90}</p><p>Price: $99</p>"},
    ),
    "content_text": (
        {"encoded": f"<p>{WORDS * 1300}</p><p>Price: $10</p>"},
        {"encoded": f"<p>{WORDS * 1300}</p><p>Price: $99</p>"},
    ),
    "title": ({"title": "t " * 600 + "end"}, {"title": "t " * 600 + "fin"}),
}


@pytest.mark.parametrize("field", CUT)
def test_an_edit_past_the_cap_is_an_update(field: str) -> None:
    before, after = (_item(**kw) for kw in CUT[field])
    assert getattr(before, field) == getattr(after, field)  # the cut text is the same
    assert f"{field.split('_')[0]}_truncated" in [issue.code for issue in after.issues]
    bookmark = FeedBookmark(
        success_at="x", items=diff_items(None, [before], SETTINGS).remembered_items
    )
    assert [c.change_type for c in diff_items(bookmark, [after], SETTINGS).changes] == ["updated"]
    # Ignoring the field ignores all of it.
    ignoring = dataclasses.replace(SETTINGS, ignored_changes=(field,))
    bookmark = FeedBookmark(
        success_at="x", items=diff_items(None, [before], ignoring).remembered_items
    )
    assert diff_items(bookmark, [after], ignoring).changes == ()


def test_an_item_that_was_not_cut_hashes_as_before() -> None:
    item = _item(description="<p>Short post</p>", encoded="<p>Body</p>")
    assert item.cut_digests == ()
    assert fingerprint_bytes(item) == fingerprint_bytes(item._replace(cut_digests=()))


@pytest.mark.parametrize("field", CUT)
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_cut_digests_sends_nothing_again(
    field: str, ignored: tuple[str, ...]
) -> None:
    """The version before hashed the cut text alone: the same item is unchanged after
    the upgrade, and an edit past the cap after it is an update."""
    before, after = (_item(**kw) for kw in CUT[field])
    assert before.cut_digests
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    # What the version before (2ff5e7c) remembered: the hash of the item without digests.
    old_hash = short_hash(fingerprint_bytes(before._replace(cut_digests=()), ignored=ignored))
    bookmark = FeedBookmark(success_at="x", items=pack_items([(key_hash("post-1"), old_hash)]))
    upgraded = diff_items(bookmark, [before], settings)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    bookmark = FeedBookmark(success_at="x", items=upgraded.remembered_items)
    edited = diff_items(bookmark, [after], settings)
    assert [c.change_type for c in edited.changes] == ["updated"]


def test_items_told_apart_by_their_content_keep_their_ids_memory() -> None:
    """Items sharing guid, title and date take content ids: from the fingerprint, which
    now covers the cut texts whole; the memory under the ids from before moves over."""
    one, two = (_item(description=f"<p>{n} {WORDS * 90}</p>") for n in ("One", "Two"))
    uncut = [item._replace(cut_digests=()) for item in (one, two)]
    old = diff_items(None, uncut, SETTINGS)  # what the version before remembered
    upgraded = diff_items(
        FeedBookmark(success_at="x", items=old.remembered_items), [one, two], SETTINGS
    )
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 2)
