"""The shard rule is part of every sharded state: a feed that moved shard after an
upgrade would be refused as another shard's (state_other_shard). Pinned by values, and
by an independent reading of the documented rule."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.sharding import feeds_of_other_shards, shard_of

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


@pytest.mark.parametrize("shard_count", [2, 3, 4])
def test_a_state_holding_another_shard_s_feeds_is_found_out(shard_count: int) -> None:
    """The states of two shards swapped (a deployment of any size, two included): every
    feed the state holds that this shard does not own is named, and no other."""
    urls = [f"https://feeds.example/{n}.xml" for n in range(40)]
    state_feeds = [("m", url) for url in urls] + [("other-monitor", urls[0])]
    for shard_index in range(shard_count):
        foreign = feeds_of_other_shards(state_feeds, "m", urls, shard_count, shard_index)
        assert foreign == [u for u in urls if shard_of("m", u, shard_count) != shard_index]
        assert foreign  # 40 feeds: some belong to another shard


def test_an_unsharded_run_owns_every_feed() -> None:
    """With one shard, a state written by any shard is this run's (merging shards back)."""
    urls = ["https://feeds.example/a.xml", "https://feeds.example/b.xml"]
    assert feeds_of_other_shards([("m", u) for u in urls], "m", urls, 1, 0) == []
