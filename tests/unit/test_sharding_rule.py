"""The shard rule is part of every sharded state: a feed that moved shard after an
upgrade would be refused as another shard's (state_other_shard). Pinned by values, and
by an independent reading of the documented rule."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.sharding import shard_of

PINNED = [
    ("default", "https://example.org/feed.xml", 2, 0),
    ("default", "https://example.org/feed.xml", 4, 3),
    ("default", "https://example.org/feed.xml", 16, 3),
    ("news", "http://blog.example.com/rss", 3, 0),
    ("news", "http://blog.example.com/rss", 1024, 493),
    ("m", "https://例え.jp/フィード", 7, 5),
    ("", "https://a.test/", 5, 3),
    ("default", "https://example.org/feed.xml?page=2", 8, 3),
    ("team-a", "https://podcasts.example.net/show.rss", 10, 1),
    ("team-a", "https://podcasts.example.net/show.rss", 11, 10),
]


@pytest.mark.parametrize(("monitor_id", "feed_url", "count", "shard"), PINNED)
def test_the_shard_of_a_feed_never_changes(
    monitor_id: str, feed_url: str, count: int, shard: int
) -> None:
    assert shard_of(monitor_id, feed_url, count) == shard


def _documented_rule(monitor_id: str, feed_url: str, count: int) -> int:
    def weight(shard: int) -> int:
        material = f"{monitor_id}\x1f{feed_url}\x1f{shard}".encode()
        return int.from_bytes(hashlib.blake2b(material, digest_size=8).digest(), "big")

    return max(range(count), key=lambda shard: (weight(shard), -shard))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20), st.text(min_size=1, max_size=60), st.integers(1, 64))
def test_the_shard_is_the_documented_rule(monitor_id: str, feed_url: str, count: int) -> None:
    assert shard_of(monitor_id, feed_url, count) == _documented_rule(monitor_id, feed_url, count)
