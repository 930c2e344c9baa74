"""Valid JSON that Python's readers cannot take (a ValueError without a position,
decimal's InvalidOperation, a RecursionError), with the words errors.unread_json_text
gives each: for every test of a file the tap reads as JSON."""

from __future__ import annotations

import pytest

UNREADABLE_JSON = [
    pytest.param(
        '{"x": ' + "9" * 5000 + "}",
        "holds an integer of over 4,300 digits",
        id="integer-of-5000-digits",
    ),
    pytest.param(
        '{"x": 1e999999999999999999999}',
        "holds a number too large to read",
        id="exponent-of-21-digits",
    ),
    pytest.param(
        '{"x": ' + "[" * 200_000 + "]" * 200_000 + "}",
        "is nested too deeply to read",
        id="nested-200000-deep",
    ),
]
