"""Connections pinned to a checked address, and the pool that reuses them.

A pinned connection keeps the host name for the Host header, TLS SNI and certificate
verification (these two without a trailing dot), but its socket goes to the one address
the guard checked: it is opened to that IP literal, so no name is looked up again (no DNS
rebinding). Pools are keyed by (scheme, host, port, address). Everything here runs on
the fetcher's event loop.
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass

from urllib3.util import create_urllib3_context

from tap_feeddelta.fetch.errors import is_transient
from tap_feeddelta.fetch.wire import MAX_LINE

PoolKey = tuple[str, str, int, str]  # scheme, host, port, address

MAX_IDLE_TOTAL = 2048  # idle keep-alive connections kept across all hosts, at most
# Happy eyeballs (RFC 8305): the next address gets its own attempt after this long, or as
# soon as the one before fails; 250 ms is the RFC's recommended Connection Attempt Delay.
CONNECT_ATTEMPT_DELAY = 0.25
MAX_CONNECT_ATTEMPTS = 8  # addresses tried per connection, at most


def idle_connection_cap() -> int:
    """How many idle keep-alive connections to keep across all hosts.

    Each is an open file and a connection its server keeps until its own keep-alive
    timeout; reusing one saves a TCP (and TLS) handshake for both sides. A quarter of the
    process's open-file limit, 16 to ``MAX_IDLE_TOTAL``: 256 under the common 1,024.
    """
    try:
        import resource  # POSIX only
    except ImportError:
        return 256
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_IDLE_TOTAL
    return max(16, min(MAX_IDLE_TOTAL, soft // 4))


@dataclass(eq=False, slots=True)
class Connection:
    """One open connection (plain or TLS) to a pinned address."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    @property
    def reusable(self) -> bool:
        """Still open, with nothing the server sent unasked (the loop keeps reading an
        idle connection, so a close or stray bytes show up here)."""
        return not (self.writer.is_closing() or self.reader.at_eof() or _buffered(self.reader))

    def close(self) -> None:
        """Drop the connection at once (no TLS close_notify wait, nothing flushed)."""
        transport = self.writer.transport
        transport.abort()


def _buffered(reader: asyncio.StreamReader) -> bool:
    # StreamReader has no public view of its buffer; an idle connection must have none.
    return bool(getattr(reader, "_buffer", b""))


def interleaved(addresses: Sequence[str]) -> list[str]:
    """The addresses in the resolver's order, families taking turns (RFC 8305, 4): a host
    whose IPv6 addresses all stall still has its IPv4 one tried second, not last."""
    if len(addresses) < 2:
        return list(addresses)
    first: list[str] = []
    other: list[str] = []
    first_version = ipaddress.ip_address(addresses[0]).version
    for address in addresses:
        (first if ipaddress.ip_address(address).version == first_version else other).append(address)
    out: list[str] = []
    for index in range(max(len(first), len(other))):
        out.extend(group[index] for group in (first, other) if index < len(group))
    return out


async def open_first(
    keys: Sequence[PoolKey], context: ssl.SSLContext, delay: float = CONNECT_ATTEMPT_DELAY
) -> tuple[PoolKey, Connection]:
    """The first of ``keys`` to connect (happy eyeballs): one attempt starts, the next
    after ``delay`` or as soon as one fails, and so on; the first connection made wins
    and every other attempt is cancelled or closed. All failed: the most telling error
    (``telling_error``), so a failure worth no retry is never hidden behind one that is.

    One address that drops packets (a broken IPv6 route, a dead server behind a live
    DNS name) then costs a quarter of a second, not the feed's whole time budget.
    """
    if len(keys) == 1:
        return keys[0], await open_pinned(keys[0], context)
    if not keys:
        raise ValueError("no address to connect to")
    race = _Race()
    try:
        return await race.run(keys[:MAX_CONNECT_ATTEMPTS], context, delay)
    finally:
        race.settle()


def telling_error(errors: Sequence[BaseException | None]) -> BaseException:
    """Of the errors of a race's attempts (in the order they started), the one to report:
    a TLS failure (the attempt got furthest: the address answered), else another that a
    retry would not mend (``is_transient``), else the first. A refused or unreachable
    IPv6 address so never hides a bad certificate on the IPv4 one, and the race is
    retried only when every attempt failed in a way worth another try.
    """
    found = [error for error in errors if error is not None]
    return max(found, key=lambda error: (not is_transient(error), isinstance(error, ssl.SSLError)))


# Attempts cancelled by a race that is over, until they end: the loop keeps only weak
# references to tasks, and nothing else waits for these.
_ENDING: set[asyncio.Task[Connection]] = set()


class _Race:
    """One open_first's attempts, and the rule that none of their connections outlives
    it unless it is the one returned.

    The race is settled without awaiting anything, so the feed's deadline or abort()
    cannot cut the clean-up short: attempts that connected and lost are closed there,
    the others cancelled, and one that still connects after that is closed when it ends.
    """

    __slots__ = ("_dropped", "_settled", "attempts", "winner")

    def __init__(self) -> None:
        self.attempts: dict[asyncio.Task[Connection], PoolKey] = {}  # in the order started
        self.winner: asyncio.Task[Connection] | None = None
        self._settled = False
        self._dropped: set[asyncio.Task[Connection]] = set()

    async def run(
        self, keys: Sequence[PoolKey], context: ssl.SSLContext, delay: float
    ) -> tuple[PoolKey, Connection]:
        waiting = list(keys)
        waiting.reverse()  # popped from the end
        pending: set[asyncio.Task[Connection]] = set()
        while True:
            if waiting:
                key = waiting.pop()
                task = asyncio.ensure_future(open_pinned(key, context))
                task.add_done_callback(self._ended)
                self.attempts[task] = key
                pending.add(task)
            if not pending:  # every attempt failed
                raise telling_error([task.exception() for task in self.attempts])
            done, pending = await asyncio.wait(
                pending,
                timeout=delay if waiting else None,
                return_when=asyncio.FIRST_COMPLETED,
            )
            for task, key in self.attempts.items():  # of those done, the first started
                if task in done and task.exception() is None:
                    self.winner = task
                    return key, task.result()

    def settle(self) -> None:
        """The race is over: close what connected but lost, cancel what is still trying."""
        self._settled = True
        for task in self.attempts:
            if task.done():
                self._drop(task)
            else:
                _ENDING.add(task)
                task.cancel()

    def _ended(self, task: asyncio.Task[Connection]) -> None:
        _ENDING.discard(task)
        if self._settled:
            self._drop(task)
        elif not task.cancelled():
            task.exception()  # read: the race reads it when it needs it

    def _drop(self, task: asyncio.Task[Connection]) -> None:
        """Close the attempt's connection if it made one, unless it won; once."""
        if task is self.winner or task in self._dropped:
            return
        self._dropped.add(task)
        if not task.cancelled() and task.exception() is None:
            task.result().close()


async def open_pinned(key: PoolKey, context: ssl.SSLContext) -> Connection:
    """Connect to the key's address; TLS (verified against the key's host) for https."""
    scheme, host, port, address = key
    if scheme == "https":
        # "feed.example." is the same name as "feed.example", but SNI may not carry the
        # final dot (RFC 6066) and certificates never name it: both go without it.
        reader, writer = await asyncio.open_connection(
            address, port, ssl=context, server_hostname=host.rstrip("."), limit=MAX_LINE
        )
    else:
        reader, writer = await asyncio.open_connection(address, port, limit=MAX_LINE)
    return Connection(reader, writer)


def verifying_context(ca_certs: str | None, extra_ca_path: str | None = None) -> ssl.SSLContext:
    """One TLS client context for the whole run: certificates and host names verified.

    The roots are certifi's (the system's when certifi is missing), or ``ca_certs``
    instead of them; ``extra_ca_path`` (the ``ca_bundle_path`` setting, a PEM file)
    is trusted in addition, e.g. an internal CA.
    """
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)  # hardened defaults
    context.check_hostname = True
    context.set_alpn_protocols(["http/1.1"])
    if ca_certs is not None:
        context.load_verify_locations(cafile=ca_certs)
    else:
        _load_default_roots(context)
    if extra_ca_path is not None:
        context.load_verify_locations(cafile=extra_ca_path)
    return context


def _load_default_roots(context: ssl.SSLContext) -> None:
    try:
        import certifi  # optional: requests brings it
    except ImportError:
        context.load_default_certs()
    else:
        context.load_verify_locations(cafile=certifi.where())


class ConnectionPool:
    """Idle keep-alive connections by (scheme, host, port, address); event-loop only."""

    def __init__(self, max_idle_per_key: int, max_idle_total: int) -> None:
        self._max_idle_per_key = max_idle_per_key
        self._max_idle_total = max_idle_total
        self._idle: OrderedDict[PoolKey, deque[Connection]] = OrderedDict()
        self._idle_count = 0
        self._closed = False

    def take(self, key: PoolKey) -> Connection | None:
        """An idle connection for ``key`` that still looks alive, if there is one."""
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            self._idle_count -= 1
            if not idle:
                del self._idle[key]
            if conn.reusable:
                return conn
            conn.close()
        return None

    def give(self, key: PoolKey, conn: Connection) -> None:
        """Keep ``conn`` for reuse (its response must be fully read)."""
        if self._closed or not conn.reusable:
            conn.close()
            return
        idle = self._idle.setdefault(key, deque())
        self._idle.move_to_end(key)
        idle.append(conn)
        self._idle_count += 1
        if len(idle) > self._max_idle_per_key:
            idle.popleft().close()
            self._idle_count -= 1
        while self._idle_count > self._max_idle_total:
            oldest_key, oldest = next(iter(self._idle.items()))
            oldest.popleft().close()
            self._idle_count -= 1
            if not oldest:
                del self._idle[oldest_key]

    def close(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        self._idle_count = 0
