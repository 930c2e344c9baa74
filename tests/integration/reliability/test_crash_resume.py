"""Kill the tap at many points of a run; the next run from the last state a target would
have confirmed must deliver every change at least once, with stable delivery ids."""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.feedserver import FeedServer, rss
from tests.tapharness import TAP, run_tap, started_tap

FEEDS = 6


@pytest.fixture(scope="module")
def server() -> Iterator[FeedServer]:
    srv = FeedServer().start()
    yield srv
    srv.stop()


def _config(server: FeedServer, **extra: Any) -> dict[str, Any]:
    return {
        "feed_urls": [server.url(f"/f{n}.xml") for n in range(FEEDS)],
        "allow_private_networks": True,
        "request_timeout_seconds": 10,
        "max_concurrency": 2,
        **extra,
    }


@pytest.fixture(scope="module")
def scenario(server: FeedServer) -> dict[str, Any]:
    """A baselined state, then feeds that each gained one item and had one edited."""
    for n in range(FEEDS):
        server.put(f"/f{n}.xml", rss([(f"{n}-{k}", f"T{k}", "s") for k in range(4)]))
    baseline = run_tap(_config(server))
    assert baseline.returncode == 0, baseline.stderr
    for n in range(FEEDS):
        items = [(f"{n}-new", "Fresh", "new"), (f"{n}-0", "T0 edited", "s")]
        items += [(f"{n}-{k}", f"T{k}", "s") for k in range(1, 4)]
        server.put(f"/f{n}.xml", rss(items))
    reference = run_tap(_config(server), baseline.final_state)
    assert reference.returncode == 0, reference.stderr
    assert len(reference.items) == 2 * FEEDS
    lines = len(reference.stdout.splitlines())
    return {"state": baseline.final_state, "reference": reference, "lines": lines}


def _run_and_kill(
    config: dict[str, Any], state: dict[str, Any], after_lines: int, sig: int
) -> tuple[list[dict[str, Any]], int]:
    """Start the tap, read ``after_lines`` messages, send ``sig``; return what was read
    and the exit code."""
    messages: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, started_tap(config, state, Path(tmp)) as proc:
        assert proc.stdout is not None
        while len(messages) < after_lines:
            line = proc.stdout.readline()
            if not line:
                break
            messages.append(json.loads(line))
        proc.send_signal(sig)
        if sig != signal.SIGKILL:
            # what the process writes while it shuts down still reaches the target
            # (read through the same buffered reader: communicate() would skip its buffer)
            messages += [json.loads(line) for line in proc.stdout if line.strip()]
    return messages, proc.returncode


def _last_state(messages: list[dict[str, Any]], fallback: dict[str, Any]) -> dict[str, Any]:
    states = [m["value"] for m in messages if m["type"] == "STATE"]
    return states[-1] if states else fallback


def _item_records(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["record"] for m in messages if m["type"] == "RECORD" and m["stream"] == "feed_items"]


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 1.0])
def test_sigkill_then_resume_loses_nothing(
    server: FeedServer, scenario: dict[str, Any], fraction: float
) -> None:
    config = _config(server)
    expected = {r["delivery_id"]: r for r in scenario["reference"].items}
    kill_after = int(scenario["lines"] * fraction)
    first, _ = _run_and_kill(config, scenario["state"], kill_after, signal.SIGKILL)
    confirmed = _last_state(first, scenario["state"])
    second = run_tap(config, confirmed)
    assert second.returncode == 0, second.stderr

    delivered = _item_records(first) + second.items
    by_id = {r["delivery_id"]: r for r in delivered}
    assert set(expected) <= set(by_id), "a change was lost"
    assert set(by_id) <= set(expected), "an unexpected delivery appeared"
    for record in delivered:  # a duplicate is the same change with the same id
        same = expected[record["delivery_id"]]
        assert (record["item_id"], record["fingerprint"]) == (same["item_id"], same["fingerprint"])

    third = run_tap(config, second.final_state)
    assert third.items == []


def test_sigterm_ends_cleanly_with_state_for_feeds_done(server: FeedServer) -> None:
    count = 30
    for n in range(count):
        server.put(f"/slow{n}.xml", rss([(f"s{n}-{k}", "t", "s") for k in range(3)]))
    config = {
        "feed_urls": [server.url(f"/slow{n}.xml") for n in range(count)],
        "allow_private_networks": True,
        "first_run_mode": "emit_all",
        "max_concurrency": 1,
    }
    server.delay_seconds = 0.1  # a run of ~3 s, so the signal lands mid-run
    try:
        started = time.monotonic()
        messages, returncode = _run_and_kill(config, {}, 12, signal.SIGTERM)
        assert time.monotonic() - started < 30
    finally:
        server.delay_seconds = 0.0
    final = _last_state(messages, {})
    partitions = final["bookmarks"]["feed_items"]["partitions"]
    done = {p["context"]["feed_url"] for p in partitions}
    assert 0 < len(done) < count
    emitted = {r["feed_url"] for r in _item_records(messages)}
    assert done <= emitted  # state moved only for feeds whose records went out
    # An interrupted run is no success (128 + SIGTERM), but the feeds it finished have
    # their health rows, ahead of the final state, and no unfinished feed has one.
    assert returncode == 128 + signal.SIGTERM
    health = [m for m in messages if m["type"] == "RECORD" and m["stream"] == "feed_health"]
    assert {m["record"]["feed_url"] for m in health} == done
    assert len(health) == len(done)
    last_health = max(i for i, m in enumerate(messages) if m in health)
    assert last_health < max(i for i, m in enumerate(messages) if m["type"] == "STATE")

    rest = run_tap(config, final)
    delivered = {r["item_id"] for r in _item_records(messages) + rest.items}
    assert delivered == {f"s{n}-{k}" for n in range(count) for k in range(3)}
    assert {r["feed_url"] for r in rest.items}.isdisjoint(done)


def test_sigterm_does_not_wait_for_stalled_fetches(server: FeedServer, tmp_path: Path) -> None:
    for n in range(3):
        server.put(f"/stalled{n}.xml", rss([(f"x{n}", "t", "s")]))
    config_path = tmp_path / "config.json"
    config_path.write_text(
        json.dumps(
            {
                "feed_urls": [server.url(f"/stalled{n}.xml") for n in range(3)],
                "allow_private_networks": True,
                "max_concurrency": 3,
                "request_timeout_seconds": 60,
            }
        )
    )
    server.delay_seconds = 30.0  # every answer comes after the signal
    proc = subprocess.Popen(
        [*TAP, "--config", str(config_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["type"] == "SCHEMA"  # the run has begun
        time.sleep(1.0)  # the three fetches are waiting for their answers
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rest = proc.stdout.read()
        proc.wait(timeout=20)
        assert time.monotonic() - signalled < 8  # not the fetches' 60 s budget
    finally:
        server.delay_seconds = 0.0
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    states = [json.loads(line) for line in rest.splitlines() if '"type":"STATE"' in line]
    assert states  # the final state was written before the exit
    assert not [line for line in rest.splitlines() if '"type":"RECORD"' in line]
