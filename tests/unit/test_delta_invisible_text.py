"""Edits no reader can see (docs/change-detection.md: NFC, soft hyphens, zero-width
spaces, direction marks, word joiners, BOMs) are no change, wherever they stand: between
two spaces, at the end of a text, past a text's cap. States written before these edits
were read so still read as unchanged after the upgrade."""

from __future__ import annotations

import unicodedata

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.text import as_read
from tap_feeddelta.state import FeedBookmark

URL = "https://example.org/feed.xml"
SETTINGS = DeltaSettings("m", URL, first_run_mode="emit_all")
DATE = "<pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>"
LONG = "This paragraph is part of a long article about feeds. " * 90  # past the 4 KiB cap


def rss(*items: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"'
        ' xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title>'
        f"<link>https://example.org/</link><description>d</description>{''.join(items)}"
        "</channel></rss>"
    ).encode()


def entry(title: str, description: str = "Hello", *, guid: str = "g1", extra: str = "") -> str:
    guid_element = f"<guid>{guid}</guid>" if guid else ""
    return (
        f"<item>{guid_element}<title>{title}</title>"
        f"<description><![CDATA[{description}]]></description>{DATE}{extra}</item>"
    )


def parse(document: bytes) -> list[ParsedItem]:
    return list(parse_feed(document, "application/rss+xml", URL).items)


def run_twice(first: bytes, second: bytes) -> list[str]:
    """The change types of a run over ``second`` after one over ``first``."""
    remembered = diff_items(None, parse(first), SETTINGS).remembered_items
    bookmark = FeedBookmark(success_at="2024-01-02T00:00:00Z", items=remembered)
    return [change.change_type for change in diff_items(bookmark, parse(second), SETTINGS).changes]


# (what the feed gave, the same read with an invisible character next to a space)
NEXT_TO_A_SPACE = {
    "an empty paragraph holding a zero-width space": (
        entry("Post", "<p>Hello</p><p>World</p>"),
        entry("Post", "<p>Hello</p><p>&#8203;</p><p>World</p>"),
    ),
    "a soft hyphen between two spaces": (
        entry("Part 1 - Intro", "x"),
        entry("Part 1 &#173; - Intro", "x"),
    ),
    "a zero-width space after the last block": (
        entry("Post", "<p>Hello</p>"),
        entry("Post", "<p>Hello</p>&#8203;"),
    ),
    "a BOM and a word joiner before the first word": (
        entry("Post", "Hello world"),
        entry("Post", "&#65279; &#8288; Hello world"),
    ),
    "direction marks between spaces in an author's name": (
        entry("Post", extra="<dc:creator>Jane Doe</dc:creator>"),
        entry("Post", extra="<dc:creator>Jane &#8206; Doe &#8207;</dc:creator>"),
    ),
    "a tag ending in a zero-width space": (
        entry("Post", extra="<category>news</category><category>sport</category>"),
        entry("Post", extra="<category>news &#8203;</category><category>sport</category>"),
    ),
    "an empty paragraph past the summary's cap": (
        entry("Post", f"<p>{LONG}</p><p>Hello</p><p>World</p>"),
        entry("Post", f"<p>{LONG}</p><p>Hello</p><p>&#8203;</p><p>World</p>"),
    ),
}


@pytest.mark.parametrize("edit", NEXT_TO_A_SPACE)
def test_an_invisible_character_next_to_a_space_is_no_update(edit: str) -> None:
    plain, with_invisible = (rss(entry) for entry in NEXT_TO_A_SPACE[edit])
    assert run_twice(plain, with_invisible) == []
    assert run_twice(with_invisible, plain) == []


def test_a_visible_edit_next_to_an_invisible_character_is_an_update() -> None:
    before = rss(entry("Post", "<p>Hello</p><p>&#8203;</p><p>World</p>"))
    for edited in ("<p>Hello</p><p>&#8203;</p><p>Word</p>", "<p>Hello</p><p>World</p><p>!</p>"):
        assert run_twice(before, rss(entry("Post", edited))) == ["updated"], edited


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("Hello \u200b World", "Hello World"),
        ("Hello \u00ad\u200b \u2060 World", "Hello World"),
        ("\ufeff Hello", "Hello"),
        ("Hello \u200e", "Hello"),
        ("Hel\u00adlo \u200bWorld", "Hello World"),
        ("Cafe\u0301 \u200b cre\u0300me", "Caf\u00e9 cr\u00e8me"),
        ("\u200b", ""),
        ("plain text", "plain text"),
    ],
)
def test_text_as_read_has_the_spaces_of_the_text_without_the_invisible_characters(
    given: str, read: str
) -> None:
    assert as_read(given) == read


def upgrade_document() -> bytes:
    """Items whose text has invisible characters next to spaces: a guid item, one whose
    summary is cut past its cap, two that share guid, title and date (content ids)."""
    return rss(
        entry("Post", "<p>Hello</p><p>&#8203;</p><p>World</p>", guid="a"),
        entry("Part 1 &#173; - Intro", "x", guid="b"),
        entry("Long", f"<p>{LONG}</p><p>&#8203;</p><p>World</p>", guid="c"),
        entry("Same", "One &#8203; two", guid="d"),
        entry("Same", "Three &#8203; four", guid="d"),
    )


# What the version before this fix remembered of upgrade_document() (its first run's
# remembered_items), as it wrote it in a state.
STATE_BEFORE = (
    "40f89e395b66422f65fa58ac8472c2e34d854f75b1f0ec6c373f6364cd072c1b"
    "055047d5fc9f87dd249f7d9b25592507f2ae3c8796524b5b23e3d8ea"
)


def test_a_state_from_before_invisible_characters_left_their_spaces_sends_nothing() -> None:
    items = parse(upgrade_document())
    old = FeedBookmark(success_at="x", items=bytes.fromhex(STATE_BEFORE))
    upgraded = diff_items(old, items, SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), len(items))
    assert upgraded.remembered_items == diff_items(None, items, SETTINGS).remembered_items


# Items identified by their text: no guid and no link (a derived id), or a link they
# share with other items (a status page: a title id). Each edit here is one no reader sees.
HOME = "<link>https://status.example/</link>"
CAFE, CAFE_NFD = "Caf\u00e9 opens", unicodedata.normalize("NFD", "Caf\u00e9 opens")
IDENTIFIED_BY_TEXT = {
    "a derived id, the title decomposed (NFD)": (
        entry(CAFE, guid=""),
        entry(CAFE_NFD, guid=""),
    ),
    "a derived id, soft hyphens in the title": (
        entry("Hyphenation", guid=""),
        entry("Hy&#173;phen&#173;ation", guid=""),
    ),
    "a derived id, a zero-width space and a BOM in the summary": (
        entry("X", "hello world", guid=""),
        entry("X", "&#65279;hello&#8203; world", guid=""),
    ),
    "a derived id, an empty paragraph holding a zero-width space": (
        entry("Notes", "<p>Hello</p><p>World</p>", guid=""),
        entry("Notes", "<p>Hello</p><p>&#8203;</p><p>World</p>", guid=""),
    ),
    "a shared link, the title decomposed (NFD)": (
        entry(CAFE, guid="", extra=HOME) + entry("Other", guid="", extra=HOME),
        entry(CAFE_NFD, guid="", extra=HOME) + entry("Other", guid="", extra=HOME),
    ),
    "a shared link, direction marks around the title": (
        entry("Outage", guid="", extra=HOME) + entry("Other", guid="", extra=HOME),
        entry("&#8207;Outage&#8206;", guid="", extra=HOME) + entry("Other", guid="", extra=HOME),
    ),
}


@pytest.mark.parametrize("edit", IDENTIFIED_BY_TEXT)
def test_an_item_identified_by_its_text_keeps_its_id_through_an_invisible_edit(edit: str) -> None:
    plain, respelled = (rss(items) for items in IDENTIFIED_BY_TEXT[edit])
    assert run_twice(plain, respelled) == []
    assert run_twice(respelled, plain) == []
    ids = [
        [c.item_id for c in diff_items(None, parse(d), SETTINGS).changes]
        for d in (plain, respelled)
    ]
    assert ids[0] == ids[1]


def test_a_visible_edit_of_an_item_identified_by_its_text_is_still_a_new_item() -> None:
    assert run_twice(rss(entry(CAFE, guid="")), rss(entry("Cafe opens", guid=""))) == ["new"]


def derived_document() -> bytes:
    """Items identified by their text, which holds invisible characters or is decomposed."""
    return rss(
        entry(CAFE_NFD, "hello&#8203; world", guid=""),
        entry("Hy&#173;phen&#173;ation", "x", guid=""),
        entry("Notes", "<p>Hello</p><p>&#8203;</p><p>World</p>", guid=""),
        entry(CAFE_NFD, "y", guid="", extra=HOME),
        entry("Other &#8203; news", "z", guid="", extra=HOME),
        entry("Other", "z", guid="", extra=HOME),
    )


# What the version before ids were made of the texts as read remembered of
# derived_document() (its first run's remembered_items).
DERIVED_STATE_BEFORE = (
    "335ee9c774e3903e378459a9994b520727636310775609c956f859112c07533d"
    "ae5e8959aa31ec332eed66d18c1f09c4c7fd1ece073a1180a865c9595ef97fbb"
    "e72f55375acd3aa8"
)


def test_a_state_from_before_ids_were_made_of_the_texts_as_read_sends_nothing() -> None:
    """Their memory moves to the ids as read, once: nothing is `new`."""
    items = parse(derived_document())
    old = FeedBookmark(success_at="x", items=bytes.fromhex(DERIVED_STATE_BEFORE))
    upgraded = diff_items(old, items, SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), len(items))
    assert upgraded.remembered_items == diff_items(None, items, SETTINGS).remembered_items
