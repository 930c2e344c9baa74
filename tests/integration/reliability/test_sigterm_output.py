"""SIGTERM while the tap is blocked writing to a target that reads slowly, or not at all.

The target reads through a real pipe; the signal is sent once the tap's main thread is
seen (in /proc) inside a write(2) of a feed's records to stdout, so it lands mid-write.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.feedserver import FeedServer, rss
from tests.tapharness import TAP

FEEDS = 12
ITEMS = 200
WRITE_SYSCALL = {"x86_64": 1, "aarch64": 64}.get(platform.machine())

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or WRITE_SYSCALL is None, reason="reads /proc/<pid>/syscall"
)

# Reads the tap's output a little at a time, as a target busy loading does.
SLOW_READER = """
import os, sys, time
while chunk := os.read(0, 4096):
    sys.stdout.buffer.write(chunk)
    time.sleep(0.002)
"""


@pytest.fixture(scope="module")
def server() -> Iterator[FeedServer]:
    srv = FeedServer().start()
    text = "word " * 300
    for n in range(FEEDS):
        srv.put(f"/big{n}.xml", rss([(f"b{n}-{k}", f"Title {k}", text) for k in range(ITEMS)]))
    yield srv
    srv.stop()


def _config_path(server: FeedServer, tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    config = {
        "feed_urls": [server.url(f"/big{n}.xml") for n in range(FEEDS)],
        "allow_private_networks": True,
        "first_run_mode": "emit_all",
        "content_mode": "feed_content",
        "max_items_per_run": ITEMS,
        "request_timeout_seconds": 30,
    }
    path.write_text(json.dumps(config))
    return path


def _wait_until_writing_records(pid: int, received: Path | None = None) -> None:
    """Return once the process's main thread is blocked in a write of at least 64 KiB to
    stdout (a feed's records, not a SCHEMA line), after 1 MB reached ``received``."""
    deadline = time.monotonic() + 60
    while received is not None and received.stat().st_size < 1_000_000:
        if time.monotonic() > deadline:
            pytest.fail("the tap wrote too little")
        time.sleep(0.01)
    while time.monotonic() < deadline:
        try:
            fields = Path(f"/proc/{pid}/task/{pid}/syscall").read_text().split()
        except OSError:
            fields = []
        if (
            len(fields) > 3
            and fields[0] == str(WRITE_SYSCALL)
            and int(fields[1], 16) == 1
            and int(fields[3], 16) >= 65536
        ):
            time.sleep(0.05)  # stays blocked: part of the records went out, not all
            return
        time.sleep(0.005)
    pytest.fail("the tap never blocked writing records")


def test_sigterm_mid_write_to_a_slow_target_leaves_whole_lines_and_a_final_state(
    server: FeedServer, tmp_path: Path
) -> None:
    config_path = _config_path(server, tmp_path)
    received = tmp_path / "received.jsonl"
    with (tmp_path / "err").open("wb") as err, received.open("wb") as sink:
        tap = subprocess.Popen(
            [*TAP, "--config", str(config_path)], stdout=subprocess.PIPE, stderr=err
        )
        assert tap.stdout is not None
        reader = subprocess.Popen(
            [sys.executable, "-c", SLOW_READER], stdin=tap.stdout, stdout=sink
        )
        tap.stdout.close()
        try:
            _wait_until_writing_records(tap.pid, received)
            tap.send_signal(signal.SIGTERM)
            tap.wait(timeout=60)
            reader.wait(timeout=60)
        finally:
            for proc in (tap, reader):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    assert tap.returncode == 128 + signal.SIGTERM, (tmp_path / "err").read_text()
    lines = received.read_bytes().split(b"\n")
    assert lines[-1] == b""  # the output ends with a whole line
    messages = [json.loads(line) for line in lines[:-1]]  # every line is one message
    assert messages[-1]["type"] == "STATE"
    partitions = messages[-1]["value"]["bookmarks"]["feed_items"]["partitions"]
    done = {p["context"]["feed_url"] for p in partitions}
    assert 0 < len(done) < FEEDS
    per_feed: dict[str, int] = {}
    for m in messages:
        if m["type"] == "RECORD" and m["stream"] == "feed_items":
            per_feed[m["record"]["feed_url"]] = per_feed.get(m["record"]["feed_url"], 0) + 1
    assert all(per_feed.get(url) == ITEMS for url in done)  # committed feeds: all records out
    health = [m for m in messages if m["type"] == "RECORD" and m["stream"] == "feed_health"]
    assert {m["record"]["feed_url"] for m in health} == done


def test_sigterm_when_the_target_stops_reading_ends_the_tap(
    server: FeedServer, tmp_path: Path
) -> None:
    """A target that never reads again cannot take the final STATE; the tap must still end
    (after its grace period, shortened here), not hang on its write for ever."""
    config_path = _config_path(server, tmp_path)
    command = [
        sys.executable,
        "-c",
        "import tap_feeddelta.tap as t; t.TERMINATION_GRACE_SECONDS = 1; t.TapFeedDelta.cli()",
        "--config",
        str(config_path),
    ]
    read_end, write_end = os.pipe()
    try:
        with (tmp_path / "err").open("wb") as err:
            tap = subprocess.Popen(command, stdout=write_end, stderr=err)
            os.close(write_end)
            try:
                _wait_until_writing_records(tap.pid)
                tap.send_signal(signal.SIGTERM)
                tap.wait(timeout=30)  # the pipe is never read
            finally:
                if tap.poll() is None:
                    tap.kill()
                    tap.wait()
    finally:
        os.close(read_end)
    assert tap.returncode == 128 + signal.SIGTERM
    assert "the final STATE may be missing" in (tmp_path / "err").read_text()
