"""A real HTTP server on 127.0.0.1 serving in-memory feed documents for tests.

Documents can be changed between runs; every response carries a strong ETag and a
Last-Modified date, and conditional requests get 304. Every request is recorded.
"""

from __future__ import annotations

import hashlib
import re
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Document:
    body: bytes
    content_type: str = "application/rss+xml; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    last_modified: float = 1_700_000_000.0
    # As many servers do for static files: no ETag, and a 304 whenever If-Modified-Since
    # is not older than the document (a date comparison, not an exact match).
    compares_dates: bool = False
    delay_seconds: float = 0.0  # this document's own wait before answering

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha1(self.body).hexdigest()[:16] + '"'


@dataclass(frozen=True)
class SeenRequest:
    path: str
    if_none_match: str | None
    if_modified_since: str | None
    user_agent: str | None


class FeedServer:
    def __init__(self, tls: ssl.SSLContext | None = None, host: str = "127.0.0.1") -> None:
        self.documents: dict[str, Document] = {}
        self.requests: list[SeenRequest] = []
        self.delay_seconds = 0.0  # wait before answering, to make runs take time
        # Called with each request's path once it is recorded, before the answer (on the
        # request's own thread): a test can hold an answer back until something happens.
        self.on_request: Callable[[str], None] | None = None
        self.host = host  # another loopback address (127.0.0.2) is another host
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class QuietServer(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # clients closing pooled connections are not test failures

        self._httpd = QuietServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        self.scheme = "http"
        if tls is not None:  # the handshake happens on accept; a refused one is dropped
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def url(self, path: str) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{path}"

    def put(self, path: str, body: bytes | str, **kwargs: Any) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        with self._lock:
            previous = self.documents.get(path)
            if previous is not None and "last_modified" not in kwargs:
                # a changed document is newer (whole seconds, as HTTP dates are)
                kwargs["last_modified"] = previous.last_modified + 1
            self.documents[path] = Document(data, **kwargs)

    def requests_to(self, path: str) -> list[SeenRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        path = handler.path
        seen = SeenRequest(
            path,
            handler.headers.get("If-None-Match"),
            handler.headers.get("If-Modified-Since"),
            handler.headers.get("User-Agent"),
        )
        with self._lock:
            self.requests.append(seen)
            document = self.documents.get(path)
        if self.on_request is not None:
            self.on_request(path)
        if document is not None and document.delay_seconds:
            time.sleep(document.delay_seconds)
        if document is None:
            self._send(handler, 404, b"not found", {"Content-Type": "text/plain"})
            return
        last_modified = formatdate(document.last_modified, usegmt=True)
        headers = {
            "Content-Type": document.content_type,
            "ETag": document.etag,
            "Last-Modified": last_modified,
            **document.headers,
        }
        if document.compares_dates:
            del headers["ETag"]
            since = seen.if_modified_since
            is_fresh = since is not None and _http_time(since) >= int(document.last_modified)
        # If-None-Match, when sent, decides alone (RFC 9110 13.2.2).
        elif seen.if_none_match is not None:
            is_fresh = seen.if_none_match == document.etag
        else:
            is_fresh = seen.if_modified_since == last_modified
        if document.status == 200 and is_fresh:
            self._send(handler, 304, b"", {"ETag": document.etag} if "ETag" in headers else {})
            return
        self._send(handler, document.status, document.body, headers)

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]
    ) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if status != 304:
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if status != 304:
            handler.wfile.write(body)


def _http_time(value: str) -> float:
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return float("-inf")


def rss(items: list[tuple[str, str, str]], title: str = "Example feed") -> str:
    """An RSS 2.0 document; items are (guid, title, description).

    An item's date depends on its guid only (guid "id-3" is dated 4 January 2024), so
    moving items around changes nothing but their order.
    """
    entries = "".join(
        f"<item><guid>{guid}</guid><title>{item_title}</title>"
        f"<link>https://example.org/{guid}</link>"
        f"<description>{description}</description>"
        f"<pubDate>{_day(guid):02d} Jan 2024 10:00:00 GMT</pubDate></item>"
        for guid, item_title, description in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>{title}</title><link>https://example.org/</link>"
        f"<description>d</description>{entries}</channel></rss>"
    )


def _day(guid: str) -> int:
    digits = re.search(r"(\d+)$", guid)
    return int(digits.group(1)) % 28 + 1 if digits else 1
