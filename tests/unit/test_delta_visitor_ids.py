"""Session and click ids in item links: a value a site writes anew for each visitor or
fetch is no change of the item, while a parameter that names the content still counts."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tap_feeddelta.delta import Delta, DeltaSettings, diff_items
from tap_feeddelta.fingerprints import key_hash, short_hash, told_apart_id
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.state import FeedBookmark, pack_items, unpack_items
from tap_feeddelta.visitor_ids import VISITOR_PARAMS, without_visitor_ids

SETTINGS = DeltaSettings("m", "https://site.example/feed", first_run_mode="emit_all")
PAGE = "https://site.example/news/article-1"
HEX_A, HEX_B = "0123456789abcdef" * 2, "fedcba9876543210" * 2

# (the link of one fetch, of the next): each as its platform writes it
ROTATIONS = {
    "jsessionid": (f"{PAGE};jsessionid=1A2B3C.node1", f"{PAGE};jsessionid=9Z8Y7X.node2"),
    "jsessionid-upper-with-query": (
        f"{PAGE};JSESSIONID=AB12?lang=en",
        f"{PAGE};JSESSIONID=CD34?lang=en",
    ),
    "phpsessid": (f"{PAGE}?PHPSESSID=k2j3h4g5", f"{PAGE}?PHPSESSID=m9n8b7v6"),
    "phpbb-sid": (
        f"https://forum.example/viewtopic.php?t=42&sid={HEX_A}",
        f"https://forum.example/viewtopic.php?t=42&sid={HEX_B}",
    ),
    "vbulletin-s": (
        f"https://forum.example/showthread.php?s={HEX_A}&t=42",
        f"https://forum.example/showthread.php?s={HEX_B}&t=42",
    ),
    "coldfusion": (f"{PAGE}?CFID=1001&CFTOKEN=22334455", f"{PAGE}?CFID=1002&CFTOKEN=66778899"),
    "fbclid": (f"{PAGE}?fbclid=IwAR0aaa", f"{PAGE}?fbclid=IwAR0bbb"),
    "gclid": (f"{PAGE}?gclid=Cj0KCQaaa", f"{PAGE}?gclid=Cj0KCQbbb"),
    "msclkid": (f"{PAGE}?msclkid=aaa", f"{PAGE}?msclkid=bbb"),
    "yclid": (f"{PAGE}?yclid=111", f"{PAGE}?yclid=222"),
    "mailchimp": (f"{PAGE}?mc_cid=c1&mc_eid=aaa", f"{PAGE}?mc_cid=c1&mc_eid=bbb"),
    "hubspot": (f"{PAGE}?_hsenc=p2A1&_hsmi=101", f"{PAGE}?_hsenc=p2B2&_hsmi=102"),
    "among-others-with-fragment": (
        f"{PAGE}?id=7&fbclid=aaa&utm_source=rss#comments",
        f"{PAGE}?id=7&fbclid=bbb&utm_source=rss#comments",
    ),
    "appears": (f"{PAGE}?id=7", f"{PAGE}?id=7&gclid=aaa"),
    "instagram-igsh": (
        "https://www.instagram.com/p/C1a2b3/?igsh=MWQ1ZGUxMzBkMA==",
        "https://www.instagram.com/p/C1a2b3/?igsh=ZnJ4dDl0bXk3NQ==",
    ),
    # A share id on the hosts that write one: a value per share
    "youtube-si": (
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&si=AbC123dEf456gHij",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&si=XyZ987wVu654tSrq",
    ),
    "youtu.be-si": (
        "https://youtu.be/dQw4w9WgXcQ?si=AbC123dEf456gHij",
        "https://youtu.be/dQw4w9WgXcQ?si=XyZ987wVu654tSrq",
    ),
    "m.youtube-si-first": (
        "https://m.youtube.com/watch?si=AbC123&v=dQw4w9WgXcQ",
        "https://m.youtube.com/watch?si=XyZ987&v=dQw4w9WgXcQ",
    ),
    "music.youtube-si": (
        "https://music.youtube.com/watch?v=dQw4w9WgXcQ&si=AbC123",
        "https://music.youtube.com/watch?v=dQw4w9WgXcQ&si=XyZ987",
    ),
    "youtube-bare-host-si": (
        "https://youtube.com/shorts/abc?si=AbC123",
        "https://youtube.com/shorts/abc?si=XyZ987",
    ),
    "spotify-si": (
        "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk?si=a1b2c3d4e5f64789",
        "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk?si=0f9e8d7c6b5a4321",
    ),
}


def post(link: str, *, guid: str | None = "post-1", text: str = "What it says.") -> ParsedItem:
    return ParsedItem(
        guid,
        "guid" if guid else None,
        link,
        "Article 1",
        text,
        published_at="2026-09-01T07:00:00Z",
    )


class Runs:
    """Runs one after another, each from the memory the one before left."""

    def __init__(self, bookmark: FeedBookmark | None = None, **settings: object) -> None:
        self.bookmark = bookmark
        self.settings = dataclasses.replace(SETTINGS, **settings)  # type: ignore[arg-type]

    def run(self, items: Sequence[ParsedItem]) -> Delta:
        delta = diff_items(self.bookmark, items, self.settings)
        self.bookmark = FeedBookmark(
            success_at="x", items=delta.remembered_items, newest_item_at="2026-09-02T00:00:00Z"
        )
        return delta


@pytest.mark.parametrize("rotation", ROTATIONS.values(), ids=ROTATIONS.keys())
@pytest.mark.parametrize("guid", ["post-1", None], ids=["with-guid", "known-by-link"])
def test_a_session_or_click_id_in_the_link_is_no_change(
    rotation: tuple[str, str], guid: str | None
) -> None:
    """Before, every run emitted such an item as updated (its url changed) or, known by
    its link, as new under a new id."""
    first, second = rotation
    runs = Runs()
    [baseline] = runs.run([post(first, guid=guid)]).changes
    again = runs.run([post(second, guid=guid)])
    assert (again.changes, again.counts.unchanged) == ((), 1)
    assert runs.run([post(first, guid=guid)]).changes == ()
    # An edit is still one, under the same id, and the record shows the link as given.
    [edited] = runs.run([post(second, guid=guid, text="What it says, fixed.")]).changes
    assert (edited.change_type, edited.item_id) == ("updated", baseline.item_id)
    assert edited.item.url == second


def test_an_item_known_by_its_link_has_the_link_without_them_as_its_id() -> None:
    link = f"{PAGE};jsessionid=S1?id=7&fbclid=aaa#top"
    [change] = Runs().run([post(link, guid=None)]).changes
    assert (change.item_id, change.id_source) == (f"{PAGE}?id=7#top", "url")
    assert change.item.url == link


@pytest.mark.parametrize(
    ("before", "after"),
    [("id=1", "id=2"), ("p=12", "p=13"), ("page=2", "page=3"), ("ref=home", "ref=feed"),
     ("utm_source=a", "utm_source=b"), ("s=search+words", "s=other+words"),
     ("sid=06/01/02/1234", "sid=06/01/02/5678"), (f"s={HEX_A}x", f"s={HEX_B}x"),
     ("fbclid_x=1", "fbclid_x=2"), ("token=a", "token=b"), ("si=story-1", "si=story-2"),
     ("igshx=1", "igshx=2")],
)  # fmt: skip
def test_parameters_that_may_name_the_content_still_count(before: str, after: str) -> None:
    with_guid = Runs()
    with_guid.run([post(f"{PAGE}?{before}")])
    assert [c.change_type for c in with_guid.run([post(f"{PAGE}?{after}")]).changes] == ["updated"]
    known_by_link = Runs()
    known_by_link.run([post(f"{PAGE}?{before}", guid=None)])
    moved = known_by_link.run([post(f"{PAGE}?{after}", guid=None)])
    assert [c.change_type for c in moved.changes] == ["new"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{PAGE};jsessionid=A1", PAGE),
        (f"{PAGE};jsessionid=A1/more", f"{PAGE}/more"),
        (f"{PAGE};a=1;jsessionid=A1;b=2?x=1", f"{PAGE};a=1;b=2?x=1"),
        (f"{PAGE}?FBCLID=1&x=2&GCLID=3", f"{PAGE}?x=2"),
        (f"{PAGE}?a=1&&fbclid&b=%20#t=3", f"{PAGE}?a=1&&b=%20#t=3"),
        (f"{PAGE}?sid={HEX_A.upper()}&t=1", f"{PAGE}?t=1"),
        (f"{PAGE}?fbclid=1#x", f"{PAGE}#x"),
        (
            "https://www.instagram.com/reel/C1/?IGSH=abc&igshid=def",
            "https://www.instagram.com/reel/C1/",
        ),
        (
            "https://WWW.YouTube.com:443/watch?v=a&SI=b#t=1",
            "https://WWW.YouTube.com:443/watch?v=a#t=1",
        ),
        ("http://youtu.be./a?si=b&si=c&x=1", "http://youtu.be./a?x=1"),
        ("https://open.spotify.com?si=b", "https://open.spotify.com"),
        ("https://user@open.spotify.com/track/1?si=b", "https://user@open.spotify.com/track/1"),
    ],
)
def test_without_visitor_ids_drops_only_them(url: str, expected: str) -> None:
    assert without_visitor_ids(url) == expected


@pytest.mark.parametrize(
    "url",
    [PAGE, f"{PAGE}?p=1", f"{PAGE}?s=term", f"{PAGE}?sid=123", f"{PAGE}#x?fbclid=1",
     f"{PAGE}#;jsessionid=1", f"{PAGE};v=2", f"{PAGE}?x=jsessionid", "", "?", ";",
     f"{PAGE}?si=story", "https://youtube.com.site.example/a?si=1",
     "https://notyoutube.com/a?si=1", "https://youtube.com@site.example/a?si=1",
     "https://spotify.com/a?si=1", "https://podcasters.spotify.com/a?si=1",
     "https://www.youtube.com/watch?v=a#t=1&si=2", "https://www.youtube.com/watch?sid=a"],
)  # fmt: skip
def test_a_link_without_them_is_returned_as_it_is(url: str) -> None:
    assert without_visitor_ids(url) is url


_NAMES = st.sampled_from(
    [*sorted(VISITOR_PARAMS), "FBCLID", "id", "p", "page", "ref", "utm_source", "s", "sid",
     "fbclid2", "", "token", "si", "SI", "igs"]
)  # fmt: skip
YOUTUBE = "https://www.youtube.com/watch"


@given(
    st.sampled_from([PAGE, YOUTUBE]),
    st.lists(st.tuples(_NAMES, st.sampled_from(["", "=", "=1", "=a%26b", "==x"])), max_size=6),
    st.sampled_from(["", "#t=30", "#x?fbclid=1"]),
)
def test_without_visitor_ids_keeps_exactly_the_other_parameters(
    page: str, params: list[tuple[str, str]], fragment: str
) -> None:
    dropped = VISITOR_PARAMS | ({"si"} if page == YOUTUBE else set())
    kept = [name + value for name, value in params if name.lower() not in dropped]
    url = page + "?" + "&".join(name + value for name, value in params) + fragment
    expected = page + ("?" + "&".join(kept) if kept else "") + fragment
    if len(kept) == len(params):
        assert without_visitor_ids(url) is url
    else:
        assert without_visitor_ids(url) == expected


def _hash_before(item: ParsedItem, ignored: tuple[str, ...] = ()) -> int:
    """The content hash versions before remembered of ``item`` (plain text, no enclosure
    nor tags, nothing ignored but maybe ``updated_at``): its link as given."""
    parts = [
        item.url or "\x00",
        item.title or "\x00",
        item.summary or "\x00",
        item.content_text or "\x00",
        "",
        "",
        item.published_at or "\x00",
        "\x1a" if "updated_at" in ignored else item.updated_at or "\x00",
        "",
    ]
    return short_hash(hashlib.blake2b("\x1e".join(parts).encode(), digest_size=16).digest())


STATIC = {
    "jsessionid": f"{PAGE};jsessionid=1A2B3C",
    "fbclid": f"{PAGE}?fbclid=IwAR0aaa",
    "several": f"{PAGE}?id=7&gclid=aaa&_hsenc=p2&_hsmi=1&utm_source=rss",
    "phpbb-sid": f"https://forum.example/viewtopic.php?t=42&sid={HEX_A}",
    "igsh-and-fbclid": "https://www.instagram.com/p/C1/?igsh=MWQ1&fbclid=IwAR0",
    "youtube-si": "https://www.youtube.com/watch?v=dQw4w9WgXcQ&si=AbC123",
}


@pytest.mark.parametrize("link", STATIC.values(), ids=STATIC.keys())
@pytest.mark.parametrize("guid", ["post-1", None], ids=["with-guid", "known-by-link"])
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_links_were_compared_without_them_sends_nothing_again(
    link: str, guid: str | None, ignored: tuple[str, ...]
) -> None:
    """The version before remembered the link as given: as the id of an item known by
    its link, and in every content hash. The same link as at that run: unchanged, and the
    memory moves to the id and hash of this version; from then on, a new value is no
    change, and an edit is an update."""
    item = post(link, guid=guid)
    before = _hash_before(item, ignored)
    old = FeedBookmark(success_at="x", items=pack_items([(key_hash(guid or link), before)]))
    runs = Runs(old, ignored_changes=ignored)
    upgraded = runs.run([item])
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    fresh = diff_items(None, [item], runs.settings).remembered_items
    assert upgraded.remembered_items == fresh  # the old id is forgotten
    assert runs.run([post(without_visitor_ids(link), guid=guid)]).changes == ()
    [edited] = runs.run([post(link, guid=guid, text="Fixed.")]).changes
    assert edited.change_type == "updated"


def test_a_state_from_before_with_items_told_apart_by_their_links() -> None:
    """Two items of one guid (a CMS giving every item one), told apart by their links,
    were remembered under those links as given."""
    links = [f"https://site.example/a{n};jsessionid=S1" for n in (1, 2)]
    items = [post(link, guid="same")._replace(title=f"T{n}") for n, link in enumerate(links)]
    old = pack_items([(key_hash(told_apart_id(i.url or "")), _hash_before(i)) for i in items])
    runs = Runs(FeedBookmark(success_at="x", items=old))
    upgraded = runs.run(items)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 2)
    assert len(unpack_items(upgraded.remembered_items)) == 2
    rotated = [i._replace(url=(i.url or "").replace("S1", "S2")) for i in items]
    assert runs.run(rotated).changes == ()


def test_ordinary_links_keep_their_ids_fingerprints_and_delivery_ids() -> None:
    """Links without such parameters are compared as before: the pinned values hold."""
    items = [post(f"{PAGE}?p=12"), post(PAGE, guid=None), post(f"{PAGE};v=2?utm_source=rss")]
    for item in items:
        [change] = diff_items(None, [item], SETTINGS).changes
        assert change.item_id == (item.native_id or item.url)
        assert short_hash(bytes.fromhex(change.fingerprint[3:])) == _hash_before(item)


def test_a_permalink_guid_with_the_session_in_it_is_matched_by_content() -> None:
    """The guid is compared as given; the items, alike but for the session the feed
    writes into all of them, are those remembered (a wholesale rename: see
    test_delta_renamed_ids)."""

    def items(fetch: int) -> list[ParsedItem]:
        pages = {n: f"{PAGE}{n};jsessionid=S{fetch}" for n in (1, 2, 3)}
        return [post(page, guid=page, text=f"Part {n}.") for n, page in pages.items()]

    runs = Runs()
    runs.run(items(1))
    for fetch in (2, 3):
        assert runs.run(items(fetch)).changes == ()


# Links with the share ids the version before compared as given (igsh; si on YouTube's
# and Spotify's hosts): (the link, as that version compared it: its other ids dropped)
SHARE_IDS = {
    "igsh": (
        "https://www.instagram.com/p/C1/?igsh=MWQ1",
        "https://www.instagram.com/p/C1/?igsh=MWQ1",
    ),
    "igsh-and-fbclid": (
        "https://www.instagram.com/p/C1/?fbclid=IwAR0&igsh=MWQ1",
        "https://www.instagram.com/p/C1/?igsh=MWQ1",
    ),
    "youtube-si": (
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&si=AbC123",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&si=AbC123",
    ),
    "spotify-si-and-session": (
        f"https://open.spotify.com/episode/4rOo;jsessionid=X1?si=a1b2&PHPSESSID={HEX_A}",
        "https://open.spotify.com/episode/4rOo?si=a1b2",
    ),
}


@pytest.mark.parametrize(("link", "compared_before"), SHARE_IDS.values(), ids=SHARE_IDS.keys())
@pytest.mark.parametrize("guid", ["post-1", None], ids=["with-guid", "known-by-link"])
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_share_ids_were_dropped_sends_nothing_again(
    link: str, compared_before: str, guid: str | None, ignored: tuple[str, ...]
) -> None:
    """The version before dropped the session and click ids it knew but kept these: its
    id of an item known by its link, and every content hash, hold them. The same link as
    at that run: unchanged, and the memory moves to this version's id and hash."""
    item = post(link, guid=guid)
    before = _hash_before(post(compared_before, guid=guid), ignored)
    old_id = guid or compared_before
    old = FeedBookmark(success_at="x", items=pack_items([(key_hash(old_id), before)]))
    runs = Runs(old, ignored_changes=ignored)
    upgraded = runs.run([item])
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    fresh = diff_items(None, [item], runs.settings).remembered_items
    assert upgraded.remembered_items == fresh  # the old id is forgotten
    [edited] = runs.run([post(link, guid=guid, text="Fixed.")]).changes
    assert edited.change_type == "updated"


def test_a_state_from_before_with_share_ids_told_apart_by_their_links() -> None:
    """Two items of one guid, told apart by their links (with share ids), were
    remembered under those links as the version before compared them."""
    links = [f"https://youtu.be/v{n}?si=S1&gclid=G" for n in (1, 2)]
    items = [post(link, guid="same")._replace(title=f"T{n}") for n, link in enumerate(links)]
    compared_before = [i._replace(url=(i.url or "").replace("&gclid=G", "")) for i in items]
    old = pack_items(
        [(key_hash(told_apart_id(i.url or "")), _hash_before(i)) for i in compared_before]
    )
    runs = Runs(FeedBookmark(success_at="x", items=old))
    upgraded = runs.run(items)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 2)
    assert len(unpack_items(upgraded.remembered_items)) == 2
    rotated = [i._replace(url=(i.url or "").replace("S1", "S2")) for i in items]
    assert runs.run(rotated).changes == ()
