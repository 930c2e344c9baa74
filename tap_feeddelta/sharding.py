"""Which shard owns a feed: rendezvous (highest random weight) hashing.

Each (monitor_id, feed_url) belongs to exactly one of ``shard_count`` shards. When the
count changes from N to M, a feed moves only if its best shard among the new set differs,
which is the minimum possible (about |M - N| / max(M, N) of the feeds). Pure and stable
across processes, machines and Python versions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def shard_of(monitor_id: str, feed_url: str, shard_count: int) -> int:
    """The shard (0 ≤ shard < shard_count) that owns this feed: the one of highest weight,
    a shard's weight being the 8-byte BLAKE2b digest (digest_size=8) of
    ``f"{monitor_id}\x1f{feed_url}\x1f{shard}"`` read big-endian (the lowest shard wins a
    tie). Every state written under sharding depends on this rule: it must never change.
    (The common prefix is hashed once and copied for each shard.)"""
    if shard_count < 1:
        raise ValueError("shard_count must be at least 1")
    if shard_count == 1:
        return 0
    prefix = hashlib.blake2b(f"{monitor_id}\x1f{feed_url}\x1f".encode(), digest_size=8)
    best_shard, best = 0, -1
    for shard in range(shard_count):
        hashed = prefix.copy()
        hashed.update(str(shard).encode())
        weight = int.from_bytes(hashed.digest(), "big")
        if weight > best:
            best_shard, best = shard, weight
    return best_shard


def feeds_of_other_shards(
    state_feeds: Iterable[tuple[str, str]],
    monitor_id: str,
    feed_urls: Iterable[str],
    shard_count: int,
    shard_index: int,
) -> list[str]:
    """The configured feeds of ``monitor_id`` that a state holds (as (monitor_id,
    feed_url) pairs) but another shard owns: a state written under another shard_count
    or shard_index, or another shard's state."""
    if shard_count == 1:
        return []
    configured = set(feed_urls)
    return [
        url
        for monitor, url in state_feeds
        if monitor == monitor_id
        and url in configured
        and shard_of(monitor, url, shard_count) != shard_index
    ]
