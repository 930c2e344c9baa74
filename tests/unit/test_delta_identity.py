"""Item identity over runs: shared ids, enclosures as ids, exact repeats, gaps."""

from __future__ import annotations

from collections.abc import Sequence

from tap_feeddelta.delta import Delta, DeltaSettings, diff_items
from tap_feeddelta.fingerprints import content_id, earlier_ids, fingerprint_bytes, title_id
from tap_feeddelta.models import Enclosure, ParsedItem
from tap_feeddelta.state import FeedBookmark

EMIT_ALL = DeltaSettings("m", "https://status.example/feed", first_run_mode="emit_all")
HOME = "https://status.example/"


def incident(n: int, **kw: object) -> ParsedItem:
    """A status page's item: no guid, and every item links to the home page."""
    values: dict[str, object] = {
        "url": HOME,
        "title": f"Incident {n}",
        "summary": f"What happened in incident {n}.",
        "published_at": f"2026-11-{n:02d}T10:00:00Z",
    }
    values.update(kw)
    return ParsedItem(**values)  # type: ignore[arg-type]


class Runs:
    """Runs one after another, each from the memory the one before left."""

    def __init__(self, settings: DeltaSettings = EMIT_ALL) -> None:
        self.settings = settings
        self.bookmark: FeedBookmark | None = None

    def run(self, items: Sequence[ParsedItem]) -> Delta:
        delta = diff_items(self.bookmark, items, self.settings)
        dates = [d for i in items if (d := i.published_at or i.updated_at)]
        self.bookmark = FeedBookmark(
            success_at="2026-11-30T00:00:00Z",
            items=delta.remembered_items,
            newest_item_at=max(dates, default=None),
        )
        return delta


def changes(delta: Delta) -> list[tuple[str, str | None]]:
    return [(c.change_type, c.item.title) for c in delta.changes]


def codes(delta: Delta) -> set[str]:
    return {issue.code for issue in delta.issues}


def test_items_sharing_a_link_are_all_delivered() -> None:
    """Before, the first item with the link won and the others were never delivered."""
    first = Runs().run([incident(3), incident(2), incident(1)])
    assert changes(first) == [("new", "Incident 3"), ("new", "Incident 2"), ("new", "Incident 1")]
    assert len({c.item_id for c in first.changes}) == 3
    assert [c.id_source for c in first.changes] == ["derived", "derived", "derived"]
    assert all("shared_id" in {i.code for i in c.issues} for c in first.changes)
    assert first.counts.duplicates == 0


def test_a_new_item_with_a_shared_link_is_new_not_an_update_of_the_old_one() -> None:
    runs = Runs()
    runs.run([incident(1)])
    second = runs.run([incident(2), incident(1)])
    assert changes(second) == [("new", "Incident 2")]
    third = runs.run([incident(3), incident(2), incident(1)])
    assert changes(third) == [("new", "Incident 3")]
    assert runs.run([incident(3), incident(2), incident(1)]).changes == ()


def test_an_item_is_unchanged_when_it_stops_sharing_its_link_and_when_it_starts() -> None:
    runs = Runs()
    runs.run([incident(1)])
    assert changes(runs.run([incident(2), incident(1)])) == [("new", "Incident 2")]
    alone = runs.run([incident(2)])  # incident 1 is gone: incident 2 has the link to itself
    assert (alone.changes, alone.counts.unchanged) == ((), 1)
    assert changes(runs.run([incident(2, summary="Resolved.")])) == [("updated", "Incident 2")]


def test_a_rolling_window_of_items_sharing_a_link_gives_only_new_items() -> None:
    """Three incidents shown, one more each run: before, every third run gave the new
    incident as an update of the one that had just left."""
    runs = Runs()
    for newest in range(3, 15):
        delta = runs.run([incident(n) for n in range(newest, newest - 3, -1)])
        expected = [("new", f"Incident {n}") for n in (3, 2, 1)] if newest == 3 else []
        assert changes(delta) == (expected or [("new", f"Incident {newest}")])


def test_ids_do_not_depend_on_memory() -> None:
    """A run without state (--full-refresh) gives every item the id, and so the
    delivery_id, that the incremental runs gave it in the same document. (Incident 1
    was delivered under the bare link while it had it to itself.)"""
    runs = Runs()
    delivered: dict[str | None, str] = {}
    for newest in (1, 2, 3):
        for change in runs.run([incident(n) for n in range(newest, 0, -1)]).changes:
            delivered[change.item.title] = change.delivery_id
    again = Runs().run([incident(n) for n in (3, 2, 1)])
    from_scratch = {c.item.title: c.delivery_id for c in again.changes}
    assert from_scratch["Incident 3"] == delivered["Incident 3"]
    assert from_scratch["Incident 2"] == delivered["Incident 2"]
    assert runs.run([incident(n) for n in (3, 2, 1)]).changes == ()


def test_a_shuffled_document_keeps_every_id() -> None:
    items = [incident(n) for n in (1, 2, 3)] + [
        ParsedItem("g", "guid", title=f"P{n}") for n in (1, 2)
    ]
    runs = Runs()
    runs.run(items)
    assert runs.run(items[::-1]).changes == ()


def test_an_edit_of_an_item_with_a_shared_link_is_an_update() -> None:
    runs = Runs()
    runs.run([incident(2), incident(1)])
    edited = runs.run([incident(2, summary="Resolved."), incident(1)])
    assert changes(edited) == [("updated", "Incident 2")]


def test_an_edit_that_moves_updated_at_of_an_item_with_a_shared_link_is_an_update() -> None:
    """Status pages bump <updated> with every edit ("Incident resolved"): an item that
    shares its link is told apart by its publication date, which the edit leaves alone,
    so the edit is an update, not a new item with a new delivery_id."""
    opened = "2026-11-02T10:00:00Z"
    runs = Runs()
    runs.run([incident(2, updated_at=opened), incident(1)])
    resolved = incident(2, summary="Resolved.", updated_at="2026-11-20T10:00:00Z")
    assert changes(runs.run([resolved, incident(1)])) == [("updated", "Incident 2")]


def test_edits_of_items_sharing_a_guid_are_updates_of_each() -> None:
    items = [ParsedItem("post", "guid", title=f"Post {n}", summary="v1") for n in (1, 2)]
    runs = Runs()
    runs.run(items)
    edited = runs.run([items[1]._replace(summary="v2"), items[0]._replace(summary="v2")])
    assert changes(edited) == [("updated", "Post 2"), ("updated", "Post 1")]


def test_start_date_holds_back_old_items_that_share_a_link() -> None:
    settings = DeltaSettings(
        "m",
        "https://status.example/feed",
        first_run_mode="emit_all",
        start_date="2026-11-05T00:00:00Z",
    )
    runs = Runs(settings)
    runs.run([incident(9), incident(8)])
    archive = incident(1, published_at="2019-01-01T00:00:00Z")
    assert changes(runs.run([incident(9), incident(8), archive])) == []


def test_one_guid_for_every_item_loses_none_of_them() -> None:
    """A CMS that gives every item the same guid: every item is still its own."""
    items = [
        ParsedItem("same", "guid", title=f"Post {n}", published_at=f"2026-11-{n:02d}T00:00:00Z")
        for n in range(1, 6)
    ]
    runs = Runs()
    assert len(runs.run(items).changes) == 5
    assert runs.run(items).changes == ()
    assert changes(runs.run([ParsedItem("same", "guid", title="Post 6"), *items])) == [
        ("new", "Post 6")
    ]


def test_an_exact_repeat_is_dropped_and_counted() -> None:
    delta = Runs().run([incident(1), incident(2), incident(1)])
    assert changes(delta) == [("new", "Incident 1"), ("new", "Incident 2")]
    assert "duplicate_id" in codes(delta)
    assert delta.counts.duplicates == 1
    counts = delta.counts
    assert counts.seen == counts.new + counts.updated + counts.unchanged + counts.duplicates


def test_items_without_id_or_link_differing_only_in_content_are_all_delivered() -> None:
    items = [
        ParsedItem(content_text="Post A: the server is down"),
        ParsedItem(content_text="Post B: the server is back"),
        ParsedItem(title="Daily note", content_text="Monday"),
        ParsedItem(title="Daily note", content_text="Tuesday"),
    ]
    runs = Runs()
    assert len(runs.run(items).changes) == 4
    later = runs.run([ParsedItem(content_text="Post C: new"), *items])
    assert [(c.change_type, c.item.content_text) for c in later.changes] == [("new", "Post C: new")]


def episode(notes: str) -> ParsedItem:
    audio = Enclosure(url="https://cdn.example/ep1.mp3", type="audio/mpeg", length_bytes=1000)
    return ParsedItem(title="Episode 1", summary=notes, enclosures=(audio,))


def test_an_episode_without_guid_or_link_is_known_by_its_enclosure() -> None:
    """Before, its id hashed the show notes: fixing a typo delivered the episode again."""
    runs = Runs()
    first = runs.run([episode("Show notes with a tpyo.")])
    assert [(c.item_id, c.id_source) for c in first.changes] == [
        ("https://cdn.example/ep1.mp3", "enclosure")
    ]
    assert "derived_id" in {i.code for i in first.changes[0].issues}
    assert changes(runs.run([episode("Show notes with a typo fixed.")])) == [
        ("updated", "Episode 1")
    ]


def test_an_episode_remembered_under_its_old_text_id_moves_to_its_enclosure() -> None:
    """Memory written when such an item was identified by the hash of its text (before
    enclosures identified items): the upgrade delivers nothing again, and a later edit
    of the show notes is an update."""
    runs = Runs()
    runs.bookmark = FeedBookmark(success_at="x", items=_memory_of_text_id(episode("Notes.")))
    unchanged = runs.run([episode("Notes.")])
    assert (unchanged.changes, unchanged.counts.unchanged) == ((), 1)
    edited = runs.run([episode("Notes, fixed.")])
    assert [(c.change_type, c.id_source) for c in edited.changes] == [("updated", "enclosure")]


def _memory_of_text_id(item: ParsedItem) -> bytes:
    """The memory an earlier version left for ``item``: its text hash as its id."""
    from tap_feeddelta.fingerprints import (
        derived_id,
        fingerprint_bytes,
        key_hash,
        short_hash,
        text_parts,
    )
    from tap_feeddelta.state import pack_items

    key = key_hash(derived_id(text_parts(item)))
    return pack_items([(key, short_hash(fingerprint_bytes(item)))])


def test_new_ids_on_items_no_newer_than_before_are_no_gap() -> None:
    """A feed that renames its ids (or makes new guids on every build) gives new items,
    but nothing was missed."""
    runs = Runs()
    runs.run([incident(n, url=f"{HOME}a/{n}") for n in range(1, 6)])
    renamed = runs.run([incident(n, url=f"{HOME}b/{n}") for n in range(1, 6)])
    assert len(renamed.changes) == 5
    assert "possible_gap" not in codes(renamed)


def test_a_document_with_nothing_seen_before_reports_a_possible_gap() -> None:
    runs = Runs()
    runs.run([incident(n, url=f"{HOME}{n}") for n in range(1, 11)])
    moved_on = runs.run([incident(n, url=f"{HOME}{n}") for n in range(21, 31)])
    assert len(moved_on.changes) == 10
    assert "possible_gap" in codes(moved_on)
    overlapping = runs.run([incident(n, url=f"{HOME}{n}") for n in range(22, 32)])
    assert "possible_gap" not in codes(overlapping)


def test_one_backdated_item_among_new_ones_does_not_hide_a_gap() -> None:
    runs = Runs()
    runs.run([incident(n, url=f"{HOME}{n}") for n in range(10, 20)])
    backdated = incident(99, url=f"{HOME}99", published_at="2026-11-18T09:59:00Z")
    moved_on = runs.run([*(incident(n, url=f"{HOME}{n}") for n in range(21, 30)), backdated])
    assert "possible_gap" in codes(moved_on)
    # Half of them no newer than before: a feed renaming its ids as much as a gap.
    runs = Runs()
    runs.run([incident(n, url=f"{HOME}{n}") for n in range(10, 20)])
    renamed = runs.run([incident(n, url=f"{HOME}x{n}") for n in (*range(14, 20), *range(21, 27))])
    assert "possible_gap" not in codes(renamed)


def test_no_gap_is_reported_on_a_first_run_or_for_a_one_item_feed() -> None:
    runs = Runs()
    assert "possible_gap" not in codes(runs.run([incident(1, url=f"{HOME}1"), incident(2)]))
    single = Runs()
    single.run([incident(1)])
    assert "possible_gap" not in codes(single.run([incident(2, url=f"{HOME}2")]))


def test_many_items_sharing_one_id_are_identified_in_linear_work() -> None:
    """10,000 items with one guid: each its own item (a quadratic pass would take minutes)."""
    items = [ParsedItem("same", "guid", title=f"Post {n}") for n in range(10_000)]
    runs = Runs()
    assert len(runs.run(items).changes) == EMIT_ALL.max_items_per_run
    assert runs.run(items).counts.duplicates == 0


def test_earlier_ids_of_an_item_that_shares_its_link_hold_that_link_not_its_own_id() -> None:
    """fingerprints.earlier_ids, called alone (delta asks it for items it does not find)."""
    item = incident(1)
    digest = fingerprint_bytes(item)
    shared_id = title_id(item, HOME, ())
    ids = earlier_ids(item, shared_id, "derived", digest)
    assert ids[0] == HOME  # the id it had before it shared it
    assert shared_id not in ids
    assert content_id(HOME, digest) in ids
    assert len(ids) == len(set(ids))
