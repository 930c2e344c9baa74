"""HTTPS: certificates always verified against the host name, on a pinned connection."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import trustme

from tap_feeddelta.fetch import Fetcher
from tap_feeddelta.fetch.connection import verifying_context

from .conftest import Clock, Server, StubResolver, assert_error, ok_handler, server_context


def test_https_with_pinned_address_keeps_host_for_sni_and_host_header(
    tls_server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    tls_server.routes["/feed"] = ok_handler(b"<feed/>")
    resolver = StubResolver({"feed.example": ["127.0.0.1"]})
    fetcher = fetchers(resolver=resolver, allow_private_networks=True)
    result = fetcher.fetch(tls_server.url("/feed", host="feed.example"))
    assert result.status == "ok", result.error
    assert result.body == b"<feed/>"
    assert tls_server.server_names == ["feed.example"]
    assert tls_server.requests[0].headers["host"] == f"feed.example:{tls_server.port}"
    # A second feed of the host reuses the TLS connection.
    assert fetcher.fetch(tls_server.url("/feed", host="feed.example")).status == "ok"
    assert tls_server.connections == 1
    assert tls_server.paths == ["/feed", "/feed"]


def test_a_trailing_dot_host_is_verified_and_named_without_the_dot(
    tls_server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    tls_server.routes["/feed"] = ok_handler(b"<feed/>")
    resolver = StubResolver({"feed.example.": ["127.0.0.1"]})
    fetcher = fetchers(resolver=resolver, allow_private_networks=True)
    result = fetcher.fetch(tls_server.url("/feed", host="feed.example."))
    assert result.status == "ok", result.error
    assert result.body == b"<feed/>"
    assert tls_server.server_names == ["feed.example"]
    # The name is looked up and sent in the Host header as given.
    assert resolver.calls == ["feed.example."]
    assert tls_server.requests[0].headers["host"] == f"feed.example.:{tls_server.port}"


def _tls_refused(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock, **fetcher_args: object
) -> None:
    server.routes["/feed"] = ok_handler()
    resolver = StubResolver({"feed.example": ["127.0.0.1"]})
    fetcher = fetchers(resolver=resolver, allow_private_networks=True, **fetcher_args)
    result = fetcher.fetch(server.url("/feed", host="feed.example"))
    assert_error(result, "tls_failed", clock, 3.0)
    assert result.error is not None
    assert result.error.message.endswith(".")
    assert ".." not in result.error.message
    assert server.requests == []


def test_wrong_host_certificate_is_refused(
    servers: Callable[..., Server], ca: trustme.CA, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server = servers(server_context(ca.issue_cert("other.example")))
    _tls_refused(server, fetchers, clock)


def test_expired_certificate_is_refused(
    servers: Callable[..., Server], ca: trustme.CA, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    now = datetime.now(UTC)
    cert = ca.issue_cert(
        "feed.example", not_before=now - timedelta(days=30), not_after=now - timedelta(days=1)
    )
    server = servers(server_context(cert))
    _tls_refused(server, fetchers, clock)


def test_unknown_ca_is_refused(
    servers: Callable[..., Server], fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    stranger = trustme.CA()
    server = servers(server_context(stranger.issue_cert("feed.example")))
    _tls_refused(server, fetchers, clock)


def test_default_trust_store_does_not_know_the_test_ca(
    tls_server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    _tls_refused(tls_server, fetchers, clock, ca_certs=None)


def test_ca_bundle_path_is_trusted_beside_the_default_roots(
    tls_server: Server, fetchers: Callable[..., Fetcher], ca_bundle: str
) -> None:
    tls_server.routes["/feed"] = ok_handler(b"<feed/>")
    resolver = StubResolver({"feed.example": ["127.0.0.1"]})
    fetcher = fetchers(
        resolver=resolver, ca_certs=None, ca_bundle_path=ca_bundle, allow_private_networks=True
    )
    result = fetcher.fetch(tls_server.url("/feed", host="feed.example"))
    assert result.status == "ok", result.error
    assert result.body == b"<feed/>"


def test_ca_bundle_path_keeps_every_default_root(ca_bundle: str) -> None:
    import certifi

    defaults = verifying_context(None).get_ca_certs()
    with_bundle = verifying_context(None, ca_bundle).get_ca_certs()
    assert len(defaults) == len(ssl.create_default_context(cafile=certifi.where()).get_ca_certs())
    assert len(with_bundle) == len(defaults) + 1
    assert all(root in with_bundle for root in defaults)


def test_plain_http_to_a_tls_port_fails_cleanly(
    tls_server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    url = tls_server.url("/feed").replace("https://", "http://")
    result = fetchers(allow_private_networks=True, request_timeout_seconds=2).fetch(url)
    assert result.status == "error"
    assert result.error is not None
    assert result.error.code in {"connection_failed", "bad_response", "timeout"}
    assert clock.elapsed < 3.5
    assert tls_server.requests == []


def test_https_to_a_plain_http_port_says_the_server_answered_without_tls(
    fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    """An https:// URL whose port serves plain HTTP (nginx and Apache answer the
    ClientHello with a 400 in clear text): the row says what the TLS reason means."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer_in_clear_text() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )

    thread = threading.Thread(target=answer_in_clear_text, daemon=True)
    thread.start()
    try:
        result = fetchers(allow_private_networks=True).fetch(f"https://127.0.0.1:{port}/feed")
    finally:
        thread.join(timeout=2)
        listener.close()
    assert_error(result, "tls_failed", clock, 2.0)
    assert result.error is not None
    assert result.error.message == (
        "The TLS handshake with 127.0.0.1 failed (WRONG_VERSION_NUMBER): the server"
        " answered without TLS, as a plain http:// port does (check the URL's scheme and port)."
    )
