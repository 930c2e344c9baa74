"""An RSS item that names its author in both ``<author>`` and ``<dc:creator>`` lists the
person once, whatever the order of the elements. A state written when the person was
listed once per element is read as written: the upgrade sends nothing again."""

from __future__ import annotations

import dataclasses

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.fingerprints import content_id, fingerprint_bytes, key_hash, short_hash
from tap_feeddelta.models import Author, ParsedItem
from tap_feeddelta.parse import parse_feed, persons
from tap_feeddelta.parse.limits import MAX_AUTHORS
from tap_feeddelta.state import FeedBookmark, pack_items

URL = "https://d.example/feed"
SETTINGS = DeltaSettings("m", URL)
JANE = Author("Jane Doe", "jane@example.org")
# Each element, with the author the version before read of it alone.
AUTHOR = ("<author>jane@example.org (Jane Doe)</author>", JANE)
CREATOR = ("<dc:creator>Jane Doe</dc:creator>", Author("Jane Doe"))
ITUNES = ("<itunes:author>Jane Doe</itunes:author>", Author("Jane Doe"))
HOMEPAGE = ("<dc:creator><name>Jane Doe</name><uri>https://jane.example/</uri></dc:creator>",
            Author("Jane Doe", url="https://jane.example/"))  # fmt: skip
OTHER = ("<dc:creator>John Roe</dc:creator>", Author("John Roe"))
OTHER_JANE = (
    "<author>jd@other.example (Jane Doe)</author>",
    Author("Jane Doe", "jd@other.example"),
)
Element = tuple[str, Author]


def _rss(elements: tuple[Element, ...], title: str = "Post", guid: str = "post-1") -> bytes:
    return (
        '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>D</title>'
        f"<item><guid>{guid}</guid><title>{title}</title>"
        + "".join(text for text, _ in elements)
        + "</item></channel></rss>"
    ).encode()


def _item(elements: tuple[Element, ...], title: str = "Post") -> ParsedItem:
    (item,) = parse_feed(_rss(elements, title), None, URL).items
    return item


def _as_listed_before(item: ParsedItem, elements: tuple[Element, ...]) -> ParsedItem:
    """The item as the version before read it: one author per author element (an
    itunes:author only when no other names one)."""
    listed = tuple(person for text, person in elements if not text.startswith("<itunes:"))
    return item._replace(authors=listed or tuple(person for _, person in elements))


MERGED = {
    "author-creator": ((AUTHOR, CREATOR), (JANE,)),
    "creator-author": ((CREATOR, AUTHOR), (JANE,)),
    "creator-author-creator": ((CREATOR, AUTHOR, CREATOR), (JANE,)),
    "author-itunes": ((AUTHOR, ITUNES), (JANE,)),
    "homepage-author": ((HOMEPAGE, AUTHOR), (dataclasses.replace(JANE, url="https://jane.example/"),)),
    "other-between": ((CREATOR, OTHER, AUTHOR), (JANE, Author("John Roe"))),
    "two-emails": ((AUTHOR, OTHER_JANE, CREATOR), (JANE, Author("Jane Doe", "jd@other.example"))),
    "two-people": ((OTHER, CREATOR), (Author("John Roe"), Author("Jane Doe"))),
}  # fmt: skip


@pytest.mark.parametrize(("elements", "authors"), MERGED.values(), ids=MERGED.keys())
def test_a_person_named_by_several_elements_is_one_author(
    elements: tuple[Element, ...], authors: tuple[Author, ...]
) -> None:
    # The same name merges, keeping the email and the page; two emails are two people.
    assert _item(elements).authors == authors


def test_the_order_of_the_elements_is_no_edit() -> None:
    first = diff_items(None, [_item((AUTHOR, CREATOR))], SETTINGS)
    bookmark = FeedBookmark(success_at="x", items=first.remembered_items)
    assert diff_items(bookmark, [_item((CREATOR, AUTHOR))], SETTINGS).changes == ()


@pytest.mark.parametrize("elements", [(AUTHOR, CREATOR), (CREATOR, AUTHOR), (AUTHOR, AUTHOR)])
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_the_merge_sends_nothing_again(
    elements: tuple[Element, ...], ignored: tuple[str, ...]
) -> None:
    """The version before remembered the hash of the item with the person listed once
    per element: the same item is unchanged after the upgrade, and an edit after it is
    an update."""
    item = _item(elements)
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    before = _as_listed_before(item, elements)
    assert before.authors != item.authors
    old_hash = short_hash(fingerprint_bytes(before, ignored=ignored))
    bookmark = FeedBookmark(success_at="x", items=pack_items([(key_hash("post-1"), old_hash)]))
    upgraded = diff_items(bookmark, [item], settings)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    bookmark = FeedBookmark(success_at="x", items=upgraded.remembered_items)
    edited = diff_items(bookmark, [_item(elements, title="Post, edited")], settings)
    assert [change.change_type for change in edited.changes] == ["updated"]


def test_items_told_apart_by_their_content_keep_their_memory() -> None:
    """Items sharing guid and title have content ids, made from the fingerprint: the one
    the version before computed with the person listed twice."""
    items = [
        _item((AUTHOR, CREATOR))._replace(summary=f"Part {n}.", published_at=None) for n in range(2)
    ]
    hashes = [fingerprint_bytes(_as_listed_before(item, (AUTHOR, CREATOR))) for item in items]
    packed = [(key_hash(content_id("post-1", full)), short_hash(full)) for full in hashes]
    delta = diff_items(FeedBookmark(success_at="x", items=pack_items(packed)), items, SETTINGS)
    assert (delta.changes, delta.counts.unchanged) == ((), 2)


def test_many_authors_of_one_name_are_merged_in_bounded_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each with another email: none merges, and each is compared with at most the
    # MAX_AUTHORS + 1 authors kept (the rest are cut anyway).
    calls = 0
    one_person = persons._one_person

    def counting(first: Author, other: Author) -> Author | None:
        nonlocal calls
        calls += 1
        return one_person(first, other)

    monkeypatch.setattr(persons, "_one_person", counting)
    found = [Author("Jane Doe", f"jane{n}@example.org") for n in range(5000)]
    merged = persons.merged_authors(found)
    assert merged is found  # none merged: the list as found, cut by first_authors
    assert calls <= (MAX_AUTHORS + 1) * len(found)


CO_HOSTS = "<itunes:author>Jane Host &amp; John Cohost</itunes:author>"


def _show(title: str, channel: str = CO_HOSTS, guid: str = "<guid>e1</guid>") -> bytes:
    return (
        '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">'
        f"<channel><title>Show</title>{channel}"
        f"<item>{guid}<title>{title}</title><link>https://d.example/e1</link></item>"
        "</channel></rss>"
    ).encode()


@pytest.mark.parametrize("guid", ["<guid>e1</guid>", ""], ids=["guid", "link-id"])
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_channel_co_hosts_were_inherited_sends_nothing_again(
    guid: str, ignored: tuple[str, ...]
) -> None:
    """The version before gave an episode that inherits the channel's author only the
    first host: the same episode is unchanged after the upgrade, and an edit after it
    is an update."""
    (item,) = parse_feed(_show("Ep 1", guid=guid), None, URL).items
    assert item.authors == (Author("Jane Host"), Author("John Cohost"))
    before = item._replace(read_before=(), authors=(Author("Jane Host"),))
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    first = diff_items(None, [before], settings)  # the state the version before wrote
    bookmark = FeedBookmark(success_at="x", items=first.remembered_items)
    upgraded = diff_items(bookmark, [item], settings)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    bookmark = FeedBookmark(success_at="x", items=upgraded.remembered_items)
    (edited,) = parse_feed(_show("Ep 1, edited", guid=guid), None, URL).items
    after = diff_items(bookmark, [edited], settings)
    assert [change.change_type for change in after.changes] == ["updated"]


def test_a_channel_author_read_alike_before_records_no_earlier_reading() -> None:
    (item,) = parse_feed(_show("Ep 1", "<itunes:author>Jane Host</itunes:author>"), None, URL).items
    assert (item.authors, item.read_before) == ((Author("Jane Host"),), ())
