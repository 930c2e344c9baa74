"""open_first (happy eyeballs) under cancellation: every connection it makes is returned or
closed, wherever the feed's deadline or abort() lands.

The attempts are scripted (each ends after a set number of loop turns, connected or
refused), so every point of a race can be hit deterministically: a real connect lands
when the kernel says, and a race with real sockets hits a given turn only by luck
(the integration tests in tests/integration/fetch/test_addresses.py race real ones).
"""

from __future__ import annotations

import asyncio
import errno
import gc
import ssl
from typing import Any

import pytest

from tap_feeddelta.fetch import connection
from tap_feeddelta.fetch.connection import open_first, telling_error

# address: (loop turns until the attempt ends, whether it connects)
Plan = dict[str, tuple[int, bool]]

PLANS: dict[str, Plan] = {
    "later-one-wins-first-still-connecting": {"a": (12, True), "b": (2, True)},
    "both-connect-in-the-same-turn": {"a": (3, True), "b": (3, True)},
    "refused-then-two-connect": {"a": (1, False), "b": (4, True), "c": (6, True)},
    "first-wins-last-still-connecting": {"a": (3, True), "b": (9, True), "c": (20, True)},
    "all-refused": {"a": (2, False), "b": (3, False)},
}
LAST_CANCEL_TURN = 28


class FakeConnection:
    def __init__(self, address: str) -> None:
        self.address = address
        self.closed = False

    def close(self) -> None:
        self.closed = True


def _complaints() -> list[dict[str, Any]]:
    """What the running loop complains about from now on (a task's exception never
    read, a task destroyed while pending)."""
    complaints: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: complaints.append(context))
    return complaints


async def _race(
    plan: Plan, cancel_turns: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[FakeConnection], object]:
    """Run one race, cancelled at the given loop turns: the connections made, and what
    open_first returned (or raised)."""
    opened: list[FakeConnection] = []

    async def open_pinned(key: tuple[str, str, int, str], context: object) -> FakeConnection:
        turns, connects = plan[key[3]]
        for _ in range(turns):
            await asyncio.sleep(0)
        if not connects:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "refused")
        conn = FakeConnection(key[3])
        opened.append(conn)
        return conn

    monkeypatch.setattr(connection, "open_pinned", open_pinned)
    keys = [("http", "feed.example", 80, address) for address in plan]
    task = asyncio.ensure_future(open_first(keys, None, delay=0))  # type: ignore[arg-type]
    for turn in range(LAST_CANCEL_TURN + 1):
        if turn in cancel_turns:
            task.cancel()
        await asyncio.sleep(0)
    outcome: object
    try:
        outcome = (await task)[1]
    except (asyncio.CancelledError, OSError) as exc:
        outcome = exc
    for _ in range(50):  # the cancelled attempts end
        await asyncio.sleep(0)
    return opened, outcome


CANCELS = [
    *((turn,) for turn in range(LAST_CANCEL_TURN + 1)),
    *((turn, turn + gap) for turn in range(LAST_CANCEL_TURN - 3) for gap in (1, 2, 3)),
]


@pytest.mark.parametrize("plan", PLANS.values(), ids=PLANS.keys())
def test_every_connection_is_returned_or_closed_wherever_a_cancellation_lands(
    plan: Plan, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def every_race() -> list[str]:
        complaints = _complaints()
        problems = []
        for cancel_turns in CANCELS:
            opened, outcome = await _race(plan, cancel_turns, monkeypatch)
            leaked = [conn.address for conn in opened if not conn.closed and conn is not outcome]
            if leaked:
                problems.append(f"cancelled at {cancel_turns}: {leaked} leaked")
            if isinstance(outcome, FakeConnection) and outcome.closed:
                problems.append(f"cancelled at {cancel_turns}: returned {outcome.address} closed")
        gc.collect()  # a task's unread exception is reported when it is collected
        await asyncio.sleep(0)
        problems += [str(complaint.get("message")) for complaint in complaints]
        return problems

    assert asyncio.run(every_race()) == []


@pytest.mark.parametrize("plan", PLANS.values(), ids=PLANS.keys())
def test_an_uncancelled_race_returns_one_connection_and_closes_the_rest(
    plan: Plan, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def one_race() -> tuple[list[FakeConnection], object, list[dict[str, Any]]]:
        complaints = _complaints()
        opened, outcome = await _race(plan, (), monkeypatch)
        gc.collect()
        await asyncio.sleep(0)
        return opened, outcome, complaints

    opened, outcome, complaints = asyncio.run(one_race())
    assert complaints == []
    if any(connects for _, connects in plan.values()):
        assert isinstance(outcome, FakeConnection) and not outcome.closed
        assert all(conn.closed for conn in opened if conn is not outcome)
        fastest = min((turns, address) for address, (turns, ok) in plan.items() if ok)
        assert outcome.address == fastest[1]
    else:
        assert isinstance(outcome, ConnectionRefusedError) and opened == []


REFUSED = ConnectionRefusedError(errno.ECONNREFUSED, "refused")
UNREACHABLE = OSError(errno.ENETUNREACH, "unreachable")
RESET = ConnectionResetError(errno.ECONNRESET, "reset")
TIMED_OUT = TimeoutError(errno.ETIMEDOUT, "timed out")
BAD_CERTIFICATE = ssl.SSLCertVerificationError(1, "certificate verify failed")
TLS_ALERT = ssl.SSLError(1, "tlsv1 alert")


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        ([REFUSED, BAD_CERTIFICATE], BAD_CERTIFICATE),
        ([BAD_CERTIFICATE, REFUSED], BAD_CERTIFICATE),
        ([UNREACHABLE, REFUSED, TLS_ALERT], TLS_ALERT),
        ([REFUSED, TIMED_OUT, UNREACHABLE], TIMED_OUT),
        ([TIMED_OUT, BAD_CERTIFICATE], BAD_CERTIFICATE),
        ([TLS_ALERT, BAD_CERTIFICATE], TLS_ALERT),
        ([REFUSED, RESET, UNREACHABLE], REFUSED),
        ([UNREACHABLE, REFUSED], UNREACHABLE),
    ],
    ids=[
        "tls-after-refused",
        "tls-before-refused",
        "tls-alert-after-two",
        "timeout-over-refusals",
        "tls-over-timeout",
        "first-of-two-tls",
        "first-of-transient",
        "first-of-transient-reversed",
    ],
)
def test_a_lost_race_reports_its_most_telling_error(
    errors: list[BaseException], expected: BaseException
) -> None:
    assert telling_error(errors) is expected


def test_a_race_of_a_refusal_and_a_bad_certificate_raises_the_certificate_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failures = {"a": REFUSED, "b": BAD_CERTIFICATE}

    async def open_pinned(key: tuple[str, str, int, str], context: object) -> FakeConnection:
        await asyncio.sleep(0)
        raise failures[key[3]]

    monkeypatch.setattr(connection, "open_pinned", open_pinned)
    keys = [("https", "feed.example", 443, address) for address in failures]
    with pytest.raises(ssl.SSLCertVerificationError):
        asyncio.run(open_first(keys, None, delay=0))  # type: ignore[arg-type]
