"""delivery_id over runs: one per delivered version, the same when a run is sent again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tap_feeddelta.delta import Delta, DeltaSettings, ItemChange, diff_items
from tap_feeddelta.fingerprints import delivery_id, fingerprint_bytes, short_hash
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.state import FeedBookmark, pack_items, unpack_items

FEED = "https://example.org/feed"
SETTINGS = DeltaSettings("m", FEED, first_run_mode="emit_all")


def post(n: int, title: str = "Version A", **kw: object) -> ParsedItem:
    values: dict[str, object] = {
        "native_id": f"id-{n}",
        "native_id_source": "guid",
        "title": title,
        "published_at": f"2024-01-{n:02d}T00:00:00Z",
    }
    values.update(kw)
    return ParsedItem(**values)  # type: ignore[arg-type]


def run(
    bookmark: FeedBookmark | None,
    items: Sequence[ParsedItem],
    settings: DeltaSettings = SETTINGS,
) -> tuple[Delta, FeedBookmark]:
    """A run from ``bookmark``, and the bookmark it leaves."""
    delta = diff_items(bookmark, items, settings)
    return delta, FeedBookmark(success_at="2024-02-01T00:00:00Z", items=delta.remembered_items)


def reference(change: ItemChange, replaced: int | None = None) -> str:
    return delivery_id("m", FEED, change.item_id, change.fingerprint, replaced)


def test_an_edit_reverted_gives_three_delivery_ids() -> None:
    """A, B, then A again: the third delivery is a version of its own, not the first
    one's row again (an upserting target kept one A row, and the history lost one)."""
    first, state = run(None, [post(1)])
    second, state = run(state, [post(1, "Version B")])
    third, _ = run(state, [post(1)])
    delivered = [*first.changes, *second.changes, *third.changes]
    assert [c.change_type for c in delivered] == ["new", "updated", "updated"]
    assert first.changes[0].fingerprint == third.changes[0].fingerprint
    assert len({c.delivery_id for c in delivered}) == 3


def test_a_run_sent_again_from_the_same_state_gives_the_same_delivery_ids() -> None:
    """A run killed before its state was saved runs again from the same state: the
    target's upsert on delivery_id drops the repeats."""
    _, state = run(None, [post(1), post(2)])
    edited = [post(1, "Version B"), post(2), post(3)]
    once = diff_items(state, edited, SETTINGS)
    again = diff_items(state, edited, SETTINGS)
    assert [c.change_type for c in once.changes] == ["updated", "new"]
    assert [c.delivery_id for c in once.changes] == [c.delivery_id for c in again.changes]


def test_a_new_record_keeps_the_id_it_had_and_an_update_names_what_it_replaced() -> None:
    first, state = run(None, [post(1)])
    [new] = first.changes
    assert new.delivery_id == reference(new) == "b137fac0a5fa1c467c46939fa78a60db"
    [update] = diff_items(state, [post(1, "Version B")], SETTINGS).changes
    [(_, replaced)] = unpack_items(state.items).items()
    assert replaced == short_hash(fingerprint_bytes(post(1)))
    assert update.delivery_id == reference(update, replaced)
    assert update.delivery_id == "4520e0919b113e30e2d3ae0a7c491fa0"
    # The formula for new records, with nothing replaced, is the one before.
    assert update.delivery_id != reference(update)


def test_an_update_of_a_legacy_hash_names_the_hash_the_state_kept() -> None:
    """An item remembered by an earlier version of the tap (tags hashed in document
    order): unchanged it sends nothing; edited, its id covers the hash the state keeps,
    so a re-sent run gives the same id."""
    unsorted = post(1, tags=("zeta", "alpha"))
    [(key, _)] = unpack_items(run(None, [unsorted])[1].items).items()
    legacy = short_hash(fingerprint_bytes(unsorted, tags_in_document_order=True))
    old_state = FeedBookmark(success_at="x", items=pack_items([(key, legacy)]))
    assert diff_items(old_state, [unsorted], SETTINGS).changes == ()
    edited = post(1, "Version B", tags=("zeta", "alpha"))
    [update] = diff_items(old_state, [edited], SETTINGS).changes
    assert update.delivery_id == reference(update, legacy)
    assert diff_items(old_state, [edited], SETTINGS).changes[0].delivery_id == update.delivery_id


def test_a_deferred_update_keeps_its_delivery_id() -> None:
    """An update left for a later run keeps the version it replaces in the state, so it
    comes with the id it would have had in the run that left it."""
    _, state = run(None, [post(1), post(2)])
    edited = [post(1, "Version B"), post(2, "Version B")]
    uncapped = {c.item_id: c.delivery_id for c in diff_items(state, edited, SETTINGS).changes}
    capped = replace(SETTINGS, max_items_per_run=1)
    first, state = run(state, edited, capped)
    second, state = run(state, edited, capped)
    assert first.counts.deferred == 1
    delivered = {c.item_id: c.delivery_id for c in (*first.changes, *second.changes)}
    assert delivered == uncapped


def test_an_edit_reverted_under_ignored_changes_gives_three_delivery_ids() -> None:
    """With a field ignored, the versions are told apart by the fields that count."""
    settings = replace(SETTINGS, ignored_changes=("updated_at",))
    first, state = run(None, [post(1, updated_at="2024-01-02T00:00:00Z")], settings)
    second, state = run(state, [post(1, "Version B", updated_at="2024-01-03T00:00:00Z")], settings)
    third, _ = run(state, [post(1, updated_at="2024-01-04T00:00:00Z")], settings)
    delivered = [*first.changes, *second.changes, *third.changes]
    assert [c.change_type for c in delivered] == ["new", "updated", "updated"]
    assert len({c.delivery_id for c in delivered}) == 3
