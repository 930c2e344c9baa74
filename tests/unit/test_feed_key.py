"""Two spellings of one feed in feed_urls: the fetcher would send one request for both."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.config import config_problems, feed_key, fetcher_key

SAME = [
    ("https://example.org/f", "HTTPS://Example.org:443/f#top"),
    ("https://example.org/", "https://example.org"),
    ("https://example.org/f", "https://example.org./f"),
    ("http://127.0.0.1:8080/feed.xml", "http://127.0.0.1:8080/x/../feed.xml"),
    ("http://127.0.0.1:8080/feed.xml", "http://127.0.0.1:8080/./feed.xml"),
    ("http://bücher.example/feed", "http://xn--bcher-kva.example/feed"),
    ("http://e.org/rss?cat=новости", "http://e.org/rss?cat=%d0%bd%d0%be%d0%b2%d0%be%d1%81%d1%82%d0%b8"),
    ("http://[::1]:80/f", "http://[::1]/f"),
]  # fmt: skip


@pytest.mark.parametrize(("one", "other"), SAME, ids=[o for _, o in SAME])
def test_spellings_the_fetcher_sends_alike_are_one_feed(one: str, other: str) -> None:
    assert feed_key(one) == feed_key(other)
    [problem] = config_problems({"feed_urls": [one, other]})
    assert "config['feed_urls'][1] is the same feed as config['feed_urls'][0]" in problem


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://example.org/?feed=rss2", "https://example.org/?feed=comments-rss2"),
        ("https://example.org/f", "https://example.org/F"),
        ("https://example.org/f", "http://example.org/f"),
        ("https://example.org/a/b", "https://example.org/a%2Fb"),
        ("https://example.org/f", "not a url"),
    ],
)
def test_other_feeds_stay_apart(one: str, other: str) -> None:
    assert feed_key(one) != feed_key(other)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["http://", "https://", "HTTP://"]),
    st.sampled_from(["example.org", "Example.org", "e.org.", "127.0.0.1", "bücher.example"]),
    st.sampled_from(["", ":80", ":443", ":8080", ":080", ":99999"]),
    st.text(alphabet="/.a-_~%20Z;=@!é{}|", max_size=16),
    st.none() | st.text(alphabet="/.?a=&%2f{}|é", max_size=10),
)
def test_the_quick_key_is_the_fetcher_s(
    scheme: str, host: str, port: str, path: str, query: str | None
) -> None:
    url = f"{scheme}{host}{port}{path}" + ("" if query is None else f"?{query}")
    assert feed_key(url) == fetcher_key(url)
