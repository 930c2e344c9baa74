"""Pure change detection and the state codec: no network, no SDK."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.checkfacts import utc_text
from tap_feeddelta.delta import DeltaSettings, diff_items, newest_item_at
from tap_feeddelta.errors import StateError
from tap_feeddelta.fingerprints import fingerprint
from tap_feeddelta.models import Author, Enclosure, ParsedItem
from tap_feeddelta.state import (
    FeedBookmark,
    decode_bookmark,
    encode_bookmark,
    feed_items_state,
    index_partitions,
)

SETTINGS = DeltaSettings(monitor_id="m", feed_url="https://example.org/feed")


def item(n: int, **kw: object) -> ParsedItem:
    values: dict[str, object] = {
        "native_id": f"id-{n}",
        "native_id_source": "guid",
        "title": f"Title {n}",
        "published_at": f"2024-01-{n % 28 + 1:02d}T00:00:00Z",
    }
    values.update(kw)
    return ParsedItem(**values)  # type: ignore[arg-type]


def baseline(items: list[ParsedItem], **kw: object) -> FeedBookmark:
    delta = diff_items(None, items, replace(SETTINGS, **kw) if kw else SETTINGS)  # type: ignore[arg-type]
    return FeedBookmark(success_at="2024-01-01T00:00:00Z", items=delta.remembered_items)


def test_first_run_modes() -> None:
    items = [item(n) for n in range(10)]
    assert diff_items(None, items, SETTINGS).changes == ()
    every = diff_items(None, items, DeltaSettings("m", "u", first_run_mode="emit_all"))
    assert len(every.changes) == 10
    assert {c.change_type for c in every.changes} == {"new"}
    recent = diff_items(
        None, items, DeltaSettings("m", "u", first_run_mode="emit_recent", max_initial_items=3)
    )
    assert [c.item_id for c in recent.changes] == ["id-7", "id-8", "id-9"]
    assert recent.counts.remembered == 10


def test_a_bookmark_holding_only_failures_is_read_as_a_first_run() -> None:
    """A feed whose first checks failed has a partition with no baseline: its first
    document follows first_run_mode (a silent baseline here), not every item as new."""
    failed_only = FeedBookmark(failures=2, failed_at="2024-01-01T00:00:00Z")
    items = [item(n) for n in range(5)]
    delta = diff_items(failed_only, items, SETTINGS)
    assert delta.changes == ()
    assert delta.counts.remembered == 5
    recent = DeltaSettings("m", "u", first_run_mode="emit_recent", max_initial_items=2)
    assert [c.item_id for c in diff_items(failed_only, items, recent).changes] == [
        "id-3",
        "id-4",
    ]


def test_emit_recent_takes_the_newest_as_newest_item_at_does() -> None:
    """By the later of published and updated (an entry edited yesterday is news), and a
    date past ``dates_not_after`` (a typo, a wrong clock) does not make an item newest."""
    recent = DeltaSettings("m", "u", first_run_mode="emit_recent", max_initial_items=1)
    edited = [
        item(1, native_id="last-week", published_at="2024-03-01T00:00:00Z"),
        item(2, native_id="edited", published_at="2019-01-01T00:00:00Z",
             updated_at="2024-03-07T00:00:00Z"),
    ]  # fmt: skip
    ahead = [
        item(3, native_id="yesterday", published_at="2024-03-07T00:00:00Z"),
        item(4, native_id="typo", published_at="2099-01-01T00:00:00Z"),
        # its own date ahead, an edit before: the edit is its newest date
        item(5, native_id="edit-of-typo", published_at="2099-01-01T00:00:00Z",
             updated_at="2024-03-06T00:00:00Z"),
    ]  # fmt: skip
    not_after = "2024-03-09T00:00:00Z"
    picks = [
        [c.item_id for c in diff_items(None, items, recent, dates_not_after=not_after).changes]
        for items in (edited, ahead)
    ]
    assert picks == [["edited"], ["yesterday"]]
    two = DeltaSettings("m", "u", first_run_mode="emit_recent", max_initial_items=2)
    picked = diff_items(None, ahead, two, dates_not_after=not_after).changes
    assert [c.item_id for c in picked] == ["yesterday", "edit-of-typo"]
    # An item dated only ahead ranks as an undated one: after every dated one, in
    # document order.
    only_ahead = [
        item(7, published_at=None),
        ahead[1],
        item(6, published_at="2020-01-01T00:00:00Z"),
    ]
    picked = diff_items(None, only_ahead, two, dates_not_after=not_after).changes
    assert [c.item_id for c in picked] == ["id-7", "id-6"]
    assert newest_item_at(ahead, not_after) == "2024-03-07T00:00:00Z"


def test_new_updated_unchanged() -> None:
    items = [item(n) for n in range(3)]
    bookmark = baseline(items)
    later = [item(9), item(0, title="Title 0, fixed"), item(1), item(2)]
    delta = diff_items(bookmark, later, SETTINGS)
    assert [(c.item_id, c.change_type) for c in delta.changes] == [
        ("id-9", "new"),
        ("id-0", "updated"),
    ]
    assert (delta.counts.new, delta.counts.updated, delta.counts.unchanged) == (1, 1, 2)


def test_missing_items_are_not_deletions_and_stay_remembered() -> None:
    bookmark = baseline([item(n) for n in range(3)])
    delta = diff_items(bookmark, [item(2)], SETTINGS)
    assert delta.changes == ()
    again = diff_items(
        FeedBookmark(success_at="x", items=delta.remembered_items), [item(0), item(2)], SETTINGS
    )
    assert again.changes == ()  # id-0 came back unchanged: not new


def test_identity_falls_back_to_url_then_derived() -> None:
    by_url = ParsedItem(url="https://example.org/a", title="A")
    derived = ParsedItem(title="B", summary="b")
    delta = diff_items(None, [by_url, derived], DeltaSettings("m", "u", first_run_mode="emit_all"))
    assert [c.id_source for c in delta.changes] == ["url", "derived"]
    assert delta.changes[0].item_id == "https://example.org/a"
    assert "derived_id" in {i.code for i in delta.changes[1].issues}


def test_a_repeated_id_with_other_content_is_another_item() -> None:
    delta = diff_items(
        None,
        [item(1, title="first"), item(1, title="second"), item(1, title="first")],
        DeltaSettings("m", "u", first_run_mode="emit_all"),
    )
    assert [(c.item.title, c.id_source) for c in delta.changes] == [
        ("first", "derived"),
        ("second", "derived"),
    ]
    assert "duplicate_id" in {i.code for i in delta.issues}  # the exact repeat


def test_deferred_changes_are_not_remembered() -> None:
    items = [item(n) for n in range(5)]
    s = DeltaSettings("m", "u", first_run_mode="emit_all", max_items_per_run=2)
    first = diff_items(None, items, s)
    assert (first.counts.emitted, first.counts.deferred, first.counts.remembered) == (2, 3, 2)
    second = diff_items(FeedBookmark(success_at="x", items=first.remembered_items), items, s)
    assert [c.item_id for c in second.changes] == ["id-2", "id-3"]


def test_start_date_filters_dated_items_only() -> None:
    items = [item(1), item(20), ParsedItem(native_id="undated", native_id_source="guid")]
    s = DeltaSettings("m", "u", first_run_mode="emit_all", start_date="2024-01-10T00:00:00Z")
    delta = diff_items(None, items, s)
    assert [c.item_id for c in delta.changes] == ["id-20", "undated"]
    assert delta.counts.remembered == 3


def test_fingerprint_ignores_nothing_visible() -> None:
    base = item(1, authors=(Author(name="A"),))
    assert fingerprint(base) == fingerprint(item(1, authors=(Author(name="A"),)))
    assert fingerprint(base) != fingerprint(item(1, authors=(Author(name="B"),)))
    assert fingerprint(base).startswith("v1:")


def test_state_bound() -> None:
    items = [item(n) for n in range(250)]
    delta = diff_items(None, items, DeltaSettings("m", "u", max_state_items=100))
    assert delta.counts.remembered == 100
    assert len(delta.remembered_items) == 100 * 12


def dated(n: int, **kw: object) -> ParsedItem:
    """Item ``n`` published ``n`` hours into 2024: a higher number is a newer item."""
    at = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(hours=n)
    return item(n, published_at=at.strftime("%Y-%m-%dT%H:%M:%SZ"), **kw)


def test_a_document_longer_than_max_state_items_tracks_its_newest_items() -> None:
    """A podcast archive listing episode 1 first, longer than max_state_items: the episode
    appended at its end is new, and emit_recent picks the newest by date."""
    s = DeltaSettings("m", "u", max_state_items=100)
    archive = [dated(n) for n in range(250)]
    first = diff_items(None, archive, s)
    assert "state_trimmed" in {i.code for i in first.issues}
    bookmark = FeedBookmark(success_at="x", items=first.remembered_items)
    delta = diff_items(bookmark, [*archive, dated(250)], s)
    assert [(c.item_id, c.change_type) for c in delta.changes] == [("id-250", "new")]
    assert (delta.counts.unchanged, delta.counts.remembered) == (250, 100)
    recent = DeltaSettings("m", "u", first_run_mode="emit_recent", max_initial_items=3,
                           max_state_items=100)  # fmt: skip
    picked = diff_items(None, archive, recent).changes
    assert [c.item_id for c in picked] == ["id-247", "id-248", "id-249"]


def test_an_undated_document_longer_than_max_state_items_tracks_its_first_items() -> None:
    s = DeltaSettings("m", "u", max_state_items=100)
    undated = [item(n, published_at=None) for n in range(150)]
    bookmark = FeedBookmark(success_at="x", items=diff_items(None, undated, s).remembered_items)
    delta = diff_items(bookmark, [item(900, published_at=None), *undated], s)
    assert [c.item_id for c in delta.changes] == ["id-900"]  # the first is tracked
    delta = diff_items(bookmark, [*undated, item(901, published_at=None)], s)
    assert delta.changes == ()  # the last is not, as before


def test_a_state_that_tracked_the_first_items_of_a_long_archive_loses_nothing() -> None:
    """An earlier version tracked the first max_state_items items in document order: the
    oldest of an oldest-first archive. Its newest items were never emitted; now tracked,
    they come out once as new, and no remembered item looks updated."""
    s = DeltaSettings("m", "u", max_state_items=100)
    archive = [dated(n) for n in range(150)]
    earlier = baseline(archive[:100])  # what that version kept
    delta = diff_items(earlier, archive, s)
    assert {c.change_type for c in delta.changes} == {"new"}
    assert [c.item_id for c in delta.changes] == [f"id-{n}" for n in range(100, 150)]
    after = diff_items(FeedBookmark(success_at="x", items=delta.remembered_items), archive, s)
    assert after.changes == ()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=40), max_size=40),
    st.lists(st.integers(min_value=0, max_value=40), max_size=40),
)
def test_second_identical_run_has_no_changes(first: list[int], second: list[int]) -> None:
    s = DeltaSettings("m", "u", first_run_mode="emit_all", max_state_items=100)
    one = diff_items(None, [item(n) for n in first], s)
    bookmark = FeedBookmark(success_at="x", items=one.remembered_items)
    two = diff_items(bookmark, [item(n) for n in second], s)
    bookmark2 = FeedBookmark(success_at="x", items=two.remembered_items)
    three = diff_items(bookmark2, [item(n) for n in second], s)
    assert three.changes == ()
    assert {c.item_id for c in two.changes} == {f"id-{n}" for n in set(second) - set(first)}


_DATE_TEXT = st.from_regex(r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z\Z")
# Every field of a bookmark, each with values the codec accepts: a field left out here is
# a field the round trip cannot see dropped (test_the_round_trip_covers_every_field).
_BOOKMARK_FIELDS: dict[str, st.SearchStrategy[object]] = {
    "etag": st.none() | st.text(max_size=50),
    "last_modified": st.none() | st.text(max_size=40),
    "final_url": st.none() | st.text(max_size=80),
    "final_url_hash": st.none() | st.from_regex(r"\Av1:[0-9a-f]{16}\Z"),
    "advertised_url_hash": st.none() | st.from_regex(r"\Av1:[0-9a-f]{16}\Z"),
    "page_etag": st.none() | st.text(max_size=50),
    "page_last_modified": st.none() | st.text(max_size=40),
    "page_url_hash": st.none() | st.from_regex(r"\Av1:[0-9a-f]{16}\Z"),
    "title": st.none() | st.text(max_size=60),
    "format": st.none() | st.sampled_from(["rss-2.0", "atom-1.0", "json-feed-1.1"]),
    "checked_at": st.none() | st.just("2024-01-01T00:00:00.123456Z"),
    "success_at": st.none() | st.just("2024-01-01T00:00:00Z"),
    "failed_at": st.none() | st.just("2024-01-02T03:04:05Z"),
    "retry_after_at": st.none() | _DATE_TEXT,
    "newest_item_at": st.none() | _DATE_TEXT,
    "stale_since": st.none() | _DATE_TEXT,
    "largest_document": st.none() | st.integers(0, 10_000),
    "failures": st.integers(0, 1_500_000),
    "new_held_back": st.binary(max_size=40).map(lambda b: b[: len(b) // 4 * 4]),
    "items": st.binary(max_size=120).map(lambda b: b[: len(b) // 12 * 12]),
}


def test_the_round_trip_covers_every_field() -> None:
    """A field missing from the strategy below could be dropped by the codec unnoticed
    (largest_document once was: a feed cut short for a run then forgot its history)."""
    assert set(_BOOKMARK_FIELDS) == {f.name for f in fields(FeedBookmark)}


@settings(max_examples=60, deadline=None)
@given(st.builds(FeedBookmark, **_BOOKMARK_FIELDS))
def test_bookmark_round_trip(bookmark: FeedBookmark) -> None:
    encoded = json.loads(json.dumps(encode_bookmark(bookmark)))
    assert decode_bookmark(encoded, "p") == bookmark


@pytest.mark.parametrize(
    "partitions",
    [
        "nope",
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 2, "items": ""}],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "!!!!"}],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "", "etag": 5}],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "", "bogus": 1}],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "", "checked_at": "x"}],
        [
            {
                "context": {"monitor_id": "m", "feed_url": "u"},
                "v": 1,
                "items": "",
                "checked_at": "2024-01-01T00:00:00Z\n",  # a date and a line break
            }
        ],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "", "failures": -1}],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "", "failures": "2"}],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "", "failures": True}],
        [
            {
                "context": {"monitor_id": "m", "feed_url": "u"},
                "v": 1,
                "items": "",
                "new_held_back": 15,  # a count: the ids are kept
            }
        ],
        [
            {
                "context": {"monitor_id": "m", "feed_url": "u"},
                "v": 1,
                "items": "",
                "new_held_back": "AAAAAAA=",  # five bytes: a cut id
            }
        ],
        [
            {
                "context": {"monitor_id": "m", "feed_url": "u"},
                "v": 1,
                "items": "",
                "new_held_back": "AAAA" * 13_336,  # 10,002 ids: more than items
            }
        ],
        [
            {
                "context": {"monitor_id": "m", "feed_url": "u"},
                "v": 1,
                "items": "",
                "final_url_hash": "https://example.org/feed?token=1",
            }
        ],
        [
            {
                "context": {"monitor_id": "m", "feed_url": "u"},
                "v": 1,
                "items": "",
                "advertised_url_hash": "v1:ABC",
            }
        ],
        [
            {
                "context": {"monitor_id": "m", "feed_url": "u"},
                "v": 1,
                "items": "",
                "page_url_hash": "https://example.org/blog",
            }
        ],
        [{"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": "", "page_etag": 5}],
        [
            {"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": ""},
            {"context": {"monitor_id": "m", "feed_url": "u"}, "v": 1, "items": ""},
        ],
    ],
)
def test_damaged_state_is_refused(partitions: object) -> None:
    with pytest.raises(StateError):
        index_partitions({"partitions": partitions})


def test_ids_fingerprints_and_state_bytes_never_change_between_versions() -> None:
    """delivery_id is the target's primary key and the state is kept across upgrades:
    the same item must give the same values in every version of the tap."""
    from tap_feeddelta.fingerprints import delivery_id
    from tap_feeddelta.models import Enclosure

    items = [
        ParsedItem(
            "id-1", "guid", "https://example.org/1", "Caf\u00e9 title", "Summary", None,
            (Author("Jane", "j@example.org", None),), ("a", "b"), "2024-01-02T03:04:05Z", None,
            (Enclosure("https://example.org/a.mp3", "audio/mpeg", 123),),
            "/rss/channel/item[1]", (),
        ),
        ParsedItem(None, None, None, "No id", None, None, (), (), None, None, (), "", ()),
    ]  # fmt: skip
    settings = DeltaSettings("default", "https://example.org/feed", first_run_mode="emit_all")
    delta = diff_items(None, items, settings)
    assert [(c.item_id, c.fingerprint, c.delivery_id) for c in delta.changes] == [
        ("id-1", "v1:ac63235459e99064d5c46436ae84f4ac", "3e53cc6ef42d09cc43a0d89d56f3018c"),
        (
            "derived:12c0d3ee4bee5e76332a9d0342ccd818",
            "v1:85c95296a916a3f61796595b0d2cac30",
            "4ba8ba708aae5c3e3f978a09c45d5321",
        ),
    ]
    for change in delta.changes:
        assert change.delivery_id == delivery_id(
            "default", "https://example.org/feed", change.item_id, change.fingerprint
        )
    assert delta.remembered_items.hex() == "5aaebc19545226d2ac63235470475a655b5c5dde85c95296"


@given(
    st.datetimes(
        min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
    )
)
def test_utc_text_is_the_strftime_shape(moment: datetime) -> None:
    # (before the year 1000 strftime does not pad the year; run times are never there)
    assert utc_text(moment) == moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert utc_text(moment, micro=True) == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.mark.parametrize(
    ("tap_state", "says"),
    [
        ([], "must be a JSON object"),
        ({"type": "STATE", "value": {"bookmarks": {}}}, "a STATE message"),
        ({"singer_state": {"bookmarks": {}}}, "Meltano's stored form"),
        ({"something": 1}, "has none"),
        ({"bookmarks": {"feed_items": []}}, "bookmarks.feed_items must be an object"),
        ({"bookmarks": {"feed_health": 1}}, "bookmarks.feed_health must be an object"),
        # another tap's streams, with or without this tap's own beside them
        (
            {"bookmarks": {"orders": {"replication_key": "id", "replication_key_value": 5}}},
            r"its bookmarks hold streams this tap never writes \['orders'\] \(another tap's state",
        ),
        (
            {"bookmarks": {"feed_items": {"partitions": []}, "tap-x": 1}},
            r"never writes \['tap-x'\] \(another",
        ),
        (
            {"bookmarks": {f"s{n}\x1b[2J" + "x" * 60: {} for n in range(7)}},
            r"never writes \['s0\?\[2Jx{34}…', ('s[1-4]\?\[2Jx{34}…', ){4}…\] \(another",
        ),
        ({"bookmarks": {"feed_health": {"partitions": [1]}}}, "list of objects"),
        # the SDK's own reading of it fails with a traceback
        ({"bookmarks": None}, "'bookmarks' must be an object"),
        (
            {
                "bookmarks": {
                    "feed_items": {"replication_key_value": "2024-01-01", "partitions": []}
                }
            },
            r"keys this tap never writes \['replication_key_value'\]",
        ),
    ],
)
def test_a_state_of_another_shape_is_refused_not_read_as_empty(
    tap_state: object, says: str
) -> None:
    with pytest.raises(StateError, match=says):
        feed_items_state(tap_state)


@pytest.mark.parametrize("tap_state", [{}, {"currently_syncing": None}, {"bookmarks": {}}])
def test_an_empty_state_is_no_state(tap_state: object) -> None:
    assert feed_items_state(tap_state) is None


def test_what_singer_sdk_writes_into_a_state_is_taken() -> None:
    """A run's own state: currently_syncing, feed_health's empty bookmark, the progress
    keys the SDK writes into feed_items' during a run (a SIGTERM's STATE)."""
    stream_state = {
        "partitions": [],
        "progress_markers": {"Note": "Progress is not resumable if interrupted."},
    }
    tap_state = {
        "currently_syncing": "feed_items",
        "bookmarks": {"feed_items": stream_state, "feed_health": {}},
    }
    assert feed_items_state(tap_state) is stream_state
    assert feed_items_state({"bookmarks": {"feed_health": {}}}) is None


def test_a_capped_run_emits_the_oldest_changes_first_and_drains_the_backlog() -> None:
    """With max_items_per_run 2 and a feed publishing 2 a run after a burst of 5, the
    deferred posts go out first and none leaves the 10-item window undelivered."""
    s = DeltaSettings("m", "u", max_items_per_run=2)
    window = 10
    published = list(range(10))
    bookmark = baseline([item(n) for n in published[-window:]])
    delivered: list[int] = []
    for burst in (5, 2, 2, 2, 2, 2, 2):
        published += range(published[-1] + 1, published[-1] + 1 + burst)
        document = [item(n, published_at=f"2024-{n // 28 + 1:02d}-{n % 28 + 1:02d}T00:00:00Z")
                    for n in reversed(published[-window:])]  # fmt: skip
        delta = diff_items(bookmark, document, s)
        delivered += [int(c.item_id.removeprefix("id-")) for c in delta.changes]
        # emitted in document order (newest first), chosen oldest first
        assert [c.item_id for c in delta.changes] == sorted(
            (c.item_id for c in delta.changes), key=lambda i: -int(i[3:])
        )
        bookmark = FeedBookmark(success_at="x", items=delta.remembered_items)
    assert sorted(delivered) == published[10:-3]  # the last 3 are still waiting, in order


@pytest.mark.parametrize("oldest_listed_first", [False, True], ids=["newest-first", "oldest-first"])
def test_items_of_one_date_are_ranked_by_their_place_in_the_document(
    oldest_listed_first: bool,
) -> None:
    """Four posts of one day (a date-only feed) after two of the day before. A capped run
    takes the two listed as oldest (the last in a feed that lists newest first, the first
    in one that lists oldest first, as its dates show); emit_recent the two newest."""

    def post(n: int) -> ParsedItem:
        return item(n, published_at="2024-06-03T00:00:00Z" if n >= 2 else "2024-06-02T00:00:00Z")

    def listed(numbers: range) -> list[ParsedItem]:
        posts = [post(n) for n in numbers]
        return posts if oldest_listed_first else posts[::-1]

    bookmark = baseline(listed(range(2)))
    capped = diff_items(bookmark, listed(range(6)), DeltaSettings("m", "u", max_items_per_run=2))
    assert sorted(c.item_id for c in capped.changes) == ["id-2", "id-3"]
    recent = DeltaSettings("m", "u", first_run_mode="emit_recent", max_initial_items=2)
    picked = diff_items(None, listed(range(6)), recent).changes
    assert sorted(c.item_id for c in picked) == ["id-4", "id-5"]


def test_the_items_tracked_of_a_long_document_do_not_turn_with_its_order() -> None:
    """140 posts of one date and older ones after them, longer than max_state_items: an
    older item appended, which turns how the dates say the document is listed, lets go of
    no tracked post (40 unchanged ones came out ``new``)."""
    s = DeltaSettings("m", "u", max_state_items=100)

    def document(tail_days: list[int]) -> list[ParsedItem]:
        posts = [item(n, published_at="2024-01-05T00:00:00Z") for n in range(140)]
        return posts + [
            item(200 + i, published_at=f"2024-01-0{day}T00:00:00Z")
            for i, day in enumerate(tail_days)
        ]

    delta = diff_items(None, document([1, 2]), s)
    for tail in ([1, 2, 3], [1, 2, 3, 1]):
        state = FeedBookmark(success_at="2024-01-06T00:00:00Z", items=delta.remembered_items)
        delta = diff_items(state, document(tail), s)
        # The appended items are older than the 100 tracked: none is new to the state.
        assert delta.changes == ()


def test_a_new_undated_item_on_top_of_a_long_mostly_undated_feed_is_tracked() -> None:
    """A newest-first feed of 120 posts past max_state_items, two of them dated and those
    two rising: ranked by that guess, undated posts were tracked from the end, and the new
    one on top was counted unchanged, never emitted."""
    s = DeltaSettings("m", "u", max_state_items=100)

    def post(n: int) -> ParsedItem:
        dates = {60: "2031-02-03T10:00:00Z", 61: "2031-02-04T10:00:00Z"}
        return item(n, published_at=dates.get(n))

    posts = [post(n) for n in range(120)]
    state = FeedBookmark(
        success_at="2031-02-05T00:00:00Z", items=diff_items(None, posts, s).remembered_items
    )
    delta = diff_items(state, [item(999, published_at=None), *posts], s)
    assert [(c.change_type, c.item_id) for c in delta.changes] == [("new", "id-999")]


def test_a_capped_run_emits_new_items_before_updates() -> None:
    """A show drops an analytics prefix from every enclosure the week it publishes two
    episodes: the wave of updates waits behind the new episodes (those oldest first), the
    newest updates first; every deferred update comes on a later run."""
    s = DeltaSettings("m", "u", max_items_per_run=5)

    def episode(n: int, host: str) -> ParsedItem:
        return dated(n, enclosures=(Enclosure(f"https://{host}/{n}.mp3", "audio/mpeg"),))

    bookmark = baseline([episode(n, "chrt.example/track/media.example") for n in range(19, -1, -1)])
    moved = [episode(n, "media.example") for n in range(21, -1, -1)]
    delta = diff_items(bookmark, moved, s)
    assert [(c.item_id, c.change_type) for c in delta.changes] == [
        ("id-21", "new"),
        ("id-20", "new"),
        ("id-19", "updated"),
        ("id-18", "updated"),
        ("id-17", "updated"),
    ]  # in document order
    assert delta.counts.deferred == 17
    delivered = [c.item_id for c in delta.changes]
    while delta.counts.deferred:
        bookmark = FeedBookmark(success_at="x", items=delta.remembered_items)
        delta = diff_items(bookmark, moved, s)
        assert {c.change_type for c in delta.changes} == {"updated"}
        delivered += [c.item_id for c in delta.changes]
    assert sorted(delivered) == sorted(f"id-{n}" for n in range(22))


def test_undated_new_items_past_the_cap_go_out_from_the_end_of_the_document() -> None:
    """Without dates, the end of a newest-first document is its oldest part: those go
    first, or a feed that publishes at the cap's pace would push its backlog back run
    after run until it leaves the feed unseen."""
    capped = DeltaSettings("m", "u", max_items_per_run=2)
    bookmark = baseline([item(0, published_at=None)])
    document = [item(n, published_at=None) for n in range(1, 6)]
    delta = diff_items(bookmark, document, capped)
    assert [c.item_id for c in delta.changes] == ["id-4", "id-5"]
    assert delta.counts.deferred == 3


def test_start_date_holds_back_old_new_items_but_never_an_edit() -> None:
    s = DeltaSettings("m", "u", start_date="2024-06-01T00:00:00Z")
    old = item(1, published_at="2024-01-01T00:00:00Z")
    bookmark = baseline([old])
    edited = item(1, published_at="2024-01-01T00:00:00Z", title="Corrected")
    backdated_new = item(2, published_at="2024-01-05T00:00:00Z")
    touched_new = item(3, published_at="2024-01-05T00:00:00Z", updated_at="2024-07-01T00:00:00Z")
    delta = diff_items(bookmark, [edited, backdated_new, touched_new], s)
    assert [(c.item_id, c.change_type) for c in delta.changes] == [
        ("id-1", "updated"),
        ("id-3", "new"),
    ]


def test_history_is_bounded_by_the_largest_document_not_only_by_max_state_items() -> None:
    """A 20-item feed that publishes 5 items a run keeps 4 times its document or 100
    items more, whichever is more: not the 5,000 of max_state_items."""
    bookmark: FeedBookmark | None = None
    for run in range(100):
        document = [item(n) for n in range(run * 5, run * 5 + 20)]
        delta = diff_items(bookmark, document, SETTINGS)
        bookmark = FeedBookmark(
            success_at="x", items=delta.remembered_items, largest_document=delta.largest_document
        )
    assert delta.counts.remembered == 120
    assert delta.largest_document == 20


def test_a_document_cut_short_for_a_run_loses_no_memory() -> None:
    full = [item(n) for n in range(1000)]
    first = diff_items(None, full, SETTINGS)
    bookmark = FeedBookmark(
        success_at="x", items=first.remembered_items, largest_document=first.largest_document
    )
    glitch = diff_items(bookmark, full[:10], SETTINGS)
    assert glitch.largest_document == 1000
    bookmark = FeedBookmark(
        success_at="x", items=glitch.remembered_items, largest_document=glitch.largest_document
    )
    assert diff_items(bookmark, full, SETTINGS).changes == ()


def test_another_feed_found_through_a_web_page_is_read_as_on_a_first_run() -> None:
    bookmark = baseline([item(n) for n in range(5)])
    comments = [item(n, native_id=f"comment-{n}") for n in range(30)]
    delta = diff_items(bookmark, comments, SETTINGS, from_another_feed=True)
    assert delta.changes == ()  # baseline_only: a silent baseline
    assert "feed_discovered" in {i.code for i in delta.issues}
    assert delta.counts.remembered == 35  # and the first feed's items stay remembered
    # The same feed at a new address (its items known) is read as usual.
    moved = [item(9)] + [item(n) for n in range(5)]
    assert [c.item_id for c in diff_items(bookmark, moved, SETTINGS, from_another_feed=True)
            .changes] == ["id-9"]  # fmt: skip


def test_tags_in_another_order_are_no_update() -> None:
    bookmark = baseline([item(1, tags=("python", "release", "news"))])
    shuffled = item(1, tags=("news", "python", "release"))
    assert diff_items(bookmark, [shuffled], SETTINGS).changes == ()
    renamed = item(1, tags=("news", "python", "releases"))
    assert [c.change_type for c in diff_items(bookmark, [renamed], SETTINGS).changes] == ["updated"]


def test_a_state_from_before_tags_were_sorted_sends_no_wave_of_updates() -> None:
    """Versions before kept the hash of tags in document order: the same content must
    still read as unchanged, and the new memory holds the new hash."""
    from tap_feeddelta.fingerprints import fingerprint_bytes
    from tap_feeddelta.state import pack_items, unpack_items

    unsorted = item(1, tags=("zeta", "alpha"))
    current = baseline([unsorted])
    [(key, _)] = unpack_items(current.items).items()
    legacy_hash = int.from_bytes(fingerprint_bytes(unsorted, tags_in_document_order=True)[:4])
    old_state = FeedBookmark(success_at="x", items=pack_items([(key, legacy_hash)]))
    delta = diff_items(old_state, [unsorted], SETTINGS)
    assert delta.changes == ()
    assert delta.remembered_items == current.items
    edited = item(1, tags=("zeta", "alpha"), title="Edited")
    assert len(diff_items(old_state, [edited], SETTINGS).changes) == 1


@pytest.mark.parametrize(
    "respelled",
    [
        "Cafe\u0301 cre\u0300me",  # NFD: "e" and a combining accent
        "Caf\u00e9 cr\u00e8\u200bme",  # a zero-width space
        "\ufeffCaf\u00e9 cr\u00e8me",  # a BOM
        "Caf\u00e9 cr\u00e8\u00adme",  # a soft hyphen
        "\u200fCaf\u00e9 cr\u00e8me\u200e",  # direction marks
    ],
)
def test_an_edit_no_reader_can_see_is_no_update(respelled: str) -> None:
    bookmark = baseline([item(1, title="Caf\u00e9 cr\u00e8me")])
    assert diff_items(bookmark, [item(1, title=respelled)], SETTINGS).changes == ()
    # ...and the other way round.
    back = baseline([item(1, title=respelled)])
    assert diff_items(back, [item(1, title="Caf\u00e9 cr\u00e8me")], SETTINGS).changes == ()
    # A visible edit, and a joiner that changes how a text renders, are updates.
    for edited in ("Cafe cr\u00e8me", "Caf\u00e9 cr\u00e8me\u200d\U0001f600"):
        changes = diff_items(bookmark, [item(1, title=edited)], SETTINGS).changes
        assert [c.change_type for c in changes] == ["updated"], edited


def test_a_state_from_before_text_was_hashed_as_read_sends_no_wave_of_updates() -> None:
    from tap_feeddelta.fingerprints import fingerprint_bytes
    from tap_feeddelta.state import pack_items, unpack_items

    decomposed = item(1, title="Cafe\u0301\u200b", tags=("zeta", "alpha"))
    current = baseline([decomposed])
    [(key, _)] = unpack_items(current.items).items()
    for legacy in (
        fingerprint_bytes(decomposed, text_as_given=True),
        fingerprint_bytes(decomposed, text_as_given=True, tags_in_document_order=True),
    ):
        old_state = FeedBookmark(
            success_at="x", items=pack_items([(key, int.from_bytes(legacy[:4]))])
        )
        delta = diff_items(old_state, [decomposed], SETTINGS)
        assert delta.changes == ()
        assert delta.remembered_items == current.items


def test_the_newest_item_date_is_the_latest_one_stated_and_never_a_future_one() -> None:
    from tap_feeddelta.delta import newest_item_at

    limit = "2026-03-02T12:00:00Z"  # the check time and a day
    edited = ParsedItem("a", published_at="2024-01-01T00:00:00Z", updated_at="2026-03-01T09:00:00Z")
    typo = ParsedItem("b", published_at="2099-01-01T00:00:00Z")
    half_typo = ParsedItem(
        "c", published_at="2025-05-05T00:00:00Z", updated_at="2099-01-01T00:00:00Z"
    )
    undated = ParsedItem("d")
    assert newest_item_at([edited, typo, undated], limit) == "2026-03-01T09:00:00Z"
    assert newest_item_at([typo, half_typo], limit) == "2025-05-05T00:00:00Z"
    assert newest_item_at([typo, undated], limit) is None
    assert newest_item_at([ParsedItem("e", updated_at=limit)], limit) == limit


def test_a_capped_run_lets_an_edit_of_a_recent_item_through_churn_of_the_archive() -> None:
    """Dynamic ad insertion: a host announces another enclosure length (and query) for
    every episode on every fetch, more episodes than the cap. The host fixes the newest
    episode's title: the fix comes out on that run, not behind the archive's churn."""
    s = DeltaSettings("m", "u", max_items_per_run=5)

    def episode(n: int, fetch: int, title: str | None = None) -> ParsedItem:
        url = f"https://cdn.example/{n}.mp3?updated={fetch}"
        return dated(n, title=title or f"Ep {n}",
                     enclosures=(Enclosure(url, "audio/mpeg", 1000 + fetch),))  # fmt: skip

    bookmark = baseline([episode(n, 0) for n in range(19, -1, -1)])
    for fetch in (1, 2, 3):
        title = "Ep 19: fixed" if fetch == 2 else None
        document = [episode(19, fetch, title)] + [episode(n, fetch) for n in range(18, -1, -1)]
        delta = diff_items(bookmark, document, s)
        # the newest updates go first; still written in document order
        assert [c.item_id for c in delta.changes] == [f"id-{n}" for n in range(19, 14, -1)]
        assert delta.counts.deferred == 15
        if fetch == 2:
            assert delta.changes[0].item.title == "Ep 19: fixed"
        bookmark = FeedBookmark(success_at="x", items=delta.remembered_items)


def test_a_page_that_switches_back_to_a_feed_read_before_says_so() -> None:
    """A switch to a feed whose items are remembered (a theme update reverted, the feed
    at a new address) was told only as every discovery is."""
    bookmark = baseline([item(n) for n in range(5)])
    back = [item(9)] + [item(n) for n in range(5)]
    delta = diff_items(bookmark, back, SETTINGS, from_another_feed=True)
    assert [c.item_id for c in delta.changes] == ["id-9"]
    [issue] = [i for i in delta.issues if i.code == "feed_discovered"]
    assert "another feed than before" in issue.message
    assert "remembered" in issue.message
    # The same feed as before: nothing to tell.
    same = diff_items(bookmark, back, SETTINGS)
    assert "feed_discovered" not in {i.code for i in same.issues}
