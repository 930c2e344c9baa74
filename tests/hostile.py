"""A real HTTP server on 127.0.0.1 whose feeds misbehave on purpose.

Paths are ``/<behaviour>/<n>``; ``/ok/<n>`` serves the documents in ``documents``. Every
misbehaviour is bounded in time on the server side too, so no test can hang on it.
"""

from __future__ import annotations

import contextlib
import gzip
import threading
import time
import zlib
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.feedserver import rss

SERVER_SIDE_LIMIT_SECONDS = 15.0

BEHAVIOURS = (
    "drip",  # headers, then a byte every half second
    "stall",  # headers, then nothing
    "endless",  # a chunked body that never ends
    "gzip",  # a gzip bomb
    "deflate",  # a deflate bomb
    "loop",  # redirects to itself
    "invalid",  # not XML at all
    "types",  # JSON Feed with wrong types everywhere
    "429",  # rate limited with Retry-After
    "500",  # server error
    "huge",  # 20,000 items
)


@cache
def _bomb(kind: str) -> bytes:
    zeros = b"\0" * (64 * 1024 * 1024)
    if kind == "gzip":
        return gzip.compress(zeros, compresslevel=9)
    return zlib.compress(zeros, 9)


@cache
def _huge_feed() -> bytes:
    return rss([(f"h-{n}", f"Item {n}", "x") for n in range(20_000)]).encode()


class HostileServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host  # another loopback address (127.0.0.2) is another host
        self.documents: dict[str, bytes] = {}
        self.etags: dict[str, str] = {}
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, TimeoutError):
                    server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class QuietServer(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self._httpd = QuietServer((host, 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def url(self, behaviour: str, n: int) -> str:
        return f"http://{self.host}:{self._httpd.server_address[1]}/{behaviour}/{n}"

    def start(self) -> HostileServer:
        _bomb("gzip"), _bomb("deflate"), _huge_feed()  # build before the clock starts
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        _, behaviour, _n = h.path.split("/", 2)
        started = time.monotonic()

        def running() -> bool:
            elapsed = time.monotonic() - started
            return not self._stop.is_set() and elapsed < SERVER_SIDE_LIMIT_SECONDS

        if behaviour == "ok":
            body = self.documents.get(h.path)
            if body is None:
                return self._send(h, 404, b"missing")
            etag = self.etags.get(h.path, "")
            if h.headers.get("If-None-Match") == etag:
                return self._send(h, 304, b"", {"ETag": etag})
            return self._send(h, 200, body, {"ETag": etag})
        if behaviour in ("drip", "stall"):
            h.send_response(200)
            h.send_header("Content-Type", "application/rss+xml")
            h.send_header("Content-Length", "100000")
            h.end_headers()
            h.wfile.flush()
            while running():
                if behaviour == "drip":
                    h.wfile.write(b"<")
                    h.wfile.flush()
                time.sleep(0.5)
            return None
        if behaviour == "endless":
            h.send_response(200)
            h.send_header("Content-Type", "application/rss+xml")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            chunk = b"<item><title>x</title></item>" * 100
            while running():
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            return None
        if behaviour in ("gzip", "deflate"):
            return self._send(h, 200, _bomb(behaviour), {"Content-Encoding": behaviour})
        if behaviour == "loop":
            return self._send(h, 302, b"", {"Location": h.path})
        if behaviour == "invalid":
            return self._send(h, 200, b"\x00\x01 this is <<< not xml", {})
        if behaviour == "types":
            body = b'{"version": "https://jsonfeed.org/version/1.1", "title": 5, "items": "x"}'
            return self._send(h, 200, body, {"Content-Type": "application/feed+json"})
        if behaviour == "429":
            return self._send(h, 429, b"slow down", {"Retry-After": "120"})
        if behaviour == "500":
            return self._send(h, 500, b"broken", {})
        if behaviour == "huge":
            return self._send(h, 200, _huge_feed(), {})
        return self._send(h, 404, b"unknown")

    @staticmethod
    def _send(
        h: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        h.send_response(status)
        headers = {"Content-Type": "application/rss+xml", **(headers or {})}
        for name, value in headers.items():
            h.send_header(name, value)
        if status != 304:
            h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if status != 304:
            h.wfile.write(body)
