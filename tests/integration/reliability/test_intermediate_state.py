"""STATE messages during a long run (state_interval_seconds): each covers only feeds whose
records and health rows went out before it, and a run killed after one resumes from it
without losing a change. Under an orchestrator that stops the tap and the loader at once
(Meltano on SIGTERM), the last such STATE the loader confirmed is the progress kept."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.feedserver import FeedServer, rss
from tests.tapharness import run_tap, started_tap

FEEDS = 8
SLOW = {2, 5}  # these answer after a pause longer than the interval
PAUSE_SECONDS = 1.5


@pytest.fixture
def server() -> Iterator[FeedServer]:
    srv = FeedServer().start()
    yield srv
    srv.stop()


def _path(n: int) -> str:
    return f"/f{n}.xml"


def _put_all(server: FeedServer, edited: bool) -> None:
    for n in range(FEEDS):
        items = [(f"{n}-{k}", f"T{k}", "s") for k in range(3)]
        if edited:
            items = [(f"{n}-new", "Fresh", "new"), (f"{n}-0", "T0 edited", "s"), *items[1:]]
        server.put(_path(n), rss(items), delay_seconds=PAUSE_SECONDS if n in SLOW else 0.0)


def _config(server: FeedServer, **extra: Any) -> dict[str, Any]:
    return {
        "feed_urls": [server.url(_path(n)) for n in range(FEEDS)],
        "allow_private_networks": True,
        "max_concurrency": 1,  # feeds finish one after another, the slow ones in between
        "request_timeout_seconds": 10,
        **extra,
    }


def _covered(state: dict[str, Any]) -> set[str]:
    return set(_partitions(state))


def _partitions(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    partitions = state["bookmarks"]["feed_items"]["partitions"]
    return {p["context"]["feed_url"]: p for p in partitions}


def _rows_before(messages: list[dict[str, Any]], end: int, stream: str) -> list[str]:
    return [
        m["record"]["feed_url"]
        for m in messages[:end]
        if m["type"] == "RECORD" and m["stream"] == stream
    ]


def test_states_during_the_run_follow_the_rows_of_the_feeds_they_cover(
    server: FeedServer,
) -> None:
    _put_all(server, edited=False)
    run = run_tap(_config(server, first_run_mode="emit_all", state_interval_seconds=1))
    assert run.returncode == 0, run.stderr

    states = [i for i, m in enumerate(run.messages) if m["type"] == "STATE"]
    assert len(states) >= 2, "no STATE before the end of the run"
    everything = {server.url(_path(n)) for n in range(FEEDS)}
    first = _covered(run.messages[states[0]]["value"])
    assert first and first < everything  # written mid-run, for the feeds done by then
    for index in states:
        covered = _covered(run.messages[index]["value"])
        assert covered <= set(_rows_before(run.messages, index, "feed_items"))
        assert covered <= set(_rows_before(run.messages, index, "feed_health"))

    # The run still ends as before: the last items, the last health rows, one final STATE.
    last_record = max(i for i, m in enumerate(run.messages) if m["type"] == "RECORD")
    assert run.messages[last_record + 1 :] == [run.messages[-1]]
    assert run.messages[-1]["type"] == "STATE"
    assert _covered(run.messages[-1]["value"]) == everything
    assert sorted(r["feed_url"] for r in run.health) == sorted(everything)  # each once


def test_a_short_run_writes_one_state(server: FeedServer) -> None:
    for n in range(FEEDS):
        server.put(_path(n), rss([(f"{n}-0", "T0", "s")]))
    run = run_tap(_config(server, first_run_mode="emit_all"))  # the default interval, 60 s
    assert run.returncode == 0, run.stderr
    assert [m["type"] for m in run.messages].count("STATE") == 1
    assert run.messages[-1]["type"] == "STATE"


def _run_until_first_state_then_kill(
    config: dict[str, Any], state: dict[str, Any], tmp: Path
) -> list[dict[str, Any]]:
    """The tap's messages up to its first STATE, after which it is killed (SIGKILL)."""
    messages: list[dict[str, Any]] = []
    with started_tap(config, state, tmp) as proc:
        assert proc.stdout is not None
        while line := proc.stdout.readline():
            messages.append(json.loads(line))
            if messages[-1]["type"] == "STATE":
                proc.send_signal(signal.SIGKILL)
                break
    return messages


def test_killed_after_a_state_during_the_run_resumes_from_it_losing_nothing(
    server: FeedServer, tmp_path: Path
) -> None:
    _put_all(server, edited=False)
    baseline = run_tap(_config(server))
    assert baseline.returncode == 0, baseline.stderr
    assert baseline.final_state is not None
    _put_all(server, edited=True)
    reference = run_tap(_config(server), baseline.final_state)
    assert reference.returncode == 0, reference.stderr
    expected = {r["delivery_id"]: r for r in reference.items}
    assert len(expected) == 2 * FEEDS

    config = _config(server, state_interval_seconds=1)
    first = _run_until_first_state_then_kill(config, baseline.final_state, tmp_path)
    assert first[-1]["type"] == "STATE", "the run wrote no STATE before its end"
    confirmed = first[-1]["value"]
    old = _partitions(baseline.final_state)
    moved = {url for url, p in _partitions(confirmed).items() if p != old[url]}
    assert 0 < len(moved) < FEEDS  # a STATE from the middle of the run

    second = run_tap(config, confirmed)
    assert second.returncode == 0, second.stderr
    assert {r["feed_url"] for r in second.items}.isdisjoint(moved)  # their progress was kept
    delivered = [
        m["record"] for m in first if m["type"] == "RECORD" and m["stream"] == "feed_items"
    ] + second.items
    by_id = {r["delivery_id"]: r for r in delivered}
    assert set(by_id) == set(expected), "a change was lost or an unexpected one appeared"
    third = run_tap(config, second.final_state)
    assert third.items == []
