"""singer-sdk's own log lines that the tap lowers, by their exact text (nothing else, so a
new SDK line, a warning above all, still comes through as the SDK writes it)."""

from __future__ import annotations

import logging
from typing import Final

# Where the SDK read the settings from, said at INFO on every start (twice per meltano
# run: discovery, then the run); it reads as a warning and tells nothing of the run.
_NOTICES: Final = frozenset(
    {"Skipping parse of env var settings...", "Parsing env var for settings config..."}
)


class SdkNoticesAtDebug(logging.Filter):
    """Logs the SDK's config-source notices at DEBUG: shown only where DEBUG is on."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or record.msg not in _NOTICES:
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


SDK_NOTICES_AT_DEBUG: Final = SdkNoticesAtDebug()
