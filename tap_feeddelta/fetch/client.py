"""The Fetcher: pinned connections, hand-followed redirects, conditional GET, one deadline.

Fetches are coroutines on one event loop, which runs on a thread of the Fetcher's own:
one thread carries every connection, so concurrent fetches cost no thread wake-ups and
no hand-offs of the interpreter lock (with a thread per fetch, a run of feeds answering
304 spent a third of its CPU in the kernel, waking threads). ``fetch_async`` runs on
that loop; ``submit`` schedules any coroutine there; ``fetch`` is the blocking form for
callers on other threads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import http.client
import logging
import threading
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from tap_feeddelta.fetch.body import (
    ACCEPT_ENCODING,
    CappedBody,
    decoded_codings,
    ignored_codings_notes,
    refusal,
)
from tap_feeddelta.fetch.chunked import CAP_BYTES_PER_CHUNK, WIRE_BYTES_PER_CAP_BYTE
from tap_feeddelta.fetch.connection import (
    Connection,
    ConnectionPool,
    PoolKey,
    idle_connection_cap,
    interleaved,
    open_first,
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
from tap_feeddelta.fetch.hosts import HostSlots, fair_chance_seconds
from tap_feeddelta.fetch.policy import FetchPolicy
from tap_feeddelta.fetch.progress import Answer, Progress
from tap_feeddelta.fetch.resolve import (
    Resolver,
    SystemResolver,
    Verdicts,
    checked_answers,
    resolved_answers,
    unresolved,
    usable_answers,
)
from tap_feeddelta.fetch.response import (
    Head,
    HeadBytes,
    StatusLine,
    declares_body,
    drain_small_body,
    length_members,
    read_body,
    read_rest_of_head,
    read_status_line,
    request_bytes,
)
from tap_feeddelta.fetch.urls import Target, display_url, parse_target, redirect_target
from tap_feeddelta.models import FetchResult

log = logging.getLogger("tap_feeddelta.fetch")

REDIRECT_STATUSES = frozenset((301, 302, 303, 307, 308))
PERMANENT_REDIRECT_STATUSES = frozenset((301, 308))
RATE_LIMIT_STATUSES = frozenset((429, 503))
# 203 is a 200 whose headers or body a proxy changed: still the whole document (RFC 9110).
DOCUMENT_STATUSES = frozenset((200, 203))
NO_CONTENT_STATUSES = frozenset((204, 205))
T = TypeVar("T")


class Fetcher:
    """Fetches feed URLs safely. One per run; ``fetch`` and ``submit`` are thread-safe.

    A fetch never raises for anything the network or a server does: every failure is a
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
        self._context = verifying_context(ca_certs, policy.ca_bundle_path)
        self._pool = ConnectionPool(policy.max_per_host, idle_connection_cap())
        self._hosts = HostSlots(
            policy.max_per_host,
            lambda: self._aborting,
            self._now,
            fair_chance_seconds(policy.request_timeout_seconds),
        )
        self._verdicts: Verdicts = {}
        self._headers = {
            "User-Agent": policy.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        self._closed = False
        self._aborting = False
        self._live: set[asyncio.Timeout] = set()  # deadlines of the fetches in flight
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- the loop ----------------------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the fetch loop (started on first use); thread-safe."""
        with self._lock:
            if self._closed:
                coro.close()
                raise RuntimeError("the Fetcher is closed")
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name="feeddelta-fetch", daemon=True
                )
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def fetch(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        budget_seconds: float | None = None,
        advertised: bool = False,
    ) -> FetchResult:
        """``fetch_async``, waited for: for callers that are not on the fetch loop. For
        tests and benchmarks: the run awaits fetch_async."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("on the fetch loop, await fetch_async instead")
        coro = self.fetch_async(
            url,
            etag=etag,
            last_modified=last_modified,
            budget_seconds=budget_seconds,
            advertised=advertised,
        )
        return self.submit(coro).result()

    def abort(self) -> None:
        """End the fetches in flight now, and any started later (they report
        ``timeout``): for a process that is stopping. Safe from a signal handler."""
        self._aborting = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._expire_live)

    def _expire_live(self) -> None:
        now = asyncio.get_running_loop().time()
        for deadline in list(self._live):
            deadline.reschedule(now)

    def close(self) -> None:
        """Cancel what is left, close idle connections, stop the loop. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if thread is threading.current_thread():
            self._pool.close()
            loop.stop()
            return
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(self._shut_down(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive() and not loop.is_running():
            # (At interpreter exit a daemon thread can be gone with its loop still
            # marked running: that loop is left as it is.)
            loop.close()

    async def _shut_down(self) -> None:
        current = asyncio.current_task()
        others = [task for task in asyncio.all_tasks() if task is not current]
        for task in others:
            task.cancel()
        if others:
            await asyncio.wait(others, timeout=5)
        self._pool.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- one fetch ---------------------------------------------------------------------

    async def fetch_async(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        budget_seconds: float | None = None,
        advertised: bool = False,
    ) -> FetchResult:
        """GET ``url`` (conditionally, when validators are given) within one deadline.

        The deadline is ``request_timeout_seconds`` away, or ``budget_seconds`` when that
        is less: a feed that needs more than one fetch passes what its earlier fetches
        left of its one budget. With nothing left, nothing is sent (``timeout``).
        ``advertised``: ``url`` is a feed link a web page gave, a destination its
        publisher chose, refused as the configured URL's would be (``destination_denied``)
        but never with the hint that allow_private_networks would let it through.
        """
        if self._closed:
            raise RuntimeError("the Fetcher is closed")
        loop = asyncio.get_running_loop()
        started = loop.time()
        progress = Progress(requested_url=url)
        budget = self._policy.request_timeout_seconds
        if budget_seconds is not None:
            budget = min(budget, budget_seconds)
        answer, failure = await self._attempt(
            url, etag, last_modified, budget, progress, advertised
        )
        fetch_ms = int((loop.time() - started - progress.queued_seconds) * 1000)
        if log.isEnabledFor(logging.DEBUG):  # display_url parses the URL: not for nothing
            outcome = failure.code if failure is not None else answer and answer.status
            log.debug(
                "fetch %s: %s in %d ms", display_url(progress.requested_url), outcome, fetch_ms
            )
        if failure is not None:
            return progress.result(
                "error", fetch_ms, error=failure.as_issue(), bytes_received=progress.bytes_received
            )
        assert answer is not None
        return progress.result(
            answer.status,
            fetch_ms,
            content_type=answer.content_type,
            body=answer.body,
            etag=answer.etag,
            last_modified=answer.last_modified,
            bytes_received=len(answer.body) if answer.body else 0,
            notes=answer.notes,
        )

    async def _attempt(
        self,
        url: str,
        etag: str | None,
        last_modified: str | None,
        budget: float,
        progress: Progress,
        advertised: bool,
    ) -> tuple[Answer, None] | tuple[None, FetchError]:
        """The fetch under its deadline: its answer, or the failure it ended in."""
        if budget <= 0:
            progress.requested_url = display_url(url)  # never parsed: may hold userinfo
            return None, FetchError("timeout", "The feed's time budget ran out before this fetch.")
        try:
            async with asyncio.timeout(budget) as deadline:
                self._live.add(deadline)
                if self._aborting:
                    deadline.reschedule(asyncio.get_running_loop().time())
                try:
                    answer = await self._fetch(
                        url, etag, last_modified, deadline, progress, advertised
                    )
                    return answer, None
                finally:
                    self._live.discard(deadline)
        except FetchError as exc:
            return None, exc
        except TimeoutError:
            return None, timed_out(progress.doing)
        except Exception as exc:  # unforeseen: still only this feed's failure
            log.warning("fetch of %s ended in %s", display_url(url), type(exc).__name__)
            return None, failure_from_exception(exc, phase="exchange", host="the server")

    async def _fetch(
        self,
        url: str,
        etag: str | None,
        last_modified: str | None,
        deadline: asyncio.Timeout,
        progress: Progress,
        advertised: bool,
    ) -> Answer:
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
        requested: list[str] = []  # the URLs asked for, to tell a loop
        while True:
            progress.doing = "resolving the host name"
            addresses = checked_answers(
                target.host,
                await self._answers(target, deadline),
                target.ip_literal,
                allow_private=policy.allow_private_networks,
                denied_code="destination_denied" if hop == 0 else "redirect_denied",
                verdicts=self._verdicts,
                names_the_flag=hop == 0 and not advertised,
            )
            progress.redirects = hop  # redirects followed: this target passed its checks
            if hop:
                # Should this hop fail, the row shows it: its URL, and no status before
                # it sends one (not the redirect's 302 next to a timeout).
                progress.final_url, progress.http_status = target.url, None
            async with self._hosts.held(target.host, deadline, progress):
                outcome = await self._exchange(target, addresses, headers, progress)
            if isinstance(outcome, Answer):
                return outcome
            requested.append(target.url)
            if hop == policy.max_redirects:
                raise _too_many_redirects(policy.max_redirects, loops=outcome.url in requested)
            hop += 1
            target = outcome

    async def _answers(self, target: Target, deadline: asyncio.Timeout) -> tuple[str, ...]:
        """The host's addresses, unchecked: the IP literal, a kept answer, or a lookup.

        The system resolver looks up on its own helper threads and is awaited under the
        fetch's deadline; any other resolver (it blocks) is called on an executor thread.
        """
        if target.ip_literal is not None:
            return (target.ip_literal,)
        host, port, resolver = target.host, target.port, self._resolver
        if isinstance(resolver, SystemResolver):
            answers = resolver.kept(host, port)
            if answers is None:
                try:
                    answers = await asyncio.wrap_future(resolver.lookup_soon(host, port))
                except Exception as exc:  # OSError from getaddrinfo, by contract
                    raise unresolved(host, exc) from None
            return tuple(usable_answers(host, answers))
        when = deadline.when()
        loop = asyncio.get_running_loop()
        remaining = (when - loop.time()) if when is not None else 1e9
        found = await loop.run_in_executor(
            None,
            lambda: resolved_answers(host, port, resolver=resolver, remaining_seconds=remaining),
        )
        return tuple(str(answer) for answer in found)

    async def _exchange(
        self,
        target: Target,
        addresses: tuple[str, ...],
        headers: dict[str, str],
        progress: Progress,
    ) -> Answer | Target:
        """One request and its answer; a redirect yields the checked next target."""
        key, conn, head = await self._send(target, addresses, headers, progress)
        progress.heads_read += 1
        progress.final_url = target.url
        if progress.moving_to == target.url:
            progress.moved_to = target.url  # the permanent redirects' target answered
        progress.http_status = status = head.status
        keep = False
        try:
            if status in REDIRECT_STATUSES:
                location = head.fields.joined("Location")
                if location is None:
                    raise FetchError("bad_response", f"A {status} redirect had no Location.")
                next_target = redirect_target(target, location)
                progress.redirected_from.append(target.url)
                progress.moving_to = None
                if next_target.url in progress.redirected_from:
                    # Back to a URL of the chain (the configured one too): a loop, no move.
                    progress.hops_all_permanent = False
                    progress.moved_to = None
                elif status not in PERMANENT_REDIRECT_STATUSES:
                    progress.hops_all_permanent = False
                elif progress.hops_all_permanent:
                    # Told only once that target passed its checks and answered.
                    progress.moving_to = next_target.url
                # A small body read leaves the connection to the pool, keyed by host and
                # address: only a next hop to this host and address can take it from there.
                progress.doing = "reading the redirect's body"
                keep = await drain_small_body(conn.reader, head)
                return next_target
            if status == 304:
                # A 304 has no body by definition; one that declares a body anyway may
                # well send it, to be read as the next answer on this connection.
                keep = not declares_body(head)
                if not (progress.etag_sent or progress.last_modified_sent):
                    raise FetchError(
                        "bad_response", "A 304 answered a request that sent no validators."
                    )
                return Answer(status="not_modified")
            if status in DOCUMENT_STATUSES:
                progress.doing = "reading the body"
                answer, keep = await self._read_ok(target, conn, head, progress)
                return answer
            if status in RATE_LIMIT_STATUSES:
                progress.retry_after_at = told = self._retry_after(head)
                # The host's other fetches of the run wait too: a rate limit counts the
                # client's requests to the host (a 503 without a time may be one backend's).
                if status == 429 or told is not None:
                    self._hosts.rest(target.host, status, told)
                raise FetchError("rate_limited", f"{target.host} answered {status}: retry later.")
            raise _no_document(target.host, status)
        finally:
            # Also on cancellation (the deadline): a half-read connection is never kept.
            if keep and not head.will_close:
                self._pool.give(key, conn)
            else:
                conn.close()

    def _retry_after(self, head: Head) -> str | None:
        """The answer's Retry-After as a time, or None: a header value never changes
        the fetch's code, whatever it holds."""
        try:
            return retry_after_at(head.fields.joined("Retry-After"), self._now())
        except Exception as exc:  # a bug in the reading, not the server's fault
            log.warning("Retry-After could not be read (%s)", type(exc).__name__)
            return None

    async def _read_ok(
        self, target: Target, conn: Connection, head: Head, progress: Progress
    ) -> tuple[Answer, bool]:
        """The document, and whether the connection was left at its end (reusable); the
        bytes read go to ``progress`` however the reading ends."""
        max_bytes = self._policy.max_feed_bytes
        fields = head.fields
        if fields.misframed is not None:
            raise FetchError(
                "bad_response",
                f"The response's {fields.misframed} field has whitespace before its colon.",
            )
        members = length_members(head)
        if len(members) > 1:
            raise FetchError("bad_response", "The response has conflicting Content-Lengths.")
        if members and not head.transfer_codings and head.length is None and head.status >= 200:
            # RFC 9112 6.3 (5): a length that is no number leaves the body's end unknown.
            raise FetchError("bad_response", "The response's Content-Length is not a number.")
        if head.length is not None and head.length > max_bytes:
            raise FetchError(
                "response_too_large",
                f"The server announced a body of {head.length:,} bytes, more than "
                f"max_feed_bytes ({max_bytes:,} bytes).",
            )
        if head.transfer_codings not in ((), ("chunked",)):
            # No TE field is sent, so chunked is the one coding a server may use, and
            # last (RFC 9112 6.1, 7.4). (With no coding but identity the body is framed
            # by its length, or ends with the connection.)
            raise FetchError("bad_response", "The body uses a Transfer-Encoding not offered.")
        encodings, ignored = decoded_codings(content_encodings(fields.joined("Content-Encoding")))
        refused = refusal(encodings)
        if refused is not None:
            raise FetchError("bad_response", refused)
        body = CappedBody(encodings, max_bytes)
        try:
            clean = await read_body(
                conn.reader,
                head,
                body.feed,
                target.host,
                max_chunks=max_bytes // CAP_BYTES_PER_CHUNK,
                max_wire_bytes=max_bytes * WIRE_BYTES_PER_CAP_BYTE,
            )
            data = body.finish()
        except FetchError:
            raise
        except Exception as exc:  # in the reading or the decoding: the body's failure
            raise failure_from_exception(exc, phase="body", host=target.host) from None
        finally:  # also when the deadline cancels the read
            progress.bytes_received = body.decoded_bytes
        answer = Answer(
            status="ok",
            body=data or None,
            content_type=clean_value(fields.joined("Content-Type"), MAX_CONTENT_TYPE_CHARS),
            etag=clean_value(fields.joined("ETag"), MAX_VALIDATOR_CHARS),
            last_modified=clean_value(fields.joined("Last-Modified"), MAX_VALIDATOR_CHARS),
            notes=ignored_codings_notes(ignored),
        )
        return answer, clean

    async def _send(
        self,
        target: Target,
        addresses: tuple[str, ...],
        headers: dict[str, str],
        progress: Progress,
    ) -> tuple[PoolKey, Connection, Head]:
        """Send the request on a reused or new pinned connection; at most one retry.

        A new connection races the host's addresses (``open_first``, families taking
        turns). A transient failure (refused, reset, a keep-alive connection the server
        closed meanwhile) gets one more try, on a new connection; a race, only when every
        address failed so (its error is the most telling of them). So does an answer on a
        reused connection that does not start with a status line: bytes its server sent
        after the end of the previous answer (a body longer than its Content-Length),
        not this answer. On a new connection that is the server's answer: not retried.
        A 408 on a reused connection is retried too (as Chromium and Go do): a server
        closing an idle connection says so, the request on it unread; on a new
        connection it is the answer (``http_error``).
        """
        request = request_bytes(target.request_target, target.authority, headers)
        key, conn = self._connection(target, addresses)
        reused = conn is not None
        retried = False
        while True:
            phase: Literal["connect", "exchange"] = "connect"
            status_line: StatusLine | None = None
            try:
                if conn is None:
                    progress.doing = "connecting"
                    keys = [
                        (target.scheme, target.host, target.port, address)
                        for address in interleaved(addresses)
                    ]
                    key, conn = await open_first(keys, self._context)
                phase = "exchange"
                progress.doing = "waiting for the response"
                conn.writer.write(request)
                budget = HeadBytes()
                status_line = await read_status_line(conn.reader, budget)
                head = await read_rest_of_head(conn.reader, status_line, budget)
                if not (reused and head.status == 408):
                    return key, conn, head
                conn.close()  # the server timed the idle connection out as this came in
            except BaseException as exc:
                if conn is not None:
                    conn.close()
                if not isinstance(exc, Exception) or isinstance(exc, FetchError):
                    _show_status_line(progress, target, status_line)
                    raise
                failure = failure_from_exception(exc, phase=phase, host=target.host)
                if retried or not (is_transient(exc) or (reused and _stray_answer(exc))):
                    _show_status_line(progress, target, status_line)
                    raise failure from None
            retried = True
            reused = False
            conn = None

    def _connection(
        self, target: Target, addresses: tuple[str, ...]
    ) -> tuple[PoolKey, Connection | None]:
        """An idle connection to one of ``addresses``, or the key to open a new one."""
        for address in addresses:
            key = (target.scheme, target.host, target.port, address)
            conn = self._pool.take(key)
            if conn is not None:
                return key, conn
        return (target.scheme, target.host, target.port, addresses[0]), None


def _show_status_line(progress: Progress, target: Target, status_line: StatusLine | None) -> None:
    """A head that failed after its status line (a field line too long, too many of
    them, the time or the connection lost in its fields) still answered: the row shows
    its status and URL."""
    if status_line is not None:
        progress.final_url, progress.http_status = target.url, status_line[1]


def _stray_answer(exc: Exception) -> bool:
    """Whether the answer read did not start with an HTTP/1 status line."""
    return isinstance(exc, http.client.BadStatusLine | http.client.UnknownProtocol)


def _too_many_redirects(max_redirects: int, *, loops: bool) -> FetchError:
    """``redirect_limit``, saying when the redirects come back to a URL already asked
    for: a loop, that no higher max_redirects would get out of."""
    message = f"More than {max_redirects} redirects"
    if loops:
        message += ": they loop (a URL redirects back to one already requested)"
    return FetchError("redirect_limit", message + ".")


def _no_document(host: str, status: int) -> FetchError:
    """``http_error`` for an answer that carries no feed, in words true to its status:
    the other 2xx statuses are not errors, but none of them is the document. A 410 is
    ``feed_gone``: removed on purpose, not an error that passes (RFC 9110 15.5.11)."""
    if status == 410:
        return FetchError(
            "feed_gone",
            f"{host} answered 410 Gone: the feed was removed on purpose "
            "(remove it from feed_urls).",
        )
    if status in NO_CONTENT_STATUSES:
        message = f"{host} answered {status} with no content: there is no document to read."
    elif 200 <= status < 300:
        message = f"{host} answered {status}, a success status that does not carry the document."
    else:
        message = f"{host} answered HTTP {status}."
    return FetchError("http_error", message)


def _utc_now() -> datetime:
    return datetime.now(UTC)
