"""Several feeds in one run, over many runs (hypothesis' stateful testing): each run is the
tap's own code (run_in_process) over real servers on 127.0.0.1 and 127.0.0.2 (two hosts),
on the state the run before committed, with a clock of the test's own so that days pass.

Three publishers (two on one host, one on the other) publish, edit and drop items; a
publisher's feed moves (301/308 to its new URL, the old one later gone: 404), is served
under a second URL too, and each has a web page advertising a feed (discover_from_websites)
that may start advertising another feed, or the same one under its other URL. A host may
answer 429 with a short Retry-After for a while. Two monitors (each with its own state, as
two inherited extractors have) list URLs of this world, some the same, and edit their
lists: a URL added, removed and added back (within 30 days or after), an old URL replaced
by the one it redirects to, a page by its feed or the other way round. A monitor's feeds
may be split into shards (each shard run on its own state) and moved between counts with
the state tool as the re-shard script does. A run's state may be lost after its records
were delivered. What must hold, per docs/state-and-delivery.md and
docs/scheduling-and-scaling.md:

- one feed_health row per configured feed per run (over the shards), with a status its
  feed's answer allows: a failure or a rest on one host touches only the feeds that go
  there;
- nothing false: a ``new`` only for an item its feed never delivered (or remembered as its
  baseline), an ``updated`` only for an item whose delivered version differs, each as the
  document has it;
- nothing lost: after a read or a 304, every item of the document is delivered (or in the
  baseline) as it is now — the partition a feed takes over by the documented rules
  (removed and put back within 30 days, a URL replaced by the one it was read from, a page
  by its feed and the other way round, a re-shard) keeps its baseline;
- a run whose state was lost is sent again with the same delivery_ids; a delivery_id
  names one change, and the monitors' ids never meet.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from xml.sax.saxutils import escape

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from tap_feeddelta.check import FeedOutcome
from tap_feeddelta.config import Settings, settings_from_config
from tap_feeddelta.errors import StateError
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.state import index_partitions
from tap_feeddelta.statefile import check_shard
from tap_feeddelta.statetool import merge_states, split_state
from tests.feedserver import FeedServer
from tests.tapharness import run_in_process

MONITORS = ("alpha", "beta")
MAX_WINDOW = 8
MAX_FEEDS = 5
GRACE = timedelta(days=30)  # a removed feed's partition is kept this long (run.py)
RETRY_AFTER_SECONDS = 60
_servers: list[FeedServer] = []
_examples = itertools.count()


def _shared_servers() -> list[FeedServer]:
    """Two hosts for every example (each on paths of its own): started once."""
    if not _servers:
        _servers.extend(
            [FeedServer(host="127.0.0.1").start(), FeedServer(host="127.0.0.2").start()]
        )
    return _servers


Version = tuple[str, str]
ItemKey = tuple[int, int]  # (publisher, number)


@dataclass
class Item:
    number: int
    title: str
    text: str

    @property
    def version(self) -> Version:
        return self.title, self.text


@dataclass
class Publisher:
    key: int
    host: int  # which server
    path: str  # where its document is served now
    alias: str  # a second URL serving the same document
    window: list[Item] = field(default_factory=list)
    next_number: int = 0
    moves: int = 0


@dataclass(frozen=True)
class Route:
    kind: str  # "doc", "redirect", "gone", "page"
    publisher: int = -1  # doc
    target: str = ""  # redirect's Location, page's advertised link
    code: int = 301


@dataclass
class Resolution:
    kind: str  # "feed", "error", "limited"
    publisher: int = -1
    final_url: str = ""  # the URL the document is read from
    advertised: str | None = None  # the link a page advertised


@dataclass
class Lineage:
    """One partition of the tap's state, as the model knows it: it follows its feed when
    the feed is taken over under another URL."""

    name: int
    known: dict[ItemKey, Version] = field(default_factory=dict)  # delivered or baseline
    has_read: bool = False
    read_from: str | None = None  # final_url
    advertised: str | None = None
    last_check: datetime | None = None
    retry_after_at: str | None = None


@dataclass
class Monitor:
    name: str
    config: list[str] = field(default_factory=list)
    shard_count: int = 1
    states: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    parts: dict[str, Lineage] = field(default_factory=dict)  # partition URL -> lineage
    split_for: tuple[str, ...] = ()  # the config the states were last split for


def _document(publisher: Publisher) -> str:
    items = "".join(
        f"<item><guid>https://example.org/p{publisher.key}/posts/{e.number}</guid>"
        f"<title>{escape(e.title)}</title><description>{escape(e.text)}</description>"
        f"<pubDate>{1 + e.number // 24:02d} Jan 2024 {e.number % 24:02d}:00:00 GMT</pubDate>"
        "</item>"
        for e in publisher.window
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Publisher {publisher.key}</title><link>https://example.org/</link>"
        f"{items}</channel></rss>"
    )


def _page(link: str) -> str:
    return (
        '<!DOCTYPE html><html><head><title>Site</title><link rel="alternate"'
        f' type="application/rss+xml" href="{escape(link)}"></head><body>Hi</body></html>'
    )


def _item_key(record: dict[str, Any]) -> ItemKey:
    publisher, _, number = record["item_id"].removeprefix("https://example.org/p").split("/")
    return int(publisher), int(number)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class SeveralFeedsAndRuns(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.servers = _shared_servers()
        self.prefix = f"/m{next(_examples)}"
        self.now = datetime(2024, 3, 1, tzinfo=UTC)
        self.routes: dict[str, Route] = {}
        self.limited: set[int] = set()  # hosts answering 429
        self.publishers: list[Publisher] = []
        self.pages: list[str] = []
        self.monitors = {name: Monitor(name) for name in MONITORS}
        self.lineages = itertools.count()
        self.mode = "baseline_only"
        # delivery_id -> (monitor, feed_url, item, version, change_type): one change each
        self.ids: dict[str, tuple[str, str, ItemKey, Version, str]] = {}
        # (monitor, feed_url, item, version) -> the delivery_id it came as new with
        self.new_ids: dict[tuple[str, str, ItemKey, Version], str] = {}

    # --- the world: servers, URLs, documents -------------------------------------------

    def url(self, host: int, path: str) -> str:
        return self.servers[host].url(self.prefix + path)

    def _host_of(self, url: str) -> int:
        return 0 if url.startswith(self.servers[0].url("")) else 1

    def _path_of(self, url: str) -> str:
        return url.removeprefix(self.servers[self._host_of(url)].url(""))

    def _serve(self) -> None:
        """Puts every route's answer on its server (the same body keeps its ETag)."""
        for url, route in self.routes.items():
            server, path = self.servers[self._host_of(url)], self._path_of(url)
            if self._host_of(url) in self.limited:
                server.put(
                    path,
                    "slow down",
                    status=429,
                    content_type="text/plain",
                    headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
                )
            elif route.kind == "doc":
                server.put(path, _document(self.publishers[route.publisher]))
            elif route.kind == "redirect":
                server.put(
                    path,
                    "moved",
                    status=route.code,
                    content_type="text/plain",
                    headers={"Location": route.target},
                )
            elif route.kind == "gone":
                server.put(path, "not found", status=404, content_type="text/plain")
            else:
                server.put(path, _page(route.target), content_type="text/html; charset=utf-8")

    def resolve(self, url: str) -> Resolution:
        advertised = None
        limited = False
        for _ in range(5):
            limited = limited or self._host_of(url) in self.limited
            route = self.routes[url]
            if route.kind == "page" and advertised is None:
                advertised = url = route.target
            elif route.kind == "redirect":
                url = route.target
            elif route.kind == "doc":
                if limited:
                    return Resolution("limited")
                return Resolution("feed", route.publisher, url, advertised)
            else:
                return Resolution("limited" if limited else "error")
        raise AssertionError("the model's routes loop")

    @initialize(mode=st.sampled_from(["baseline_only", "emit_all"]), shards=st.integers(1, 2))
    def start(self, mode: str, shards: int) -> None:
        self.mode = mode
        for key, host in enumerate((0, 0, 1)):
            publisher = Publisher(
                key, host, self.url(host, f"/p{key}/feed-0.xml"), self.url(host, f"/p{key}/alias")
            )
            self.publishers.append(publisher)
            self.routes[publisher.path] = Route("doc", key)
            self.routes[publisher.alias] = Route("doc", key)
            page = self.url(host, f"/site-{key}.html")
            self.pages.append(page)
            self.routes[page] = Route("page", target=publisher.path)
            self._publish(publisher, 3)
        for n, monitor in enumerate(self.monitors.values()):
            monitor.config = [self.publishers[n].path, self.pages[2]]
            monitor.shard_count = shards
            monitor.states = [{} for _ in range(shards)]
        self._serve()

    # --- publishers ---------------------------------------------------------------------

    def _publish(self, publisher: Publisher, count: int) -> None:
        for _ in range(count):
            n = publisher.next_number
            publisher.next_number += 1
            publisher.window.insert(0, Item(n, f"Post {publisher.key}.{n}", f"Text {n}"))
        del publisher.window[MAX_WINDOW:]

    @rule(
        changes=st.lists(
            st.tuples(
                st.integers(0, 2),
                st.sampled_from(["publish", "edit_title", "edit_text", "drop"]),
                st.integers(0, 100),
            ),
            min_size=1,
            max_size=4,
        )
    )
    def publishers_change(self, changes: list[tuple[int, str, int]]) -> None:
        """Publishers publish items, edit one or drop their oldest ones."""
        for key, kind, number in changes:
            publisher = self.publishers[key]
            if kind == "publish":
                self._publish(publisher, 1 + number % 3)
            elif kind == "drop":
                del publisher.window[max(len(publisher.window) - 1 - number % 3, 1) :]
            elif publisher.window:
                entry = publisher.window[number % len(publisher.window)]
                if kind == "edit_title":
                    entry.title += " (edited)"
                else:
                    entry.text += " and more"
        self._serve()

    @rule(key=st.integers(0, 2), code=st.sampled_from([301, 308]))
    def move(self, key: int, code: int) -> None:
        """The feed moves for good: its old URLs redirect to the new one."""
        publisher = self.publishers[key]
        publisher.moves += 1
        new = self.url(publisher.host, f"/p{key}/feed-{publisher.moves}.xml")
        for url, route in list(self.routes.items()):
            if url == publisher.path or (
                route.kind == "redirect"
                and route.target.startswith(self.url(publisher.host, f"/p{key}/feed-"))
            ):
                self.routes[url] = Route("redirect", target=new, code=code)
        publisher.path = new
        self.routes[new] = Route("doc", key)
        self._serve()

    @rule(data=st.data())
    def old_url_gone(self, data: st.DataObject) -> None:
        """An old URL of a moved feed stops redirecting: 404 (unless a page links it)."""
        linked = {r.target for r in self.routes.values() if r.kind == "page"}
        old = sorted(u for u, r in self.routes.items() if r.kind == "redirect" and u not in linked)
        if old:
            self.routes[data.draw(st.sampled_from(old))] = Route("gone")
            self._serve()

    @rule(site=st.integers(0, 2), key=st.integers(0, 2), alias=st.booleans())
    def page_links(self, site: int, key: int, alias: bool) -> None:
        """A web page starts advertising another feed, or the same under its other URL."""
        publisher = self.publishers[key]
        self.routes[self.pages[site]] = Route(
            "page", target=publisher.alias if alias else publisher.path
        )
        self._serve()

    @rule(host=st.integers(0, 1))
    def rate_limit_or_recover(self, host: int) -> None:
        """A host answers 429 with a short Retry-After to everything; or all recover."""
        if self.limited:
            self.limited.clear()
        else:
            self.limited.add(host)
        self._serve()

    @rule(amount=st.sampled_from([timedelta(hours=1), timedelta(days=29), timedelta(days=31)]))
    def wait(self, amount: timedelta) -> None:
        self.now += amount

    # --- the monitors' configs ----------------------------------------------------------

    @rule(name=st.sampled_from(MONITORS), data=st.data())
    def add_feed(self, name: str, data: st.DataObject) -> None:
        monitor = self.monitors[name]
        choices = sorted(set(self.routes) - set(monitor.config))
        if len(monitor.config) < MAX_FEEDS and choices:
            monitor.config.append(data.draw(st.sampled_from(choices)))

    @rule(name=st.sampled_from(MONITORS), index=st.integers(0, MAX_FEEDS))
    def remove_feed(self, name: str, index: int) -> None:
        monitor = self.monitors[name]
        if len(monitor.config) > 1:
            del monitor.config[index % len(monitor.config)]

    @rule(name=st.sampled_from(MONITORS), index=st.integers(0, MAX_FEEDS))
    def replace_by_where_it_leads(self, name: str, index: int) -> None:
        """A URL replaced by the one its document is read from (a redirect's target, a
        page's feed), as its rows show it."""
        monitor = self.monitors[name]
        url = monitor.config[index % len(monitor.config)]
        lineage = monitor.parts.get(url)
        if lineage is None or lineage.read_from is None:
            return
        if lineage.read_from not in monitor.config:
            monitor.config[monitor.config.index(url)] = lineage.read_from

    @rule(name=st.sampled_from(MONITORS), count=st.integers(1, 3))
    def reshard(self, name: str, count: int) -> None:
        """The re-shard script: merge --keep older, then split --feed-urls-file. A state
        of the old sharding that holds a feed the new one puts elsewhere is refused."""
        monitor = self.monitors[name]
        if count != monitor.shard_count:
            for index, state in enumerate(monitor.states[:count]):
                settings = self._settings(monitor, index, count)
                configured = set(monitor.config)
                elsewhere = any(
                    p["context"]["feed_url"] in configured
                    and shard_of(name, p["context"]["feed_url"], count) != index
                    for p in state.get("partitions", [])
                )
                try:
                    check_shard(index_partitions(state), settings)
                except StateError as exc:
                    assert elsewhere, exc
                else:
                    assert not elsewhere, "a state of another sharding was taken"
        self._split(monitor, count)

    def _split(self, monitor: Monitor, count: int) -> None:
        merged = merge_states(
            [{"bookmarks": {"feed_items": state}} for state in monitor.states], keep="older"
        )
        split = split_state(merged, count, monitor.config)
        monitor.states = [state["bookmarks"]["feed_items"] for state in split]
        monitor.shard_count = count
        monitor.split_for = tuple(monitor.config)

    def _settings(self, monitor: Monitor, index: int, count: int | None = None) -> Settings:
        return settings_from_config(
            {
                "feed_urls": monitor.config,
                "monitor_id": monitor.name,
                "discover_from_websites": True,
                "allow_private_networks": True,
                "first_run_mode": self.mode,
                "shard_count": count or monitor.shard_count,
                "shard_index": index,
            }
        )

    # --- runs ---------------------------------------------------------------------------

    def _tap_run(self, monitor: Monitor) -> list[FeedOutcome]:
        """One run of every shard of the monitor, each on its own state."""
        if monitor.shard_count > 1 and monitor.split_for != tuple(monitor.config):
            # The config was edited: the step Scaling out asks for before the next run.
            self._split(monitor, monitor.shard_count)
        outcomes: list[FeedOutcome] = []
        now = self.now
        for index, state in enumerate(monitor.states):
            settings = self._settings(monitor, index)
            check_shard(index_partitions(state), settings)  # raises if refused
            outcomes += run_in_process(settings, state, now=lambda: now)
        return outcomes

    @rule(name=st.sampled_from(MONITORS))
    def run(self, name: str) -> None:
        monitor = self.monitors[name]
        outcomes = self._tap_run(monitor)
        self._check_run(monitor, outcomes)
        self.now += timedelta(minutes=10)

    @rule()
    def run_both(self) -> None:
        """Runs are the point: this rule makes them as likely as any two others."""
        for name in MONITORS:
            self.run(name)

    @rule(name=st.sampled_from(MONITORS))
    def run_whose_state_is_lost(self, name: str) -> None:
        """The records reach the target, the state does not: the next run (right after)
        sends the same changes, under the same delivery_ids."""
        monitor = self.monitors[name]
        if monitor.shard_count > 1 and monitor.split_for != tuple(monitor.config):
            self._split(monitor, monitor.shard_count)
        saved = [_copy(state) for state in monitor.states]
        lost = self._tap_run(monitor)
        monitor.states = saved
        outcomes = self._tap_run(monitor)
        assert _sent(lost) == _sent(outcomes), "a re-sent run differs"
        self._check_run(monitor, outcomes)
        self.now += timedelta(minutes=10)

    def _lineages_at_start(self, monitor: Monitor) -> set[str]:
        """What the run does before any fetch: a configured URL without a partition takes
        over the one partition of a feed no longer configured that was last read from it,
        then the partitions of removed feeds last checked over 30 days ago are dropped.
        The URLs of the partitions taken over."""
        configured = set(monitor.config)
        unconfigured = {u: p for u, p in monitor.parts.items() if u not in configured}
        taken: set[str] = set()
        for url in monitor.config:
            if url in monitor.parts:
                continue
            read_here = [u for u, p in unconfigured.items() if p.read_from == url]
            if len(read_here) == 1:
                monitor.parts[url] = monitor.parts.pop(read_here[0])
                taken.add(read_here[0])
        cutoff = self.now - GRACE
        for url, lineage in list(monitor.parts.items()):
            if url not in configured and lineage.last_check and lineage.last_check < cutoff:
                del monitor.parts[url]
        for url in monitor.config:
            if url not in monitor.parts:
                monitor.parts[url] = Lineage(next(self.lineages))
        return taken

    def _check_run(self, monitor: Monitor, outcomes: list[FeedOutcome]) -> None:
        rows = [o.health_record for o in outcomes]
        assert sorted(r["feed_url"] for r in rows) == sorted(monitor.config), (
            "not one feed_health row per configured feed"
        )
        self._lineages_at_start(monitor)
        # Pages without a baseline may take over a removed feed's partition once read.
        adoptable = self._adoptable(monitor)
        for outcome in outcomes:
            self._check_feed(monitor, outcome, adoptable)

    def _adoptable(self, monitor: Monitor) -> dict[tuple[int, str], str | None]:
        """(shard, read_from) -> the one partition of a feed no longer configured in that
        shard's state that was read from it (None: several were)."""
        configured = set(monitor.config)
        found: dict[tuple[int, str], str | None] = {}
        for url, lineage in monitor.parts.items():
            if url in configured or lineage.read_from is None:
                continue
            key = (shard_of(monitor.name, url, monitor.shard_count), lineage.read_from)
            found[key] = None if key in found else url
        return found

    def _check_feed(
        self,
        monitor: Monitor,
        outcome: FeedOutcome,
        adoptable: dict[tuple[int, str], str | None],
    ) -> None:
        url = outcome.task.feed_url
        row = outcome.health_record
        status = row["status"]
        lineage = monitor.parts[url]
        where = self.resolve(url)
        records = outcome.item_records
        if lineage.retry_after_at is not None and self.now < _time(lineage.retry_after_at):
            allowed = {"skipped"}
        elif where.kind == "limited":
            allowed = {"error", "skipped"}
        elif where.kind == "error":
            allowed = {"error"}
        else:
            allowed = {"ok", "not_modified"}
        assert status in allowed, (url, status, row["error_code"], allowed)
        lineage.last_check = self.now
        if status in ("error", "skipped"):
            assert records == [], "a failed check delivered items"
            told = row.get("retry_after_at")
            lineage.retry_after_at = told
            if told is not None:
                assert _time(told) <= self.now + timedelta(days=1)
            return
        lineage.retry_after_at = None
        if self.routes[url].kind == "redirect":  # every redirect here is permanent
            codes = {issue["code"] for issue in row["issues"]}
            assert "feed_moved" in codes, "a permanent redirect not told"
        publisher = self.publishers[where.publisher]
        served = {(publisher.key, e.number): e.version for e in publisher.window}
        if not lineage.has_read and where.advertised is not None:
            shard = shard_of(monitor.name, url, monitor.shard_count)
            former = adoptable.get((shard, where.final_url))
            if former is not None and outcome.adopted is not None:
                # The page takes over the partition of the feed it leads to.
                assert outcome.adopted == (monitor.name, former), outcome.adopted
                adoptable[(shard, where.final_url)] = None
                lineage = monitor.parts[url] = monitor.parts.pop(former)
            else:
                assert outcome.adopted is None, ("taken over wrongly", outcome.adopted, former)
        switched = (
            lineage.has_read
            and where.advertised is not None
            and (lineage.advertised is None or lineage.advertised != where.advertised)
            and lineage.read_from != where.final_url
        )
        first_read = not lineage.has_read or (
            switched and not any(key in lineage.known for key in served)
        )
        if first_read and self.mode == "baseline_only":
            assert records == [], ("a first read delivered items", url, first_read)
            lineage.known.update(served)
        for record in records:
            key = _item_key(record)
            assert key in served, "an item of another document"
            version = served[key]
            assert (record["title"], record["summary"]) == version, "not as served"
            if record["change_type"] == "new":
                assert key not in lineage.known, (f"{key} came twice as new", url)
                new_key = (monitor.name, url, key, version)
                first = self.new_ids.setdefault(new_key, record["delivery_id"])
                assert first == record["delivery_id"], "the same new item under another id"
            else:
                assert lineage.known.get(key) not in (None, version), (
                    f"{key} updated but unchanged",
                    url,
                )
            lineage.known[key] = version
            change = (monitor.name, url, key, version, record["change_type"])
            assert self.ids.setdefault(record["delivery_id"], change) == change, (
                "one delivery_id for two changes"
            )
        assert row["item_counts"]["deferred"] == 0 or status != "ok"
        lost = {k: v for k, v in served.items() if lineage.known.get(k) != v}
        assert not lost, ("changes lost", url, status, sorted(lost))
        lineage.has_read = True
        lineage.read_from = where.final_url
        lineage.advertised = where.advertised


def _copy(state: dict[str, Any]) -> dict[str, Any]:
    return {"partitions": [dict(p) for p in state.get("partitions", [])]}


def _sent(outcomes: list[FeedOutcome]) -> list[tuple[str, str, str]]:
    return sorted(
        (r["delivery_id"], r["change_type"], r["item_id"]) for o in outcomes for r in o.item_records
    )


TestSeveralFeedsAndRuns = SeveralFeedsAndRuns.TestCase
TestSeveralFeedsAndRuns.settings = settings(max_examples=20, stateful_step_count=15, deadline=None)
