"""The ``tap-feeddelta`` command (also ``python -m tap_feeddelta``)."""

from __future__ import annotations

import gc


def main() -> None:
    """Import the tap with the cycle collector paused, then run its CLI.

    Start-up imports singer_sdk and its dependencies: about 90,000 objects that
    live as long as the process. Cycle collections during the imports find nothing to
    free and cost about a tenth of start-up; freezing what the imports made keeps every
    later full collection of the run from walking it again.
    """
    gc.disable()
    try:
        from tap_feeddelta.tap import TapFeedDelta
    finally:
        gc.freeze()
        gc.enable()
    TapFeedDelta.cli()
