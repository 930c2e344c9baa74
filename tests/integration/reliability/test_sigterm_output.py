"""SIGTERM while the tap is blocked writing to a target that reads slowly, or not at all.

The target reads through a real pipe; the signal is sent once the tap's main thread is
seen (in /proc) inside a write(2) of a feed's records to stdout, so it lands mid-write.
"""

from __future__ import annotations

import base64
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.feedserver import FeedServer, rss
from tests.tapharness import TAP, run_tap

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
    returncode, output, log = _run_into_a_slow_reader(
        [*TAP, "--config", str(config_path)],
        tmp_path,
        lambda pid: _wait_until_writing_records(pid, tmp_path / "received.jsonl"),
        reader=SLOW_READER,
        tap_seconds=60,
    )
    assert returncode == 128 + signal.SIGTERM, log
    lines = output.split(b"\n")
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
        "import tap_feeddelta.termination as g; g.TERMINATION_GRACE_SECONDS = 1; "
        "import tap_feeddelta.tap as t; t.TapFeedDelta.cli()",
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


# Reads the tap's output at about 40 KB/s: a target that works, but slowly.
SLOWER_READER = """
import os, sys, time
while chunk := os.read(0, 4096):
    sys.stdout.buffer.write(chunk)
    time.sleep(0.1)
"""


def _tap_with_a_short_grace(config_path: Path, *args: str, pipe_bytes: int = 0) -> list[str]:
    """The tap's command with its grace period cut to 1 s; with ``pipe_bytes``, the
    largest pipe it may ask for (this test may run as root, which the kernel lets make a
    pipe as large as it likes)."""
    setup = "import tap_feeddelta.termination as g; g.TERMINATION_GRACE_SECONDS = 1"
    setup += "; import tap_feeddelta.tap as t"
    if pipe_bytes:
        setup += f"; import tap_feeddelta.messages as m; m.MAX_PIPE_BYTES = {pipe_bytes}"
    return [
        sys.executable,
        "-c",
        f"{setup}; t.TapFeedDelta.cli()",
        "--config",
        str(config_path),
        *args,
    ]


def _run_into_a_slow_reader(
    command: list[str],
    tmp_path: Path,
    signal_when: Callable[[int], None],
    *,
    reader: str = SLOWER_READER,
    tap_seconds: float = 30,
) -> tuple[int, bytes, str]:
    """Run ``command`` into ``reader`` (a script), SIGTERM it once ``signal_when(pid)``
    returns, and wait ``tap_seconds`` at most for it to end; (exit status, what the reader
    received, the tap's log)."""
    received = tmp_path / "received.jsonl"
    with (tmp_path / "err").open("wb") as err, received.open("wb") as sink:
        tap = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err)
        assert tap.stdout is not None
        reading = subprocess.Popen([sys.executable, "-c", reader], stdin=tap.stdout, stdout=sink)
        tap.stdout.close()
        try:
            signal_when(tap.pid)
            tap.send_signal(signal.SIGTERM)
            tap.wait(timeout=tap_seconds)
            reading.wait(timeout=60)
        finally:
            for proc in (tap, reading):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    return tap.returncode, received.read_bytes(), (tmp_path / "err").read_text()


def _whole_lines(output: bytes) -> list[dict[str, Any]]:
    lines = output.split(b"\n")
    assert lines[-1] == b"", f"the output ends part-way through a line: {lines[-1][:80]!r}"
    return [json.loads(line) for line in lines[:-1]]


def test_grace_running_out_while_records_go_out_leaves_whole_lines(
    server: FeedServer, tmp_path: Path
) -> None:
    """The grace ends while a slow target still reads a feed's records: the line being
    written when the signal came is finished, then only lines the pipe can take whole go
    out; the rest is left out rather than cut."""
    command = _tap_with_a_short_grace(_config_path(server, tmp_path))
    returncode, output, log = _run_into_a_slow_reader(
        command, tmp_path, _wait_until_writing_records
    )
    assert returncode == 128 + signal.SIGTERM, log
    messages = _whole_lines(output)
    assert messages, log


def test_a_final_state_that_cannot_go_out_whole_in_time_is_left_out(
    server: FeedServer, tmp_path: Path
) -> None:
    """A final STATE larger than the pipe can hold, to a slow target: left out (the last
    STATE the target received stands), never written in part."""
    feeds = 30
    for n in range(feeds):
        server.put(f"/small{n}.xml", rss([(f"s{n}-{k}", f"Title {k}", "text") for k in range(3)]))
    server.put("/slow.xml", rss([("slow", "Slow", "text")]), delay_seconds=30)
    fast = [server.url(f"/small{n}.xml") for n in range(feeds)]
    config = {"feed_urls": fast, "allow_private_networks": True}
    first = run_tap(config)
    assert first.returncode == 0, first.stderr
    state = first.final_state
    assert state is not None
    for partition in state["bookmarks"]["feed_items"]["partitions"]:
        # 5,000 remembered items a feed: a STATE of about 2.4 MB
        partition["items"] = base64.b64encode(os.urandom(12 * 5000)).decode()
        partition["largest_document"] = 5000
    state_path = tmp_path / "state.json"
    state_path.write_text(json.dumps(state))
    config_path = tmp_path / "config.json"
    config_path.write_text(
        json.dumps({**config, "feed_urls": [*fast, server.url("/slow.xml")],
                    "request_timeout_seconds": 60})
    )  # fmt: skip

    def once_the_fast_feeds_are_done(pid: int) -> None:
        deadline = time.monotonic() + 60
        while not server.requests_to("/slow.xml"):
            assert time.monotonic() < deadline, "the tap never asked for the slow feed"
            time.sleep(0.05)
        time.sleep(1.0)  # the fast feeds' answers (304) are dealt with meanwhile

    command = _tap_with_a_short_grace(config_path, "--state", str(state_path), pipe_bytes=1 << 18)
    returncode, output, log = _run_into_a_slow_reader(
        command, tmp_path, once_the_fast_feeds_are_done
    )
    assert returncode == 128 + signal.SIGTERM, log
    messages = _whole_lines(output)
    assert [m for m in messages if m["type"] == "STATE"] == []  # none written in this run
    # Left out because it cannot fit the pipe (not because the reader is slow: that
    # message names the final STATE too).
    assert "cannot go out whole: more than the pipe to the target holds" in log
