"""The ``tap-feeddelta`` command (also ``python -m tap_feeddelta``)."""

from __future__ import annotations

import gc
import os
import signal
from types import FrameType


def _stopped_during_start_up(signum: int, frame: FrameType | None) -> None:
    # Nothing fetched, emitted or written yet: nothing to save, so end at once, with the
    # exit status of an interrupted run (not -15, nor a KeyboardInterrupt traceback).
    os.write(2, f"Stopped by signal {signum} during start-up: nothing was done.\n".encode())
    os._exit(128 + signum)


def main() -> None:
    """Import the tap with the cycle collector paused, then run its CLI.

    Start-up imports singer_sdk and its dependencies: about 90,000 objects that
    live as long as the process. Cycle collections during the imports find nothing to
    free and cost about a tenth of start-up; freezing what the imports made keeps every
    later full collection of the run from walking it again.
    """
    # Until the tap installs its own handlers (which write the state) once it is set up.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stopped_during_start_up)
    gc.disable()
    try:
        from tap_feeddelta.tap import TapFeedDelta
    finally:
        gc.freeze()
        gc.enable()
    TapFeedDelta.cli()
