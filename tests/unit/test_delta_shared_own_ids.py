"""Items that share an id but have an id-quality value of their own (a podcast whose every
<link> is the show's page, each episode with its own enclosure; a CMS giving every item
one guid, each with its own link) are known by that value: a title fix is an update.
A state written before (title ids) is read as written."""

from __future__ import annotations

import dataclasses
import random

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.fingerprints import content_id, fingerprint_bytes, key_hash, short_hash, title_id
from tap_feeddelta.models import Enclosure, ParsedItem
from tap_feeddelta.state import FeedBookmark, pack_items
from tests.unit.test_delta_identity import EMIT_ALL, HOME, Runs, changes, incident

BASELINE = DeltaSettings("m", "https://show.example/feed.xml")
SHOW = "https://show.example/"
PODTRAC = "http://dts.podtrac.com/redirect.mp3/"


def episode(n: int, title: str | None = None, **kw: object) -> ParsedItem:
    """A podcast episode without guid whose <link> is the show's page."""
    values: dict[str, object] = {
        "url": SHOW,
        "title": title or f"Ep {n}",
        "summary": f"Notes {n}.",
        "published_at": f"2026-10-{n:02d}T07:00:00Z",
        "enclosures": (Enclosure(f"https://cdn.example/ep{n}.mp3", "audio/mpeg", n * 1000),),
    }
    values.update(kw)
    return ParsedItem(**values)  # type: ignore[arg-type]


def podcast(fixed: bool = False) -> list[ParsedItem]:
    return [
        episode(3, "Ep 3: Hello"),
        episode(2, "Ep 2: World news" if fixed else "Ep 2: Wrold news"),
        episode(1, "Ep 1: Pilot"),
    ]


def test_a_title_fix_of_an_episode_sharing_its_link_is_an_update_under_its_id() -> None:
    runs = Runs(BASELINE)
    assert runs.run(podcast()).changes == ()
    assert runs.run(podcast()).changes == ()
    fixed = runs.run(podcast(fixed=True))
    [change] = fixed.changes
    assert (change.change_type, change.item.title) == ("updated", "Ep 2: World news")
    assert (change.item_id, change.id_source) == ("https://cdn.example/ep2.mp3", "enclosure")
    assert "shared_id" in {issue.code for issue in change.issues}
    assert fixed.counts.remembered == 3


def test_items_sharing_a_guid_are_known_by_their_own_links() -> None:
    items = [
        ParsedItem("post", "guid", f"https://blog.example/{n}", f"Post {n}", "v1")
        for n in (1, 2, 3)
    ]
    runs = Runs(EMIT_ALL)
    first = runs.run(items)
    assert [(c.item_id, c.id_source) for c in first.changes] == [
        (f"https://blog.example/{n}", "url") for n in (1, 2, 3)
    ]
    retitled = runs.run([items[0], items[1]._replace(title="Post 2 (fixed)"), items[2]])
    assert [(c.change_type, c.item_id) for c in retitled.changes] == [
        ("updated", "https://blog.example/2")
    ]


def test_a_status_page_without_own_values_keeps_title_ids() -> None:
    """Shared link and no enclosure: told apart by title and date, as before (a title
    fix is a new item)."""
    runs = Runs(EMIT_ALL)
    first = runs.run([incident(2), incident(1)])
    assert [c.item_id for c in first.changes] == [title_id(incident(n), HOME) for n in (2, 1)]
    assert {c.id_source for c in first.changes} == {"derived"}
    assert changes(runs.run([incident(2, title="Incident 2 (fixed)"), incident(1)])) == [
        ("new", "Incident 2 (fixed)")
    ]


def test_a_value_another_item_has_too_is_not_own() -> None:
    """Episodes 1 and 2 share the link and one file (a re-run): their enclosure tells
    them apart from nothing, so they take title ids; episode 3 its enclosure. A link that
    is another item's guid is not its own either."""
    rerun = episode(1).enclosures
    items = [episode(3), episode(2, enclosures=rerun), episode(1)]
    ids = {c.item.title: (c.item_id, c.id_source) for c in Runs(EMIT_ALL).run(items).changes}
    assert ids["Ep 3"] == ("https://cdn.example/ep3.mp3", "enclosure")
    assert ids["Ep 2"] == (title_id(items[1], SHOW), "derived")
    assert ids["Ep 1"] == (title_id(items[2], SHOW), "derived")

    other = ParsedItem("https://blog.example/1", "guid", title="Elsewhere")
    shared = [ParsedItem("post", "guid", f"https://blog.example/{n}", f"P{n}") for n in (1, 2)]
    by_title = {c.item.title: c.item_id for c in Runs(EMIT_ALL).run([other, *shared]).changes}
    assert by_title["P2"] == "https://blog.example/2"
    assert by_title["P1"] == title_id(shared[0], "post")
    assert by_title["Elsewhere"] == "https://blog.example/1"


def test_the_enclosure_is_compared_as_identity_reads_it() -> None:
    """Told apart by the enclosure URL without tracking prefix, http read as https: a
    prefix added or the scheme flipped moves no id, and is no edit."""
    runs = Runs(BASELINE)
    runs.run(podcast())
    prefixed = [
        item._replace(
            enclosures=tuple(
                dataclasses.replace(e, url=e.url.replace("https://", PODTRAC))
                for e in item.enclosures
            )
        )
        for item in podcast()
    ]
    delta = runs.run(prefixed)
    assert (delta.changes, delta.counts.unchanged) == ((), 3)
    [change] = diff_items(None, prefixed, EMIT_ALL).changes[:1]
    assert change.item_id == "https://cdn.example/ep3.mp3"


def test_ids_depend_on_the_document_alone() -> None:
    items = [*podcast(), incident(2), incident(1)]
    ids = {c.item.title: c.item_id for c in Runs(EMIT_ALL).run(items).changes}
    shuffled = list(items)
    random.Random(7).shuffle(shuffled)
    again = {c.item.title: c.item_id for c in Runs(EMIT_ALL).run(shuffled).changes}
    assert again == ids
    runs = Runs(EMIT_ALL)
    runs.run(items)
    assert runs.run(shuffled).changes == ()


def test_an_episode_that_stops_sharing_its_link_keeps_its_memory() -> None:
    runs = Runs(BASELINE)
    runs.run(podcast())
    alone = runs.run([episode(3, "Ep 3: Hello")])  # known by its link now
    assert (alone.changes, alone.counts.unchanged) == ((), 1)
    again = runs.run(podcast())  # and by its enclosure again
    assert (again.changes, again.counts.unchanged) == ((), 3)


# -- upgrade: memory written by the version before, which gave such items title ids ----

# What the version before delivered for episode 2 (its record's item_id).
EP2_ID_BEFORE = "derived:468a1e17b5224d1d07dfe9b21658a3f1"


def _state_before(items: list[ParsedItem]) -> FeedBookmark:
    """The memory the version before left: each item under its title id (content id when
    those collided), as it computed them."""
    titles = [title_id(item, item.url or "") for item in items]
    pairs = []
    for item, its_title_id in zip(items, titles, strict=True):
        full = fingerprint_bytes(item)
        item_id = its_title_id if titles.count(its_title_id) == 1 else content_id(SHOW, full)
        pairs.append((key_hash(item_id), short_hash(full)))
    return FeedBookmark(success_at="x", items=pack_items(pairs))


def test_the_state_before_holds_the_ids_that_version_delivered() -> None:
    assert title_id(podcast()[1], SHOW) == EP2_ID_BEFORE


def test_after_the_upgrade_unchanged_episodes_send_nothing_and_a_later_fix_is_an_update() -> None:
    runs = Runs(BASELINE)
    runs.bookmark = _state_before(podcast())
    upgraded = runs.run(podcast())
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 3)
    assert upgraded.counts.remembered == 3
    [change] = runs.run(podcast(fixed=True)).changes
    assert (change.change_type, change.item_id) == ("updated", "https://cdn.example/ep2.mp3")


def test_an_episode_edited_on_the_upgrade_run_is_an_update() -> None:
    """Its title and date are as before, so its title id finds its memory: an update
    under the new id, not a new item beside the old one."""
    runs = Runs(BASELINE)
    runs.bookmark = _state_before(podcast())
    items = podcast()
    items[1] = items[1]._replace(summary="Notes 2, with a link to the transcript.")
    upgraded = runs.run(items)
    [change] = upgraded.changes
    assert (change.change_type, change.item_id) == ("updated", "https://cdn.example/ep2.mp3")
    assert upgraded.counts.remembered == 3


def test_episodes_whose_title_ids_collided_before_keep_their_memory() -> None:
    """Two episodes of one title and date (parts of a double episode) had content ids."""
    items = [episode(5, "Double"), episode(6, "Double", published_at=episode(5).published_at)]
    runs = Runs(BASELINE)
    runs.bookmark = _state_before(items)
    upgraded = runs.run(items)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 2)
    edited = runs.run([items[0], items[1]._replace(summary="Part two.")])
    assert [(c.change_type, c.item_id) for c in edited.changes] == [
        ("updated", "https://cdn.example/ep6.mp3")
    ]


def test_an_edit_on_the_upgrade_run_takes_no_memory_of_a_twin() -> None:
    """With title ids colliding, the memory of one title id cannot say which item it
    was: an edited part is not taken for an update of the other."""
    items = [episode(5, "Double"), episode(6, "Double", published_at=episode(5).published_at)]
    runs = Runs(BASELINE)
    runs.bookmark = _state_before([items[0], episode(3)])  # part one, under its title id
    edited = runs.run([items[1], items[0]._replace(summary="Part one, edited."), episode(3)])
    assert sorted((c.change_type, c.item_id) for c in edited.changes) == [
        ("new", "https://cdn.example/ep5.mp3"),
        ("new", "https://cdn.example/ep6.mp3"),
    ]


def test_an_ignored_enclosure_tells_no_item_apart() -> None:
    settings = dataclasses.replace(EMIT_ALL, ignored_changes=("enclosures",))
    delta = Runs(settings).run(podcast())
    assert {c.id_source for c in delta.changes} == {"derived"}
    assert delta.changes[1].item_id == title_id(podcast()[1], SHOW, ("enclosures",))


# -- a link or enclosure an item was told apart by, later another item's own id ---------

BLOG = "https://blog.example/"


def post(n: int, title: str | None = None) -> ParsedItem:
    """A post of a CMS that gives every item one guid, each with its own link."""
    return ParsedItem("same", "guid", f"{BLOG}{n}", title or f"Post {n}", f"Text {n}.")


def permalink(url: str, title: str) -> ParsedItem:
    """An item whose guid is a permalink (the parser makes it its link too)."""
    return ParsedItem(url, "guid", url, title, "Another post.")


def test_a_new_item_whose_guid_is_the_link_another_was_known_by_is_new() -> None:
    """Post 1 was known by its link; a new item whose guid is that URL makes the link
    no longer post 1's own (it falls back to its title id). The newcomer takes none of
    post 1's memory, and post 1, edited that very run, keeps it: an update."""
    runs = Runs(BASELINE)
    runs.run([post(1), post(2)])
    newcomer = permalink(f"{BLOG}1", "A new post")
    edited = post(1, "Post 1 (edited)")
    delta = runs.run([newcomer, edited, post(2)])
    assert [(c.change_type, c.item.title, c.id_source) for c in delta.changes] == [
        ("new", "A new post", "guid"),
        ("updated", "Post 1 (edited)", "derived"),
    ]
    assert delta.changes[0].item_id == f"{BLOG}1"
    assert delta.changes[1].item_id == title_id(edited, "same")
    # The newcomer's delivery_id covers no memory: a run without state gives it too.
    refresh = dataclasses.replace(BASELINE, first_run_mode="emit_all")
    without_state = diff_items(None, [newcomer, edited, post(2)], refresh)
    assert delta.changes[0].delivery_id == without_state.changes[0].delivery_id
    shuffled = runs.run([post(2), edited, newcomer])
    assert (shuffled.changes, shuffled.counts.remembered) == ((), 3)


def test_the_memory_of_a_link_two_items_could_have_been_known_by_goes_to_neither() -> None:
    """Another item with that link (and a guid of its own) could have been known by it
    too: an edit cannot say whose memory it was."""
    runs = Runs(BASELINE)
    runs.run([post(1), post(2)])
    other = ParsedItem("other", "guid", f"{BLOG}1", "Post 1, elsewhere")
    delta = runs.run(
        [permalink(f"{BLOG}1", "A new post"), post(1, "Post 1 (edited)"), post(2), other]
    )
    assert [c.change_type for c in delta.changes] == ["new", "new", "new"]


def test_a_new_item_whose_guid_is_the_enclosure_another_was_known_by_is_new() -> None:
    """The mirror on a podcast: episode 2 was known by its file; a new item whose guid is
    that file's URL."""
    runs = Runs(BASELINE)
    runs.run(podcast())
    newcomer = permalink("https://cdn.example/ep2.mp3", "Ep 2, the trailer")
    delta = runs.run([newcomer, *podcast(fixed=True)])
    assert [(c.change_type, c.item.title, c.id_source) for c in delta.changes] == [
        ("new", "Ep 2, the trailer", "guid"),
        ("updated", "Ep 2: World news", "derived"),
    ]


def test_an_item_whose_guid_was_that_link_before_keeps_its_memory() -> None:
    """The other way round: the permalink item was there before, so post 1 never was
    known by its link; edited both, the permalink item is updated and post 1 (its title
    id moved) new."""
    first = permalink(f"{BLOG}1", "A new post")
    runs = Runs(BASELINE)
    runs.run([first, post(1), post(2)])
    delta = runs.run([first._replace(summary="Edited."), post(1, "Post 1 (edited)"), post(2)])
    assert [(c.change_type, c.item.title) for c in delta.changes] == [
        ("updated", "A new post"),
        ("new", "Post 1 (edited)"),
    ]


def test_an_item_known_by_its_link_reads_the_memory_this_link_kept() -> None:
    """A state that remembers such an item under its link (as its guid alone, or the
    version before, kept it): unchanged reads unchanged, an edit is an update."""
    items = [post(1), post(2)]
    memory = [(key_hash(p.url or ""), short_hash(fingerprint_bytes(p))) for p in items]
    runs = Runs(BASELINE)
    runs.bookmark = FeedBookmark(success_at="x", items=pack_items(memory))
    delta = runs.run(items)
    assert (delta.changes, delta.counts.unchanged) == ((), 2)
    runs.bookmark = FeedBookmark(success_at="x", items=pack_items(memory))
    [change] = runs.run([post(1, "Post 1 (edited)"), post(2)]).changes
    assert (change.change_type, change.item_id) == ("updated", f"{BLOG}1")
