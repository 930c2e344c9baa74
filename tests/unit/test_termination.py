"""A run stopped by a signal finishes its writes a little before its grace period ends."""

from __future__ import annotations

import pytest

from tap_feeddelta.termination import write_deadline


@pytest.mark.parametrize(
    ("grace_seconds", "deadline"),
    [(30, 129.0), (1, 100.9)],  # a second to spare, or a tenth of a short grace
)
def test_the_writes_end_before_the_grace_period_does(grace_seconds: float, deadline: float) -> None:
    assert write_deadline(100.0, grace_seconds) == pytest.approx(deadline)
