"""The installed command runs the tap and leaves the cycle collector on."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

PROBE = """
import gc, sys
sys.argv = ["tap-feeddelta", "--about", "--format=json"]
from tap_feeddelta.cli import main
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
print(gc.isenabled(), gc.get_freeze_count(), file=sys.stderr)
"""


def test_the_console_script_is_the_cli_main() -> None:
    (script,) = entry_points(group="console_scripts", name="tap-feeddelta")
    assert script.value == "tap_feeddelta.cli:main"


def test_main_runs_the_tap_and_turns_the_collector_back_on() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout)["name"] == "tap-feeddelta"
    enabled, frozen = done.stderr.split()[-2:]
    assert enabled == "True"
    # The start-up imports are frozen out of later collections.
    assert int(frozen) > 10_000


# The signal arrives before the tap is set up (its own handlers are not installed yet).
EARLY_SIGNAL = """
import os, signal, sys, time
import tap_feeddelta.tap as tap
tap.TapFeedDelta.cli = lambda: (os.kill(os.getpid(), getattr(signal, sys.argv[1])), time.sleep(10))
from tap_feeddelta.cli import main
main()
"""


@pytest.mark.parametrize(("name", "status"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_during_start_up_ends_the_run_as_interrupted(name: str, status: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EARLY_SIGNAL, name], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == status, done.stderr
    assert "during start-up" in done.stderr
    assert "Traceback" not in done.stderr
