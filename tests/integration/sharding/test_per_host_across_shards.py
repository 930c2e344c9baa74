"""`max_per_host` holds within one tap process, not across shards (docs/scheduling-and-scaling.md).

Shards hash feeds by URL, so the feeds of one host spread over every shard, and N shard runs
side by side may fetch from one host N × `max_per_host` at once. This pins that documented
behaviour: each shard keeps to its cap, and the host sees the sum.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from tap_feeddelta.sharding import shard_of
from tests.feedserver import FeedServer, rss
from tests.tapharness import run_tap

SHARDS = 2
FEEDS = 12
# How long the first request of one shard waits for the other shard's first request. Only
# a bound on a wait, generous for a loaded machine: the test measures no time.
MEET_SECONDS = 60.0


class MeetingServer(FeedServer):
    """Counts requests in flight, per shard and in all, and holds each shard's requests
    until requests of every shard are in flight at once (then lets everything through)."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight: Counter[int] = Counter()
        self.peak: Counter[int] = Counter()
        self.peak_total = 0
        self.met = threading.Event()
        self._counts = threading.Lock()

    def shard(self, path: str) -> int:
        return shard_of("default", self.url(path), SHARDS)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        shard = self.shard(urlsplit(handler.path).path)
        with self._counts:
            self.in_flight[shard] += 1
            self.peak[shard] = max(self.peak[shard], self.in_flight[shard])
            self.peak_total = max(self.peak_total, sum(self.in_flight.values()))
            if all(self.in_flight[i] for i in range(SHARDS)):
                self.met.set()
        try:
            self.met.wait(MEET_SECONDS)
            super()._handle(handler)
        finally:
            with self._counts:
                self.in_flight[shard] -= 1


def _config(server: FeedServer, paths: list[str], index: int) -> dict[str, Any]:
    return {
        "feed_urls": [server.url(p) for p in paths],
        "allow_private_networks": True,
        "max_concurrency": 4,
        "max_per_host": 1,
        "request_timeout_seconds": 120,
        "shard_count": SHARDS,
        "shard_index": index,
    }


def test_each_shard_keeps_max_per_host_and_the_host_sees_their_sum() -> None:
    server = MeetingServer().start()
    try:
        paths = [f"/f{n}.xml" for n in range(FEEDS)]
        for path in paths:
            server.put(path, rss([(f"{path}-1", "One", "s")]))
        assert {server.shard(p) for p in paths} == set(range(SHARDS))
        with ThreadPoolExecutor(max_workers=SHARDS) as pool:
            runs = list(pool.map(lambda i: run_tap(_config(server, paths, i)), range(SHARDS)))
    finally:
        server.stop()
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(h["feed_url"] for run in runs for h in run.health) == sorted(
        server.url(p) for p in paths
    )
    assert server.met.is_set(), "the shards never fetched at the same time"
    assert dict(server.peak) == dict.fromkeys(range(SHARDS), 1)  # max_per_host, per process
    assert server.peak_total == SHARDS * 1  # the host: shard_count × max_per_host
