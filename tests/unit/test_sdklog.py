"""Only the SDK's config-source notices are lowered to DEBUG, by their exact text."""

from __future__ import annotations

import logging

import pytest

from tap_feeddelta.sdklog import SdkNoticesAtDebug

NOTICE = "Skipping parse of env var settings..."


def _record(level: int, msg: str) -> logging.LogRecord:
    return logging.LogRecord("test.sdklog", level, __file__, 1, msg, None, None)


@pytest.mark.parametrize(
    ("level", "msg"),
    [
        (logging.INFO, "Beginning sync of 'feed_items'"),
        (logging.WARNING, NOTICE),  # not the SDK's INFO notice: left as it is
        (logging.WARNING, "Config validation failed"),
        (logging.INFO, NOTICE + " "),
    ],
)
def test_any_other_line_passes_unchanged(level: int, msg: str) -> None:
    record = _record(level, msg)
    assert SdkNoticesAtDebug().filter(record) is True
    assert record.levelno == level


@pytest.mark.parametrize("debug", [False, True])
def test_the_notice_is_logged_at_debug_where_debug_is_on(debug: bool) -> None:
    logging.getLogger("test.sdklog").setLevel(logging.DEBUG if debug else logging.INFO)
    record = _record(logging.INFO, NOTICE)
    assert SdkNoticesAtDebug().filter(record) is debug
    assert (record.levelno, record.levelname) == (logging.DEBUG, "DEBUG")
