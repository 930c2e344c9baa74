"""A publisher and the tap over many runs (hypothesis' stateful testing): the pure path
(document → parse → delta → bookmark as JSON → next run) against a model of what a
reader of the stream must have received.

The publisher adds items at the top, edits their titles or texts, drops the oldest ones
(a sliding window), brings dropped ones back, shuffles the order, makes its guids anew,
moves its site and serves the same document again; its items are dated, or not (a
scraped or generated feed). The model knows what each item of the document last came
out as. What must hold after every run:

- nothing false: a ``new`` only for an item never delivered, an ``updated`` only for an
  item whose delivered version differs, and each carries the item as the document has it;
- nothing lost: an item of the document that was not delivered is counted as deferred,
  and a run that defers nothing leaves every item of the document delivered as it is;
- progress: runs over an unchanged document deliver what was deferred, a bounded number
  at a time, until nothing is; so do runs over a document whose guids are made anew on
  every fetch (the new items held back are left out of the rename test);
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

from tap_feeddelta.delta import (
    MIN_HISTORY_ITEMS,
    Delta,
    DeltaSettings,
    diff_items,
    newest_item_at,
)
from tap_feeddelta.models import FirstRunMode
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import HELD_BYTES, FeedBookmark, decode_bookmark, encode_bookmark

URL = "https://example.org/feed.xml"
MAX_WINDOW = 40
MODES: tuple[FirstRunMode, ...] = ("baseline_only", "emit_all")
# Words the edits draw from: an edit always gives another text than the one before.
words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "é", "&"]), min_size=1, max_size=4)


Version = tuple[str, str, str]
# What the tap side of the story holds (the run, the stream), to go back to after a
# run whose state was lost: bookmark, last delta, delivered, delivered_under, runs,
# newest_item_at, held_back.
Saved = tuple[
    FeedBookmark | None,
    Delta | None,
    dict[int, Version],
    dict[int, int],
    int,
    str | None,
    set[tuple[int, str]],
]


@dataclass
class PublishedItem:
    number: int
    title: str
    text: str
    site: str = "https://example.org"  # where its link points: a site moves all of them

    @property
    def version(self) -> Version:
        return self.title, self.text, self.site


# How items are known: a permalink guid, their link alone, or a guid that is not a
# permalink, beside their link, which the publisher may make anew (rename_ids).
IDS = ("permalink", "link", "guid")


def _document(window: list[PublishedItem], ids: str, guid_epoch: int, dated: bool) -> bytes:
    """An RSS 2.0 document of the window's items, dated an hour apart in the order they
    were published, or undated (a scraped or generated feed)."""
    parts = []
    for entry in window:
        link = f"{entry.site}/posts/{entry.number}"
        identity = {
            "permalink": f"<guid>{link}</guid>",
            "link": f"<link>{link}</link>",
            "guid": f'<guid isPermaLink="false">{entry.number}-{guid_epoch}</guid>'
            f"<link>{link}</link>",
        }[ids]
        date = f"{1 + entry.number // 24:02d} Jan 2024 {entry.number % 24:02d}:00:00 GMT"
        parts.append(
            f"<item>{identity}<title>{escape(entry.title)}</title>"
            f"<description>{escape(entry.text)}</description>"
            f"{f'<pubDate>{date}</pubDate>' if dated else ''}</item>"
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
        self.delivered: dict[int, Version] = {}
        self.delivered_under: dict[int, int] = {}  # the guid_epoch it was delivered under
        self.bookmark: FeedBookmark | None = None
        self.last: Delta | None = None
        self.settings = DeltaSettings("m", URL)
        self.ids = "permalink"
        self.dated = True
        self.guid_epoch = 0
        self.site = "https://example.org"
        self.sites_used = {self.site}
        self.newest_item_at: str | None = None
        # The new items the last run left for later (not remembered), by number and the
        # id they had then.
        self.held_back: set[tuple[int, str]] = set()
        self.runs = 0
        # The delivery_id each change came with, by (item, version replaced, version):
        # the same change delivered again must come with the same id.
        self.ids_sent: dict[tuple[int, int, str, Version | None, Version], str] = {}

    @initialize(
        first=st.integers(0, 15),
        mode=st.sampled_from(MODES),
        per_run=st.integers(1, 6),
        ids=st.sampled_from(IDS),
        dated=st.booleans(),
    )
    def start(self, first: int, mode: FirstRunMode, per_run: int, ids: str, dated: bool) -> None:
        self.settings = DeltaSettings(
            "m",
            URL,
            mode,
            max_items_per_run=per_run,
            max_initial_items=per_run,
        )
        self.ids = ids
        self.dated = dated
        self._publish(first)

    def _publish(self, count: int) -> None:
        for _ in range(count):
            number = self.next_number
            self.next_number += 1
            title, text = f"Post {number}", f"Text of post {number}"
            self.window.insert(0, PublishedItem(number, title, text, self.site))
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

    @rule()
    def rename_ids(self) -> None:
        """The publisher makes every guid anew (a timestamp in it, a new generator):
        with ``ids == "guid"``, every item gets another id, and nothing else changes.
        Dated or not (``dated``): undated items are matched by their content too."""
        self.guid_epoch += 1

    # Not with guids made anew: an item renamed alone (new) leaves its memory under the
    # old guid, which a later wholesale rename may match by content; with the site
    # moving to and fro, that memory can be an earlier version than the one last sent.
    @precondition(lambda self: self.ids != "guid")
    @rule(
        site=st.sampled_from(
            ["https://example.org", "http://example.org", "https://www.example.org"]
        )
    )
    def move_site(self, site: str) -> None:
        """The site moves (to https, to www.): every link changes, items gone from the
        document included (seen when they come back). Never back to a spelling used
        before: the tap keeps each spelling's memory, so links flipping back are no
        change (test_delta_renamed_ids), which this model does not follow."""
        if site in self.sites_used:
            return
        self.sites_used.add(site)
        self.site = site
        for entry in self.window + self.dropped:
            entry.site = site

    @rule(order=st.randoms(use_true_random=False))
    def shuffle(self, order: random.Random) -> None:
        order.shuffle(self.window)

    def _renamed(self, entry: PublishedItem) -> bool:
        """Whether the item's guid (no link) was made anew since it was delivered."""
        under = self.delivered_under.get(entry.number)
        return self.ids == "guid" and under is not None and under != self.guid_epoch

    def _id_now(self, entry: PublishedItem) -> str:
        """The item's id in the document now (see _document)."""
        if self.ids == "guid":
            return f"{entry.number}-{self.guid_epoch}"
        return f"{entry.site}/posts/{entry.number}"

    def _carried_over(self) -> list[PublishedItem]:
        """The items a rename of the feed's guids leaves as they were (no record): those
        renamed but otherwise unchanged (their link may have moved), when they are more
        than half of the document and two at least, a wholesale rename. The new items
        the last run held back come back under no remembered id: those under the id they
        had then keep it (no rename); as many as did not are left out of the document (at
        most as many as such items, beside the renamed ones), and then one renamed item
        is enough. Any other item under a new guid is new: nothing else names it
        (docs/change-detection.md)."""
        returned = {e.number for e in self.window if (e.number, self._id_now(e)) in self.held_back}
        same = [
            entry
            for entry in self.window
            if self._renamed(entry)
            and self.delivered[entry.number][:2] == entry.version[:2]
            and entry.number not in returned
        ]
        unknown = [
            e
            for e in self.window
            if (e.number not in self.delivered or self._renamed(e)) and e.number not in returned
        ]
        renamed_away = max(len(self.held_back) - len(returned), 0)
        left_out = min(renamed_away, len(unknown) - len(same))
        enough = len(same) >= (1 if left_out else 2)
        return same if enough and 2 * len(same) > len(self.window) - left_out else []

    def _is_pending(self, entry: PublishedItem) -> bool:
        """Whether the stream lacks the item as it is (or under its guid now)."""
        return self.delivered.get(entry.number) != entry.version or self._renamed(entry)

    def _saved(self) -> Saved:
        return (
            self.bookmark,
            self.last,
            dict(self.delivered),
            dict(self.delivered_under),
            self.runs,
            self.newest_item_at,
            self.held_back,
        )

    def _restore(self, saved: Saved) -> None:
        (
            self.bookmark,
            self.last,
            self.delivered,
            self.delivered_under,
            self.runs,
            self.newest_item_at,
            self.held_back,
        ) = saved

    @rule()
    def run(self) -> None:
        document = _document(self.window, self.ids, self.guid_epoch, self.dated)
        feed = parse_feed(document, "application/rss+xml", URL)
        delta = diff_items(self.bookmark, feed.items, self.settings)
        current = {entry.number: entry for entry in self.window}
        is_first = self.bookmark is None
        carried = {entry.number for entry in self._carried_over()}
        for change in delta.changes:
            number = int(str(change.item.url).rsplit("/", 1)[1])
            entry = current[number]
            assert change.item.title == entry.title
            if change.change_type == "new":
                assert number not in self.delivered or (
                    self._renamed(entry) and number not in carried
                ), f"item {number} came twice as new"
            else:
                assert change.change_type == "updated"
                assert self.delivered.get(number) not in (None, entry.version)
            replaced = self.delivered.get(number)
            key = (number, self.guid_epoch, change.change_type, replaced, entry.version)
            assert self.ids_sent.setdefault(key, change.delivery_id) == change.delivery_id
            self.delivered[number] = entry.version
            self.delivered_under[number] = self.guid_epoch
        if is_first and self.settings.first_run_mode == "baseline_only":
            for entry in self.window:  # the silent baseline: what is there is known
                self.delivered[entry.number] = entry.version
                self.delivered_under[entry.number] = self.guid_epoch
        for number in carried:  # remembered under its new guid now
            self.delivered_under[number] = self.guid_epoch
        assert len({change.delivery_id for change in delta.changes}) == len(delta.changes)
        assert len(delta.changes) <= self.settings.max_items_per_run or is_first
        pending = [e for e in self.window if self._is_pending(e)]
        if not is_first:
            assert delta.counts.deferred == len(pending), "an undelivered change is lost"
        # Pending under no remembered id: new, held back (the others are updates).
        held_back = [e for e in pending if e.number not in self.delivered or self._renamed(e)]
        assert len(delta.new_held_back) // HELD_BYTES == len(held_back)
        self.held_back = {(entry.number, self._id_now(entry)) for entry in held_back}
        # The bookmark goes through JSON, as Singer state does between runs.
        newest = newest_item_at(feed.items, "2100-01-01T00:00:00Z")
        if self.newest_item_at and (newest or "") < self.newest_item_at:
            newest = self.newest_item_at  # the newest seen stays so, as the tap keeps it
        kept = FeedBookmark(
            success_at="2024-02-01T00:00:00Z",
            newest_item_at=newest,
            largest_document=delta.largest_document,
            new_held_back=delta.new_held_back,
            items=delta.remembered_items,
        )
        self.bookmark = decode_bookmark(json.loads(json.dumps(encode_bookmark(kept))), "p")
        self.newest_item_at = newest
        self.last = delta
        self.runs += 1

    @rule()
    def run_whose_state_is_lost(self) -> None:
        """A run whose records reached the target and whose state did not (killed
        before Meltano saved it): the next run starts from the state before it."""
        saved = self._saved()
        self.run()
        self._restore(saved)

    @invariant()
    def a_quiet_feed_delivers_what_is_left(self) -> None:
        """Runs over an unchanged document deliver every pending change, at most
        max_items_per_run a run."""
        if self.bookmark is None or self.last is None:
            return
        pending = [e for e in self.window if self._is_pending(e)]
        if not pending:
            return
        saved = self._saved()
        bound = len(pending) // self.settings.max_items_per_run + 2
        for _ in range(bound):
            self.run()
            if self.last.counts.deferred == 0:
                break
        assert self.last.counts.deferred == 0, "deferred changes never come out"
        assert not any(self._is_pending(e) for e in self.window)
        self._restore(saved)  # back to where the story was: the check ran on a copy of it

    @invariant()
    def a_feed_making_guids_anew_delivers_what_is_left(self) -> None:
        """Runs over a document whose guids are made anew on every fetch, and nothing
        else changes, deliver every pending change too, at most max_items_per_run a run:
        the first may give the whole document as new (too few items remembered to tell
        a rename), the next ones match the items delivered by content."""
        if self.bookmark is None or self.last is None or self.ids != "guid":
            return
        if not any(self._is_pending(e) for e in self.window):
            return
        saved, epoch = self._saved(), self.guid_epoch
        bound = len(self.window) // self.settings.max_items_per_run + 2
        for _ in range(bound):
            self.guid_epoch += 1
            self.run()
            if self.last.counts.deferred == 0:
                break
        assert self.last.counts.deferred == 0, "deferred changes never come out"
        assert not any(self._is_pending(e) for e in self.window)
        self._restore(saved)
        self.guid_epoch = epoch


TestPublisherAndTap = PublisherAndTap.TestCase
TestPublisherAndTap.settings = settings(max_examples=80, stateful_step_count=30, deadline=None)
