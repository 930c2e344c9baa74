"""Connections pinned to a checked address, and the pool that reuses them.

A pinned connection keeps the host name for the Host header, TLS SNI and certificate
verification, but its socket goes to the one address the guard checked: ``_new_conn``
connects to that IP directly, with no getaddrinfo call, so DNS cannot be asked twice
(no rebinding). Pools are keyed by (scheme, host, port, address).
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections import OrderedDict, deque
from typing import Any

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.util import create_urllib3_context

from tap_feeddelta.fetch.budget import Budget

PoolKey = tuple[str, str, int, str]  # scheme, host, port, address

MAX_IDLE_TOTAL = 2048  # idle keep-alive connections kept across all hosts, at most


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


class _Pinned:
    """Mixin: connect to ``pinned_address`` and report the socket to the current budget."""

    pinned_address: str
    budget: Budget | None
    port: int
    timeout: Any
    socket_options: Any

    def _new_conn(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.pinned_address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            for option in self.socket_options or ():
                sock.setsockopt(*option)
            if isinstance(self.timeout, int | float):
                sock.settimeout(self.timeout)
            sock.connect((self.pinned_address, self.port))
            if self.budget is not None:
                self.budget.attach(sock)
        except BaseException:
            sock.close()
            raise
        return sock


class PinnedHTTPConnection(_Pinned, HTTPConnection):
    def __init__(self, host: str, port: int, address: str) -> None:
        super().__init__(host, port)
        self.pinned_address = address
        self.budget = None


class PinnedHTTPSConnection(_Pinned, HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, context: ssl.SSLContext) -> None:
        super().__init__(host, port, ssl_context=context)
        self.pinned_address = address
        self.budget = None


PinnedConnection = PinnedHTTPConnection | PinnedHTTPSConnection


def verifying_context(ca_certs: str | None) -> ssl.SSLContext:
    """One TLS client context for the whole run: certificates and host names verified."""
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
    context.check_hostname = True
    if ca_certs is not None:
        context.load_verify_locations(cafile=ca_certs)
        return context
    try:
        import certifi  # optional: requests brings it
    except ImportError:
        context.load_default_certs()
    else:
        context.load_verify_locations(cafile=certifi.where())
    return context


class ConnectionPool:
    """Idle keep-alive connections by (scheme, host, port, address); thread-safe."""

    def __init__(self, context: ssl.SSLContext, max_idle_per_key: int, max_idle_total: int) -> None:
        self._context = context
        self._max_idle_per_key = max_idle_per_key
        self._max_idle_total = max_idle_total
        self._idle: OrderedDict[PoolKey, deque[PinnedConnection]] = OrderedDict()
        self._idle_count = 0
        self._lock = threading.Lock()
        self._closed = False

    def take(self, key: PoolKey) -> PinnedConnection | None:
        """An idle connection for ``key`` that still looks alive, if there is one."""
        while True:
            with self._lock:
                idle = self._idle.get(key)
                if not idle:
                    return None
                conn = idle.pop()
                self._idle_count -= 1
                if not idle:
                    del self._idle[key]
            if conn.is_connected:  # not closed by the server, nothing unread
                return conn
            conn.close()

    def new(self, key: PoolKey) -> PinnedConnection:
        scheme, host, port, address = key
        if scheme == "https":
            return PinnedHTTPSConnection(host, port, address, self._context)
        return PinnedHTTPConnection(host, port, address)

    def give(self, key: PoolKey, conn: PinnedConnection) -> None:
        """Keep ``conn`` for reuse (its response must be fully read)."""
        conn.budget = None
        evicted: list[PinnedConnection] = []
        with self._lock:
            if self._closed:
                evicted.append(conn)
            else:
                idle = self._idle.setdefault(key, deque())
                self._idle.move_to_end(key)
                idle.append(conn)
                self._idle_count += 1
                if len(idle) > self._max_idle_per_key:
                    evicted.append(idle.popleft())
                    self._idle_count -= 1
                while self._idle_count > self._max_idle_total:
                    oldest_key, oldest = next(iter(self._idle.items()))
                    evicted.append(oldest.popleft())
                    self._idle_count -= 1
                    if not oldest:
                        del self._idle[oldest_key]
        for old in evicted:
            old.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns = [conn for idle in self._idle.values() for conn in idle]
            self._idle.clear()
            self._idle_count = 0
        for conn in conns:
            conn.close()
