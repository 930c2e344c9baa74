"""Which shard owns a feed: rendezvous (highest random weight) hashing.

Each (monitor_id, feed_url) belongs to exactly one of ``shard_count`` shards. When the
count changes from N to M, a feed moves only if its best shard among the new set differs,
which is the minimum possible (about |M - N| / max(M, N) of the feeds). Pure and stable
across processes, machines and Python versions.
"""

from __future__ import annotations

import hashlib


def _weight(monitor_id: str, feed_url: str, shard: int) -> int:
    material = f"{monitor_id}\x1f{feed_url}\x1f{shard}".encode()
    return int.from_bytes(hashlib.blake2b(material, digest_size=8).digest(), "big")


def shard_of(monitor_id: str, feed_url: str, shard_count: int) -> int:
    """The shard (0 ≤ shard < shard_count) that owns this feed."""
    if shard_count < 1:
        raise ValueError("shard_count must be at least 1")
    if shard_count == 1:
        return 0
    return max(range(shard_count), key=lambda shard: _weight(monitor_id, feed_url, shard))
