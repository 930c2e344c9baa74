#!/usr/bin/env python3
"""The floor: a bare asyncio HTTP/1.1 client that only fetches the benchmark's URLs.

    python benchmarks/bare_client.py --urls URLS.txt [--etags-in E.json] [--etags-out E.json]

It does what any feed reader must do and nothing more: at most ``--concurrency`` requests
at once and ``--per-host`` per host, keep-alive connections reused per host, a conditional
GET when an ETag is known, the body read by Content-Length. No parsing, no safety checks,
no output. Prints one JSON line: {"ok": n, "not_modified": n, "errors": n, "bytes": n}.
Plain http:// URLs only (the benchmark server's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit


class Client:
    def __init__(self, concurrency: int, per_host: int, etags: dict[str, str]) -> None:
        self.global_slots = asyncio.Semaphore(concurrency)
        self.per_host = per_host
        self.host_slots: dict[tuple[str, int], asyncio.Semaphore] = {}
        self.idle: dict[tuple[str, int], list] = defaultdict(list)
        self.etags = etags
        self.new_etags: dict[str, str] = {}
        self.counts = {"ok": 0, "not_modified": 0, "errors": 0, "bytes": 0}

    async def fetch(self, url: str) -> None:
        parts = urlsplit(url)
        key = (parts.hostname or "", parts.port or 80)
        slot = self.host_slots.setdefault(key, asyncio.Semaphore(self.per_host))
        async with self.global_slots, slot:
            try:
                await self._fetch(url, key, parts.path or "/")
            except (OSError, ValueError, asyncio.IncompleteReadError):
                self.counts["errors"] += 1

    async def _fetch(self, url: str, key: tuple[str, int], path: str) -> None:
        idle = self.idle[key]
        reader, writer = idle.pop() if idle else await asyncio.open_connection(*key)
        etag = self.etags.get(url)
        request = f"GET {path} HTTP/1.1\r\nHost: {key[0]}:{key[1]}\r\nAccept: */*\r\n"
        if etag:
            request += f"If-None-Match: {etag}\r\n"
        writer.write((request + "\r\n").encode("latin-1"))
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length = 0
        close = False
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.lower()
            if name == "content-length":
                length = int(value)
            elif name == "etag":
                self.new_etags[url] = value.strip()
            elif name == "connection" and value.strip().lower() == "close":
                close = True
        body = await reader.readexactly(length) if length and status != 304 else b""
        if status == 200:
            self.counts["ok"] += 1
            self.counts["bytes"] += len(body)
        elif status == 304:
            self.counts["not_modified"] += 1
        else:
            self.counts["errors"] += 1
        if close:
            writer.close()
        else:
            idle.append((reader, writer))


async def run(urls: list[str], concurrency: int, per_host: int, etags: dict[str, str]) -> Client:
    client = Client(concurrency, per_host, etags)
    queue = iter(urls)

    async def worker() -> None:
        for url in queue:
            await client.fetch(url)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    for idle in client.idle.values():
        for _, writer in idle:
            writer.close()
    return client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urls", required=True)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--per-host", type=int, default=2)
    parser.add_argument("--etags-in")
    parser.add_argument("--etags-out")
    args = parser.parse_args()
    urls = Path(args.urls).read_text(encoding="utf-8").split()
    etags: dict[str, str] = {}
    if args.etags_in:
        etags = json.loads(Path(args.etags_in).read_text(encoding="utf-8"))
    client = asyncio.run(run(urls, args.concurrency, args.per_host, etags))
    if args.etags_out:
        Path(args.etags_out).write_text(json.dumps(client.new_etags), encoding="utf-8")
    print(json.dumps(client.counts))


if __name__ == "__main__":
    main()
