"""How record fields show what was read: URLs a redirect chose, summaries."""

from __future__ import annotations

from typing import Any

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.fingerprints import fingerprint
from tap_feeddelta.models import ContentMode, ParsedFeed, ParsedItem
from tap_feeddelta.records import EXCERPT_CHARS, FeedContext, item_record
from tap_feeddelta.shownurl import (
    advertised_url_hash,
    echoes,
    final_url_hash,
    redirect_tokens,
    shown_url,
    without_echo,
)

CONFIGURED = "https://example.org/feed.xml?key=mine"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (None, None),
        (CONFIGURED, CONFIGURED),  # the user's own URL, whole
        ("https://www.example.org/feed.xml?key=mine", "https://www.example.org/feed.xml?key=mine"),
        ("https://cdn.example.org/f.xml", "https://cdn.example.org/f.xml"),
        ("https://cdn.example.org/f.xml?sig=abc", "https://cdn.example.org/f.xml"),
        ("https://u:p@cdn.example.org:8443/f.xml", "https://cdn.example.org:8443/f.xml"),
        ("http://[::1]:8080/f?t=1", "http://[::1]:8080/f"),
        ("https://cdn.example.org/f.xml#part", "https://cdn.example.org/f.xml#part"),
        ("https://example.org/feed.xml;jsessionid=S1", "https://example.org/feed.xml"),
        ("https://example.org/a;v=1/f.xml;s=2?key=mine", "https://example.org/a/f.xml?key=mine"),
        ("https://example.org/f;s=2?sig=abc", "https://example.org/f"),
    ],
)
def test_a_url_a_redirect_adds_secrets_to_shows_scheme_host_and_path(
    url: str | None, shown: str | None
) -> None:
    assert shown_url(url, CONFIGURED) == shown


ADVERTISED = "https://b.example.org/?feed=comments-rss2"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (ADVERTISED, ADVERTISED),  # as the web page published it
        ("https://c.example.org/?feed=comments-rss2", "https://c.example.org/?feed=comments-rss2"),
        ("https://b.example.org/?feed=comments-rss2&sig=abc", "https://b.example.org/"),
        ("https://b.example.org/feed.xml?key=mine", "https://b.example.org/feed.xml?key=mine"),
    ],
)
def test_a_discovered_feed_s_url_is_shown_whole_as_its_web_page_advertised_it(
    url: str, shown: str
) -> None:
    assert shown_url(url, CONFIGURED, ADVERTISED) == shown


@pytest.mark.parametrize(
    ("asked", "read"),
    [
        (
            "https://e.org/rss?cat=новости",
            "https://e.org/rss?cat=%D0%BD%D0%BE%D0%B2%D0%BE%D1%81%D1%82%D0%B8",
        ),
        ("https://e.org/rss?cat=%d0%bd", "https://e.org/rss?cat=%D0%BD"),
        ('https://e.org/rss?q={a|b}^"', "https://e.org/rss?q=%7Ba%7Cb%7D%5E%22"),
    ],
    ids=["non-ascii", "lower-case-escapes", "reserved-characters"],
)
def test_a_query_is_compared_as_the_fetcher_sends_it(asked: str, read: str) -> None:
    assert shown_url(read, asked) == read
    assert shown_url(read, CONFIGURED, asked) == read


def test_path_parameters_of_the_user_s_own_url_are_kept() -> None:
    own = "https://example.org/feed;type=rss"
    assert shown_url(own, own) == own
    assert shown_url(own, CONFIGURED, own) == own


def test_the_hash_names_the_whole_url_but_not_a_session_id_a_redirect_added() -> None:
    posts, comments = (f"https://e.org/index.php?feed={f}" for f in ("rss2", "comments-rss2"))
    assert final_url_hash(posts, "https://e.org/feed/") != final_url_hash(
        comments, "https://e.org/comments/feed/"
    )
    one, two = (f"https://e.org/feed;jsessionid={n}" for n in (1, 2))
    assert final_url_hash(one, "https://e.org/feed") == final_url_hash(two, "https://e.org/feed")
    assert final_url_hash(one, one) != final_url_hash(two, two)


def test_the_hash_leaves_out_the_signature_a_redirect_added_but_not_the_object() -> None:
    """A pre-signed URL, signed anew on every visit, is the same resource; another object
    or another query parameter behind a signature is not; the signed form is no bare one."""
    feed = "https://e.org/feed"

    def signed(query: str, n: int) -> str:
        return f"https://b.s3.example/feed.xml?{query}X-Amz-Date={n}&X-Amz-Signature=s{n}"

    assert final_url_hash(signed("", 1), feed) == final_url_hash(signed("", 2), feed)
    assert final_url_hash(signed("id=1&", 1), feed) != final_url_hash(signed("id=2&", 1), feed)
    assert final_url_hash(signed("", 1), feed) != final_url_hash(
        "https://b.s3.example/feed.xml", feed
    )
    # The user's own URL (or the one a page published) is the resource, whole.
    own = [f"https://e.org/feed?token={n}" for n in (1, 2)]
    assert final_url_hash(own[0], own[0]) != final_url_hash(own[1], own[1])


def test_the_advertised_hash_names_the_feed_a_page_links_to_not_its_signature() -> None:
    posts, comments = (
        advertised_url_hash("https://e.org/feed/"),
        advertised_url_hash("https://e.org/comments/feed/"),
    )
    assert posts != comments
    signed = "https://b.example.org/feed.xml?id=5&X-Amz-Date=1&X-Amz-Signature={}"
    assert advertised_url_hash(signed.format("a1")) == advertised_url_hash(signed.format("b2"))
    assert advertised_url_hash(signed.format("a1")) != advertised_url_hash(
        "https://b.example.org/feed.xml?id=6&X-Amz-Signature=a1"
    )
    assert advertised_url_hash("https://e.org/rss?cat=новости") == advertised_url_hash(
        "https://e.org/rss?cat=%d0%bd%d0%be%d0%b2%d0%be%d1%81%d1%82%d0%b8"
    )


def test_a_page_s_link_that_echoes_what_a_redirect_handed_it_is_not_published() -> None:
    page = "https://e.org/blog"
    handed = redirect_tokens("https://e.org/blog;jsessionid=S1?sid=S2&lang=en", page)
    assert handed == {";jsessionid=S1", "sid=S2", "lang=en"}
    assert echoes("https://e.org/feed;jsessionid=S1", handed)
    assert echoes("https://e.org/feed?format=rss&sid=S2", handed)
    assert not echoes("https://e.org/feed?format=rss", handed)
    assert without_echo("https://e.org/f;jsessionid=S1?a=1", handed) == "https://e.org/f"
    assert without_echo("https://e.org/f?a=1", handed) == "https://e.org/f?a=1"
    assert redirect_tokens("https://e.org/blog?sid=S2", "https://e.org/blog?sid=S2") == set()


def _record(item: ParsedItem, mode: ContentMode) -> dict[str, Any]:
    change = diff_items(None, [item], DeltaSettings("m", "u", first_run_mode="emit_all")).changes[0]
    feed = ParsedFeed(format="atom-1.0", title="t", items=(item,))
    return item_record(FeedContext("m", "u", "2024-01-01T00:00:00Z"), feed, "u", change, mode)


def test_an_item_with_content_and_no_summary_shows_the_start_of_its_content() -> None:
    """Content-only feeds (Medium, GitHub, Blogger) would show no words in excerpts mode."""
    words = " ".join(f"word{n}" for n in range(200))
    content_only = ParsedItem("id-1", "atom_id", title="T", content_text=words)
    summary = _record(content_only, "excerpts")["summary"]
    assert summary.endswith("…") and len(summary) <= EXCERPT_CHARS
    assert words.startswith(summary[:-1]) and words[len(summary) - 1] == " "  # at a space
    assert _record(content_only, "metadata")["summary"] is None
    assert _record(content_only, "feed_content")["content_text"] == words
    short = ParsedItem("id-2", "atom_id", content_text="Just a line.")
    assert _record(short, "excerpts")["summary"] == "Just a line."
    both = ParsedItem("id-3", "atom_id", summary="Own summary", content_text=words)
    assert _record(both, "excerpts")["summary"] == "Own summary"
    # The fingerprint is the item's, whatever the record shows.
    assert _record(content_only, "excerpts")["fingerprint"] == fingerprint(content_only)


@pytest.mark.parametrize(
    "text",
    [
        "z" * 800,  # no space: cut at the cap
        "a" * 498 + " " + "b" * 300,  # a space just before the cap
        "a" * 499 + " " + "b" * 300,  # a space at the cap
        "a" * 500 + " " + "b" * 300,  # a space just after it
        "word " * 200,
    ],
    ids=["no-space", "space-at-498", "space-at-499", "space-at-500", "words"],
)
def test_an_excerpt_is_at_most_500_characters_with_its_ellipsis(text: str) -> None:
    """The README promises an excerpt of 500 characters: a VARCHAR(500) column holds it."""
    item = ParsedItem("id-1", "atom_id", content_text=text)
    summary = _record(item, "excerpts")["summary"]
    assert EXCERPT_CHARS == 500
    assert summary.endswith("…") and len(summary) <= EXCERPT_CHARS
    assert text.startswith(summary[:-1])


def test_tags_are_a_set_written_in_one_order() -> None:
    """Two versions that list the same tags in other orders show the same tags: before,
    a model comparing versions saw `tags` change with every reorder."""
    shuffled = [
        _record(ParsedItem("id-1", "atom_id", title="T", tags=order), "metadata")["tags"]
        for order in (("b", "a", "c"), ("c", "b", "a"))
    ]
    assert shuffled == [["a", "b", "c"], ["a", "b", "c"]]
