"""A signal before the tap has read its state ends the run without a STATE: the SDK
handles signals from its start, when its state is still empty, and a STATE of that would
make every feed's next run a first run (changes since the last run never delivered)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

# The tap, signalled by itself while it reads the state: a real process and signal, at a
# moment a test cannot hit from outside.
SIGNALLED_WHILE_LOADING = """
import os, signal
from tap_feeddelta.tap import TapFeedDelta

class SignalledWhileLoading(TapFeedDelta):
    def load_state(self, state):
        os.kill(os.getpid(), signal.SIGTERM)
        super().load_state(state)

SignalledWhileLoading.cli()
"""


def test_a_signal_while_the_state_is_read_writes_no_state(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"feed_urls": ["https://example.org/feed.xml"]}))
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"bookmarks": {}}))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SIGNALLED_WHILE_LOADING,
            "--config",
            str(config),
            "--state",
            str(state),
        ],
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    messages = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [message for message in messages if message["type"] == "STATE"] == []
    assert done.returncode == 128 + signal.SIGTERM
