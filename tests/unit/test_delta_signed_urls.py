"""Signed enclosure URLs: a signature or expiry re-issued on every fetch is no change."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tap_feeddelta.delta import Delta, DeltaSettings, diff_items
from tap_feeddelta.fingerprints import fingerprint_bytes, key_hash, short_hash
from tap_feeddelta.models import Author, Enclosure, ParsedItem
from tap_feeddelta.signed_urls import SIGNING_PARAMS, unsigned_url
from tap_feeddelta.state import FeedBookmark, pack_items, unpack_items

SETTINGS = DeltaSettings("m", "https://private.example/feed", first_run_mode="emit_all")
AUDIO = "https://cdn.example/show/ep1/audio.mp3"

# (the query of the first fetch, of the next one): each as its platform signs
ROTATIONS = {
    "patreon": (
        "token-time=1790000000&token-hash=h1790000000x0",
        "token-time=1790003600&token-hash=h1790003600x0",
    ),
    "cloudfront": (
        "Expires=1790000000&Signature=abc~def__&Key-Pair-Id=K2JCJMDEHXQW5F",
        "Expires=1790003600&Signature=xyz~uvw__&Key-Pair-Id=K2JCJMDEHXQW5F",
    ),
    "cloudfront-policy": (
        "Policy=eyJTdGF0ZW1lbnQiOlt7fV19&Signature=abc&Key-Pair-Id=K2J",
        "Policy=eyJTdGF0ZW1lbnQiOltdfQ__&Signature=def&Key-Pair-Id=K2J",
    ),
    "s3": (
        "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20260901%2Fus-east-1"
        "&X-Amz-Date=20260901T070000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
        "&X-Amz-Signature=0a1b",
        "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20260901%2Fus-east-1"
        "&X-Amz-Date=20260901T080000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
        "&X-Amz-Signature=9f8e",
    ),
    "akamai": ("hdnts=exp=1790000000~hmac=aa", "hdnts=exp=1790003600~hmac=bb"),
    "akamai-token": ("__token__=exp=1~acl=*~hmac=aa", "__token__=exp=2~acl=*~hmac=bb"),
    "generic": ("token=a1&expires=1790000000", "token=b2&expires=1790003600"),
    "generic-sig": ("sig=a1&exp=1790000000", "sig=b2&exp=1790003600"),
    "upper-case": ("TOKEN=a1&EXPIRES=1", "TOKEN=b2&EXPIRES=2"),
    "with-others": ("id=123&token=a1&ep=5", "id=123&token=b2&ep=5"),
    "meta": (
        "stp=dst-jpg_e35&_nc_ht=scontent-a.cdninstagram.com&_nc_cat=1&_nc_ohc=AbC"
        "&_nc_gid=x1&oh=00_AfA1&oe=6700AA00",
        "stp=dst-jpg_e35&_nc_ht=scontent-b.cdninstagram.com&_nc_cat=1&_nc_ohc=DeF"
        "&_nc_gid=y2&oh=00_AfB2&oe=6700BB00",
    ),
    "tiktok": (
        "x-expires=1790000000&x-signature=abc%3D&lr=all",
        "x-expires=1790003600&x-signature=def%3D&lr=all",
    ),
}


def episode(audio_url: str, *, guid: str | None = "ep-1", notes: str = "Notes.") -> ParsedItem:
    return ParsedItem(
        guid,
        "guid" if guid else None,
        title="Episode 1",
        summary=notes,
        published_at="2026-09-01T07:00:00Z",
        enclosures=(Enclosure(audio_url, "audio/mpeg", 48_213_312),),
    )


class Runs:
    """Runs one after another, each from the memory the one before left."""

    def __init__(self, bookmark: FeedBookmark | None = None) -> None:
        self.bookmark = bookmark

    def run(self, items: Sequence[ParsedItem]) -> Delta:
        delta = diff_items(self.bookmark, items, SETTINGS)
        self.bookmark = FeedBookmark(success_at="x", items=delta.remembered_items)
        return delta


@pytest.mark.parametrize("rotation", ROTATIONS.values(), ids=ROTATIONS.keys())
@pytest.mark.parametrize("guid", ["ep-1", None], ids=["with-guid", "known-by-enclosure"])
def test_a_re_signed_enclosure_url_is_no_change(
    rotation: tuple[str, str], guid: str | None
) -> None:
    """Before, every run emitted every episode as updated, or (known by its enclosure)
    as new under a new id."""
    first, second = (f"{AUDIO}?{query}" for query in rotation)
    runs = Runs()
    [baseline] = runs.run([episode(first, guid=guid)]).changes
    again = runs.run([episode(second, guid=guid)])
    assert (again.changes, again.counts.unchanged) == ((), 1)
    assert runs.run([episode(first, guid=guid)]).changes == ()
    # An edit is still one, and the record shows the URL as the feed gives it.
    [edited] = runs.run([episode(second, guid=guid, notes="Notes, fixed.")]).changes
    assert (edited.change_type, edited.item_id) == ("updated", baseline.item_id)
    assert edited.item.enclosures[0].url == second


def test_an_episode_known_by_its_signed_enclosure_has_the_unsigned_url_as_its_id() -> None:
    url = f"{AUDIO}?id=7&token-time=1790000000&token-hash=abc"
    [change] = Runs().run([episode(url, guid=None)]).changes
    assert (change.item_id, change.id_source) == (f"{AUDIO}?id=7", "enclosure")
    assert change.item.enclosures[0].url == url


@pytest.mark.parametrize(
    ("before", "after"),
    [("id=123", "id=124"), ("ep=5", "ep=6"), ("ep=5&token=a", "ep=6&token=a"),
     ("tokens=a", "tokens=b"), ("expiry=1", "expiry=2"), ("x-amzish=1", "x-amzish=2")],
)  # fmt: skip
def test_other_query_parameters_of_an_enclosure_still_count(before: str, after: str) -> None:
    runs = Runs()
    runs.run([episode(f"{AUDIO}?{before}")])
    assert [c.change_type for c in runs.run([episode(f"{AUDIO}?{after}")]).changes] == ["updated"]
    known_by_enclosure = Runs()
    known_by_enclosure.run([episode(f"{AUDIO}?{before}", guid=None)])
    moved = known_by_enclosure.run([episode(f"{AUDIO}?{after}", guid=None)])
    assert [c.change_type for c in moved.changes] == ["new"]


def test_item_links_keep_their_query() -> None:
    """Only enclosures are unsigned: a page's `token` or `policy` can select its content."""
    runs = Runs()
    runs.run([ParsedItem(url="https://site.example/legal?policy=privacy&token=a")])
    other = runs.run([ParsedItem(url="https://site.example/legal?policy=privacy&token=b")])
    assert [c.change_type for c in other.changes] == ["new"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{AUDIO}?token=a", AUDIO),
        (f"{AUDIO}?Token-Time=1&ID=7&Token-Hash=x", f"{AUDIO}?ID=7"),
        (f"{AUDIO}?a=1&&X-Amz-Date=2&b=%20&x-goog-signature=3#t=30", f"{AUDIO}?a=1&&b=%20#t=30"),
        (f"{AUDIO}?sig#t=1", f"{AUDIO}#t=1"),
        (f"{AUDIO}#frag?token=a", f"{AUDIO}#frag?token=a"),
        (f"{AUDIO}?hdnea=1&hdnts=2&__token__=3&awsaccesskeyid=4&googleaccessid=5", AUDIO),
    ],
)
def test_unsigned_url_drops_only_the_listed_parameters(url: str, expected: str) -> None:
    assert unsigned_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [AUDIO, f"{AUDIO}?id=123", f"{AUDIO}?source=rss&ep=5#t=3", f"{AUDIO}?", "", "?x=1&"],
)
def test_a_url_without_listed_parameters_is_returned_as_it_is(url: str) -> None:
    assert unsigned_url(url) is url


_NAMES = st.sampled_from(
    [*sorted(SIGNING_PARAMS), "x-amz-date", "X-Goog-Credential", "id", "ep", "tokens", "exp2",
     "x-amz", "sig_", "source", "", "utm_source", "keyid", "t"]
)  # fmt: skip


@given(
    st.lists(
        st.tuples(
            _NAMES.map(str.upper) | _NAMES,
            st.sampled_from(["", "=", "=1", "=a%26b", "==x", "=exp=1~hmac=2"]),
        ),
        max_size=6,
    ),
    st.sampled_from(["", "#t=30", "#x?token=1"]),
)
def test_unsigned_url_keeps_exactly_the_unlisted_parameters(
    params: list[tuple[str, str]], fragment: str
) -> None:
    listed = SIGNING_PARAMS | {"x-amz-date", "x-goog-credential"}
    kept = [name + value for name, value in params if name.lower() not in listed]
    url = AUDIO + "?" + "&".join(name + value for name, value in params) + fragment
    expected = AUDIO + ("?" + "&".join(kept) if kept else "") + fragment
    if len(kept) == len(params):
        assert unsigned_url(url) is url
    else:
        assert unsigned_url(url) == expected


def _fingerprint_of_the_version_before(item: ParsedItem, *, sorted_tags: bool = True) -> bytes:
    """fingerprint_bytes as it was before signatures were dropped (and, with
    ``sorted_tags=False``, before tags were sorted)."""
    tags = item.tags if len(item.tags) < 2 or not sorted_tags else sorted(item.tags)
    parts: list[str] = [
        item.url or "\x00",
        item.title or "\x00",
        item.summary or "\x00",
        item.content_text or "\x00",
        "\x1f".join([f"{a.name or ''}|{a.email or ''}|{a.url or ''}" for a in item.authors]),
        "\x1f".join(tags),
        item.published_at or "\x00",
        item.updated_at or "\x00",
        "\x1f".join([f"{e.url}|{e.type or ''}|{e.length_bytes or ''}" for e in item.enclosures]),
    ]
    return hashlib.blake2b("\x1e".join(parts).encode("utf-8"), digest_size=16).digest()


ORDINARY = [
    ParsedItem(
        "g1", "guid", "https://blog.example/p?id=1&token=a", "T", "S", "C",
        (Author("A", None, None),), ("b", "a"), "2026-01-01T00:00:00Z", None,
        (Enclosure("https://cdn.example/a.mp3?source=rss&ep=5", "audio/mpeg", 10),
         Enclosure("https://cdn.example/b.mp3", None, None)),
    ),
    ParsedItem(None, None, None, "No guid", enclosures=(Enclosure("https://cdn.example/c.mp3?id=3"),)),
    ParsedItem(None, None, None, "Bare", enclosures=(Enclosure("https://cdn.example/d.m4a"),)),
]  # fmt: skip


def test_ordinary_feeds_keep_their_fingerprints_ids_and_memory() -> None:
    """Unsigned enclosure URLs go into the fingerprint byte for byte as before: a state
    written by the version before gives no wave of updates after the upgrade."""
    for item in ORDINARY:
        assert fingerprint_bytes(item) == _fingerprint_of_the_version_before(item)
    delta = diff_items(None, ORDINARY, SETTINGS)
    assert [(c.item_id, c.id_source) for c in delta.changes] == [
        ("g1", "guid"),
        ("https://cdn.example/c.mp3?id=3", "enclosure"),
        ("https://cdn.example/d.m4a", "enclosure"),
    ]
    old_memory = pack_items(
        [
            (key_hash(c.item_id), short_hash(_fingerprint_of_the_version_before(c.item)))
            for c in delta.changes
        ]
    )
    after_upgrade = diff_items(FeedBookmark(success_at="x", items=old_memory), ORDINARY, SETTINGS)
    assert (after_upgrade.changes, after_upgrade.counts.unchanged) == ((), 3)
    assert after_upgrade.remembered_items == old_memory


def _memory_of_the_version_before(item: ParsedItem, item_id: str) -> FeedBookmark:
    memory = pack_items([(key_hash(item_id), short_hash(_fingerprint_of_the_version_before(item)))])
    return FeedBookmark(success_at="x", items=memory)


@pytest.mark.parametrize("guid", ["ep-1", None], ids=["with-guid", "known-by-enclosure"])
def test_a_state_from_before_signatures_were_dropped_sends_nothing_again(
    guid: str | None,
) -> None:
    """The version before remembered the signed URL (in the fingerprint, and as the id of
    an episode known by its enclosure). The same signature as at that run: unchanged,
    and the memory moves to the unsigned id and hash; from then on, re-signing is no change."""
    signed = episode(f"{AUDIO}?token-time=1&token-hash=a", guid=guid)
    runs = Runs(_memory_of_the_version_before(signed, guid or signed.enclosures[0].url))
    upgraded = runs.run([signed])
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    assert runs.bookmark is not None
    assert runs.bookmark.items == diff_items(None, [signed], SETTINGS).remembered_items
    assert len(unpack_items(runs.bookmark.items)) == 1  # the old id is forgotten
    assert runs.run([episode(f"{AUDIO}?token-time=2&token-hash=b", guid=guid)]).changes == ()


def test_a_state_from_before_tags_were_sorted_with_a_signed_enclosure() -> None:
    signed = episode(f"{AUDIO}?token=a")._replace(tags=("zeta", "alpha"))
    oldest = short_hash(_fingerprint_of_the_version_before(signed, sorted_tags=False))
    bookmark = FeedBookmark(success_at="x", items=pack_items([(key_hash("ep-1"), oldest)]))
    delta = diff_items(bookmark, [signed], SETTINGS)
    assert (delta.changes, delta.counts.unchanged) == ((), 1)
    assert delta.remembered_items == diff_items(None, [signed], SETTINGS).remembered_items
