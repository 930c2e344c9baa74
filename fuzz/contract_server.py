"""The contract fuzzer's web site on 127.0.0.1: routes changed between runs, conditional
GET as RFC 9110 has it, misbehaving answers on demand, and a log of the statuses served."""

from __future__ import annotations

import email.utils
import gzip
import http.server
import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Route:
    """How a path answers. ``mode``: "ok", "404", "500", "429", "503ra" (503 with
    Retry-After), "bogus304" (304 to an unconditional request) or "redirect"."""

    mode: str
    body: bytes = b""
    content_type: str = "text/plain"
    etag: str = '""'
    last_modified: str = ""
    is_gzipped: bool = False
    redirect_to: str = ""


class Site:
    def __init__(self) -> None:
        self._routes: dict[str, Route] = {}
        self._served: list[tuple[str, int]] = []  # (path, status), since the last clear
        self._lock = threading.Lock()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site._answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class QuietServer(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client closing a pooled connection is not a finding

        self._httpd = QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{path}"

    def start(self) -> Site:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def set_route(self, path: str, route: Route) -> None:
        with self._lock:
            self._routes[path] = route

    def clear_log(self) -> None:
        with self._lock:
            self._served.clear()

    def statuses_served(self, paths: set[str]) -> list[int]:
        with self._lock:
            return [status for path, status in self._served if path in paths]

    def _answer(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?")[0]
        with self._lock:
            route = self._routes.get(path)
        status, body, headers = _response(route, handler.headers)
        with self._lock:
            self._served.append((path, status))
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if status != 304:
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if status != 304:
            handler.wfile.write(body)


def _response(route: Route | None, request: Any) -> tuple[int, bytes, dict[str, str]]:
    plain = {"Content-Type": "text/plain"}
    if route is None:
        return 404, b"no", plain
    errors = {"404": (404, b"err"), "500": (500, b"err"), "429": (429, b"slow down")}
    if route.mode in errors:
        status, body = errors[route.mode]
        return status, body, plain
    if route.mode == "503ra":
        return 503, b"later", {**plain, "Retry-After": "1"}
    if route.mode == "redirect":
        return 301, b"", {"Location": route.redirect_to}
    if route.mode == "bogus304" or _is_fresh(route, request):
        return 304, b"", {"ETag": route.etag}
    headers = {
        "ETag": route.etag,
        "Last-Modified": route.last_modified,
        "Content-Type": route.content_type,
    }
    if not route.is_gzipped:
        return 200, route.body, headers
    return 200, gzip.compress(route.body), {**headers, "Content-Encoding": "gzip"}


def _is_fresh(route: Route, request: Any) -> bool:
    # If-None-Match, when sent, decides alone (RFC 9110 13.1.3).
    if_none_match = request.get("If-None-Match")
    if if_none_match is not None:
        return bool(if_none_match == route.etag)
    if_modified_since = request.get("If-Modified-Since")
    if if_modified_since is None:
        return False
    try:
        since = email.utils.parsedate_to_datetime(if_modified_since)
        return since >= email.utils.parsedate_to_datetime(route.last_modified)
    except (TypeError, ValueError):
        return False
