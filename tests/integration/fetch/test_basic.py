"""The good path: GET, conditional GET, pinned connections, reuse, politeness."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Callable

import pytest

from tap_feeddelta.fetch import Fetcher, display_url

from .conftest import (
    USER_AGENT,
    Clock,
    Request,
    Server,
    StubResolver,
    Wire,
    assert_error,
    ok_handler,
)


def test_plain_get_returns_body_validators_and_metadata(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = ok_handler(
        b"<rss>hello</rss>", ETag='"v1"', Last_Modified="Sun, 01 Mar 2026 10:00:00 GMT"
    )
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed?x=1"))
    assert result.status == "ok", result.error
    assert result.body == b"<rss>hello</rss>"
    assert result.http_status == 200
    assert result.content_type == "application/rss+xml"
    assert result.etag == '"v1"'
    assert result.last_modified == "Sun, 01 Mar 2026 10:00:00 GMT"
    assert result.bytes_received == len(b"<rss>hello</rss>")
    assert result.final_url == server.url("/feed?x=1")
    assert result.requested_url == server.url("/feed?x=1")
    assert not result.etag_sent and not result.last_modified_sent
    assert result.error is None
    assert result.fetch_ms >= 0
    assert server.paths == ["/feed"]
    request = server.requests[0]
    assert request.target == "/feed?x=1"
    assert request.headers["user-agent"] == USER_AGENT
    assert "application/rss+xml" in request.headers["accept"]
    assert request.headers["accept-encoding"].startswith("gzip, deflate")
    assert request.headers["host"] == f"127.0.0.1:{server.port}"
    assert "if-none-match" not in request.headers


def test_conditional_get_gives_not_modified(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def handle(request: Request, wire: Wire) -> bool:
        if request.headers.get("if-none-match") == '"v1"':
            wire.respond(304, headers=[("ETag", '"v2-ignored"')], length=False)
        else:
            wire.respond(200, b"<rss/>", [("ETag", '"v1"')])
        return True

    server.routes["/feed"] = handle
    result = fetchers(allow_private_networks=True).fetch(
        server.url("/feed"), etag='"v1"', last_modified="Sun, 01 Mar 2026 10:00:00 GMT"
    )
    assert result.status == "not_modified", result.error
    assert clock.elapsed < 2.0
    assert result.http_status == 304
    assert result.body is None
    assert result.etag is None and result.last_modified is None  # validators only from a 200
    assert result.etag_sent and result.last_modified_sent
    assert result.error is None
    request = server.requests[0]
    assert request.headers["if-none-match"] == '"v1"'
    assert request.headers["if-modified-since"] == "Sun, 01 Mar 2026 10:00:00 GMT"
    assert server.paths == ["/feed"]


def test_304_without_validators_is_bad_response(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server.routes["/feed"] = lambda request, wire: wire.respond(304, length=False)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response", clock, 2.0)
    assert result.http_status == 304
    assert server.paths == ["/feed"]


def test_validators_with_control_characters_are_not_sent(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = ok_handler()
    result = fetchers(allow_private_networks=True).fetch(
        server.url("/feed"), etag='"a"\r\nX-Injected: 1'
    )
    assert result.status == "ok"
    assert not result.etag_sent
    assert "x-injected" not in server.requests[0].headers


def test_empty_200_is_ok_without_body(server: Server, fetchers: Callable[..., Fetcher]) -> None:
    server.routes["/feed"] = ok_handler(b"")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert result.status == "ok"
    assert result.body is None
    assert result.bytes_received == 0


def test_a_203_carries_the_document_as_a_200_does(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    def proxied(request: Request, wire: Wire) -> bool:
        headers = [("Content-Type", "application/rss+xml"), ("ETag", '"v1"')]
        wire.respond(203, b"<rss>altered by a proxy</rss>", headers)
        return True

    server.routes["/feed"] = proxied
    fetcher = fetchers(allow_private_networks=True)
    result = fetcher.fetch(server.url("/feed"))
    assert result.status == "ok", result.error
    assert result.http_status == 203
    assert result.body == b"<rss>altered by a proxy</rss>"
    assert result.etag == '"v1"'
    # Its connection was read to the end, so it is reused.
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    assert server.connections == 1


def test_connections_are_reused_across_feeds_of_one_host(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/a"] = ok_handler(b"a")
    server.routes["/b"] = ok_handler(b"b")
    fetcher = fetchers(allow_private_networks=True)
    for path in ["/a", "/b", "/a", "/b", "/a"]:
        assert fetcher.fetch(server.url(path)).status == "ok"
    assert server.paths == ["/a", "/b", "/a", "/b", "/a"]
    assert server.connections == 1


def test_connection_is_pinned_to_the_checked_address(
    server: Server, fetchers: Callable[..., Fetcher], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stub resolver is asked once; the connection itself never resolves anything."""
    server.routes["/feed"] = ok_handler()
    lookups: list[object] = []

    def no_lookup(*args: object, **kwargs: object) -> list[object]:
        lookups.append(args[0])
        raise socket.gaierror(socket.EAI_NONAME, "no second lookup allowed")

    resolver = StubResolver({"feed.example": ["127.0.0.1"]})
    fetcher = fetchers(resolver=resolver, allow_private_networks=True)
    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    result = fetcher.fetch(server.url("/feed", host="feed.example"))
    monkeypatch.undo()
    assert result.status == "ok", result.error
    assert lookups == []
    assert resolver.calls == ["feed.example"]
    assert server.requests[0].headers["host"] == f"feed.example:{server.port}"


def test_dns_rebinding_cannot_reach_a_second_answer(
    server: Server, fetchers: Callable[..., Fetcher], monkeypatch: pytest.MonkeyPatch
) -> None:
    """First answer allowed, then the name rebinds to the metadata address."""
    server.routes["/feed"] = ok_handler()
    resolver = StubResolver({"feed.example": [["127.0.0.1"], ["169.254.169.254"]]})
    fetcher = fetchers(resolver=resolver, allow_private_networks=True)
    monkeypatch.setattr(socket, "getaddrinfo", _rebound_getaddrinfo)
    first = fetcher.fetch(server.url("/feed", host="feed.example"))
    second = fetcher.fetch(server.url("/feed", host="feed.example"))
    monkeypatch.undo()
    assert first.status == "ok", first.error
    assert_error(second, "destination_denied")  # not served from the pooled connection
    assert resolver.calls == ["feed.example", "feed.example"]
    assert server.paths == ["/feed"]
    assert server.connections == 1


def _rebound_getaddrinfo(host: object, port: object, *args: object, **kw: object) -> list[object]:
    # Were the connection to look the name up again, it would be sent elsewhere.
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port))]


def test_dns_rebinding_public_then_loopback_never_reaches_loopback(
    server: Server, fetchers: Callable[..., Fetcher], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Strict policy: the check passes a public answer; a later lookup would say loopback."""
    server.routes["/feed"] = ok_handler()
    resolver = StubResolver({"feed.example": [["192.0.2.1"], ["127.0.0.1"]]})
    # 192.0.2.1 (TEST-NET-1, never routed on the internet) stands for "public" here: the
    # connection goes there and fails or times out; it never reaches the loopback server.
    from tap_feeddelta.fetch import guard, resolve

    real = guard.address_denial
    monkeypatch.setattr(
        resolve,
        "address_denial",
        lambda a, *, allow_private: None if a == "192.0.2.1" else real(a, allow_private=False),
    )
    fetcher = fetchers(resolver=resolver, request_timeout_seconds=1.0)
    result = fetcher.fetch(server.url("/feed", host="feed.example"))
    assert result.status == "error"
    assert result.error is not None
    assert result.error.code in {"timeout", "connection_failed"}
    assert resolver.calls == ["feed.example"]
    assert server.connections == 0


def test_max_per_host_limits_concurrency(server: Server, fetchers: Callable[..., Fetcher]) -> None:
    gate = threading.Event()

    def slow(request: Request, wire: Wire) -> bool:
        wire.sleep(0.15)
        wire.respond(200, b"<rss/>")
        return True

    server.routes["/feed"] = slow
    fetcher = fetchers(allow_private_networks=True, max_per_host=2)
    results: list[str] = []

    def work() -> None:
        gate.wait(2)
        results.append(fetcher.fetch(server.url("/feed")).status)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10)
    assert results == ["ok"] * 6
    assert server.max_active <= 2
    assert server.connections <= 2
    assert len(server.requests) == 6


def test_dns_failure(fetchers: Callable[..., Fetcher]) -> None:
    resolver = StubResolver({})
    assert_error(fetchers(resolver=resolver).fetch("https://nowhere.example/feed"), "dns_failed")
    assert resolver.calls == ["nowhere.example"]


def test_connection_refused(fetchers: Callable[..., Fetcher]) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    result = fetchers(allow_private_networks=True).fetch(f"http://127.0.0.1:{port}/")
    assert_error(result, "connection_failed")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p@Example.com:8443/a/b?token=s3cret#frag", "https://example.com:8443/a/b"),
        ("http://example.com/feed.xml?key=1", "http://example.com/feed.xml"),
        ("http://[::1]/x", "http://[::1]/x"),
        ("http://[not-an-address/", "(unparseable URL)"),
    ],
)
def test_display_url_keeps_scheme_host_and_path_only(url: str, shown: str) -> None:
    assert display_url(url) == shown
    assert "s3cret" not in display_url(url)


def test_many_threads_many_hosts(
    servers: Callable[..., Server], fetchers: Callable[..., Fetcher]
) -> None:
    """Thread safety: 32 workers over two hosts; per-host concurrency stays capped."""
    hosts = [servers(), servers()]
    for host in hosts:
        host.routes["/feed"] = ok_handler(b"<rss/>" * 100)
    fetcher = fetchers(allow_private_networks=True, max_per_host=2)
    statuses: list[str] = []
    lock = threading.Lock()

    def work(index: int) -> None:
        for round_ in range(8):
            result = fetcher.fetch(hosts[(index + round_) % 2].url(f"/feed?w={index}"))
            with lock:
                statuses.append(result.status)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert statuses == ["ok"] * 256
    for host in hosts:
        assert host.max_active <= 2
        assert len(host.requests) == 128


def test_fetch_package_stays_out_of_the_other_rooms() -> None:
    code = (
        "import sys, tap_feeddelta.fetch; "
        "bad = [m for m in sys.modules if m.startswith(('singer_sdk', 'tap_feeddelta.parse',"
        " 'tap_feeddelta.delta', 'tap_feeddelta.state', 'requests'))]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
