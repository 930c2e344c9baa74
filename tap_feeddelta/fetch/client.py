"""The Fetcher: pinned connections, hand-followed redirects, conditional GET, one budget."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tap_feeddelta.fetch.body import ACCEPT_ENCODING, read_capped, supported
from tap_feeddelta.fetch.budget import Budget, Watchdog
from tap_feeddelta.fetch.connection import (
    ConnectionPool,
    PinnedConnection,
    PoolKey,
    idle_connection_cap,
    verifying_context,
)
from tap_feeddelta.fetch.errors import (
    FetchError,
    failure_from_exception,
    is_transient,
    timed_out,
)
from tap_feeddelta.fetch.headers import (
    ACCEPT,
    MAX_CONTENT_TYPE_CHARS,
    MAX_VALIDATOR_CHARS,
    clean_value,
    content_encodings,
    retry_after_at,
)
from tap_feeddelta.fetch.policy import FetchPolicy
from tap_feeddelta.fetch.resolve import Resolver, SystemResolver, checked_addresses
from tap_feeddelta.fetch.response import LeanResponse, request_bytes
from tap_feeddelta.fetch.urls import Target, display_url, parse_target, redirect_target
from tap_feeddelta.models import FetchResult, FetchStatus

log = logging.getLogger("tap_feeddelta.fetch")

REDIRECT_STATUSES = frozenset((301, 302, 303, 307, 308))
RATE_LIMIT_STATUSES = frozenset((429, 503))


@dataclass(slots=True)
class _Progress:
    """What one fetch has learned so far; becomes the FetchResult, success or not."""

    requested_url: str
    final_url: str | None = None
    http_status: int | None = None
    etag_sent: bool = False
    last_modified_sent: bool = False
    redirects: int = 0
    retry_after_at: str | None = None

    def result(self, status: FetchStatus, fetch_ms: int, **answer: Any) -> FetchResult:
        """The FetchResult of what was learned, plus the answer's own fields."""
        return FetchResult(
            status=status,
            requested_url=self.requested_url,
            final_url=self.final_url,
            http_status=self.http_status,
            etag_sent=self.etag_sent,
            last_modified_sent=self.last_modified_sent,
            redirects=self.redirects,
            retry_after_at=self.retry_after_at,
            fetch_ms=fetch_ms,
            **answer,
        )


@dataclass(frozen=True, slots=True)
class _Answer:
    """A final (non-redirect) answer read from the server."""

    status: FetchStatus
    body: bytes | None = None
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None


class Fetcher:
    """Fetches feed URLs safely. One per run; thread-safe (used from many worker threads).

    ``fetch`` never raises for anything the network or a server does: every failure is a
    ``FetchResult`` with status "error" and an ``Issue`` whose code is in ``errors.CODES``.
    """

    def __init__(
        self,
        policy: FetchPolicy,
        *,
        resolver: Resolver | None = None,
        ca_certs: str | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._policy = policy
        self._resolver: Resolver = resolver if resolver is not None else SystemResolver()
        self._now = now if now is not None else _utc_now
        self._watchdog = Watchdog()
        self._pool = ConnectionPool(
            verifying_context(ca_certs), policy.max_per_host, idle_connection_cap()
        )
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._slots_lock = threading.Lock()
        self._headers = {
            "User-Agent": policy.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        self._closed = False
        self._aborting = False
        self._live: set[Budget] = set()  # budgets of the fetches in flight, for abort
        self._live_lock = threading.Lock()

    def abort(self) -> None:
        """End the fetches in flight now and any started later (their sockets are shut
        down; they report ``timeout``): for a process that is stopping."""
        self._aborting = True
        with self._live_lock:
            live = list(self._live)
        for budget in live:
            budget.expire()

    def close(self) -> None:
        """Close idle connections and stop the watchdog. Safe to call twice."""
        self._closed = True
        self._pool.close()
        self._watchdog.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def fetch(
        self, url: str, *, etag: str | None = None, last_modified: str | None = None
    ) -> FetchResult:
        """GET ``url`` (conditionally, when validators are given) within one time budget."""
        if self._closed:
            raise RuntimeError("the Fetcher is closed")
        started = time.monotonic()
        progress = _Progress(requested_url=url)
        budget = Budget(self._policy.request_timeout_seconds, self._watchdog)
        with self._live_lock:
            self._live.add(budget)
        if self._aborting:
            budget.expire()
        answer: _Answer | None = None
        failure: FetchError | None = None
        try:
            answer = self._fetch(url, etag, last_modified, budget, progress)
        except FetchError as exc:
            failure = exc
        except Exception as exc:  # unforeseen: still only this feed's failure
            log.warning("fetch of %s ended in %s", display_url(url), type(exc).__name__)
            failure = failure_from_exception(exc, phase="exchange", host="the server")
        finally:
            budget.finish()
            with self._live_lock:
                self._live.discard(budget)
        fetch_ms = int((time.monotonic() - started) * 1000)
        if log.isEnabledFor(logging.DEBUG):  # display_url parses the URL: not for nothing
            outcome = failure.code if failure is not None else answer and answer.status
            log.debug(
                "fetch %s: %s in %d ms", display_url(progress.requested_url), outcome, fetch_ms
            )
        if failure is not None:
            return progress.result("error", fetch_ms, error=failure.as_issue())
        assert answer is not None
        return progress.result(
            answer.status,
            fetch_ms,
            content_type=answer.content_type,
            body=answer.body,
            etag=answer.etag,
            last_modified=answer.last_modified,
            bytes_received=len(answer.body) if answer.body else 0,
        )

    # -- one fetch ---------------------------------------------------------------------

    def _fetch(
        self,
        url: str,
        etag: str | None,
        last_modified: str | None,
        budget: Budget,
        progress: _Progress,
    ) -> _Answer:
        try:
            target = parse_target(url)
        except FetchError:
            progress.requested_url = display_url(url)  # may hold userinfo: never kept
            raise
        headers = self._headers
        etag = clean_value(etag, MAX_VALIDATOR_CHARS)
        last_modified = clean_value(last_modified, MAX_VALIDATOR_CHARS)
        if etag is not None or last_modified is not None:
            headers = dict(headers)
            if etag is not None:
                headers["If-None-Match"] = etag
                progress.etag_sent = True
            if last_modified is not None:
                headers["If-Modified-Since"] = last_modified
                progress.last_modified_sent = True
        policy = self._policy
        hop = 0
        while True:
            addresses = checked_addresses(
                target.host,
                target.port,
                target.ip_literal,
                resolver=self._resolver,
                remaining_seconds=budget.remaining("resolving the host name"),
                allow_private=policy.allow_private_networks,
                denied_code="destination_denied" if hop == 0 else "redirect_denied",
            )
            progress.redirects = hop  # redirects followed: this target passed its checks
            slot = self._slot(target.host)
            if not slot.acquire(timeout=budget.remaining("waiting for a connection slot")):
                raise timed_out("waiting for a connection slot")
            try:
                outcome = self._exchange(target, addresses, headers, budget, progress)
            finally:
                slot.release()
            if isinstance(outcome, _Answer):
                return outcome
            if hop == policy.max_redirects:
                raise FetchError("redirect_limit", f"More than {policy.max_redirects} redirects.")
            hop += 1
            target = outcome

    def _slot(self, host: str) -> threading.BoundedSemaphore:
        slot = self._slots.get(host)
        if slot is None:
            with self._slots_lock:
                slot = self._slots.setdefault(
                    host, threading.BoundedSemaphore(self._policy.max_per_host)
                )
        return slot

    def _exchange(
        self,
        target: Target,
        addresses: tuple[str, ...],
        headers: dict[str, str],
        budget: Budget,
        progress: _Progress,
    ) -> _Answer | Target:
        """One request and its answer; a redirect yields the checked next target."""
        key, conn, resp = self._send(target, addresses, headers, budget)
        progress.final_url = target.url
        progress.http_status = status = resp.status
        keep = False
        try:
            if status in REDIRECT_STATUSES:
                location = resp.fields.joined("Location")  # the body is never read
                if location is None:
                    raise FetchError("bad_response", f"A {status} redirect had no Location.")
                return redirect_target(target, location)
            if status == 304:
                resp.read()  # a 304 has no body by definition
                keep = True
                if not (progress.etag_sent or progress.last_modified_sent):
                    raise FetchError(
                        "bad_response", "A 304 answered a request that sent no validators."
                    )
                return _Answer(status="not_modified")
            if status == 200:
                answer = self._read_ok(target, resp, budget)
                keep = True
                return answer
            if status in RATE_LIMIT_STATUSES:
                progress.retry_after_at = retry_after_at(
                    resp.fields.joined("Retry-After"), self._now()
                )
                raise FetchError("rate_limited", f"{target.host} answered {status}: retry later.")
            raise FetchError("http_error", f"{target.host} answered HTTP {status}.")
        finally:
            budget.detach()
            if keep and resp.isclosed() and not resp.will_close and not budget.expired:
                self._pool.give(key, conn)
            else:
                resp.close()
                conn.close()

    def _read_ok(self, target: Target, resp: LeanResponse, budget: Budget) -> _Answer:
        max_bytes = self._policy.max_feed_bytes
        fields = resp.fields
        lengths = set(fields.get_all("Content-Length") or ())
        if len(lengths) > 1:
            raise FetchError("bad_response", "The response has conflicting Content-Lengths.")
        if resp.length is not None and resp.length > max_bytes:
            raise FetchError(
                "response_too_large",
                f"The body is larger than max_feed_bytes ({max_bytes} bytes).",
            )
        encodings = content_encodings(fields.joined("Content-Encoding"))
        if not supported(encodings):
            raise FetchError("bad_response", "The body uses a Content-Encoding not offered.")
        try:
            body = read_capped(
                resp.read1,
                encodings=encodings,
                max_bytes=max_bytes,
                check_time=lambda: budget.remaining("reading the body"),
            )
        except FetchError:
            raise
        except Exception as exc:
            if budget.expired:
                raise timed_out("reading the body") from None
            raise failure_from_exception(exc, phase="body", host=target.host) from None
        if budget.expired:  # the watchdog's shutdown can look like a clean end of stream
            raise timed_out("reading the body")
        if resp.length:  # http.client counts down; what is left never came
            raise FetchError("connection_failed", f"The body from {target.host} was cut short.")
        if resp.length == 0 and not resp.isclosed():
            resp.read()  # no I/O: marks the response done, so the connection can be reused
        return _Answer(
            status="ok",
            body=body or None,
            content_type=clean_value(fields.joined("Content-Type"), MAX_CONTENT_TYPE_CHARS),
            etag=clean_value(fields.joined("ETag"), MAX_VALIDATOR_CHARS),
            last_modified=clean_value(fields.joined("Last-Modified"), MAX_VALIDATOR_CHARS),
        )

    def _send(
        self,
        target: Target,
        addresses: tuple[str, ...],
        headers: dict[str, str],
        budget: Budget,
    ) -> tuple[PoolKey, PinnedConnection, LeanResponse]:
        """Send the request on a reused or new pinned connection; at most one retry."""
        request = request_bytes(target.request_target, target.authority, headers)
        key, conn = self._connection(target, addresses)
        reused = conn.sock is not None
        tried = [key[3]]
        while True:
            phase: str = "connect"
            try:
                conn.budget = budget
                if conn.sock is None:
                    conn.timeout = budget.remaining("connecting")
                    conn.connect()
                else:
                    budget.attach(conn.sock)
                phase = "exchange"
                sock = conn.sock
                assert sock is not None
                sock.settimeout(budget.remaining("sending the request"))
                sock.sendall(request)
                resp = LeanResponse(sock)
                resp.begin()
                return key, conn, resp
            except FetchError:
                budget.detach()
                conn.close()
                raise
            except Exception as exc:
                budget.detach()
                conn.close()
                if budget.expired:
                    raise timed_out("connecting" if phase == "connect" else "waiting") from None
                failure = failure_from_exception(
                    exc, phase="connect" if phase == "connect" else "exchange", host=target.host
                )
                if len(tried) > 1 or not is_transient(exc):
                    raise failure from None
            # One retry: a stale keep-alive connection again, else the next address.
            untried = [a for a in addresses if a not in tried]
            address = key[3] if reused or not untried else untried[0]
            tried.append(address)
            key = (target.scheme, target.host, target.port, address)
            conn = self._pool.new(key)
            reused = False

    def _connection(
        self, target: Target, addresses: tuple[str, ...]
    ) -> tuple[PoolKey, PinnedConnection]:
        for address in addresses:
            key = (target.scheme, target.host, target.port, address)
            conn = self._pool.take(key)
            if conn is not None:
                return key, conn
        key = (target.scheme, target.host, target.port, addresses[0])
        return key, self._pool.new(key)


def _utc_now() -> datetime:
    return datetime.now(UTC)
