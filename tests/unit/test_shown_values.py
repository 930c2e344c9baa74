"""A value a server chose (a Content-Encoding label, where a redirect leads) is quoted into
a feed_health message with nothing that could be read as markup, and short."""

from __future__ import annotations

import pytest

from tap_feeddelta.checkfacts import shown_where
from tap_feeddelta.errors import shown_label
from tap_feeddelta.fetch.body import ignored_codings_notes
from tap_feeddelta.shownurl import logged_url

HOSTILE_LABELS = ["<svg/onload=alert(1)>", "a&b", "it's", 'x"y', "`x`", "\\x", "é", "a b"]


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_a_label_shows_only_token_characters(label: str) -> None:
    shown = shown_label(label)
    assert not set(shown) & set("<>&'\"`\\ é")
    (note,) = ignored_codings_notes([label])
    assert not set(note.message.replace('"', "")) & set("<>&'`\\é")


def test_a_label_keeps_what_a_coding_name_holds_and_is_cut_short() -> None:
    assert shown_label("x-gzip.v1_2+b") == "x-gzip.v1_2+b"
    assert shown_label("text/xml") == "text/xml"  # a media type, sent as a coding
    assert shown_label("a" * 40) == "a" * 32 + "..."


def test_where_a_redirect_leads_shows_no_markup() -> None:
    where = shown_where("https://e.org/<svg/onload=alert(1)>'&\"`x`", "https://e.org/feed")
    assert where == "https://e.org/%3Csvg/onload=alert(1)%3E%27%26%22%60x%60"


@pytest.mark.parametrize(
    ("url", "logged"),
    [
        ("https://e.org/feed.xml", "https://e.org/feed.xml"),
        ("https://e.org:8443/a/b?token=SECRET#frag", "https://e.org:8443/a/b?…"),
        ("https://u:SECRET@e.org/x", "https://e.org/x"),
        ("http://[::1]:8080/x?k=SECRET", "http://[::1]:8080/x?…"),
        ("https://e.org/<svg onload=x>", "https://e.org/%3Csvg%20onload=x%3E"),
        ("https://e.org/" + "p" * 300, "https://e.org/" + "p" * 106 + "..."),
        ("https://e.org/" + "p" * 300 + "?token=SECRET", "https://e.org/" + "p" * 106 + "...?…"),
        ("https://e.org/" + "p" * 105 + "%C3%A9x", "https://e.org/" + "p" * 105 + "..."),
    ],
    ids=[
        "plain",
        "query-fragment",
        "userinfo",
        "ipv6",
        "markup",
        "long",
        "long-query",
        "long-cut-before-escape",
    ],
)
def test_a_feed_url_is_logged_without_what_can_hold_a_secret(url: str, logged: str) -> None:
    assert logged_url(url) == logged
