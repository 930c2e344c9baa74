"""A publisher and the tap over many runs (hypothesis' stateful testing): the pure path
(document → parse → delta → bookmark as JSON → next run) against a model of what a
reader of the stream must have received.

The publisher adds items at the top, edits their titles or texts, drops the oldest ones
(a sliding window), brings dropped ones back, shuffles the order and serves the same
document again. The model
knows what each item of the document last came out as. What must hold after every run:

- nothing false: a ``new`` only for an item never delivered, an ``updated`` only for an
  item whose delivered version differs, and each carries the item as the document has it;
- nothing lost: an item of the document that was not delivered is counted as deferred,
  and a run that defers nothing leaves every item of the document delivered as it is;
- progress: runs over an unchanged document deliver what was deferred, a bounded number
  at a time, until nothing is;
- at-least-once delivery de-duplicates: a change delivered again (a run whose state was
  lost) comes with the delivery_id it came with the first time.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from xml.sax.saxutils import escape

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tap_feeddelta.delta import MIN_HISTORY_ITEMS, Delta, DeltaSettings, diff_items
from tap_feeddelta.models import FirstRunMode
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import FeedBookmark, decode_bookmark, encode_bookmark

URL = "https://example.org/feed.xml"
MAX_WINDOW = 40
MODES: tuple[FirstRunMode, ...] = ("baseline_only", "emit_all")
# Words the edits draw from: an edit always gives another text than the one before.
words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "é", "&"]), min_size=1, max_size=4)


@dataclass
class PublishedItem:
    number: int
    title: str
    text: str

    @property
    def version(self) -> tuple[str, str]:
        return self.title, self.text


def _document(window: list[PublishedItem], has_guids: bool) -> bytes:
    """An RSS 2.0 document of the window's items, each known by its guid or, without
    guids, by its own link."""
    parts = []
    for entry in window:
        key = f"https://example.org/posts/{entry.number}"
        identity = f"<guid>{key}</guid>" if has_guids else f"<link>{key}</link>"
        day = 1 + entry.number % 28
        parts.append(
            f"<item>{identity}<title>{escape(entry.title)}</title>"
            f"<description>{escape(entry.text)}</description>"
            f"<pubDate>Mon, {day:02d} Jan 2024 12:00:00 GMT</pubDate></item>"
        )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<link>https://example.org/</link>{''.join(parts)}</channel></rss>"
    ).encode()


class PublisherAndTap(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.window: list[PublishedItem] = []
        self.dropped: list[PublishedItem] = []
        self.next_number = 0
        self.edits = 0
        # What the stream holds of each item: the version last delivered (or taken as
        # the baseline), by item number.
        self.delivered: dict[int, tuple[str, str]] = {}
        self.bookmark: FeedBookmark | None = None
        self.last: Delta | None = None
        self.settings = DeltaSettings("m", URL)
        self.has_guids = True
        self.runs = 0
        # The delivery_id each change came with, by (item, version replaced, version):
        # the same change delivered again must come with the same id.
        self.ids: dict[tuple[int, tuple[str, str] | None, tuple[str, str]], str] = {}

    @initialize(
        first=st.integers(0, 15),
        mode=st.sampled_from(MODES),
        per_run=st.integers(1, 6),
        has_guids=st.booleans(),
    )
    def start(self, first: int, mode: FirstRunMode, per_run: int, has_guids: bool) -> None:
        self.settings = DeltaSettings(
            "m",
            URL,
            mode,
            max_items_per_run=per_run,
            max_initial_items=per_run,
        )
        self.has_guids = has_guids
        self._publish(first)

    def _publish(self, count: int) -> None:
        for _ in range(count):
            number = self.next_number
            self.next_number += 1
            self.window.insert(0, PublishedItem(number, f"Post {number}", f"Text of post {number}"))
        self.dropped.extend(self.window[MAX_WINDOW:])
        del self.window[MAX_WINDOW:]

    @rule(count=st.integers(1, 8))
    def publish(self, count: int) -> None:
        self._publish(count)

    @precondition(lambda self: bool(self.window) or bool(self.dropped))
    @rule(index=st.integers(0, 1_000), in_title=st.booleans(), text=words)
    def edit(self, index: int, in_title: bool, text: list[str]) -> None:
        """An edit of an item in the document, or of one gone from it (seen when it
        comes back)."""
        shown = self.window + self.dropped
        entry = shown[index % len(shown)]
        self.edits += 1
        edited = f"{' '.join(text)} (edit {self.edits})"  # never a version seen before
        if in_title:
            entry.title = edited
        else:  # the description is HTML: markup may come and go with the words
            entry.text = f"<p>{edited}</p>" if self.edits % 2 else edited

    @precondition(lambda self: bool(self.window))
    @rule(count=st.integers(1, 5))
    def drop_oldest(self, count: int) -> None:
        self.dropped.extend(self.window[max(len(self.window) - count, 0) :])
        del self.window[max(len(self.window) - count, 0) :]

    # While the feed has had at most MIN_HISTORY_ITEMS items, the tap remembers them all.
    @precondition(lambda self: bool(self.dropped) and self.next_number <= MIN_HISTORY_ITEMS)
    @rule(index=st.integers(0, 1_000))
    def bring_back(self, index: int) -> None:
        """An item gone from the document comes back (a post unpublished and published
        again, a document cut short for a run): as it was, or edited meanwhile."""
        entry = self.dropped.pop(index % len(self.dropped))
        self.window.insert(index % (len(self.window) + 1), entry)
        del self.window[MAX_WINDOW:]

    @rule(order=st.randoms(use_true_random=False))
    def shuffle(self, order: random.Random) -> None:
        order.shuffle(self.window)

    @rule()
    def run(self) -> None:
        feed = parse_feed(_document(self.window, self.has_guids), "application/rss+xml", URL)
        delta = diff_items(self.bookmark, feed.items, self.settings)
        current = {entry.number: entry for entry in self.window}
        is_first = self.bookmark is None
        for change in delta.changes:
            number = int(str(change.item.url).rsplit("/", 1)[1])
            entry = current[number]
            assert change.item.title == entry.title
            if change.change_type == "new":
                assert number not in self.delivered, f"item {number} came twice as new"
            else:
                assert change.change_type == "updated"
                assert self.delivered.get(number) not in (None, entry.version)
            key = (number, self.delivered.get(number), entry.version)
            assert self.ids.setdefault(key, change.delivery_id) == change.delivery_id
            self.delivered[number] = entry.version
        if is_first and self.settings.first_run_mode == "baseline_only":
            for entry in self.window:  # the silent baseline: what is there is known
                self.delivered[entry.number] = entry.version
        assert len({change.delivery_id for change in delta.changes}) == len(delta.changes)
        assert len(delta.changes) <= self.settings.max_items_per_run or is_first
        pending = [e for e in self.window if self.delivered.get(e.number) != e.version]
        if not is_first:
            assert delta.counts.deferred == len(pending), "an undelivered change is lost"
        # The bookmark goes through JSON, as Singer state does between runs.
        kept = FeedBookmark(
            success_at="2024-02-01T00:00:00Z",
            largest_document=delta.largest_document,
            items=delta.remembered_items,
        )
        self.bookmark = decode_bookmark(json.loads(json.dumps(encode_bookmark(kept))), "p")
        self.last = delta
        self.runs += 1

    @rule()
    def run_whose_state_is_lost(self) -> None:
        """A run whose records reached the target and whose state did not (killed
        before Meltano saved it): the next run starts from the state before it."""
        saved = (self.bookmark, self.last, dict(self.delivered), self.runs)
        self.run()
        self.bookmark, self.last, self.delivered, self.runs = saved

    @invariant()
    def a_quiet_feed_delivers_what_is_left(self) -> None:
        """Runs over an unchanged document deliver every pending change, at most
        max_items_per_run a run."""
        if self.bookmark is None or self.last is None:
            return
        pending = [e for e in self.window if self.delivered.get(e.number) != e.version]
        if not pending:
            return
        saved = (self.bookmark, self.last, dict(self.delivered), self.runs)
        bound = len(pending) // self.settings.max_items_per_run + 2
        for _ in range(bound):
            self.run()
            if self.last.counts.deferred == 0:
                break
        assert self.last.counts.deferred == 0, "deferred changes never come out"
        assert all(self.delivered.get(e.number) == e.version for e in self.window)
        # Back to where the publisher's story was: the check ran on a copy of it.
        self.bookmark, self.last, self.delivered, self.runs = saved


TestPublisherAndTap = PublisherAndTap.TestCase
TestPublisherAndTap.settings = settings(max_examples=80, stateful_step_count=30, deadline=None)
