"""A publisher, its server and the tap over many runs (hypothesis' stateful testing): each
run is the tap's own code over a real HTTP server on 127.0.0.1 (ETags, Last-Modified,
304s), on the state the run before committed, against a model of what the stream holds.

Besides adding, editing, dropping and reordering items, the server fails between runs:
an HTTP error, a document cut off in the middle, an HTML page or garbage in its place,
an empty body, or an older copy of the document (a CDN edge behind). What must hold:

- a failed run delivers nothing and forgets nothing: once the feed is back, the changes
  made meanwhile come out, each once;
- nothing false: a ``new`` only for an item never delivered, an ``updated`` only for
  an item whose delivered version differs, each as the document served has it; a
  document cut off gives no item cut inside it;
- nothing lost: what a run does not deliver it counts as deferred, and runs over an
  unchanged feed deliver it, at most max_items_per_run a run.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tap_feeddelta.config import settings_from_config
from tap_feeddelta.parse import parse_feed
from tests.feedserver import FeedServer
from tests.tapharness import run_in_process

MAX_WINDOW = 25  # of at most 31 x 24 items published: a day has 24 of them
FAILURES = ("http_500", "http_404", "cut_off", "html_page", "garbage", "empty", "older_copy")
_server: FeedServer | None = None
_paths = itertools.count()


def _shared_server() -> FeedServer:
    """One server for every example (each on a path of its own): started once."""
    global _server
    if _server is None:
        _server = FeedServer().start()
    return _server


@dataclass
class PublishedItem:
    number: int
    title: str
    text: str

    @property
    def version(self) -> tuple[str, str]:
        return self.title, self.text


def _document(window: list[PublishedItem]) -> str:
    items = "".join(
        f"<item><guid>https://example.org/posts/{entry.number}</guid>"
        f"<title>{escape(entry.title)}</title>"
        f"<description>{escape(entry.text)}</description>"
        # Dated an hour apart, in the order they were published.
        f"<pubDate>{1 + entry.number // 24:02d} Jan 2024 {entry.number % 24:02d}:00:00 GMT"
        "</pubDate></item>"
        for entry in window
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Model</title><link>https://example.org/</link>{items}</channel></rss>"
    )


def _numbers_read(body: bytes) -> list[int]:
    """The items a document gives (of a document cut off, those before the cut)."""
    items = parse_feed(body, "application/rss+xml", "https://example.org/feed.xml").items
    return [int(str(item.native_id).rsplit("/", 1)[1]) for item in items]


class PublisherServerAndTap(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.server = _shared_server()
        self.path = f"/model-{next(_paths)}.xml"
        self.window: list[PublishedItem] = []
        self.next_number = 0
        self.edits = 0
        self.failure: str | None = None
        # Each document the publisher served, with its Last-Modified: an older copy is
        # one of these.
        self.served: list[tuple[str, float, list[PublishedItem]]] = []
        self.on_server: list[PublishedItem] = []  # the items of what the server serves
        self.delivered: dict[int, tuple[str, str]] = {}
        self.state: dict[str, Any] = {}
        self.last_deferred = 0
        self.has_read = False
        self.mode = "baseline_only"
        self.per_run = 1
        self.runs = 0

    @initialize(
        first=st.integers(1, 10),
        per_run=st.integers(1, 4),
        mode=st.sampled_from(["baseline_only", "emit_recent", "emit_all"]),
    )
    def start(self, first: int, per_run: int, mode: str) -> None:
        self.per_run = per_run
        self.mode = mode
        self.settings = settings_from_config(
            {
                "feed_urls": [self.server.url(self.path)],
                "allow_private_networks": True,
                "max_items_per_run": per_run,
                "first_run_mode": mode,
                "max_initial_items": 2,
            }
        )
        self._publish(first)

    def _publish(self, count: int) -> None:
        for _ in range(count):
            number = self.next_number
            self.next_number += 1
            self.window.insert(0, PublishedItem(number, f"Post {number}", f"Text of post {number}"))
        del self.window[MAX_WINDOW:]
        self._serve()

    def _serve(self) -> None:
        """The publisher's current document, one second newer than the one before."""
        snapshot = [PublishedItem(e.number, e.title, e.text) for e in self.window]
        body = _document(snapshot)
        if self.served and self.served[-1][0] == body:
            return
        modified = 1_700_000_000.0 + len(self.served)
        self.served.append((body, modified, snapshot))
        if self.failure is None:
            self.server.put(self.path, body, last_modified=modified)
            self.on_server = snapshot

    @rule(count=st.integers(1, 5))
    def publish(self, count: int) -> None:
        self._publish(count)

    @precondition(lambda self: bool(self.window))
    @rule(index=st.integers(0, 1_000), in_title=st.booleans())
    def edit(self, index: int, in_title: bool) -> None:
        entry = self.window[index % len(self.window)]
        self.edits += 1
        if in_title:
            entry.title = f"Post {entry.number} (edit {self.edits})"
        else:
            entry.text = f"<p>Text of post {entry.number}, edit {self.edits}</p>"
        self._serve()

    @precondition(lambda self: len(self.window) > 1)
    @rule(count=st.integers(1, 4), order=st.randoms(use_true_random=False))
    def drop_and_shuffle(self, count: int, order: random.Random) -> None:
        del self.window[max(len(self.window) - count, 1) :]
        order.shuffle(self.window)
        self._serve()

    @rule(kind=st.sampled_from(FAILURES), cut=st.floats(0.05, 0.95))
    def fail(self, kind: str, cut: float) -> None:
        """The server answers with a failure until it recovers."""
        body, modified, _ = self.served[-1]
        if self.failure is not None:
            return  # one failure at a time: it stays until the server recovers
        if kind == "older_copy":
            if len(self.served) < 2:
                return
            older_body, older_modified, older = self.served[int(cut * (len(self.served) - 1))]
            self.server.put(self.path, older_body, last_modified=older_modified)
            self.on_server = older
        elif kind.startswith("http_"):
            self.server.put(self.path, "error", status=int(kind[5:]), content_type="text/plain")
        elif kind == "cut_off":
            self.server.put(self.path, body[: int(len(body) * cut)], last_modified=modified + 0.5)
        elif kind == "html_page":
            self.server.put(self.path, "<html><body>Down</body></html>", content_type="text/html")
        elif kind == "garbage":
            self.server.put(self.path, bytes(range(256)) * 3, content_type="application/rss+xml")
        else:
            self.server.put(self.path, b"")
        self.failure = kind

    @precondition(lambda self: self.failure is not None)
    @rule()
    def recover(self) -> None:
        self.failure = None
        body, modified, self.on_server = self.served[-1]
        self.server.put(self.path, body, last_modified=modified + 0.25)

    @rule()
    def run(self) -> None:
        is_first = not self.has_read  # the first document read is the baseline
        [outcome] = run_in_process(self.settings, self.state)
        health = outcome.health_record
        codes = {issue["code"] for issue in health["issues"]}
        served = {e.number: e for e in self.on_server}
        if self.failure in ("http_500", "http_404", "html_page", "garbage", "empty"):
            assert health["status"] == "error", (self.failure, health["error_code"])
            assert outcome.item_records == []
            return
        if self.failure == "older_copy" and "stale_copy" in codes:
            assert outcome.item_records == []
            return
        for record in outcome.item_records:
            number = int(record["url"].rsplit("/", 1)[1])
            entry = served[number]
            assert record["title"] == entry.title, "an item cut off or from another version"
            if record["change_type"] == "new":
                assert number not in self.delivered, f"item {number} came twice as new"
            else:
                assert self.delivered.get(number) not in (None, entry.version)
            self.delivered[number] = entry.version
        if is_first and health["status"] == "ok":
            read = sorted(_numbers_read(self.server.documents[self.path].body))
            # The silent baseline: what it read, but for the newest max_initial_items
            # that emit_recent delivers (the newest published last: dated so).
            silent = {"baseline_only": read, "emit_recent": read[:-2], "emit_all": []}
            for number in silent[self.mode]:
                self.delivered.setdefault(number, served[number].version)
            self.has_read = True
        if self.failure is None:
            assert health["status"] in ("ok", "not_modified"), health["error_code"]
            pending = [e for e in served.values() if self.delivered.get(e.number) != e.version]
            deferred = health["item_counts"]["deferred"] if health["status"] == "ok" else 0
            assert deferred == len(pending), "an undelivered change is lost"
            self.last_deferred = deferred
        self.runs += 1

    @invariant()
    def a_quiet_feed_delivers_what_is_left(self) -> None:
        """Once the feed is back and quiet, runs deliver every pending change."""
        if self.failure is not None or not self.has_read:
            return
        pending = [e for e in self.window if self.delivered.get(e.number) != e.version]
        if not pending:
            return
        for _ in range(len(pending) // self.per_run + 2):
            self.run()
            if self.last_deferred == 0:
                break
        assert all(self.delivered.get(e.number) == e.version for e in self.window)


TestPublisherServerAndTap = PublisherServerAndTap.TestCase
TestPublisherServerAndTap.settings = settings(
    max_examples=25, stateful_step_count=20, deadline=None
)
