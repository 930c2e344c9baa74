"""Blogger writes ``noreply@blogger.com`` as every author's email, in its Atom and RSS
feeds: nobody's address, so no author has it, in any format. A state written when it
was read as the author's email is read as written: the upgrade sends nothing again."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.models import Author, ParsedItem
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import FeedBookmark

URL = "https://jane.blogspot.com/feeds/posts/default"
SETTINGS = DeltaSettings("m", URL)
PROFILE = "https://www.blogger.com/profile/01234567890123456789"
PLACEHOLDER = "noreply@blogger.com"
JANE = Author("Jane Doe", None, PROFILE)
_DC = 'xmlns:dc="http://purl.org/dc/elements/1.1/"'


def _atom(
    title: str, *, entry_id: bool = True, email: str = PLACEHOLDER, entry_author: bool = True
) -> bytes:
    """Blogger's Atom feed: the blog's author, and each entry's."""
    person = f"<author><name>Jane Doe</name><uri>{PROFILE}</uri><email>{email}</email></author>"
    own_id = "<id>tag:blogger.com,1999:blog-1.post-2</id>" if entry_id else ""
    return (
        '<feed xmlns="http://www.w3.org/2005/Atom"><id>tag:blogger.com,1999:blog-1</id>'
        f"<title>Jane's blog</title>{person}<updated>2026-09-01T07:00:00Z</updated>"
        f"<entry>{own_id}<title>{title}</title><updated>2026-09-01T07:00:00Z</updated>"
        "<link rel='alternate' href='https://jane.blogspot.com/2026/09/post.html'/>"
        f"{person if entry_author else ''}</entry></feed>"
    ).encode()


def _atom_feed_author(title: str, *, entry_id: bool = True) -> bytes:
    """An entry that inherits the feed's author."""
    return _atom(title, entry_id=entry_id, entry_author=False)


def _rss(channel: str, item: str) -> Callable[..., bytes]:
    def feed(title: str, *, entry_id: bool = True) -> bytes:
        guid = "<guid isPermaLink='false'>tag:blogger.com,1999:blog-1.post-2</guid>"
        return (
            f'<rss version="2.0" {_DC}><channel><title>Jane</title>{channel}'
            f"<item>{guid if entry_id else ''}<title>{title}</title>"
            "<link>https://jane.blogspot.com/2026/09/post.html</link>"
            f"{item}</item></channel></rss>"
        ).encode()

    return feed


def _json(title: str, *, entry_id: bool = True) -> bytes:
    author = {"name": "Jane Doe", "url": f"mailto:{PLACEHOLDER}"}
    item = {"title": title, "url": "https://jane.blogspot.com/2026/09/post.html",
            "authors": [author], "content_text": "Text."}  # fmt: skip
    if entry_id:
        item["id"] = "post-2"
    return json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "title": "Jane", "items": [item]}
    ).encode()


# Each feed, and the authors of its item (now; as versions before read them).
FEEDS: dict[str, tuple[Callable[..., bytes], tuple[Author, ...], tuple[Author, ...]]] = {
    "atom": (_atom, (JANE,), (Author("Jane Doe", PLACEHOLDER, PROFILE),)),
    "atom-feed-author": (_atom_feed_author, (JANE,), (Author("Jane Doe", PLACEHOLDER, PROFILE),)),
    "rss-author": (
        _rss("", f"<author>{PLACEHOLDER} (Jane Doe)</author>"),
        (Author("Jane Doe"),),
        (Author("Jane Doe", PLACEHOLDER),),
    ),
    "rss-managing-editor": (
        _rss(f"<managingEditor>{PLACEHOLDER} (Jane Doe)</managingEditor>", ""),
        (Author("Jane Doe"),),
        (Author("Jane Doe", PLACEHOLDER),),
    ),
    "rss-person": (
        _rss("", f"<author><name>Jane Doe</name><email>{PLACEHOLDER}</email></author>"),
        (Author("Jane Doe"),),
        (Author("Jane Doe", PLACEHOLDER),),
    ),
    "rss-address-alone": (
        _rss("", f"<author>{PLACEHOLDER}</author>"),
        (),
        (Author(None, PLACEHOLDER),),
    ),
    "rss-dc-creator": (
        _rss("", f"<dc:creator>Jane Doe &lt;{PLACEHOLDER.upper()}&gt;</dc:creator>"),
        (Author("Jane Doe"),),
        (Author("Jane Doe", PLACEHOLDER.upper()),),
    ),
    "json-feed": (_json, (Author("Jane Doe"),), (Author("Jane Doe", PLACEHOLDER),)),
}  # fmt: skip


def _item(feed: Callable[..., bytes], title: str = "Post", entry_id: bool = True) -> ParsedItem:
    (item,) = parse_feed(feed(title, entry_id=entry_id), None, URL).items
    return item


@pytest.mark.parametrize(("feed", "authors", "_"), FEEDS.values(), ids=FEEDS.keys())
def test_the_placeholder_is_no_authors_email(
    feed: Callable[..., bytes], authors: tuple[Author, ...], _: tuple[Author, ...]
) -> None:
    assert _item(feed).authors == authors


@pytest.mark.parametrize(
    "email", ["jane@blogger.com", "noreply@blogger.com.example", "noreply@example.org"]
)
def test_other_addresses_are_kept(email: str) -> None:
    (item,) = parse_feed(_atom("Post", email=email), None, URL).items
    assert item.authors == (Author("Jane Doe", email, PROFILE),)
    assert item.read_before == ()


@pytest.mark.parametrize(("feed", "_", "authors_before"), FEEDS.values(), ids=FEEDS.keys())
@pytest.mark.parametrize("entry_id", [True, False], ids=["own-id", "link-id"])
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_sends_nothing_again(
    feed: Callable[..., bytes],
    _: tuple[Author, ...],
    authors_before: tuple[Author, ...],
    entry_id: bool,
    ignored: tuple[str, ...],
) -> None:
    """The version before read the placeholder as the author's email: the same item is
    unchanged after the upgrade, and an edit after it is an update."""
    item = _item(feed, entry_id=entry_id)
    before = item._replace(read_before=(), authors=authors_before)
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    first = diff_items(None, [before], settings)  # the state the version before wrote
    bookmark = FeedBookmark(success_at="x", items=first.remembered_items)
    upgraded = diff_items(bookmark, [item], settings)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    assert upgraded.remembered_items == diff_items(None, [item], settings).remembered_items
    bookmark = FeedBookmark(success_at="x", items=upgraded.remembered_items)
    edited = diff_items(bookmark, [_item(feed, "Post, edited", entry_id)], settings)
    assert [change.change_type for change in edited.changes] == ["updated"]
