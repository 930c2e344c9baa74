"""A run stopped by a signal: the grace period it has for its last writes, and the timer
that ends the process when a target that does not read holds those writes up."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable

# Seconds a run stopped by a signal has to write its last records, health rows and STATE.
TERMINATION_GRACE_SECONDS = 30


def ignore_further_signals() -> None:
    """A second SIGINT or SIGTERM must not cut short the end of a stopped run."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)


def write_deadline(now_monotonic: float, grace_seconds: float) -> float:
    """When the last writes must be done by: a little before the grace period ends, so
    that the log can still say what was left out."""
    margin = min(1.0, grace_seconds / 10)
    return now_monotonic + grace_seconds - margin


def exit_after(
    seconds: float,
    code: int,
    logger: logging.Logger,
    before_exit: Callable[[], None] | None = None,
) -> None:
    """End the process with ``code`` in ``seconds``, whatever the main thread is doing
    (blocked on a write to a target that does not read: no signal would end it then)."""

    def give_up() -> None:
        logger.error(
            "Stopped: the run did not end within %d s of the signal (a target that does "
            "not read holds up the output); the final STATE may be missing",
            seconds,
        )
        if before_exit is not None:
            before_exit()
        os._exit(code)

    timer = threading.Timer(seconds, give_up)
    timer.daemon = True
    timer.start()
