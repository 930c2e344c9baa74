"""A feed behind a CDN whose edges disagree: some serve the publisher's document B, a
stale one still serves the older A. Runs against a real server, in this process (the
code the tap runs)."""

from __future__ import annotations

from typing import Any

from tap_feeddelta.config import settings_from_config
from tests.feedserver import FeedServer, rss
from tests.tapharness import run_in_process

A = rss([("id-1", "One", "first"), ("id-2", "Two", "second")])
B = rss([("id-1", "One (edited)", "first"), ("id-2", "Two", "second")])
A_TIME, B_TIME = 1_700_000_000.0, 1_700_000_600.0  # B's Last-Modified: ten minutes later


def _runs(server: FeedServer, documents: list[tuple[str, float]]) -> list[dict[str, Any]]:
    """Each document served in turn (with its Last-Modified) to one run, on one state:
    what each run gave, as (records as (change_type, title), issue codes, status)."""
    settings = settings_from_config(
        {"feed_urls": [server.url("/feed.xml")], "allow_private_networks": True}
    )
    state: dict[str, Any] = {}
    seen = []
    for body, last_modified in documents:
        server.put("/feed.xml", body, last_modified=last_modified)
        [outcome] = run_in_process(settings, state)
        row = outcome.health_record
        seen.append(
            {
                "records": [(r["change_type"], r["title"]) for r in outcome.item_records],
                "codes": [i["code"] for i in row["issues"] if i["code"] != "stale_feed"],
                "status": row["status"],
            }
        )
    return seen


def test_an_edge_serving_the_older_copy_flips_no_item_back(server: FeedServer) -> None:
    runs = _runs(server, [(A, A_TIME), (B, B_TIME), (A, A_TIME), (B, B_TIME), (A, A_TIME)])
    assert [run["records"] for run in runs] == [[], [("updated", "One (edited)")], [], [], []]
    assert [run["codes"] for run in runs] == [[], [], ["stale_copy"], [], ["stale_copy"]]
    # B's validators were kept through A: B itself is a 304
    assert [run["status"] for run in runs] == ["ok", "ok", "ok", "not_modified", "ok"]


def test_a_publisher_reverting_an_edit_later_still_gives_the_update(server: FeedServer) -> None:
    runs = _runs(server, [(A, A_TIME), (B, B_TIME), (A, B_TIME + 600)])
    assert [run["records"] for run in runs] == [
        [],
        [("updated", "One (edited)")],
        [("updated", "One")],
    ]
    assert all("stale_copy" not in run["codes"] for run in runs)


def test_an_older_copy_with_an_item_never_seen_is_read_as_usual(server: FeedServer) -> None:
    """A stale copy has nothing newer: a document with an unseen item is no such copy,
    whatever its Last-Modified says (a clock set back at the publisher)."""
    with_new = rss([("id-0", "Zero", "new"), ("id-1", "One", "first"), ("id-2", "Two", "second")])
    runs = _runs(server, [(A, A_TIME), (B, B_TIME), (with_new, A_TIME)])
    assert runs[2]["records"] == [("new", "Zero"), ("updated", "One")]
    assert "stale_copy" not in runs[2]["codes"]
