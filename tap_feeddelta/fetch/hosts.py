"""Per-host connection slots, and when to stop sending to a host that sends nothing back.

A fetch talks to a host while holding one of the host's ``max_per_host`` slots. Waiting
for a slot is not part of the fetch's time budget: a host with many feeds that answers
slowly but surely would otherwise time out the feeds late in its queue. The deadline
stands still meanwhile (``abort()`` still ends the wait) and the wait is left out of
``fetch_ms``.

A host is given up, for the rest of the run, when its last ``SILENT_ROUNDS`` ×
``max_per_host`` fetches in a row all ran out of time before it sent anything back
(nothing while connecting, no status line and headers to the request). Its fetches still
waiting, and any that come later, then end unsent (``timeout``, saying so). A response
head, of any status, resets the count: a host that answers works, however slowly its
bodies come. A fetch counts only when the host had a fair chance to answer: it was sent
with at least ``fair_chance_seconds`` (min(5 s, half of ``request_timeout_seconds``)) of
its budget left. A redirect, or a web page's feed link, reached with less left ran out of
time mostly on another server: its end neither counts nor resets the count, so feeds on
other hosts that redirect late cannot get a working host given up. The fetches counted
are the host's own feeds, sent ``max_per_host`` at a time
(no probe is sent alone): a host that sends nothing back costs about ``SILENT_ROUNDS``
budgets when its feeds are queued together, at most ``SILENT_ROUNDS`` × ``max_per_host``,
whatever the number of its feeds; a working host is given up only if that many of its
feeds in a row send nothing back within their budgets.

A host that answers 429, or 503 with a Retry-After, rests: until the time its Retry-After
gives (capped at a day when read; ``WAIT_WITHOUT_RETRY_AFTER`` after a 429 without one),
the run sends it nothing more. Rate limits count a client's requests to the host, not to
one URL, so its other feeds would only meet the same answer, and a client that keeps
asking gets blocked. Its fetches still waiting for a slot, and any that come later, end
unsent (``retry_later``, with the host's Retry-After time, or the end of its rest when it
gave none); those in flight just finish. A 503 without a Retry-After rests no host:
behind a shared front (a reverse proxy, a hosting platform) it is often one backend's
answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Protocol

from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.headers import WAIT_WITHOUT_RETRY_AFTER, rfc3339_text

# Rounds of max_per_host fetches in a row with nothing back that give a host up.
SILENT_ROUNDS: Final = 3
# Time left, at most, that gives a host a fair chance to answer: a working host sends back
# a status line and headers within a few seconds, and a short budget gets half of it.
FAIR_CHANCE_SECONDS: Final = 5.0


def fair_chance_seconds(request_timeout_seconds: float) -> float:
    """The time a fetch must have left when sent for its silence to count against its
    host: min(FAIR_CHANCE_SECONDS, half of the whole budget)."""
    return min(FAIR_CHANCE_SECONDS, request_timeout_seconds / 2)


class Queued(Protocol):
    """What a fetch tells about itself while it waits for, and holds, a slot."""

    doing: str  # what the fetch is waiting for, should the deadline pass
    queued_seconds: float  # waiting for a slot, outside the budget
    heads_read: int  # response heads read (the host answered), over all hops
    retry_after_at: str | None  # the host's, when the fetch is not sent as it rests


@dataclass(slots=True)
class _Host:
    slots: asyncio.Semaphore
    # Fetches in a row that ran out of time before the host sent back a response head.
    silent_in_a_row: int = 0
    sending: int = 0  # fetches holding a slot and sent
    counting: int = 0  # of those, the ones whose silence would count (a fair chance)
    # Fetches waiting for those to end before they are sent (see HostSlots.held).
    waiting: list[asyncio.Future[None]] = field(default_factory=list)
    # Until when the host asked to be left alone (RFC 3339, as Retry-After is kept), the
    # status it asked with, and its Retry-After time (None: it gave none).
    resting_until: str | None = None
    rest_status: int = 0
    rest_told: str | None = None


class HostSlots:
    """The slots of every host of one run, and the count of what each sent back."""

    def __init__(
        self,
        max_per_host: int,
        aborting: Callable[[], bool],
        now: Callable[[], datetime],
        fair_chance_seconds: float,
    ) -> None:
        self._max_per_host = max_per_host
        self._fair_chance_seconds = fair_chance_seconds
        self._aborting = aborting
        self._now = now
        self._hosts: dict[str, _Host] = {}

    def rest(self, host: str, status: int, told: str | None) -> None:
        """``host`` answered ``status`` asking to be left alone until ``told`` (its
        Retry-After time, RFC 3339), or for ``WAIT_WITHOUT_RETRY_AFTER`` when it gave no
        time: nothing more is sent to it before then (the later of two asks)."""
        state = self._host(host)
        until = told or rfc3339_text(self._now() + WAIT_WITHOUT_RETRY_AFTER)
        if state.resting_until is None or until > state.resting_until:
            state.resting_until, state.rest_status, state.rest_told = until, status, told

    def _host(self, host: str) -> _Host:
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = _Host(asyncio.Semaphore(self._max_per_host))
        return state

    @contextlib.asynccontextmanager
    async def held(
        self, host: str, deadline: asyncio.Timeout, fetch: Queued
    ) -> AsyncIterator[None]:
        """Hold one of ``host``'s slots, or raise ``timeout`` when the host is given up,
        ``retry_later`` while it rests."""
        state = self._host(host)
        fetch.doing = "waiting for a connection slot"
        await self._acquire(state.slots, deadline, fetch)
        try:
            silent = self._max_per_host * SILENT_ROUNDS
            # Sent now, this fetch would be one past the count if the fetches in flight
            # all end silent: it waits for them to end, so that the host is given up
            # after exactly that many (however their ends fall in time).
            while state.counting > 0 and state.silent_in_a_row + state.counting >= silent:
                await self._until_one_ends(state, deadline, fetch)
            if state.silent_in_a_row >= silent:
                raise FetchError(
                    "timeout",
                    f"Not tried: {host} sent nothing back to its last {silent} fetches "
                    "before their time ran out, so its other fetches in this run were "
                    "given up.",
                )
            resting_until = state.resting_until
            if resting_until is not None and rfc3339_text(self._now()) < resting_until:
                # The host's time, told or its own rest's: a feed not asked waits no
                # longer than the host asked (by its own failure streak, which may hold
                # a day of 500s, it waited a day after a sibling's one 429).
                fetch.retry_after_at = state.rest_told or resting_until
                asked = (
                    ", asking to be left alone until retry_after_at"
                    if state.rest_told
                    else " (too many requests)"
                )
                raise FetchError(
                    "retry_later",
                    f"Not sent: {host} answered {state.rest_status} to an earlier fetch of "
                    f"this run{asked}.",
                )
            heads_read = fetch.heads_read
            counts = self._has_fair_chance(deadline)
            state.sending += 1
            state.counting += int(counts)
            try:
                yield
            except asyncio.CancelledError:
                # The fetch's own budget ran out (not a stop) with no answer: silence.
                expired = deadline.expired() and not self._aborting()
                if counts and expired and fetch.heads_read == heads_read:
                    state.silent_in_a_row += 1
                raise
            finally:
                if fetch.heads_read > heads_read:  # an answer, an error status too
                    state.silent_in_a_row = 0
                state.sending -= 1
                state.counting -= int(counts)
                for waiter in state.waiting:
                    if not waiter.done():
                        waiter.set_result(None)
                state.waiting.clear()
        finally:
            state.slots.release()

    def _has_fair_chance(self, deadline: asyncio.Timeout) -> bool:
        """Whether a fetch sent now leaves its host the time to answer (see above)."""
        when = deadline.when()
        if when is None:
            return True
        return when - asyncio.get_running_loop().time() >= self._fair_chance_seconds

    async def _until_one_ends(self, state: _Host, deadline: asyncio.Timeout, fetch: Queued) -> None:
        """Wait, with the deadline standing still as for a slot, until a fetch of the
        host in flight ends."""
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()
        state.waiting.append(ended)
        await self._queued(ended, deadline, fetch)

    async def _acquire(
        self, slots: asyncio.Semaphore, deadline: asyncio.Timeout, fetch: Queued
    ) -> None:
        """Acquire a slot with the deadline standing still (not when stopping: then
        the deadline passes at once)."""
        if not slots.locked():
            await slots.acquire()
            return
        await self._queued(slots.acquire(), deadline, fetch)

    async def _queued(
        self, wait: Awaitable[object], deadline: asyncio.Timeout, fetch: Queued
    ) -> None:
        """Await ``wait`` with the deadline standing still (not when stopping: then the
        deadline passes at once); the time is counted as queued."""
        loop = asyncio.get_running_loop()
        when = deadline.when()
        queued_at = loop.time()
        if not self._aborting():
            deadline.reschedule(None)
        await wait
        now = loop.time()
        if self._aborting():
            deadline.reschedule(now)
            return
        fetch.queued_seconds += now - queued_at
        deadline.reschedule(None if when is None else when + now - queued_at)
