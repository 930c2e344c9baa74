"""Real HTTP and HTTPS servers on 127.0.0.1 for the fetch tests, and a stub resolver.

The server is socket-level (after urllib3's ``test_socketlevel.py``) so that handlers can
misbehave: drip bytes, stall, send endless or bombed bodies. It records every connection
and request, so each test can assert that nothing else was asked for.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
import trustme

from tap_feeddelta.fetch import Fetcher, FetchPolicy
from tap_feeddelta.models import FetchResult

USER_AGENT = "tap-feeddelta-tests/0.1 (+https://github.com/tap-feeddelta/tap-feeddelta)"
FIXED_NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    headers: dict[str, str]  # lower-case names
    connection: int  # which accepted connection carried it

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


class Wire:
    """The handler's side of one connection."""

    def __init__(self, sock: socket.socket, stopping: threading.Event) -> None:
        self.sock = sock
        self.stopping = stopping

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def sleep(self, seconds: float) -> None:
        """Sleep, or raise when the server is stopping (ends a misbehaving handler)."""
        if self.stopping.wait(seconds):
            raise ConnectionAbortedError("server stopping")

    def respond(
        self,
        status: int,
        body: bytes = b"",
        headers: Sequence[tuple[str, str]] = (),
        *,
        length: bool = True,
    ) -> None:
        lines = [f"HTTP/1.1 {status} Status".encode()]
        lines += [f"{name}: {value}".encode("latin-1") for name, value in headers]
        if length:
            lines.append(f"Content-Length: {len(body)}".encode())
        self.send(b"\r\n".join(lines) + b"\r\n\r\n" + body)


# A handler answers one request; returning True keeps the connection open for the next.
Handler = Callable[[Request, Wire], bool | None]


def ok_handler(body: bytes = b"<rss/>", **headers: str) -> Handler:
    items = [(name.replace("_", "-"), value) for name, value in headers.items()]

    def handle(request: Request, wire: Wire) -> bool:
        wire.respond(200, body, [("Content-Type", "application/rss+xml"), *items])
        return True

    return handle


def redirect_handler(location: str, status: int = 302) -> Handler:
    def handle(request: Request, wire: Wire) -> bool:
        wire.respond(status, b"", [("Location", location)])
        return True

    return handle


class Server:
    """A threaded socket server on 127.0.0.1 (TLS when given a context)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.routes: dict[str, Handler] = {}
        self.requests: list[Request] = []
        self.connections = 0
        self.tls_failures = 0
        self.server_names: list[str | None] = []
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        if tls is not None:
            tls.sni_callback = self._remember_sni
        self._accepter = threading.Thread(target=self._accept_loop, daemon=True)
        self._accepter.start()

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    @property
    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    def _remember_sni(self, sock: Any, name: str | None, context: Any) -> None:
        with self._lock:
            self.server_names.append(name)

    def _accept_loop(self) -> None:
        number = 0
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            number += 1
            with self._lock:
                self.connections += 1
                self._socks.append(sock)
            thread = threading.Thread(target=self._serve, args=(sock, number), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, sock: socket.socket, number: int) -> None:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            sock.settimeout(5)
            if self.tls is not None:
                try:
                    sock = self.tls.wrap_socket(sock, server_side=True)
                except (OSError, ssl.SSLError):
                    with self._lock:
                        self.tls_failures += 1
                    return
                with self._lock:
                    self._socks.append(sock)
            reader = sock.makefile("rb")
            wire = Wire(sock, self._stopping)
            while not self._stopping.is_set():
                request = _read_request(reader, number)
                if request is None:
                    return
                with self._lock:
                    self.requests.append(request)
                handler = self.routes.get(request.path)
                if handler is None:
                    wire.respond(404, b"not found")
                    keep = True
                else:
                    keep = bool(handler(request, wire))
                if not keep:
                    return
        except (OSError, ValueError):
            return
        finally:
            with self._lock:
                self.active -= 1
            with contextlib.suppress(OSError):
                sock.close()

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self._accepter.join(timeout=2)
        with self._lock:
            socks = list(self._socks)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        for thread in self._threads:
            thread.join(timeout=2)


def _read_request(reader: Any, number: int) -> Request | None:
    line = reader.readline(65537)
    if not line:
        return None
    method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers: dict[str, str] = {}
    for _ in range(200):
        raw = reader.readline(65537)
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return Request(method, target, headers, number)


@dataclass
class StubResolver:
    """Answers from a table (a list per name, or a sequence of lists, one per call)."""

    answers: dict[str, list[str] | list[list[str]]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def __call__(self, host: str, port: int, timeout_seconds: float) -> list[str]:
        self.calls.append(host)
        answer = self.answers.get(host)
        if answer is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if answer and isinstance(answer[0], list):
            index = min(self.calls.count(host), len(answer)) - 1
            return list(answer[index])
        return list(answer)  # type: ignore[arg-type]


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="session")
def ca_bundle(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


def server_context(cert: trustme.LeafCert) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    return context


@pytest.fixture
def servers() -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(tls: ssl.SSLContext | None = None) -> Server:
        server = Server(tls)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def server(servers: Callable[..., Server]) -> Server:
    return servers()


@pytest.fixture
def tls_server(servers: Callable[..., Server], ca: trustme.CA) -> Server:
    cert = ca.issue_cert("feed.example", "127.0.0.1")
    return servers(server_context(cert))


@pytest.fixture
def fetchers(ca_bundle: str) -> Iterator[Callable[..., Fetcher]]:
    made: list[Fetcher] = []

    def make(resolver: Any = None, ca_certs: str | None = ca_bundle, **policy: Any) -> Fetcher:
        policy.setdefault("request_timeout_seconds", 5.0)
        fetcher = Fetcher(
            FetchPolicy(user_agent=USER_AGENT, **policy),
            resolver=resolver,
            ca_certs=ca_certs,
            now=lambda: FIXED_NOW,
        )
        made.append(fetcher)
        return fetcher

    yield make
    for fetcher in made:
        fetcher.close()


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let 127.0.0.1 (the test servers) pass the guard as if public; nothing else changes.

    With this, tests can run with ``allow_private_networks=False`` and still reach a
    server, e.g. to check that its redirects to private addresses are refused.
    """
    from tap_feeddelta.fetch import guard, resolve

    real = guard.address_denial

    def denial(address: str, *, allow_private: bool) -> str | None:
        if address == "127.0.0.1":
            return None
        return real(address, allow_private=allow_private)

    monkeypatch.setattr(resolve, "address_denial", denial)


def zero_bomb(decoded_bytes: int, wbits: int) -> bytes:
    """Compressed zeros: ``decoded_bytes`` of output from a tiny input."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(1 << 20)
    parts = [compressor.compress(block) for _ in range(decoded_bytes >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


@pytest.fixture(scope="session")
def gzip_bomb() -> bytes:
    return zero_bomb(256 << 20, 16 + zlib.MAX_WBITS)  # 256 MiB decoded, ~250 KiB sent


@pytest.fixture(scope="session")
def deflate_bomb() -> bytes:
    return zero_bomb(256 << 20, zlib.MAX_WBITS)


class Clock:
    def __init__(self) -> None:
        self.started = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that completes TCP handshakes (kernel backlog) but never says anything."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield listener.getsockname()[1]
    listener.close()


def assert_error(result: Any, code: str, clock: Clock | None = None, bound: float = 0) -> None:
    """The result is an error with ``code``; with a clock, it came within ``bound`` seconds."""
    assert result.status == "error", result
    assert result.error is not None
    assert result.error.code == code, result.error
    assert result.body is None
    if clock is not None:
        assert clock.elapsed < bound, f"took {clock.elapsed:.2f}s, bound {bound}s"


def fetch_with_peak(fetcher: Fetcher, url: str) -> tuple[FetchResult, int]:
    """The fetch's result and the peak of memory Python allocated during it (bytes)."""
    tracemalloc.start()
    try:
        result = fetcher.fetch(url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak
