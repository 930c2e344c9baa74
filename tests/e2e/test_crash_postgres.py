"""The tap killed mid-run inside `meltano run … target-postgres`: after the re-run the
tables hold every change exactly once per delivery_id."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.e2e.harness import DemoServer, MeltanoProject, Postgres
from tests.e2e.test_pipelines import tap_env

pytestmark = pytest.mark.e2e

SLOW_SECONDS = 8


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (read from /proc, so no process is found by name)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _tap_process(meltano_pid: int) -> int | None:
    for pid in _descendants(meltano_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        is_tap = any(arg.endswith(b"/tap-feeddelta") for arg in argv[:2])
        # Meltano first runs the tap with --discover; the sync run is the one to kill
        if is_tap and b"--config" in argv and b"--discover" not in argv:
            return pid
    return None


def _expected_delivery_ids(feed_urls: list[str]) -> set[str]:
    """What one uninterrupted first run delivers (the tap run directly)."""
    config = {"feed_urls": feed_urls, "allow_private_networks": True}
    config.update(first_run_mode="emit_all", monitor_id="e2e_crash")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(config, handle)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tap_feeddelta", "--config", handle.name],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    finally:
        Path(handle.name).unlink()
    return {
        message["record"]["delivery_id"]
        for message in map(json.loads, done.stdout.splitlines())
        if message["type"] == "RECORD" and message["stream"] == "feed_items"
    }


def test_tap_killed_mid_run_then_rerun_loads_every_change_once(
    project: MeltanoProject, demo_server: DemoServer, postgres: Postgres
) -> None:
    demo_server.set_phase(1)
    base = demo_server.base_url
    # the slow feed comes second: the first feed's records are out when the tap dies
    feeds = [f"{base}/rss.xml", f"{base}/atom.xml?delay={SLOW_SECONDS}", f"{base}/feed.json"]
    env = {
        **tap_env(demo_server, "e2e_crash"),
        "TAP_FEEDDELTA_FEED_URLS": json.dumps(feeds),
        **postgres.env,
        "TARGET_POSTGRES_DEFAULT_TARGET_SCHEMA": "crash_feeds",
    }
    args = ("run", "--state-id-suffix=crash", "tap-feeddelta", "target-postgres")

    first = project.popen(*args, env=env)
    try:
        deadline = time.monotonic() + 120
        tap_pid = None
        while tap_pid is None:
            assert first.poll() is None, first.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the tap never started"
            tap_pid = _tap_process(first.pid)
            time.sleep(0.2)
        time.sleep(SLOW_SECONDS / 2)  # past the first feed, waiting on the slow one
        os.kill(tap_pid, signal.SIGKILL)
    finally:
        output, _ = first.communicate(timeout=180)
    assert first.returncode != 0, f"the killed run must fail:\n{output[-3000:]}"

    project.run(*args, env=env).check()
    rows = postgres.query("select delivery_id from crash_feeds.feed_items")
    delivered = [row[0] for row in rows]
    assert len(delivered) == len(set(delivered)), "a delivery_id appears twice"
    assert set(delivered) == _expected_delivery_ids(feeds)
    state = project.state("dev:tap-feeddelta-to-target-postgres:crash")
    partitions = state["singer_state"]["bookmarks"]["feed_items"]["partitions"]
    assert sorted(p["context"]["feed_url"] for p in partitions) == sorted(feeds)
