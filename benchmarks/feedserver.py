#!/usr/bin/env python3
"""A fast loopback feed server for the whole-run benchmarks (standard library only).

    python benchmarks/feedserver.py --feeds 10000 --hosts 1000

Serves ``--feeds`` generated RSS 2.0 documents of ~20 KB (20 items with HTML descriptions)
at ``http://127.77.H.H:PORT/feeds/N.xml``. Feed N lives on loopback host N % hosts, so a
run sees many publishers, as it would in production: the tap limits itself per host name
(``max_per_host``) and keeps its keep-alive pool by (scheme, host, port, address), so one
host for everything would throttle it to ``max_per_host`` requests at once and make every
connection a reused one. Every address in 127.0.0.0/8 is loopback on Linux; the server
binds each one of them separately (never a wildcard address).

Every answer carries an ETag and Last-Modified; a matching If-None-Match (or, without it,
If-Modified-Since) is answered 304. HTTP/1.1 keep-alive, no compression.

Control on stdin, one command a line, one JSON answer a line on stdout:
    change FRACTION SEED   a deterministic FRACTION of the feeds gains one new item (and
                           drops its oldest one): new body, new ETag and Last-Modified
    stats                  requests answered so far by status, and this process's CPU time
    reset-stats
    quit
The first line written on stdout is {"port": P, "hosts": [...]} once every socket listens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import sys
from collections import Counter
from email.utils import formatdate

ITEMS_PER_FEED = 20
BASE_TIME = 1_735_689_600  # 2025-01-01T00:00:00Z: fixed, so documents are reproducible
LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
    "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud "
    "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."
)


def host_address(index: int) -> str:
    """The loopback address of host ``index`` (0-based): 127.77.X.Y, Y in 1..250."""
    return f"127.77.{index // 250}.{1 + index % 250}"


def feed_url(feed: int, hosts: int, port: int) -> str:
    return f"http://{host_address(feed % hosts)}:{port}/feeds/{feed}.xml"


def _item(feed: int, number: int) -> str:
    published = formatdate(BASE_TIME + number * 3600 + feed, usegmt=True)
    link = f"https://publisher{feed}.example/posts/{number}"
    description = (
        f"<p>Post {number} of feed {feed}. {LOREM}</p>"
        f'<p>Read <a href="{link}#more">more &amp; more</a>, or see <em>the archive</em>. '
        f"{LOREM}</p><ul><li>first point</li><li>second point</li></ul>"
    )
    return (
        "<item>"
        f"<title>Post number {number} of feed {feed}: a headline of ordinary length</title>"
        f"<link>{link}</link>"
        f'<guid isPermaLink="false">urn:bench:{feed}:{number}</guid>'
        f"<pubDate>{published}</pubDate>"
        f"<author>author{number % 7}@publisher{feed}.example (Author {number % 7})</author>"
        f"<category>topic-{number % 5}</category><category>bench</category>"
        f"<description><![CDATA[{description}]]></description>"
        "</item>\n"
    )


def feed_document(feed: int, version: int) -> bytes:
    """Feed ``feed`` at ``version``: items version+1 .. version+20, newest first."""
    numbers = range(version + ITEMS_PER_FEED, version, -1)
    items = "".join(_item(feed, n) for n in numbers)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
        f"<title>Benchmark feed {feed}</title>"
        f"<link>https://publisher{feed}.example/</link>"
        f"<description>Generated feed {feed} for benchmarks</description>"
        f"<language>en</language>{items}</channel></rss>\n"
    ).encode()


class Feeds:
    def __init__(self, count: int) -> None:
        self.count = count
        self.versions = [0] * count
        self._cache: dict[int, tuple[int, bytes, bytes, bytes]] = {}
        self.stats: Counter[str] = Counter()

    def entry(self, feed: int) -> tuple[bytes, bytes, bytes]:
        """(body, etag, last_modified) of the feed's current version (cached)."""
        version = self.versions[feed]
        cached = self._cache.get(feed)
        if cached is None or cached[0] != version:
            body = feed_document(feed, version)
            etag = f'"b{feed}-{version}"'.encode()
            modified = formatdate(BASE_TIME + version * 3600, usegmt=True).encode()
            cached = (version, body, etag, modified)
            self._cache[feed] = cached
        return cached[1], cached[2], cached[3]

    def change(self, fraction: float, seed: int) -> int:
        chosen = random.Random(seed).sample(range(self.count), round(self.count * fraction))
        for feed in chosen:
            self.versions[feed] += 1
        return len(chosen)


class FeedProtocol(asyncio.Protocol):
    def __init__(self, feeds: Feeds) -> None:
        self.feeds = feeds
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.feeds.stats["connections"] += 1

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > 65536:
                    self._close()
                return
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            if not self._answer(head):
                self._close()
                return

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def _answer(self, head: bytes) -> bool:
        lines = head.split(b"\r\n")
        try:
            method, target, version = lines[0].split(b" ")
        except ValueError:
            return False
        if_none_match = if_modified_since = None
        close = version == b"HTTP/1.0"
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"if-none-match":
                if_none_match = value.strip()
            elif name == b"if-modified-since":
                if_modified_since = value.strip()
            elif name == b"connection":
                close = value.strip().lower() == b"close"
        feed = -1
        if target.startswith(b"/feeds/") and target.endswith(b".xml"):
            try:
                feed = int(target[7:-4])
            except ValueError:
                feed = -1
        assert self.transport is not None
        keep = b"close" if close else b"keep-alive"
        if method not in (b"GET", b"HEAD") or not 0 <= feed < self.feeds.count:
            self.feeds.stats["404"] += 1
            self.transport.write(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: " + keep + b"\r\n\r\n"
            )
            return not close
        body, etag, modified = self.feeds.entry(feed)
        validators = b"ETag: " + etag + b"\r\nLast-Modified: " + modified + b"\r\n"
        if (if_none_match is not None and etag in if_none_match.split(b", ")) or (
            if_none_match is None and if_modified_since == modified
        ):
            self.feeds.stats["304"] += 1
            self.transport.write(
                b"HTTP/1.1 304 Not Modified\r\n" + validators + b"Connection: " + keep + b"\r\n\r\n"
            )
            return not close
        self.feeds.stats["200"] += 1
        self.transport.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml; charset=utf-8\r\n"
            + validators
            + b"Content-Length: "
            + str(len(body)).encode()
            + b"\r\nConnection: "
            + keep
            + b"\r\n\r\n"
            + (body if method == b"GET" else b"")
        )
        return not close


async def serve(feeds: Feeds, hosts: int, port: int) -> None:
    loop = asyncio.get_running_loop()
    servers = []
    first = await loop.create_server(
        lambda: FeedProtocol(feeds), host_address(0), port, backlog=1024, reuse_address=True
    )
    port = first.sockets[0].getsockname()[1]
    servers.append(first)
    for index in range(1, hosts):
        servers.append(
            await loop.create_server(
                lambda: FeedProtocol(feeds),
                host_address(index),
                port,
                backlog=1024,
                reuse_address=True,
            )
        )
    print(json.dumps({"port": port, "hosts": hosts, "pid": os.getpid()}), flush=True)

    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = (await reader.readline()).decode().split()
        if not line or line[0] == "quit":
            break
        if line[0] == "change":
            changed = feeds.change(float(line[1]), int(line[2]))
            print(json.dumps({"changed": changed}), flush=True)
        elif line[0] == "stats":
            usage = resource.getrusage(resource.RUSAGE_SELF)
            print(
                json.dumps({**feeds.stats, "cpu_s": usage.ru_utime + usage.ru_stime}),
                flush=True,
            )
        elif line[0] == "reset-stats":
            feeds.stats.clear()
            print(json.dumps({"ok": True}), flush=True)
        elif line[0] == "warm":
            for feed in range(feeds.count):
                feeds.entry(feed)
            print(json.dumps({"warm": feeds.count}), flush=True)
    for server in servers:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--feeds", type=int, default=1000)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(serve(Feeds(args.feeds), min(args.hosts, args.feeds), args.port))


if __name__ == "__main__":
    main()
