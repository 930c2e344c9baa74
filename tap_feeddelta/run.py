"""One run over all configured feeds: concurrent checks, ordered outcomes, state commits.

Feeds are checked as coroutines on the fetcher's event loop (ordered.py), at most
``max_concurrency`` at once and ``max_per_host`` of one host (a feed waits for its
host's turn without holding one of the others), with a bounded window of feeds started
ahead; their outcomes come back in config order, so memory stays flat with 10,000 feeds
and the output order is deterministic. Only the main thread touches the Singer state
and writes messages; while it does, the loop goes on fetching on its own thread.
"""

from __future__ import annotations

import gc
import logging
import time
import traceback
from collections import Counter
from collections.abc import Callable, Generator, Iterator
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from tap_feeddelta.check import (
    FeedFetcher,
    FeedOutcome,
    FeedTask,
    check_feed,
    internal_error_outcome,
)
from tap_feeddelta.checkfacts import check_time, last_check_at, utc_text
from tap_feeddelta.config import Settings
from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.urls import parse_target
from tap_feeddelta.ordered import ordered_results
from tap_feeddelta.respellings import respelled_feeds, respelled_in_shard
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.shownurl import logged_url
from tap_feeddelta.state import (
    FeedBookmark,
    decode_bookmark,
    encode_bookmark,
    index_partitions,
)

PROGRESS_EVERY_SECONDS: Final = 10.0
# A run makes millions of short-lived objects (items, records) that reference counting
# frees; with Python's default first threshold (700 allocations) the cycle collector
# still ran ~1,000 times in a cold run of 10,000 feeds, 4% of its CPU.
RUN_GC_THRESHOLDS: Final = (20_000, 20, 20)
# Outcomes finished behind a slow feed (or a target that stopped reading) wait in order;
# no new feed is started while the records of those waiting take this much or more, by
# _held_bytes' estimate. Feeds already started still finish: up to max_concurrency more.
MAX_HELD_RECORD_BYTES: Final = 32 * 2**20
# What an item record takes besides the strings _held_bytes weighs one by one: the dict,
# its short strings (dates, hashes, the id source), its lists when empty; measured
# about 1.4 KB.
RECORD_BYTES: Final = 2048
# One dict of a record's lists (an enclosure, an author, an issue), its strings aside:
# the dict (184 bytes, 200 with its collector header), its slot in the list with the
# list's spare room, an enclosure's length (36 bytes).
ENTRY_BYTES: Final = 256
# One tag's slot in its list, with the list's spare room.
LIST_SLOT_BYTES: Final = 16
# The fields of an item record whose size the parser lets grow, read in one call each.
_GROWING: Final = itemgetter(
    "title", "summary", "content_text", "url", "item_id", "enclosures", "authors", "tags", "issues"
)
_ENCLOSURE_TEXTS: Final = itemgetter("url", "type")
_AUTHOR_TEXTS: Final = itemgetter("name", "email", "url")
# The failed feeds the log names one by one after the run summary; feed_health has all.
MAX_FAILED_FEEDS_LOGGED: Final = 20
# State of a feed removed from the config is kept this long after its last check, so
# that a feed put back keeps its baseline.
REMOVED_FEED_GRACE: Final = timedelta(days=30)


class FeedRun:
    """The feeds of one tap run, checked once and shared by both streams. The run closes
    its fetcher when the pass over the feeds ends."""

    def __init__(
        self,
        settings: Settings,
        fetcher: FeedFetcher,
        logger: logging.Logger,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        respelled_at_start: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        self.settings = settings
        # respelled_feeds over every configured URL of the state the first pass starts
        # from, if the Tap found it checking that state (statefile.check_shard).
        self._respelled_at_start = respelled_at_start
        self.fetcher = fetcher
        self.logger = logger
        self.now = now
        self._health: list[dict[str, Any]] | None = None
        self._finished = 0  # outcomes dealt with whole: records out, state committed
        self._health_sent = 0  # health rows handed to feed_health
        self._statuses: Counter[str] = Counter()
        self._errors: Counter[str] = Counter()
        # (feed_urls position, URL, code, message) of the first failed feeds, for the log
        self._failed: list[tuple[int, str, str, str]] = []
        self._emitted = 0
        self._positions: dict[int, int] = {}
        # configured URL → the key of its partition under another spelling
        self._respelled: dict[str, tuple[str, str]] = {}
        self._stopping = False  # the run is ending (its end, a signal, a closed output)
        self._warned_clock_behind = False

    def outcomes(
        self,
        stream_state: dict[str, Any],
        *,
        commit: bool,
        after_commit: Callable[[], None] | None = None,
    ) -> Generator[FeedOutcome, None, None]:
        """Check every feed of this shard against ``stream_state`` (feed_items' state).

        With ``commit`` (feed_items is selected) the state moves too: the caller writes an
        outcome's item records, then asks for the next outcome; only then is the outcome's
        bookmark committed, so a feed's state moves only after its records are out.
        ``after_commit`` is called then, before the wait for the next outcome (not after
        the last: the run's end writes its own STATE), with the feed counted as finished:
        a STATE written there covers it, and its health row goes out first.
        """
        # The tap validated the whole input state before the run (load_state); each
        # feed's partition is decoded again only when its feed comes up.
        index = index_partitions(stream_state, validate=False)
        monitor = self.settings.monitor_id
        feeds = self._feeds_of_this_shard()
        found, self._respelled_at_start = self._respelled_at_start, None  # that state's
        self._respelled = (
            respelled_feeds(index, monitor, [url for _, url in feeds])
            if found is None
            else respelled_in_shard(
                found, monitor, self.settings.shard_count, self.settings.shard_index
            )
        )
        partitions: list[dict[str, Any]] | None = None
        if commit:
            partitions = stream_state.setdefault("partitions", [])
            # After the respellings are found: a feed's partition under its former
            # spelling is its own, however long ago it was checked.
            self._prune_removed(partitions, index)
        # After the pruning: a partition dropped is no one's to take over.
        unconfigured = _Unconfigured(index, self.settings, set(self._respelled.values()))
        tasks = (self._task(index, position, url, unconfigured, commit) for position, url in feeds)
        self._health = []
        self._finished = self._health_sent = 0
        total = len(feeds)
        last_log = time.monotonic()
        thresholds = gc.get_threshold()
        gc.set_threshold(*RUN_GC_THRESHOLDS)
        try:
            for done, outcome in enumerate(
                ordered_results(
                    tasks,
                    self._check,
                    max_concurrency=self.settings.max_concurrency,
                    window=self.settings.max_concurrency * 4,
                    submit=self.fetcher.submit,
                    weight=_held_bytes,
                    max_weight=MAX_HELD_RECORD_BYTES,
                    group=_host_of,
                    max_per_group=self.settings.max_per_host,
                ),
                start=1,
            ):
                if partitions is None:
                    _as_not_committed(outcome)
                self._count(outcome, commits=partitions is not None)
                self._health.append(outcome.health_record)
                yield outcome
                if partitions is not None and outcome.bookmark is not None:
                    self._commit(partitions, index, outcome)
                self._finished = done
                if after_commit is not None and done < total:
                    after_commit()
                if time.monotonic() - last_log >= PROGRESS_EVERY_SECONDS:
                    last_log = time.monotonic()
                    self.logger.info(
                        "Checked %d of %d feeds, %d failed so far",
                        done,
                        total,
                        sum(self._errors.values()),
                    )
        finally:
            gc.set_threshold(*thresholds)
            # A run checks its feeds once: its fetcher (event loop thread, idle
            # connections) is done when this pass ends, however it ends.
            self._stopping = True
            self.fetcher.close()
        self._log_summary()

    def _feeds_of_this_shard(self) -> list[tuple[int, str]]:
        """(position in feed_urls, url) of the feeds this run checks."""
        settings = self.settings
        return [
            (position, url)
            for position, url in enumerate(settings.feed_urls)
            if shard_of(settings.monitor_id, url, settings.shard_count) == settings.shard_index
        ]

    def health_records(self, stream_state: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The health rows of this run: those of the items pass, or (feed_items not
        selected) a run of its own that reads the state but does not move it."""
        if self._health is None:
            self.logger.warning(
                "feed_health is selected without feed_items: this run does not move the"
                " state (ETags, failure streaks, remembered items stay as the last"
                " feed_items run left them). A pipeline that never selects feed_items"
                " fetches every feed in full each run, and its rows know nothing of"
                " earlier runs."
            )
            for _ in self.outcomes(stream_state, commit=False):
                pass
        rows = self._health or []
        while self._health_sent < len(rows):
            yield rows[self._health_sent]
            # Counted once written: a run stopped in between sends the row again, the
            # same row with the same key, rather than not at all.
            self._health_sent += 1

    def finished_health_unsent(self) -> Iterator[dict[str, Any]]:
        """The health rows of the feeds finished so far that were not handed out yet: for
        a STATE that covers those feeds (during the run, at its end, on SIGTERM). Each is
        counted as handed out when the next is asked for, as in health_records: a signal
        whose handler writes the rows again while they are being written sends one of
        them twice rather than leave the rest out."""
        rows = self._health or []
        while self._health_sent < min(self._finished, len(rows)):
            yield rows[self._health_sent]
            self._health_sent += 1

    async def _check(self, task: FeedTask) -> FeedOutcome:
        started = self.now()
        pinned = check_time(task.bookmark, started, commits=task.commits) != started
        if not self._warned_clock_behind and pinned:
            self._warned_clock_behind = True
            last = last_check_at(task.bookmark)
            self.logger.warning(
                "The clock (%s) is behind the state: feed_urls[%d] was last checked later"
                " (%s). Was the clock set back? Such feeds' checks are timed just after"
                " their last one (checked_at never goes back) until the clock passes it."
                " Warned once a run.",
                utc_text(started),
                task.position,
                utc_text(last, micro=True) if last else None,
            )
        try:
            return await check_feed(task, self.fetcher, self.settings, self.now)
        except Exception as exc:  # a fault of the tap's on one feed's input ends only its check
            if self._stopping:
                # A check still queued when the run ended (a signal, a target that closed
                # its input) meets a closed fetcher: no fault, and its outcome goes nowhere.
                return internal_error_outcome(task, self.settings, started)
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            # The exception's type and place only: its message may quote the document.
            self.logger.error(
                "Checking feed_urls[%d] failed inside the tap (%s at %s:%s); reported as"
                " internal_error, its state kept. Please report this as a bug.",
                task.position,
                type(exc).__name__,
                Path(frame.filename).name,
                frame.lineno,
            )
            return internal_error_outcome(task, self.settings, started)

    def _partition_of(
        self, index: dict[tuple[str, str], dict[str, Any]], feed_url: str
    ) -> dict[str, Any] | None:
        """The feed's partition: under its URL as configured, or under another spelling
        of it (see feed_key) from before the config was edited."""
        key = (self.settings.monitor_id, feed_url)
        partition = index.get(key)
        if partition is None and feed_url in self._respelled:
            partition = index.get(self._respelled[feed_url])
        return partition

    def _task(
        self,
        index: dict[tuple[str, str], dict[str, Any]],
        position: int,
        url: str,
        unconfigured: _Unconfigured,
        commit: bool,
    ) -> FeedTask:
        bookmark = self._bookmark(self._partition_of(index, url), position)
        # A page whose checks have all failed so far (a partition that holds only its
        # failure streak) has no baseline to lose: it may still take over its feed's.
        adopt = None if bookmark and bookmark.has_read_a_document else unconfigured.claim
        return FeedTask(position, url, bookmark, adopt, commits=commit)

    def _bookmark(self, partition: dict[str, Any] | None, position: int) -> FeedBookmark | None:
        if partition is None:
            return None
        return decode_bookmark(partition, f"state partition of feed_urls[{position}]")

    def _commit(
        self,
        partitions: list[dict[str, Any]],
        index: dict[tuple[str, str], dict[str, Any]],
        outcome: FeedOutcome,
    ) -> None:
        """Put the feed's new bookmark into the state in one step.

        The partition is built whole and swapped in with a single assignment, so a
        SIGTERM (whose handler writes the state) never sees a half-written partition,
        nor two partitions of one feed.
        """
        assert outcome.bookmark is not None
        key = (self.settings.monitor_id, outcome.task.feed_url)
        fresh = {
            "context": {"monitor_id": key[0], "feed_url": key[1]},
            **encode_bookmark(outcome.bookmark),
        }
        old = self._partition_of(index, key[1])
        if key not in index and old is not None:
            # The feed's partition under its former spelling takes the new one.
            index.pop(self._respelled.pop(key[1]), None)
        adopted = None if outcome.adopted is None else index.pop(outcome.adopted, None)
        index[key] = fresh
        if adopted is not None and old is not None:
            # A web page that took over the partition of the feed it leads to, after
            # checks that failed (its own partition holds only their streak): the new
            # one takes the feed's place, and the page's goes, in one assignment.
            partitions[:] = [fresh if p is adopted else p for p in partitions if p is not old]
            return
        if adopted is not None:
            # A web page that took over the partition of the feed it leads to.
            old = adopted
        if old is None:
            partitions.append(fresh)
        else:
            partitions[self._position(partitions, old)] = fresh

    def _position(self, partitions: list[dict[str, Any]], partition: dict[str, Any]) -> int:
        """Where ``partition`` stands in the list (positions are cached; the list only
        changes through _commit and _prune_removed)."""
        cached = self._positions.get(id(partition))
        if cached is None or cached >= len(partitions) or partitions[cached] is not partition:
            self._positions = {id(p): n for n, p in enumerate(partitions)}
            cached = self._positions[id(partition)]
        return cached

    def _prune_removed(
        self, partitions: list[dict[str, Any]], index: dict[tuple[str, str], dict[str, Any]]
    ) -> None:
        """Drop the partitions of feeds no longer configured, after the grace period: this
        monitor's, and every partition of another monitor_id. Each monitor has a state id
        of its own (an inherited plugin), so another's in this state is a former
        monitor_id's, and no run here checks its feeds again. (A state holding feeds
        another shard owns was refused when loaded.)"""
        configured = set(self.settings.feed_urls)
        respelled = set(self._respelled.values())
        monitor = self.settings.monitor_id
        # Compared to the second as text: "…:00.5Z" and "…:00Z" do not sort as instants.
        cutoff = utc_text(self.now() - REMOVED_FEED_GRACE)[:19]
        keep: list[dict[str, Any]] = []
        for partition in partitions:
            monitor_id, feed_url = (
                partition["context"]["monitor_id"],
                partition["context"]["feed_url"],
            )
            last_check = max(
                (partition.get("checked_at") or "")[:19], (partition.get("failed_at") or "")[:19]
            )
            expired = last_check < cutoff
            removed = feed_url not in configured and (monitor_id, feed_url) not in respelled
            if expired and (removed or monitor_id != monitor):
                index.pop((monitor_id, feed_url), None)
                continue
            keep.append(partition)
        if len(keep) != len(partitions):
            self.logger.info(
                "Dropped the state of %d feeds removed from the config (or of a former"
                " monitor_id) over %d days ago",
                len(partitions) - len(keep),
                REMOVED_FEED_GRACE.days,
            )
            partitions[:] = keep

    def _count(self, outcome: FeedOutcome, *, commits: bool) -> None:
        self._statuses[outcome.status] += 1
        if outcome.error_code and outcome.status == "error":
            self._errors[outcome.error_code] += 1
            if len(self._failed) < MAX_FAILED_FEEDS_LOGGED:
                task = outcome.task
                message = outcome.health_record.get("error_message") or ""
                self._failed.append((task.position, task.feed_url, outcome.error_code, message))
        if commits:  # else feed_items is not selected: its records are built, not written
            self._emitted += len(outcome.item_records)

    def _log_summary(self) -> None:
        codes = ", ".join(f"{code}={n}" for code, n in sorted(self._errors.items())) or "none"
        self.logger.info(
            "Run summary: %d feeds: %d ok, %d not modified, %d skipped, %d failed; "
            "%d changes emitted; errors: %s",
            sum(self._statuses.values()),
            self._statuses["ok"],
            self._statuses["not_modified"],
            self._statuses["skipped"],
            self._statuses["error"],
            self._emitted,
            codes,
        )
        # Which feeds failed, where a user looks first (meltano run's log, cron's mail).
        for position, url, code, message in self._failed:
            self.logger.warning(
                "Feed failed: feed_urls[%d] %s: %s: %s", position, logged_url(url), code, message
            )
        if (more := sum(self._errors.values()) - len(self._failed)) > 0:
            self.logger.warning("... and %d more failed feeds: see feed_health", more)


class _Unconfigured:
    """This shard's partitions of feeds no longer configured (nor another spelling of a
    configured one), by the whole URL their document was read from (``final_url_hash``):
    a configured web page without a partition of its own (or with one that holds only
    the failures of its first checks) whose discovered feed is one of them takes it over
    (see check_feed), as a web page replaced by its feed does before
    fetching (``respelled_feeds``). Each is handed over once, to the first page that
    reads it; two such partitions read from one URL are neither handed over. Claimed on
    the fetcher's loop thread only."""

    def __init__(
        self,
        index: dict[tuple[str, str], dict[str, Any]],
        settings: Settings,
        taken: set[tuple[str, str]],
    ) -> None:
        self._by_hash: dict[str, tuple[tuple[str, str], dict[str, Any]] | None] = {}
        if not settings.discover_from_websites:
            return
        configured = set(settings.feed_urls)
        for key, partition in index.items():
            monitor, url = key
            url_hash = partition.get("final_url_hash")
            if (
                monitor != settings.monitor_id
                or url in configured
                or key in taken
                or not isinstance(url_hash, str)
                or shard_of(monitor, url, settings.shard_count) != settings.shard_index
            ):
                continue
            self._by_hash[url_hash] = None if url_hash in self._by_hash else (key, partition)

    def claim(self, url_hash: str) -> tuple[tuple[str, str], FeedBookmark] | None:
        found = self._by_hash.get(url_hash)
        if found is None:
            return None
        self._by_hash[url_hash] = None
        key, partition = found
        return key, decode_bookmark(partition, "state partition of a feed no longer configured")


def _as_not_committed(outcome: FeedOutcome) -> None:
    """The counts of a run that neither emits items nor moves the state (feed_items not
    selected): every change is left for a later run, and the memory is as it was."""
    counts = outcome.health_record["item_counts"]
    bookmark = outcome.task.bookmark
    counts["deferred"] = counts["new"] + counts["updated"]
    counts["emitted"] = 0
    counts["remembered"] = bookmark.item_count if bookmark else 0


def _host_of(task: FeedTask) -> str:
    """The host a feed is fetched from first: its feeds take turns (max_per_host) before
    they take a slot of max_concurrency, so that a slow host's queue holds up no other
    host's feeds. (A redirect or a page's feed link to another host waits for that
    host's slot in the fetcher, as before.) Keyed as the fetcher keys its host slots, so
    that two spellings of one host (upper case, Unicode and its IDNA form) share turns."""
    try:
        host = urlsplit(task.feed_url).hostname
        # An ASCII host is the fetcher's already (lower case); parse_target costs 14 times
        # as much, so only a Unicode host takes it (to its IDNA form).
        return host if host and host.isascii() else parse_target(task.feed_url).host
    except (ValueError, FetchError):  # fails in the fetcher, at once: its own group
        return task.feed_url


def _held_bytes(outcome: FeedOutcome) -> int:
    """What a finished feed weighs while it waits in order: an estimate of the memory its
    item records take, never below it. The strings the parser lets grow (texts, link, id,
    the URLs and types of enclosures, authors' names, emails and URLs, tags, issue
    messages) at their size in memory (exact, whatever their characters), ENTRY_BYTES for
    each dict of the lists, RECORD_BYTES each for the rest, which is short. Not the
    document's size: 900 short items from a 0.3 MB document take 1.5 MB, and 32
    one-character enclosure URLs resolved against a long xml:base take 64 KB an item. A
    failed or unchanged feed holds next to nothing. (Walking every value of every record
    cost as much as building the records: this reads the fields that can grow.)"""
    # x.__sizeof__() is sys.getsizeof(x) for a str or None (neither has a collector
    # header), at a third of the cost: these calls are most of this function's.
    total = RECORD_BYTES * len(outcome.item_records)
    for title, summary, content, url, item_id, enclosures, authors, tags, issues in map(
        _GROWING, outcome.item_records
    ):
        total += (
            title.__sizeof__()
            + summary.__sizeof__()
            + content.__sizeof__()
            + url.__sizeof__()
            + item_id.__sizeof__()
        )
        # Lists empty in most records, or of one entry: one test, or one short loop.
        if enclosures:
            for enclosure_url, media_type in map(_ENCLOSURE_TEXTS, enclosures):
                total += ENTRY_BYTES + enclosure_url.__sizeof__() + media_type.__sizeof__()
        if authors:
            for name, email, author_url in map(_AUTHOR_TEXTS, authors):
                total += (
                    ENTRY_BYTES + name.__sizeof__() + email.__sizeof__() + author_url.__sizeof__()
                )
        if tags:
            total += LIST_SLOT_BYTES * len(tags) + sum(map(str.__sizeof__, tags))
        if issues:
            for issue in issues:
                total += ENTRY_BYTES + issue["message"].__sizeof__()
    return total
