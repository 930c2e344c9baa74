"""New items held back by max_items_per_run while a feed makes its guids anew on every
fetch: the bookmark counts them (new_held_back), and the next run's rename test leaves
them out, so each item comes out once and the backlog drains."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from tap_feeddelta.delta import Delta, DeltaSettings, diff_items
from tap_feeddelta.models import FirstRunMode, ParsedItem
from tap_feeddelta.state import HELD_BYTES, FeedBookmark, decode_bookmark, encode_bookmark


def _held(packed: bytes) -> int:
    """How many new items a bookmark's new_held_back names."""
    return len(packed) // HELD_BYTES


def post(n: int, guid: str, *, dated: bool = True, title: str | None = None) -> ParsedItem:
    return ParsedItem(
        native_id=guid,
        native_id_source="guid",
        url=f"https://alerts.example/a{n}",
        title=title or f"Alert {n}",
        summary=f"What alert {n} says.",
        published_at=f"2026-03-01T{n // 60:02d}:{n % 60:02d}:00Z" if dated else None,
    )


def document(numbers: Sequence[int], fetch: int, *, dated: bool = True) -> list[ParsedItem]:
    """The feed as one fetch serves it: guids made anew (fetch), newest first."""
    return [post(n, f"uuid-{n}-{fetch}", dated=dated) for n in sorted(numbers, reverse=True)]


def stable(numbers: Sequence[int]) -> list[ParsedItem]:
    return [post(n, f"post-{n}") for n in sorted(numbers, reverse=True)]


class Runs:
    """Runs one after another, each bookmark through JSON as Singer state keeps it."""

    def __init__(self, settings: DeltaSettings) -> None:
        self.bookmark: FeedBookmark | None = None
        self.settings = settings
        self.partition: dict[str, object] = {}

    def run(self, items: Sequence[ParsedItem]) -> Delta:
        delta = diff_items(self.bookmark, items, self.settings)
        dates = [d for i in items if (d := i.published_at)]
        newest = max([*dates, (self.bookmark.newest_item_at or "") if self.bookmark else ""])
        kept = FeedBookmark(
            success_at="2026-03-30T00:00:00Z",
            newest_item_at=newest or None,
            largest_document=delta.largest_document,
            new_held_back=delta.new_held_back,
            items=delta.remembered_items,
        )
        self.partition = json.loads(json.dumps(encode_bookmark(kept)))
        self.bookmark = decode_bookmark(self.partition, "p")
        return delta


def numbers(delta: Delta) -> list[int]:
    return sorted(int(str(c.item.url).rsplit("a", 1)[1]) for c in delta.changes)


def settings(mode: FirstRunMode = "emit_all", per_run: int = 5, initial: int = 20) -> DeltaSettings:
    return DeltaSettings(
        "m", "https://alerts.example/feed", mode, initial, max_items_per_run=per_run
    )


@pytest.mark.parametrize("dated", [True, False], ids=["dated", "undated"])
@pytest.mark.parametrize("per_run", [5, 1, 7])
def test_a_backlog_under_guids_made_anew_comes_out_once(dated: bool, per_run: int) -> None:
    """The first run of emit_all holds back all but per_run of 20 items; run after run
    the next ones come out, each once, and then nothing (before, the same per_run came
    out as new on every run, and the others never)."""
    runs = Runs(settings(per_run=per_run))
    sent: list[int] = []
    held = []
    fetch = 0
    while True:
        delta = runs.run(document(range(20), fetch, dated=dated))
        fetch += 1
        assert all(c.change_type == "new" for c in delta.changes)
        assert len(delta.changes) <= per_run
        sent += numbers(delta)
        held.append(_held(delta.new_held_back))
        assert _held(delta.new_held_back) == delta.counts.deferred
        if not delta.changes:
            break
        assert fetch <= 20, "the backlog never drains"
    assert sorted(sent) == list(range(20))  # every item once
    runs_needed = -(-20 // per_run)
    assert held == [max(0, 20 - per_run * k) for k in range(1, runs_needed + 2)]
    assert "new_held_back" not in runs.partition  # 0: no key, no bytes
    for _ in range(2):  # and nothing after
        assert runs.run(document(range(20), fetch, dated=dated)).changes == ()
        fetch += 1


@pytest.mark.parametrize("burst", [8, 12])
def test_a_burst_after_an_outage_comes_out_once(burst: int) -> None:
    """A feed of guids made anew, known for a while, publishes ``burst`` alerts while
    the tap was down: they come out 5 a run, each once, and then nothing. The 8 known
    ones never, unless most of the document is new: then its first run cannot tell the
    rename (fewer than half of the items are remembered) and gives a run's worth of them
    once more (before, the same ones on every run, and never the new ones)."""
    runs = Runs(settings("baseline_only"))
    runs.run(document(range(20), 0))
    assert runs.run(document(range(20), 1)).changes == ()
    sent: list[int] = []
    window = range(burst, 20 + burst)  # the oldest ones gone
    for fetch in range(2, 10):
        sent += numbers(runs.run(document(window, fetch)))
    new = list(range(20, 20 + burst))
    # The oldest first, one run's worth: the next run matches the others' memory.
    known_again = list(range(burst, burst + 5)) if 2 * (20 - burst) <= 20 else []
    assert sorted(sent) == known_again + new


def test_stable_guids_with_items_held_back_are_unaffected() -> None:
    """Guids that stay: the items held back come out as new on later runs, each once,
    and no item is taken for another."""
    runs = Runs(settings())
    sent: list[int] = []
    held = []
    for _ in range(6):
        delta = runs.run(stable(range(20)))
        sent += numbers(delta)
        held.append(_held(delta.new_held_back))
    assert sorted(sent) == list(range(20))
    assert held == [15, 10, 5, 0, 0, 0]


def test_an_item_republished_among_items_held_back_is_new() -> None:
    """Held-back items left out of the rename test are those that come back unmatched:
    a document that no longer has them does not make one item under a new id a rename."""
    runs = Runs(settings())
    runs.run(stable(range(20)))  # 15 held back
    assert runs.bookmark is not None and _held(runs.bookmark.new_held_back) == 15
    # The held-back items are gone; one delivered item comes back under a new guid.
    republished = [*stable([1, 2, 3, 4]), post(0, "republished-0")]
    assert [(c.change_type, c.item_id) for c in runs.run(republished).changes] == [
        ("new", "republished-0")
    ]


@pytest.mark.parametrize("dated", [True, False], ids=["dated", "undated"])
def test_an_item_republished_beside_items_held_back_under_their_ids_is_new(dated: bool) -> None:
    """Items held back that come back under their ids (stable guids) are items that
    keep their ids: once every item delivered has left the document, one delivered
    item republished under a new guid beside them is new, not a rename (when the
    bookmark kept only their number, it was taken for one and never sent)."""
    runs = Runs(settings())
    runs.run([post(n, f"post-{n}", dated=dated) for n in reversed(range(20))])  # 0-4 sent
    held_back = [post(n, f"post-{n}", dated=dated) for n in reversed(range(5, 20))]
    document = [*held_back, post(0, "republished-0", dated=dated)]
    sent = []
    for _ in range(5):
        sent += [(c.change_type, c.item_id) for c in runs.run(document).changes]
    assert ("new", "republished-0") in sent
    assert sorted(sent) == sorted(
        [("new", "republished-0"), *(("new", f"post-{n}") for n in range(5, 20))]
    )


def test_deferred_updates_are_not_counted() -> None:
    """An update left for later keeps its old content remembered under its id, so it
    does not come back unmatched: only new items are counted."""
    runs = Runs(settings("baseline_only", per_run=3))
    runs.run(stable(range(10)))
    edited = [post(n, f"post-{n}", title=f"Edited {n}") for n in range(8)]
    delta = runs.run([*edited, *stable([8, 9])])
    assert delta.counts.deferred == 5
    assert delta.new_held_back == b""
    assert "new_held_back" not in runs.partition


@pytest.mark.parametrize("mode", ["baseline_only", "emit_recent"])
def test_first_runs_that_hold_nothing_back_record_nothing(mode: FirstRunMode) -> None:
    runs = Runs(settings(mode, initial=3))
    delta = runs.run(document(range(20), 0))
    assert len(delta.changes) == (3 if mode == "emit_recent" else 0)
    assert delta.new_held_back == b""
    assert "new_held_back" not in runs.partition
    assert runs.run(document(range(20), 1)).changes == ()  # a wholesale rename


def test_a_partition_written_before_the_field_reads_as_none_held_back() -> None:
    """States written before new_held_back read as 0 and compare as before: the rename
    test measures every tracked item."""
    runs = Runs(settings())
    runs.run(document(range(20), 0))
    older = {key: value for key, value in runs.partition.items() if key != "new_held_back"}
    assert decode_bookmark(older, "p").new_held_back == b""
    runs.bookmark = decode_bookmark(older, "p")
    assert numbers(runs.run(document(range(20), 1))) == [0, 1, 2, 3, 4]  # as before: again
    assert _held(runs.bookmark.new_held_back) == 15  # and from now on it drains
    assert numbers(runs.run(document(range(20), 2))) == [5, 6, 7, 8, 9]


def test_a_lost_bookmark_starts_over() -> None:
    runs = Runs(settings())
    first = runs.run(document(range(20), 0))
    runs.run(document(range(20), 1))
    runs.bookmark = None  # state lost: a first run again, as before
    again = runs.run(document(range(20), 0))
    assert [c.delivery_id for c in again.changes] == [c.delivery_id for c in first.changes]
    assert _held(again.new_held_back) == 15
