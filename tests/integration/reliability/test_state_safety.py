"""State safety: removed feeds are pruned after the grace period, two hand-started runs
on one state file cannot corrupt it."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.feedserver import FeedServer, rss
from tests.tapharness import run_tap


def _config(server: FeedServer, *paths: str, **extra: Any) -> dict[str, Any]:
    return {"feed_urls": [server.url(p) for p in paths], "allow_private_networks": True, **extra}


def _feeds_in(state: dict[str, Any] | None) -> list[str]:
    assert state is not None
    return [p["context"]["feed_url"] for p in state["bookmarks"]["feed_items"]["partitions"]]


def test_removed_feed_keeps_its_baseline_within_the_grace_period(server: FeedServer) -> None:
    server.put("/a.xml", rss([("a-1", "A", "a")]))
    server.put("/b.xml", rss([("b-1", "B", "b")]))
    first = run_tap(_config(server, "/a.xml", "/b.xml"))
    without_b = run_tap(_config(server, "/a.xml"), first.final_state)
    assert server.url("/b.xml") in _feeds_in(without_b.final_state)  # kept: recently checked

    server.put("/b.xml", rss([("b-2", "B2", "b"), ("b-1", "B", "b")]))
    back = run_tap(_config(server, "/a.xml", "/b.xml"), without_b.final_state)
    assert [r["item_id"] for r in back.items] == ["b-2"]  # baseline kept, not redone


def test_removed_feed_is_pruned_after_the_grace_period(server: FeedServer) -> None:
    server.put("/a.xml", rss([("a-1", "A", "a")]))
    first = run_tap(_config(server, "/a.xml"))
    state = json.loads(json.dumps(first.final_state))
    old = dict(state["bookmarks"]["feed_items"]["partitions"][0])
    old["context"] = {"monitor_id": "default", "feed_url": "https://gone.example.org/feed"}
    old["checked_at"] = "2020-01-01T00:00:00.000000Z"
    # A former monitor_id's partitions (each monitor has a state id of its own): its
    # configured feeds are no longer this run's either. Pruned after the same grace.
    renamed_monitor = [
        dict(old, context={"monitor_id": "old", "feed_url": url})
        for url in (old["context"]["feed_url"], server.url("/a.xml"))
    ]
    recent = dict(
        state["bookmarks"]["feed_items"]["partitions"][0],
        context={"monitor_id": "old", "feed_url": "https://recent.example.org/feed"},
    )
    state["bookmarks"]["feed_items"]["partitions"] += [old, *renamed_monitor, recent]
    later = run_tap(_config(server, "/a.xml"), state)
    partitions = later.final_state["bookmarks"]["feed_items"]["partitions"]  # type: ignore[index]
    assert [p["context"] for p in partitions] == [
        {"monitor_id": "default", "feed_url": server.url("/a.xml")},
        recent["context"],  # checked within the grace period: kept
    ]
    assert "Dropped the state of 3 feeds removed from the config" in later.stderr


def _failing_for_long(state: dict[str, Any], feed_url: str) -> dict[str, Any]:
    """The state with ``feed_url``'s last answer two months back (it has failed since)."""
    state = json.loads(json.dumps(state))
    for partition in state["bookmarks"]["feed_items"]["partitions"]:
        if partition["context"]["feed_url"] == feed_url:
            partition["checked_at"] = partition["success_at"] = "2020-01-01T00:00:00.000000Z"
    return state


def test_a_feed_failing_for_long_keeps_its_baseline_when_removed_for_a_while(
    server: FeedServer,
) -> None:
    server.put("/a.xml", rss([("a-1", "A", "a")]))
    server.put("/b.xml", rss([("b-1", "B", "b")]))
    first = run_tap(_config(server, "/a.xml", "/b.xml"))
    server.put("/b.xml", "gone", status=404)
    failing = run_tap(
        _config(server, "/a.xml", "/b.xml"),
        _failing_for_long(first.final_state, server.url("/b.xml")),  # type: ignore[arg-type]
    )
    assert failing.partition(server.url("/b.xml"))["failures"] == 1
    without_b = run_tap(_config(server, "/a.xml"), failing.final_state)
    assert server.url("/b.xml") in _feeds_in(without_b.final_state)  # checked in the last run

    server.put("/b.xml", rss([("b-2", "B2", "b"), ("b-1", "B", "b")]))
    back = run_tap(_config(server, "/a.xml", "/b.xml"), without_b.final_state)
    assert [r["item_id"] for r in back.items] == ["b-2"]  # baseline kept, not redone


def test_a_feed_last_checked_long_ago_keeps_its_baseline_under_a_new_spelling(
    server: FeedServer,
) -> None:
    server.put("/b.xml", rss([("b-1", "B", "b")]))
    first = run_tap(_config(server, "/b.xml"))
    old_state = _failing_for_long(first.final_state, server.url("/b.xml"))  # type: ignore[arg-type]
    server.put("/b.xml", rss([("b-2", "B2", "b"), ("b-1", "B", "b")]))
    respelled = {
        "feed_urls": [server.url("/b.xml").replace("http://", "HTTP://")],
        "allow_private_networks": True,
    }
    later = run_tap(respelled, old_state)
    assert [r["item_id"] for r in later.items] == ["b-2"]  # baseline kept, not redone


def test_two_runs_by_hand_on_one_state_file(server: FeedServer) -> None:
    """Both runs read the same state and deliver the same changes with the same ids;
    whichever state is saved last is complete, so nothing is lost either way."""
    server.put("/a.xml", rss([("a-1", "A", "a")]))
    base = run_tap(_config(server, "/a.xml"))
    server.put("/a.xml", rss([("a-2", "A2", "a"), ("a-1", "A", "a")]))
    config = _config(server, "/a.xml")
    with ThreadPoolExecutor(max_workers=2) as pool:
        one, two = pool.map(lambda _: run_tap(config, base.final_state), range(2))
    assert one.returncode == two.returncode == 0
    assert [r["delivery_id"] for r in one.items] == [r["delivery_id"] for r in two.items]
    for final in (one.final_state, two.final_state):
        assert run_tap(config, final).items == []
