"""Runs the real `tap-feeddelta` command and reads its Singer messages; or runs its feeds
in this process (run_in_process), the code the command runs, where a test reads outcomes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tap_feeddelta.check import FeedOutcome
    from tap_feeddelta.config import Settings

TAP = [sys.executable, "-m", "tap_feeddelta"]


def run_in_process(
    settings: Settings,
    state: dict[str, Any],
    now: Callable[[], datetime] | None = None,
) -> list[FeedOutcome]:
    """One run of the configured feeds in this process, on feed_items' ``state``, which
    it moves (committed, as the tap commits it): each feed's outcome, in config order.
    ``now``: the clock of the run and its fetcher (a test's own, to let days pass)."""
    from tap_feeddelta.fetch import Fetcher, FetchPolicy
    from tap_feeddelta.run import FeedRun

    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True), now=now)
    logger = logging.getLogger("test")
    feed_run = (
        FeedRun(settings, fetcher, logger)
        if now is None
        else FeedRun(settings, fetcher, logger, now=now)
    )
    try:
        return list(feed_run.outcomes(state, commit=True))
    finally:
        fetcher.close()


@dataclass
class TapRun:
    returncode: int
    stdout: str
    stderr: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    peak_rss_mb: float = 0.0  # the tap process's own high-water mark (VmHWM)

    def records(self, stream: str) -> list[dict[str, Any]]:
        return [
            m["record"] for m in self.messages if m["type"] == "RECORD" and m["stream"] == stream
        ]

    @property
    def items(self) -> list[dict[str, Any]]:
        return self.records("feed_items")

    @property
    def health(self) -> list[dict[str, Any]]:
        return self.records("feed_health")

    @property
    def final_state(self) -> dict[str, Any] | None:
        states = [m["value"] for m in self.messages if m["type"] == "STATE"]
        return states[-1] if states else None

    def partition(self, feed_url: str, monitor_id: str = "default") -> dict[str, Any]:
        assert self.final_state is not None
        for partition in self.final_state["bookmarks"]["feed_items"]["partitions"]:
            if partition["context"] == {"monitor_id": monitor_id, "feed_url": feed_url}:
                return dict(partition)
        raise KeyError(feed_url)


def without_validators(state: dict[str, Any] | None) -> dict[str, Any]:
    """The state, as if the server had sent no ETag or Last-Modified: the next run reads
    the same document again instead of getting a 304."""
    assert state is not None
    state = json.loads(json.dumps(state))
    for partition in state["bookmarks"]["feed_items"]["partitions"]:
        partition.pop("etag", None)
        partition.pop("last_modified", None)
    return state


def run_tap(
    config: dict[str, Any],
    state: dict[str, Any] | str | bytes | None = None,
    *,
    args: tuple[str, ...] = (),
    catalog: str | None = None,
    timeout: float = 120,
) -> TapRun:
    with tempfile.TemporaryDirectory() as tmp:
        config_path = Path(tmp) / "config.json"
        config_path.write_text(json.dumps(config), encoding="utf-8")
        command = [*TAP, "--config", str(config_path), *args]
        if catalog is not None:
            command += ["--catalog", catalog]
        if state is not None:
            state_path = Path(tmp) / "state.json"
            if isinstance(state, bytes):  # the file's bytes as they are (another encoding)
                state_path.write_bytes(state)
            else:
                text = state if isinstance(state, str) else json.dumps(state)
                state_path.write_text(text, encoding="utf-8")
            command += ["--state", str(state_path)]
        returncode, stdout, stderr, peak_kb = _run_watching_memory(command, Path(tmp), timeout)
    run = TapRun(returncode, stdout, stderr, peak_rss_mb=peak_kb / 1024)
    if returncode == 0 and not args:
        run.messages = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return run


def _run_watching_memory(
    command: list[str], tmp: Path, timeout: float
) -> tuple[int, str, str, int]:
    """Run ``command``; its exit code, output and peak RSS in KiB.

    The peak is the process's own VmHWM, read from /proc while it runs (exec starts it
    afresh, so the test process's own memory never counts).
    """
    out_path, err_path = tmp / "stdout", tmp / "stderr"
    peak_kb = 0
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(command, stdout=out, stderr=err)
        deadline = time.monotonic() + timeout
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise subprocess.TimeoutExpired(command, timeout)
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
    stdout = out_path.read_text(encoding="utf-8")
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    return proc.returncode, stdout, stderr, peak_kb


@contextmanager
def started_tap(
    config: dict[str, Any], state: dict[str, Any], folder: Path
) -> Iterator[subprocess.Popen[str]]:
    """The tap started on ``config`` and ``state`` (written to ``folder``), its stdout a
    pipe of text lines, for a test that reads part of it and signals the process. Killed
    after 60 s whatever the test does, and waited for at the end."""
    config_path, state_path = folder / "c.json", folder / "s.json"
    config_path.write_text(json.dumps(config))
    state_path.write_text(json.dumps(state))
    proc = subprocess.Popen(
        [*TAP, "--config", str(config_path), "--state", str(state_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    watchdog = threading.Timer(60, proc.kill)  # bounded, whatever the tap does
    watchdog.start()
    try:
        yield proc
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
