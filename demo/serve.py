#!/usr/bin/env python3
"""Sample feeds on loopback that change between phases: the demo and the e2e tests use it.

    python demo/serve.py --port 8765                 # phase 1; switch with the admin URL
    python demo/serve.py --port 0 --port-file P      # a free port, written to P
    python demo/serve.py --phase-file F              # the phase is read from F on each request

Feeds: /rss.xml (RSS 2.0), /atom.xml (Atom 1.0), /feed.json (JSON Feed 1.1) and
/gone.xml (always 404, to show a failing feed). Responses carry ETag and Last-Modified and
answer 304 to a matching If-None-Match / If-Modified-Since.

Phase 1 is the baseline: RSS 3 items, Atom 2 entries, JSON Feed 2 items.
Phase 2: RSS gains one item and edits the title of one, Atom gains one entry, the JSON Feed
is unchanged (a conditional request gets 304; it is stale, its newest item 45 days old).
So a delta run after the baseline delivers exactly 3 feed_items: 2 new, 1 updated
(``EXPECTED`` below).

``?delay=SECONDS`` (at most 60) on a feed URL delays the answer: a slow feed, used to keep
one pipeline run busy while a second one is started.

Set the phase with ``GET /_demo/phase?set=2`` (or by writing 2 into the phase file);
``GET /_demo/phase`` shows it. Only the standard library is used; the server binds
127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

# What a tap run sees, per phase; the e2e tests and scripts/run --demo check against it.
EXPECTED = {
    # emit_all baseline: every item of phase 1
    "baseline_items": 7,
    # phase 1 -> 2 delta
    "delta_items": 3,
    "delta_new": 2,
    "delta_updated": 1,
    "feeds_ok": 3,
    "feeds_failed": 1,
}

# Dates are anchored to the start of the current UTC day so that content (and with it
# fingerprints, ETags and Last-Modified) stays the same across restarts within a day.
DAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _at(hours_before: float) -> datetime:
    return DAY - timedelta(hours=hours_before)


def _rfc822(at: datetime) -> str:
    return format_datetime(at, usegmt=True)


def _rfc3339(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


RSS_ITEMS_1 = [
    ("demo-rss-1", "Baseline post one", "First post of the demo blog.", 72),
    ("demo-rss-2", "Baseline post two", "Second post of the demo blog.", 48),
    ("demo-rss-3", "Baseline post three", "Third post of the demo blog.", 24),
]
RSS_ITEMS_2 = [
    ("demo-rss-1", "Baseline post one", "First post of the demo blog.", 72),
    ("demo-rss-2", "Baseline post two (corrected)", "Second post of the demo blog.", 48),
    ("demo-rss-3", "Baseline post three", "Third post of the demo blog.", 24),
    ("demo-rss-4", "Phase two post", "A post added in phase 2.", 2),
]
ATOM_ENTRIES_1 = [
    ("urn:demo:atom:1", "Release 1.0", "The first release.", 96),
    ("urn:demo:atom:2", "Release 1.1", "A bug-fix release.", 30),
]
ATOM_ENTRIES_2 = [*ATOM_ENTRIES_1, ("urn:demo:atom:3", "Release 1.2", "New features.", 3)]
JSON_ITEMS = [
    ("demo-json-1", "Notebook entry A", "Notes from the lab.", 1200),
    ("demo-json-2", "Notebook entry B", "More notes from the lab.", 1100),
]


def rss(base: str, phase: int) -> bytes:
    items = RSS_ITEMS_1 if phase == 1 else RSS_ITEMS_2
    body = "".join(
        f'<item><guid isPermaLink="false">{guid}</guid><title>{escape(title)}</title>'
        f"<link>{base}/posts/{guid}</link><description>{escape(summary)}</description>"
        f"<category>demo</category><pubDate>{_rfc822(_at(hours))}</pubDate></item>"
        for guid, title, summary, hours in reversed(items)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
        f"<title>Demo RSS blog</title><link>{base}/</link>"
        f"<description>Sample RSS 2.0 feed</description>{body}</channel></rss>\n"
    ).encode()


def atom(base: str, phase: int) -> bytes:
    entries = ATOM_ENTRIES_1 if phase == 1 else ATOM_ENTRIES_2
    newest = min(hours for *_, hours in entries)
    body = "".join(
        f"<entry><id>{eid}</id><title>{escape(title)}</title>"
        f'<link href="{base}/releases/{eid.rsplit(":", 1)[1]}"/>'
        f"<updated>{_rfc3339(_at(hours))}</updated><summary>{escape(summary)}</summary>"
        f"<author><name>Demo Releaser</name></author></entry>"
        for eid, title, summary, hours in reversed(entries)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>Demo Atom releases</title>'
        f"<id>urn:demo:atom</id><updated>{_rfc3339(_at(newest))}</updated>"
        f'<link href="{base}/releases"/>{body}</feed>\n'
    ).encode()


def json_feed(base: str, phase: int) -> bytes:
    del phase  # unchanged between phases: the conditional request gets a 304
    doc = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Demo JSON notebook",
        "home_page_url": f"{base}/",
        "feed_url": f"{base}/feed.json",
        "items": [
            {
                "id": jid,
                "url": f"{base}/notes/{jid}",
                "title": title,
                "summary": summary,
                "date_published": _rfc3339(_at(hours)),
                "tags": ["demo", "notes"],
            }
            for jid, title, summary, hours in JSON_ITEMS
        ],
    }
    return (json.dumps(doc, indent=1) + "\n").encode()


FEEDS = {
    "/rss.xml": ("application/rss+xml; charset=utf-8", rss),
    "/atom.xml": ("application/atom+xml; charset=utf-8", atom),
    "/feed.json": ("application/feed+json; charset=utf-8", json_feed),
}


class Phase:
    """The current phase: from a file when one is given, else held in memory."""

    def __init__(self, phase_file: Path | None, initial: int) -> None:
        self._file = phase_file
        self._value = initial
        self._lock = threading.Lock()
        if phase_file is not None and not phase_file.exists():
            phase_file.write_text(f"{initial}\n")

    def get(self) -> int:
        if self._file is not None:
            try:
                return 2 if self._file.read_text().strip() == "2" else 1
            except OSError:
                return 1
        with self._lock:
            return self._value

    def set(self, value: int) -> None:
        if self._file is not None:
            self._file.write_text(f"{value}\n")
        with self._lock:
            self._value = value


class DemoHTTPServer(ThreadingHTTPServer):
    daemon_threads = True


class Handler(BaseHTTPRequestHandler):
    server_version = "feeddelta-demo/1"
    server: DemoHTTPServer
    phase: Phase  # set on the subclass made in main()
    quiet = False

    def log_message(self, format: str, *args: object) -> None:
        if not self.quiet:
            super().log_message(format, *args)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _send(self, status: int, body: bytes, headers: dict[str, str], head: bool) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and status != 304:
            self.wfile.write(body)

    def _serve(self, head: bool) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/_demo/phase":
            wanted = parse_qs(parts.query).get("set", [""])[0]
            if wanted in ("1", "2"):
                self.phase.set(int(wanted))
            body = f"{self.phase.get()}\n".encode()
            self._send(200, body, {"Content-Type": "text/plain"}, head)
            return
        if parts.path == "/" or parts.path not in FEEDS:
            body = b"not found\n"
            if parts.path == "/":
                body = "".join(f"{p}\n" for p in FEEDS).encode()
                self._send(200, body, {"Content-Type": "text/plain"}, head)
            else:
                self._send(404, body, {"Content-Type": "text/plain"}, head)
            return
        delay = parse_qs(parts.query).get("delay", ["0"])[0]
        if delay.isdigit():
            time.sleep(min(int(delay), 60))
        phase = self.phase.get()
        content_type, render = FEEDS[parts.path]
        host = self.headers.get("Host") or f"127.0.0.1:{self.server.server_port}"
        body = render(f"http://{host}", phase)
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        # Last-Modified moves with the phase and is always in the past.
        modified = DAY - timedelta(hours=3 - phase)
        headers = {
            "Content-Type": content_type,
            "ETag": etag,
            "Last-Modified": _rfc822(modified),
            "Cache-Control": "no-cache",
        }
        if self._not_modified(etag, modified):
            self._send(304, b"", headers, head)
            return
        self._send(200, body, headers, head)

    def _not_modified(self, etag: str, modified: datetime) -> bool:
        if_none_match = self.headers.get("If-None-Match")
        if if_none_match is not None:
            tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
            return etag in tags or "*" in tags
        if_modified_since = self.headers.get("If-Modified-Since")
        if if_modified_since:
            try:
                since = parsedate_to_datetime(if_modified_since)
            except (TypeError, ValueError):
                return False
            return since.tzinfo is not None and modified <= since
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--phase", type=int, choices=(1, 2), default=1)
    parser.add_argument("--phase-file", type=Path, help="read the phase (1 or 2) from this file")
    parser.add_argument("--port-file", type=Path, help="write the bound port here when ready")
    parser.add_argument("--quiet", action="store_true", help="no request log")
    args = parser.parse_args(argv)

    handler = type(
        "DemoHandler",
        (Handler,),
        {"phase": Phase(args.phase_file, args.phase), "quiet": args.quiet},
    )
    server = DemoHTTPServer(("127.0.0.1", args.port), handler)
    port = server.server_port
    if args.port_file is not None:
        tmp = args.port_file.with_name(args.port_file.name + ".tmp")
        tmp.write_text(f"{port}\n")
        tmp.replace(args.port_file)
    print(
        f"demo feeds on http://127.0.0.1:{port}/ (rss.xml, atom.xml, feed.json, gone.xml)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
