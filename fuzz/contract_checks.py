"""The contract fuzzer's checks: one run's Singer output against the message rules, the
output contract (schemas/*.json and the README's table of codes) and the model of each feed.

Each check adds what it finds to ``Violations``; none stops the fuzzer.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from contract_feeds import Document, Expectation, Feed, Item, TapMemory

STREAMS = ("feed_items", "feed_health")
MAX_STATE_BYTES = 20_000  # five small feeds: far below this unless the bookmark leaks
# A feed's codes, in the README's table with their severity (those that stop a run have a
# table of their own).
FEED_CODE_ROW = re.compile(r"^\| `([a-z_]+)` \| (?:error|warning|info) \|", re.MULTILINE)
Record = dict[str, Any]


@dataclass(frozen=True)
class Contract:
    schemas: dict[str, Record]
    feed_codes: frozenset[str]  # the codes a feed_health row or an item may carry


def read_contract(repo: Path) -> Contract:
    schemas = {
        stream: json.loads((repo / "schemas" / f"{stream}.json").read_text(encoding="utf-8"))
        for stream in STREAMS
    }
    codes = FEED_CODE_ROW.findall((repo / "README.md").read_text(encoding="utf-8"))
    return Contract(schemas, frozenset(codes))


class Violations:
    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, run: int, message: str) -> None:
        line = f"run {run}: {message}"
        print("VIOLATION", line, flush=True)
        self.found.append(line)

    def distinct(self, limit: int = 40) -> list[str]:
        """The first of each kind (same start of message in any run), at most ``limit``."""
        first_by_kind: dict[str, str] = {}
        for line in self.found:
            first_by_kind.setdefault(line.split(": ", 1)[1][:60], line)
        return list(first_by_kind.values())[:limit]


@dataclass
class RunOutput:
    items: list[Record] = field(default_factory=list)
    health: list[Record] = field(default_factory=list)
    states: list[Record] = field(default_factory=list)
    kinds_in_order: list[str] = field(default_factory=list)  # stream name, or "STATE"


def read_output(lines: Iterable[str], contract: Contract, run: int, v: Violations) -> RunOutput:
    """The run's messages; each record is checked against its stream's SCHEMA message
    and against schemas/*.json as it comes."""
    output = RunOutput()
    announced: dict[str, Record] = {}
    for line in lines:
        if not line.strip():
            continue
        message = json.loads(line)
        if message["type"] == "SCHEMA":
            announced[message["stream"]] = message["schema"]
        elif message["type"] == "RECORD":
            stream, record = message["stream"], message["record"]
            _check_record_schemas(stream, record, announced, contract, run, v)
            (output.items if stream == "feed_items" else output.health).append(record)
            output.kinds_in_order.append(stream)
        elif message["type"] == "STATE":
            output.states.append(message["value"])
            output.kinds_in_order.append("STATE")
    return output


def _check_record_schemas(
    stream: str,
    record: Record,
    announced: dict[str, Record],
    contract: Contract,
    run: int,
    v: Violations,
) -> None:
    for schema, label in (
        (announced.get(stream), "SCHEMA message"),
        (contract.schemas[stream], "schemas/*.json"),
    ):
        if schema is None:
            v.add(run, f"RECORD of {stream} before its SCHEMA")
            continue
        try:
            jsonschema.validate(record, schema)
        except jsonschema.ValidationError as error:
            v.add(run, f"{stream} record fails {label}: {error.message[:200]}")


# ---------------------------------------------------------------- the run as a whole


def check_run(
    run: int, output: RunOutput, urls: list[str], contract: Contract, v: Violations
) -> None:
    """What holds whatever the feeds did: message order, state size, ids, rows, codes."""
    _check_message_order(run, output.kinds_in_order, v)
    if output.states:
        size = len(json.dumps(output.states[-1]))
        if size > MAX_STATE_BYTES:
            v.add(run, f"state is {size} bytes")
    delivery_ids = [record["delivery_id"] for record in output.items]
    if len(delivery_ids) != len(set(delivery_ids)):
        v.add(run, "a delivery_id twice in one run")
    health_urls = [row["feed_url"] for row in output.health]
    if health_urls != urls:
        v.add(run, f"health rows {health_urls} != feeds")
    for row in output.health:
        _check_health_row(run, row, contract, v)
    for record in output.items:
        for issue in record["issues"]:
            if issue["code"] not in contract.feed_codes or issue["code"] == "internal_error":
                v.add(run, f"item issue code {issue['code']!r}")


def _check_message_order(run: int, kinds: list[str], v: Violations) -> None:
    """Items first, then health rows, and a STATE last."""
    if kinds and kinds[-1] != "STATE":
        v.add(run, "last message is not a STATE")
    if "feed_items" in kinds and "feed_health" in kinds:
        last_item = max(i for i, kind in enumerate(kinds) if kind == "feed_items")
        if last_item > kinds.index("feed_health"):
            v.add(run, "feed_items record after a feed_health record")


def _check_health_row(run: int, row: Record, contract: Contract, v: Violations) -> None:
    codes = [row["error_code"]] if row["error_code"] else []
    codes += [issue["code"] for issue in row["issues"]]
    for code in codes:
        if code == "internal_error":
            v.add(run, f"internal_error on {row['feed_url']}: {row['error_message']}")
        if code not in contract.feed_codes:
            v.add(run, f"code {code!r} not in README table")
    counts = row["item_counts"]
    if (
        counts["seen"]
        != counts["new"] + counts["updated"] + counts["unchanged"] + counts["duplicates"]
    ):
        v.add(run, f"counts do not add up: {counts}")
    if (
        row["status"] == "ok"
        and counts["new"] + counts["updated"] != counts["emitted"] + counts["deferred"]
    ):
        v.add(run, f"new+updated != emitted+deferred: {counts}")


# ---------------------------------------------------------------- each feed against its model


@dataclass(frozen=True)
class FeedRun:
    """What one feed was served in one run."""

    document: Document
    edits: list[str]
    statuses: list[int]  # from its path and its redirect target, in order
    page_failed: bool  # the page advertising it (if any) answered 500

    def describe(self, feed: Feed) -> str:
        mode = self.document.mode + (f":{self.document.damage}" if self.document.damage else "")
        return f"mode={mode} enc={feed.encoding} edits={self.edits}"


def check_feed(
    run: int,
    feed: Feed,
    served: FeedRun,
    health: Record,
    records: list[Record],
    max_items_per_run: int,
    v: Violations,
) -> None:
    """One feed's row and records against the model; updates the model's memory of the tap."""
    if health["item_counts"]["emitted"] != len(records):
        v.add(
            run,
            f"{feed.name}: emitted {health['item_counts']['emitted']} but {len(records)} records",
        )
    expectation = _expectation_from_status(run, feed, served, health, v)
    _track_failures(run, feed.name, feed.memory, health, v)
    if health["status"] != "ok" and records:
        v.add(run, f"{feed.name}: status {health['status']} yet {len(records)} records")
    if expectation == "unread":
        return
    due = changes_due(feed.items, feed.memory)
    received = _check_records(run, feed, served, due, expectation, records, v)
    missing = [item_id for item_id in due if item_id not in received]
    if expectation == "damaged":
        _check_nothing_silently_lost(run, feed, served, health, v)
    else:
        _check_intact_run(
            run, feed, served, health, due, missing, len(records), max_items_per_run, v
        )


def _expectation_from_status(
    run: int, feed: Feed, served: FeedRun, health: Record, v: Violations
) -> Expectation:
    """The row's status against the last status served; what is left to expect of the items."""
    expectation: Expectation = "unread" if served.page_failed else served.document.expectation
    last = served.statuses[-1] if served.statuses else None
    status = health["status"]

    def mismatch(what_was_served: str) -> None:
        v.add(run, f"{feed.name}: {what_was_served} but status {status} {health['error_code']}")

    if last is None:
        if status not in ("skipped", "error"):
            mismatch("not fetched")
        expectation = "unread"
    elif last == 304:
        if status != "not_modified" and not (
            served.document.mode == "bogus304" and status == "error"
        ):
            mismatch("served 304")
        expectation = "unread"
    elif last in (404, 500, 429, 503):
        if status != "error":
            mismatch(f"served {last}")
        expectation = "unread"
    elif last == 200:
        if expectation == "intact" and status != "ok":
            mismatch(f"intact 200 ({served.describe(feed)}, {health['error_message']})")
        if status != "ok":
            expectation = "unread"
    if status == "ok" and expectation == "unread":
        expectation = "damaged"  # read after all: its items must at least be consistent
    return expectation


def _track_failures(run: int, name: str, memory: TapMemory, health: Record, v: Violations) -> None:
    failed = health["status"] in ("error", "skipped")
    memory.consecutive_failures = memory.consecutive_failures + 1 if failed else 0
    if health["consecutive_failures"] != memory.consecutive_failures:
        v.add(
            run,
            f"{name}: consecutive_failures {health['consecutive_failures']} expected "
            f"{memory.consecutive_failures} (status {health['status']})",
        )
    # RFC 3339 strings in one format and zone: their order is the times' order
    if memory.last_checked_at > health["checked_at"]:
        v.add(run, f"{name}: checked_at went back")
    memory.last_checked_at = health["checked_at"]


def changes_due(items: list[Item], memory: TapMemory) -> dict[str, str]:
    """Item id -> "new" or "updated": the changes the tap has not delivered yet."""
    due = {}
    for item in items:
        if item.item_id not in memory.remembered:
            due[item.item_id] = "new"
        elif memory.remembered[item.item_id] != item.version():
            due[item.item_id] = "updated"  # also when the remembered version is unknown
    return due


def _check_records(
    run: int,
    feed: Feed,
    served: FeedRun,
    due: dict[str, str],
    expectation: Expectation,
    records: list[Record],
    v: Violations,
) -> dict[str, Record]:
    """Each record against the item it names; returns the records by item id."""
    items = {item.item_id: item for item in feed.items}
    received: dict[str, Record] = {}
    for record in records:
        item_id = record["item_id"]
        if item_id in received:
            v.add(run, f"{feed.name}: item {item_id} twice in a run")
        received[item_id] = record
        item = items.get(item_id)
        if item is None:
            v.add(
                run,
                f"{feed.name}: record for unknown item id {item_id!r} "
                f"(title {record['title']!r}) {served.describe(feed)}",
            )
            continue
        matches = shows(record, item)
        if expectation == "intact" and not matches:
            v.add(
                run, f"{feed.name}: record content differs from feed: {_difference(record, item)}"
            )
        if item_id not in due:
            if matches:
                v.add(
                    run,
                    f"{feed.name}: spurious {record['change_type']} for unchanged item {item_id} "
                    f"{served.describe(feed)}",
                )
        elif due[item_id] != record["change_type"]:
            v.add(
                run,
                f"{feed.name}: {item_id} change_type {record['change_type']} "
                f"expected {due[item_id]} {served.describe(feed)}",
            )
        _remember_delivery(run, feed.name, feed.memory, item if matches else None, record, v)
    positions = {item.item_id: k for k, item in enumerate(feed.items)}
    order = [positions[r["item_id"]] for r in records if r["item_id"] in positions]
    if order != sorted(order):
        v.add(run, f"{feed.name}: records not in document order")
    return received


def _remember_delivery(
    run: int, name: str, memory: TapMemory, item: Item | None, record: Record, v: Violations
) -> None:
    """One change, one delivery_id: a change is the version delivered and, for an update,
    the version it replaced. The same one when redelivered (a new item re-added, a run
    sent again), never another change's (an edit reverted, A -> B -> A, is a change of
    its own)."""
    item_id = record["item_id"]
    if item is None:  # a version the model cannot name (read from a damaged document)
        memory.remembered[item_id] = None
        return
    version = item.version()
    replaced = memory.remembered.get(item_id) if record["change_type"] == "updated" else None
    if record["change_type"] == "updated" and replaced is None:
        # Replaces a version the model cannot name: the change cannot be named either.
        memory.remembered[item_id] = version
        return
    change = (replaced, version)
    delivered = memory.delivery_ids.setdefault(item_id, {})
    if change in delivered and delivered[change] != record["delivery_id"]:
        v.add(run, f"{name}: redelivery of same change of {item_id} with new delivery_id")
    for other, delivery_id in delivered.items():
        if other != change and delivery_id == record["delivery_id"]:
            v.add(run, f"{name}: two changes of {item_id} share delivery_id")
    delivered[change] = record["delivery_id"]
    memory.remembered[item_id] = version


def _check_nothing_silently_lost(
    run: int, feed: Feed, served: FeedRun, health: Record, v: Violations
) -> None:
    """From a damaged document, fewer items may be read, but never without saying so."""
    codes = {issue["code"] for issue in health["issues"]}
    seen = health["item_counts"]["seen"]
    if seen < len(feed.items) and "document_truncated" not in codes and not health["is_truncated"]:
        v.add(
            run,
            f"{feed.name}: SILENT item loss: seen {seen} of {len(feed.items)} "
            f"({served.describe(feed)}) issues={sorted(codes)} "
            f"is_truncated={health['is_truncated']}",
        )


def _check_intact_run(
    run: int,
    feed: Feed,
    served: FeedRun,
    health: Record,
    due: dict[str, str],
    missing: list[str],
    emitted: int,
    max_items_per_run: int,
    v: Violations,
) -> None:
    """From an intact document: every change due comes out (up to the cap), counted right."""
    counts = health["item_counts"]
    if len(due) <= max_items_per_run:
        for item_id in missing:
            v.add(
                run,
                f"{feed.name}: LOST {due[item_id]} {item_id} "
                f"({served.describe(feed)}) counts={counts}",
            )
    elif emitted != max_items_per_run:
        v.add(
            run, f"{feed.name}: {len(due)} changes due, cap {max_items_per_run}, emitted {emitted}"
        )
    if counts["seen"] != len(feed.items):
        v.add(run, f"{feed.name}: seen {counts['seen']} != {len(feed.items)} items")
    expected_new = sum(1 for change in due.values() if change == "new")
    expected = (expected_new, len(due) - expected_new)
    # An item remembered in an unknown version may or may not count as updated.
    is_unknown = any(feed.memory.remembered.get(item_id, ()) is None for item_id in due)
    if (counts["new"], counts["updated"]) != expected and not is_unknown:
        v.add(
            run,
            f"{feed.name}: counts new/updated {counts['new']}/{counts['updated']} "
            f"expected {expected[0]}/{expected[1]}",
        )
    for item in feed.items:
        if item.item_id not in due:
            feed.memory.remembered[item.item_id] = item.version()


def shows(record: Record, item: Item) -> bool:
    """Whether the record carries the item's current version (whitespace aside)."""
    return (
        _spaced(record["title"]) == _spaced(item.title)
        and _spaced(record["summary"]) == _spaced(item.summary)
        and record["url"] == item.url
        and _timestamp(record["published_at"]) == item.published_at
    )


def _difference(record: Record, item: Item) -> str:
    got = (record["title"], record["summary"], record["url"], record["published_at"])
    want = (item.title, item.summary, item.url, item.published_at.isoformat())
    return f"got {got} want {want}"


def _spaced(text: str | None) -> str | None:
    return " ".join(text.split()) if text is not None else None


def _timestamp(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
