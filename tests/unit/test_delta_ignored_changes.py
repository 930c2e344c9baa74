"""ignored_changes: item fields whose edits do not make an item updated (YouTube's and
Stack Exchange's <updated> that moves with every like or view, the points and comment
counts hnrss.org writes into each description). Pure: no network, no SDK."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.fingerprints import derived_id, fingerprint_bytes
from tap_feeddelta.models import FINGERPRINT_FIELDS, Author, Enclosure, ParsedItem
from tap_feeddelta.state import FeedBookmark, unpack_items

SETTINGS = DeltaSettings(monitor_id="m", feed_url="https://example.org/feed")

# A value for every fingerprint field, and another one (an edit of that field alone).
FIELD_VALUES: dict[str, tuple[Any, Any]] = {
    "url": ("https://example.org/a", "https://example.org/b"),
    "title": ("Video 1", "Video 1 (remastered)"),
    "summary": ("Points: 12 # Comments: 3", "Points: 15 # Comments: 4"),
    "content_text": ("Body", "Body, edited"),
    "authors": ((Author(name="A"),), (Author(name="B"),)),
    "tags": (("music",), ("music", "pop")),
    "published_at": ("2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"),
    "updated_at": ("2024-03-01T10:00:00Z", "2024-03-01T10:10:00Z"),
    "enclosures": (
        (Enclosure("https://cdn.example/1.mp3"),),
        (Enclosure("https://cdn.example/1-fixed.mp3"),),
    ),
}


def video(n: int, **kw: Any) -> ParsedItem:
    values: dict[str, Any] = {
        "native_id": f"yt:video:{n}",
        "native_id_source": "atom_id",
        **{name: before for name, (before, _) in FIELD_VALUES.items()},
    }
    values["title"] = f"Video {n}"
    values.update(kw)
    return ParsedItem(**values)


def settings(*ignored: str, **kw: Any) -> DeltaSettings:
    return replace(SETTINGS, ignored_changes=ignored, **kw)


def remembered(items: list[ParsedItem], delta_settings: DeltaSettings) -> FeedBookmark:
    delta = diff_items(None, items, delta_settings)
    return FeedBookmark(success_at="2024-01-01T00:00:00Z", items=delta.remembered_items)


def kinds(bookmark: FeedBookmark, items: list[ParsedItem], s: DeltaSettings) -> list[str]:
    return [c.change_type for c in diff_items(bookmark, items, s).changes]


def test_the_fields_that_can_be_ignored_are_the_fingerprint_s() -> None:
    assert set(FIELD_VALUES) == set(FINGERPRINT_FIELDS)


def test_by_default_a_bumped_updated_date_is_an_update() -> None:
    bookmark = remembered([video(1)], SETTINGS)
    bumped = video(1, updated_at="2024-03-01T10:10:00Z")
    assert kinds(bookmark, [bumped], SETTINGS) == ["updated"]


@pytest.mark.parametrize("field", list(FIELD_VALUES))
def test_an_edit_of_an_ignored_field_alone_is_no_update(field: str) -> None:
    s = settings(field)
    bookmark = remembered([video(1)], s)
    edited = video(1, **{field: FIELD_VALUES[field][1]})
    delta = diff_items(bookmark, [edited], s)
    assert delta.changes == ()
    assert delta.counts.unchanged == 1
    # Another field's edit still counts, and the record carries every current value.
    other = "title" if field != "title" else "summary"
    both = (
        edited._replace(title="something else")
        if other == "title"
        else edited._replace(summary="something else")
    )
    [change] = diff_items(bookmark, [both], s).changes
    assert change.change_type == "updated"
    assert change.item == both


def test_the_fingerprint_and_delivery_id_depend_on_the_setting() -> None:
    item = video(1)
    assert fingerprint_bytes(item, ignored=("updated_at",)) != fingerprint_bytes(item)
    assert fingerprint_bytes(item, ignored=()) == fingerprint_bytes(item)
    bumped = video(1, updated_at=FIELD_VALUES["updated_at"][1])
    assert fingerprint_bytes(item, ignored=("updated_at",)) == fingerprint_bytes(
        bumped, ignored=("updated_at",)
    )
    first_run = replace(SETTINGS, first_run_mode="emit_all")
    [plain] = diff_items(None, [item], first_run).changes
    ignoring_settings = replace(first_run, ignored_changes=("updated_at",))
    [ignoring] = diff_items(None, [item], ignoring_settings).changes
    assert plain.fingerprint.startswith("v1:") and ignoring.fingerprint.startswith("v1:")
    assert plain.fingerprint != ignoring.fingerprint
    assert plain.delivery_id != ignoring.delivery_id
    # An ignored field missing from the item is not the same as one ignored.
    undated = video(1, updated_at=None)
    assert fingerprint_bytes(undated, ignored=("updated_at",)) != fingerprint_bytes(undated)


def test_an_ignored_text_field_may_hold_any_text() -> None:
    item = video(1, title="Caf\u00e9")
    assert fingerprint_bytes(item, ignored=("title",)) == fingerprint_bytes(
        video(1, title="Cafe\u0301 cr\u00e8me"), ignored=("title",)
    )


def test_turning_the_setting_on_gives_no_wave_of_updates() -> None:
    """Items remembered by the full hash read as unchanged, and their memory moves to
    the hash that leaves the ignored fields out."""
    items = [video(n) for n in range(5)]
    before = remembered(items, SETTINGS)
    for ignored in (("updated_at",), ("summary", "content_text"), tuple(FIELD_VALUES)):
        s = settings(*ignored)
        delta = diff_items(before, items, s)
        assert delta.changes == (), ignored
        assert delta.counts.unchanged == 5
        assert delta.remembered_items == remembered(items, s).items
        # From then on, the ignored fields' edits are no update.
        moved = FeedBookmark(success_at="x", items=delta.remembered_items)
        bumped = [video(n, **{ignored[0]: FIELD_VALUES[ignored[0]][1]}) for n in range(5)]
        assert diff_items(moved, bumped, s).changes == (), ignored


def test_the_first_run_with_the_setting_still_tells_an_edit_made_since_the_last_run() -> None:
    """The state keeps a hash, not the fields: a field that changed since the last run
    without the setting cannot be told from another edit. Once, then never again."""
    before = remembered([video(1)], SETTINGS)
    s = settings("updated_at")
    bumped = video(1, updated_at=FIELD_VALUES["updated_at"][1])
    delta = diff_items(before, [bumped], s)
    assert [c.change_type for c in delta.changes] == ["updated"]
    after = FeedBookmark(success_at="x", items=delta.remembered_items)
    assert kinds(after, [video(1, updated_at="2024-03-01T10:20:00Z")], s) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (("updated_at",), ()),  # turned off again
        (("summary",), ()),
        (("updated_at",), ("updated_at", "summary")),  # one field more
        (("summary", "updated_at"), ("updated_at",)),  # one field less
        (("summary", "content_text"), ("summary", "content_text", "updated_at")),
        (("summary", "content_text"), ()),  # turned off at once: not one step
    ],
    ids=lambda v: ",".join(v) or "none",
)
def test_changing_the_list_by_one_field_gives_no_wave_of_updates(
    before: tuple[str, ...], after: tuple[str, ...]
) -> None:
    items = [video(n) for n in range(5)]
    old = remembered(items, settings(*before))
    delta = diff_items(old, items, settings(*after))
    one_step = len(set(before) ^ set(after)) == 1 or not before
    if one_step:
        assert delta.changes == ()
        assert delta.remembered_items == remembered(items, settings(*after)).items
    else:  # documented: each remembered item comes out once
        assert [c.change_type for c in delta.changes] == ["updated"] * 5


def test_the_hashes_of_earlier_versions_still_count_with_fields_ignored() -> None:
    """A state from before tags were sorted reads as unchanged with the setting on too."""
    from tap_feeddelta.state import pack_items

    unsorted = video(1, tags=("zeta", "alpha"))
    [(key, _)] = unpack_items(remembered([unsorted], SETTINGS).items).items()
    legacy = fingerprint_bytes(
        unsorted, tags_in_document_order=True, keep_signatures=True, text_as_given=True
    )
    old_state = FeedBookmark(success_at="x", items=pack_items([(key, int.from_bytes(legacy[:4]))]))
    assert diff_items(old_state, [unsorted], settings("updated_at")).changes == ()


def test_items_that_differ_only_in_ignored_fields_are_one_item() -> None:
    """Two entries of one document with one id that differ only where the setting looks
    away are the same version of the item: the second is a repeat (dropped, counted)."""
    first = video(1)
    again = video(1, updated_at=FIELD_VALUES["updated_at"][1])
    s = settings("updated_at", first_run_mode="emit_all")
    delta = diff_items(None, [first, again], s)
    assert [c.item for c in delta.changes] == [first]
    assert delta.counts.duplicates == 1
    # Without the setting they are two versions, told apart.
    assert len(diff_items(None, [first, again], replace(s, ignored_changes=())).changes) == 2


# Items no id or link identifies: a notice known by its title, date and summary, and an
# episode known by its enclosure, whose host re-stitches the ads on every fetch.
def notice(views: int, **kw: Any) -> ParsedItem:
    values: dict[str, Any] = {
        "title": "Maintenance window",
        "published_at": "2024-01-01T10:00:00Z",
        "summary": f"Planned maintenance on Saturday. Views: {views}",
    }
    return ParsedItem(**{**values, **kw})


def dai_episode(fetch: int) -> ParsedItem:
    audio = f"https://traffic.megaphone.fm/ABC123.mp3?updated={1700000000 + fetch}"
    return ParsedItem(
        title="Episode 1",
        published_at="2024-01-01T10:00:00Z",
        summary="Show notes",
        enclosures=(Enclosure(audio, "audio/mpeg", 5_000_000 + fetch * 1111),),
    )


CHURNING = {
    "summary-counter": (notice, ("summary", "content_text")),
    "bumped-date": (
        lambda n: notice(0, published_at=None, updated_at=f"2024-03-01T10:{n:02d}:00Z"),
        ("updated_at",),
    ),
    "title-counter": (lambda n: notice(0, title=f"Maintenance window ({n} views)"), ("title",)),
    "dai-enclosure": (dai_episode, ("enclosures",)),
}


@pytest.mark.parametrize(("make", "ignored"), CHURNING.values(), ids=CHURNING.keys())
def test_an_ignored_field_identifies_no_item(make: Any, ignored: tuple[str, ...]) -> None:
    s = settings(*ignored)
    bookmark = remembered([make(1)], s)
    for fetch in (2, 3):
        delta = diff_items(bookmark, [make(fetch)], s)
        assert (delta.changes, delta.counts.unchanged) == ((), 1)
        bookmark = FeedBookmark(success_at="x", items=delta.remembered_items)
    [change] = diff_items(None, [make(4)], replace(s, first_run_mode="emit_all")).changes
    assert change.id_source == "derived"


@pytest.mark.parametrize(("make", "ignored"), CHURNING.values(), ids=CHURNING.keys())
def test_turning_the_setting_on_keeps_the_memory_of_items_it_identifies_otherwise(
    make: Any, ignored: tuple[str, ...]
) -> None:
    """The id moves once (it no longer holds the ignored field): the memory moves with
    it, so the item is not emitted again, and then the field's churn is quiet."""
    before = remembered([make(1)], SETTINGS)
    s = settings(*ignored)
    turned_on = diff_items(before, [make(1)], s)
    assert (turned_on.changes, turned_on.counts.unchanged) == ((), 1)
    assert turned_on.remembered_items == remembered([make(1)], s).items
    moved = FeedBookmark(success_at="x", items=turned_on.remembered_items)
    assert diff_items(moved, [make(2)], s).changes == ()


def test_without_the_setting_ids_are_as_before() -> None:
    """Ids move only with a field of theirs ignored (no wave for default users)."""
    first_run = replace(SETTINGS, first_run_mode="emit_all")
    items = [notice(1), dai_episode(1)]
    plain = [(c.item_id, c.id_source) for c in diff_items(None, items, first_run).changes]
    assert plain == [
        (
            derived_id(["Maintenance window", "2024-01-01T10:00:00Z", notice(1).summary or ""]),
            "derived",
        ),
        ("https://traffic.megaphone.fm/ABC123.mp3?updated=1700000001", "enclosure"),
    ]
    unrelated = replace(first_run, ignored_changes=("authors", "tags", "url"))
    assert [(c.item_id, c.id_source) for c in diff_items(None, items, unrelated).changes] == plain


def test_items_sharing_a_link_are_told_apart_without_their_ignored_titles() -> None:
    def status_page(views: int) -> list[ParsedItem]:
        return [
            ParsedItem(
                url="https://status.example/",
                title=f"Incident {n} ({views} views)",
                published_at=f"2024-01-0{n}T00:00:00Z",
                summary=f"Incident {n} resolved",
            )
            for n in (1, 2)
        ]

    s = settings("title")
    turned_on = diff_items(remembered(status_page(1), SETTINGS), status_page(1), s)
    assert (turned_on.changes, turned_on.counts.unchanged) == ((), 2)
    moved = FeedBookmark(success_at="x", items=turned_on.remembered_items)
    assert diff_items(moved, status_page(2), s).changes == ()
