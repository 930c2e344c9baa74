"""Items whose id changes while nothing else does: a guid made anew on every fetch, a
publisher moving from numeric guids to permalinks, all items at once (most of them at
least). They are the items remembered, not new."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tap_feeddelta.delta import Delta, DeltaSettings, diff_items
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.state import FeedBookmark

SETTINGS = DeltaSettings("m", "https://blog.example/feed")


def post(n: int, guid: str, **kw: object) -> ParsedItem:
    values: dict[str, object] = {
        "native_id": guid,
        "native_id_source": "guid",
        "url": f"https://blog.example/p{n}",
        "title": f"Post {n}",
        "summary": f"What post {n} says.",
        "published_at": f"2026-03-{n:02d}T10:00:00Z",
    }
    values.update(kw)
    return ParsedItem(**values)  # type: ignore[arg-type]


def undated(n: int, guid: str, **kw: object) -> ParsedItem:
    return post(n, guid, published_at=None, **kw)


class Runs:
    """Runs one after another, each from the memory and newest date the one before left."""

    def __init__(self, settings: DeltaSettings = SETTINGS) -> None:
        self.bookmark: FeedBookmark | None = None
        self.settings = settings

    def run(self, items: Sequence[ParsedItem]) -> Delta:
        delta = diff_items(self.bookmark, items, self.settings)
        dates = [d for i in items if (d := i.published_at)]
        newest = max([*dates, (self.bookmark.newest_item_at or "") if self.bookmark else ""])
        self.bookmark = FeedBookmark(
            success_at="2026-03-30T00:00:00Z",
            items=delta.remembered_items,
            newest_item_at=newest or None,
        )
        return delta


def kinds(delta: Delta) -> list[tuple[str, str]]:
    return [(c.change_type, c.item_id) for c in delta.changes]


def test_a_guid_made_anew_on_every_fetch_gives_no_records() -> None:
    runs = Runs()
    runs.run([post(n, f"https://blog.example/p{n}?t=1") for n in (1, 2, 3)])
    for fetch in (2, 3, 4):
        delta = runs.run([post(n, f"https://blog.example/p{n}?t={fetch}") for n in (1, 2, 3)])
        assert kinds(delta) == []
        assert delta.counts.unchanged == 3
        # The dead ids are let go of: the memory does not fill with them.
        assert delta.counts.remembered == 3


def test_undated_items_under_guids_made_anew_give_no_records() -> None:
    """A scraped or generated feed without dates whose guids are made anew on every fetch
    (a uuid, a timestamp): its items are the ones remembered, run after run."""
    runs = Runs()
    runs.run([undated(n, f"uuid-{n}-1") for n in (1, 2, 3)])
    assert runs.bookmark is not None and runs.bookmark.newest_item_at is None
    for fetch in (2, 3):
        delta = runs.run([undated(n, f"uuid-{n}-{fetch}") for n in (1, 2, 3)])
        assert kinds(delta) == []
        assert delta.counts.unchanged == 3
        assert delta.counts.remembered == 3


def test_items_alike_under_guids_made_anew_are_each_carried_over() -> None:
    """Undated items alike in all but their guid (a scraped listing's "Read more" items)
    are as many remembered items: each renamed one takes one of them."""
    runs = Runs()
    alike = {"title": "Read more", "summary": None, "url": "https://blog.example/"}
    runs.run([undated(n, f"r-{n}-1", **alike) for n in (1, 2)] + [undated(3, "r-3-1")])
    for fetch in (2, 3):
        delta = runs.run(
            [undated(n, f"r-{n}-{fetch}", **alike) for n in (1, 2)] + [undated(3, f"r-3-{fetch}")]
        )
        assert kinds(delta) == []
        assert delta.counts.remembered == 3


def test_an_undated_new_item_among_renamed_ones_is_new() -> None:
    runs = Runs()
    runs.run([undated(n, f"uuid-{n}-1") for n in (1, 2, 3)])
    delta = runs.run([undated(n, f"uuid-{n}-2") for n in (4, 1, 2, 3)])
    assert kinds(delta) == [("new", "uuid-4-2")]
    assert kinds(runs.run([undated(n, f"uuid-{n}-3") for n in (4, 1, 2, 3)])) == []


def test_a_dated_item_newer_than_any_seen_is_new_among_renamed_undated_ones() -> None:
    """Undated items of a wholesale rename are carried over; an item dated after the
    newest item seen is a new post whatever its content, and so is a dated one in a feed
    that never had dates before."""
    runs = Runs()
    runs.run([post(1, "d-1")] + [undated(n, f"u-{n}-1") for n in (2, 3, 4)])
    assert runs.bookmark is not None
    runs.bookmark = FeedBookmark(
        success_at=runs.bookmark.success_at,
        items=runs.bookmark.items,
        newest_item_at="2026-02-01T00:00:00Z",  # older than post 1 itself
    )
    renamed = runs.run([post(1, "d-1b")] + [undated(n, f"u-{n}-2") for n in (2, 3, 4)])
    assert kinds(renamed) == [("new", "d-1b")]

    runs = Runs()
    runs.run([undated(n, f"u-{n}-1") for n in (1, 2, 3, 4)])
    assert runs.bookmark is not None and runs.bookmark.newest_item_at is None
    dated = runs.run([post(5, "u-5-2")] + [undated(n, f"u-{n}-2") for n in (1, 2, 3, 4)])
    assert kinds(dated) == [("new", "u-5-2")]


def test_new_undated_items_among_items_that_keep_their_guids_are_new() -> None:
    runs = Runs()
    runs.run([undated(n, f"id-{n}") for n in (1, 2, 3)])
    more = runs.run([undated(n, f"id-{n}") for n in (4, 5, 1, 2, 3)])
    assert kinds(more) == [("new", "id-4"), ("new", "id-5")]
    # An undated item under a new guid with the content of one gone from the document,
    # among items that keep theirs: a post deleted and published again, new.
    again = runs.run([undated(1, "id-1b")] + [undated(n, f"id-{n}") for n in (4, 5, 2, 3)])
    assert kinds(again) == [("new", "id-1b")]


def test_a_document_longer_than_max_state_items_renamed_at_once_gives_no_records() -> None:
    """Only the newest max_state_items items are tracked: the rename is wholesale when
    most of those are renamed, whatever the untracked ones do."""
    capped = replace(SETTINGS, max_state_items=3)
    for make in (post, undated):
        runs = Runs(capped)
        runs.run([make(n, f"t-{n}-1") for n in range(1, 9)])
        for fetch in (2, 3):
            delta = runs.run([make(n, f"t-{n}-{fetch}") for n in range(1, 9)])
            assert kinds(delta) == [], make.__name__
            assert delta.counts.unchanged == 8


def test_numeric_guids_turned_permalinks_give_no_records_and_edits_still_come() -> None:
    runs = Runs()
    runs.run([post(n, str(1000 + n)) for n in (1, 2, 3)])
    moved = runs.run([post(n, f"https://blog.example/?p={1000 + n}") for n in (1, 2, 3)])
    assert kinds(moved) == []
    edited = runs.run(
        [post(n, f"https://blog.example/?p={1000 + n}") for n in (1, 3)]
        + [post(2, "https://blog.example/?p=1002", title="Post 2, fixed")]
    )
    assert kinds(edited) == [("updated", "https://blog.example/?p=1002")]


def test_an_item_newer_than_any_seen_is_new_whatever_its_content() -> None:
    """A new post is dated after the newest item seen: it is never taken for a renamed
    one, even when the memory holds a gone item of the same content hash."""
    runs = Runs()
    runs.run([post(1, "a")])
    assert runs.bookmark is not None
    runs.bookmark = FeedBookmark(
        success_at=runs.bookmark.success_at,
        items=runs.bookmark.items,
        newest_item_at="2026-02-01T00:00:00Z",  # older than post 1 itself
    )
    assert kinds(runs.run([post(1, "b")])) == [("new", "b")]


def test_an_item_still_in_the_document_lends_its_memory_to_none() -> None:
    """Two items of one content under two ids, both listed, are two items."""
    runs = Runs()
    runs.run([post(1, "a")])
    assert kinds(runs.run([post(1, "a"), post(1, "b")])) == [("new", "b")]


def test_one_gone_item_is_taken_over_by_one_item_only() -> None:
    runs = Runs()
    runs.run([post(1, "a"), post(2, "a2")])
    renamed = runs.run([post(1, "b"), post(1, "c"), post(2, "b2")])
    assert kinds(renamed) == [("new", "c")]


def test_one_item_under_a_new_id_among_items_that_keep_theirs_is_new() -> None:
    """A guid names its item: one id changed while the others stay is a post deleted and
    published again (or another post), not a rename of the feed's ids."""
    runs = Runs()
    runs.run([post(n, f"id-{n}") for n in (1, 2, 3)])
    again = runs.run([post(1, "id-1b"), post(2, "id-2"), post(3, "id-3")])
    assert kinds(again) == [("new", "id-1b")]
    # Half of them at once is no wholesale rename either; more than half is.
    runs = Runs()
    runs.run([post(n, f"id-{n}") for n in (1, 2, 3, 4)])
    half = runs.run([post(1, "x-1"), post(2, "x-2"), post(3, "id-3"), post(4, "id-4")])
    assert kinds(half) == [("new", "x-1"), ("new", "x-2")]
    runs = Runs()
    runs.run([post(n, f"id-{n}") for n in (1, 2, 3, 4)])
    most = runs.run([post(1, "x-1"), post(2, "x-2"), post(3, "x-3"), post(4, "id-4")])
    assert kinds(most) == []


def test_an_edited_item_under_a_new_id_is_new() -> None:
    """Only the very content remembered tells a renamed item: an id and an edit at once
    are a new item (as before)."""
    runs = Runs()
    runs.run([post(1, "a")])
    assert kinds(runs.run([post(1, "b", title="Post 1, fixed")])) == [("new", "b")]


def linked(n: int, link: str, **kw: object) -> ParsedItem:
    """An item without guid: known by its link."""
    return post(n, "", native_id=None, native_id_source=None, url=link, **kw)


def test_links_moved_to_https_without_www_are_updates_not_new_items() -> None:
    """A site moving to https (and dropping www., or adding a trailing slash) respells
    every link, the id of every item without guid: each comes out once as updated (its
    url changed), not as a new item, then never again."""
    for before, after in [
        ("http://blog.example/p{n}", "https://blog.example/p{n}"),
        ("https://www.blog.example/p{n}", "https://blog.example/p{n}"),
        ("http://www.blog.example/p{n}", "https://blog.example/p{n}/"),
        ("https://blog.example/p{n}/", "https://blog.example/p{n}"),
    ]:
        runs = Runs()
        runs.run([linked(n, before.format(n=n)) for n in (1, 2)])
        moved = runs.run([linked(n, after.format(n=n)) for n in (1, 2)])
        assert kinds(moved) == [("updated", after.format(n=n)) for n in (1, 2)], before
        assert moved.counts.remembered == 4  # the old spellings kept: links may flip back
        assert kinds(runs.run([linked(n, after.format(n=n)) for n in (1, 2)])) == []


def test_permalink_guids_moved_to_https_are_updates() -> None:
    runs = Runs()
    runs.run(
        [post(n, f"http://blog.example/p{n}", url=f"http://blog.example/p{n}") for n in (1, 2)]
    )
    moved = runs.run(
        [post(n, f"https://blog.example/p{n}", url=f"https://blog.example/p{n}") for n in (1, 2)]
    )
    assert [kind for kind, _ in kinds(moved)] == ["updated", "updated"]


def test_a_link_to_another_page_is_a_new_item() -> None:
    runs = Runs()
    runs.run([linked(1, "https://blog.example/p1")])
    assert kinds(runs.run([linked(1, "https://blog.example/p1-copy")])) == [
        ("new", "https://blog.example/p1-copy")
    ]


def test_a_site_move_that_also_changes_the_content_gives_updates() -> None:
    """A site moving (to https, to www.) often moves to another theme or platform too,
    which changes every item's content at once: the link it was known by, spelled as
    before the move and gone from the document, still names the item (an update)."""
    for before, after in [
        ("http://blog.example/p{n}", "https://blog.example/p{n}"),
        ("https://blog.example/p{n}", "https://www.blog.example/p{n}/"),
    ]:
        runs = Runs()
        runs.run([linked(n, before.format(n=n)) for n in (1, 2)])
        moved = runs.run(
            [linked(n, after.format(n=n), summary=f"Post {n}, new theme") for n in (1, 2)]
        )
        assert kinds(moved) == [("updated", after.format(n=n)) for n in (1, 2)], before
        assert moved.counts.remembered == 4  # the old spellings kept: links may flip back
        guids = runs.run(
            [
                post(n, after.format(n=n), url=after.format(n=n), summary=f"Post {n}, new theme")
                for n in (1, 2)
            ]
        )
        assert kinds(guids) == []  # the same ids, now given as permalink guids: unchanged


def test_an_item_at_both_spellings_keeps_both() -> None:
    """Only a spelling gone from the document is taken for the item's own: a feed listing
    a page at http:// and at https:// has two items."""
    runs = Runs()
    runs.run([linked(1, "http://blog.example/p1")])
    both = runs.run(
        [linked(1, "http://blog.example/p1"), linked(1, "https://blog.example/p1", title="x")]
    )
    assert kinds(both) == [("new", "https://blog.example/p1")]


def test_links_flipping_between_two_spellings_come_out_once() -> None:
    """Two caches that disagree on the scheme (or on www.) serve the links spelled one
    way, then the other, then back: the first move is an update, a spelling already
    seen is no change again."""
    for first, second in [
        ("http://blog.example/p{n}", "https://blog.example/p{n}"),
        ("https://www.blog.example/p{n}", "https://blog.example/p{n}"),
    ]:
        runs = Runs()
        runs.run([linked(n, first.format(n=n)) for n in (1, 2, 3)])
        moved = runs.run([linked(n, second.format(n=n)) for n in (1, 2, 3)])
        assert [kind for kind, _ in kinds(moved)] == ["updated"] * 3
        for spelling in (first, second, first, second):
            again = runs.run([linked(n, spelling.format(n=n)) for n in (1, 2, 3)])
            assert kinds(again) == [], spelling


def test_a_respelled_link_newer_than_any_seen_is_a_new_item() -> None:
    """A page dated after the newest item seen is a new post, even where its link is a
    gone item's respelled (another trailing slash): as for the content match."""
    runs = Runs()
    runs.run([linked(1, "https://blog.example/docs/")])
    newer = linked(5, "https://blog.example/docs", title="Docs, rewritten")
    assert kinds(runs.run([newer])) == [("new", "https://blog.example/docs")]
