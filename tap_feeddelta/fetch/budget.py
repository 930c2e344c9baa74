"""One monotonic deadline per fetch, enforced even inside a blocking read.

Socket timeouts are per call, so a server dripping a byte a second never trips them.
Each fetch gets a ``Budget``; the socket in use is attached to it (as a private
duplicate of the descriptor, so that closing the connection elsewhere can never make the
watchdog touch a reused descriptor). One ``Watchdog`` thread per Fetcher shuts the
attached socket down when a budget runs out, which wakes any blocked connect-time TLS
read, header read or body read. The fetching thread then sees ``expired`` and reports a
timeout, whatever error (or clean-looking end of stream) the shutdown produced.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time

from tap_feeddelta.fetch.errors import timed_out


class Budget:
    """The time left for one fetch, and the socket to interrupt when it is gone."""

    __slots__ = ("_dup", "_lock", "_watchdog", "_watched", "expired", "expires_at", "finished")

    def __init__(self, seconds: float, watchdog: Watchdog) -> None:
        self.expires_at = time.monotonic() + seconds
        self.expired = False
        self.finished = False
        self._lock = threading.Lock()
        self._dup: socket.socket | None = None
        self._watchdog = watchdog
        self._watched = False

    def remaining(self, doing: str) -> float:
        """Seconds left; raises the ``timeout`` failure when none are."""
        left = self.expires_at - time.monotonic()
        if left <= 0 or self.expired:
            raise timed_out(doing)
        return left

    def attach(self, sock: socket.socket) -> None:
        """Make ``sock`` the one the watchdog shuts down at the deadline."""
        dup = socket.fromfd(sock.fileno(), sock.family, sock.type)
        with self._lock:
            old, self._dup = self._dup, dup
            expired = self.expired
        if old is not None:
            old.close()
        if expired:
            _shutdown(dup)
        if not self._watched:
            self._watched = True
            self._watchdog.watch(self)

    def detach(self) -> None:
        """Forget the attached socket (before its connection goes back to the pool)."""
        with self._lock:
            old, self._dup = self._dup, None
        if old is not None:
            old.close()

    def finish(self) -> None:
        with self._lock:
            self.finished = True
            old, self._dup = self._dup, None
        if old is not None:
            old.close()

    def expire(self) -> None:
        """Called by the watchdog at the deadline."""
        with self._lock:
            if self.finished:
                return
            self.expired = True
            if self._dup is not None:
                _shutdown(self._dup)


def _shutdown(sock: socket.socket) -> None:
    # The plain socket's shutdown (not SSLSocket's): wakes readers of the connection.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class Watchdog:
    """A thread that expires budgets at their deadline (started on first use)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Budget]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, budget: Budget) -> None:
        with self._cond:
            if self._closed:
                return
            heapq.heappush(self._heap, (budget.expires_at, next(self._order), budget))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="feeddelta-fetch-watchdog", daemon=True
                )
                self._thread.start()
            elif self._heap[0][2] is budget:
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                while self._heap and (self._heap[0][0] <= now or self._heap[0][2].finished):
                    budget = heapq.heappop(self._heap)[2]
                    if not budget.finished:
                        budget.expire()
                wait = self._heap[0][0] - now if self._heap else None
                self._cond.wait(wait)
