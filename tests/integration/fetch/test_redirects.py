"""Redirects: followed by hand, each target parsed and checked; a body is read only when
it is declared small, to leave the connection for the next hop."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from tap_feeddelta.fetch import Fetcher

from .conftest import (
    Clock,
    Request,
    Server,
    StubResolver,
    Wire,
    assert_error,
    fetch_with_peak,
    ok_handler,
    redirect_handler,
)


def test_redirects_are_followed_and_counted(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/old"] = redirect_handler("/older", 301)
    server.routes["/older"] = redirect_handler(server.url("/feed?x=2"), 308)
    server.routes["/feed"] = ok_handler(b"<rss/>", ETag='"e"')
    result = fetchers(allow_private_networks=True).fetch(server.url("/old"))
    assert result.status == "ok", result.error
    assert result.redirects == 2
    assert result.final_url == server.url("/feed?x=2")
    assert result.etag == '"e"'
    assert server.paths == ["/old", "/older", "/feed"]


@pytest.mark.parametrize(
    ("statuses", "moved_to"),
    [
        ((301, 308, 302), "/b1"),  # where the permanent hops led, up to the temporary one
        ((308,), "/b0"),
        ((301, 307, 301), "/b0"),  # a permanent hop after a temporary one is not the feed's
        ((302, 301), None),  # the feed's URL itself did not move
        ((307,), None),
        ((303,), None),
        ((), None),
    ],
    ids=["301-308-302", "308", "301-307-301", "302-301", "307", "303", "none"],
)
def test_permanent_first_hops_tell_where_the_feed_moved(
    statuses: tuple[int, ...],
    moved_to: str | None,
    server: Server,
    fetchers: Callable[..., Fetcher],
) -> None:
    path = "/start"
    for hop, status in enumerate(statuses):
        server.routes[path] = redirect_handler(f"/b{hop}?token=t{hop}", status)
        path = f"/b{hop}"
    server.routes[path] = ok_handler(b"<rss/>")
    result = fetchers(allow_private_networks=True).fetch(server.url("/start"))
    assert result.status == "ok", result.error
    assert result.redirects == len(statuses)
    expected = None if moved_to is None else server.url(f"{moved_to}?token=t{moved_to[2:]}")
    assert result.moved_to == expected


@pytest.mark.usefixtures("loopback_is_public")
@pytest.mark.parametrize(
    ("routes", "moved_to"),
    [
        ({"/start": "http://169.254.169.254/latest/meta-data/iam"}, None),
        ({"/start": "http://10.0.0.7/admin"}, None),
        ({"/start": "/b0", "/b0": "http://10.0.0.7/admin"}, "/b0"),  # /b0 answered
        ({"/start": "http://127.0.0.1:{closed}/feed"}, None),  # passed its checks, unanswered
        ({"/start": "/start"}, None),  # a loop is no move
        ({"/start": "/b0", "/b0": "/start"}, None),
        ({"/start": "/b0", "/b0": "/b1", "/b1": "/b0"}, None),
    ],
    ids=["metadata", "private", "private-after-a-move", "unanswered", "self", "back", "loop"],
)
def test_a_move_is_told_only_to_a_target_that_answered(
    routes: dict[str, str],
    moved_to: str | None,
    server: Server,
    fetchers: Callable[..., Fetcher],
) -> None:
    """A permanent redirect to a refused address, to one that never answered, or back to
    a URL of the chain is no place the feed moved to: feed_moved would tell the user to
    configure it (where allow_private_networks would let it through)."""
    # 127.0.0.1 plays a public host (the strict policy refuses the private addresses).
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed = unused.getsockname()[1]  # nothing listens there once closed
    for path, location in routes.items():
        server.routes[path] = redirect_handler(location.format(closed=closed), 301)
    result = fetchers(max_redirects=4).fetch(server.url("/start"))
    assert result.status == "error"
    assert result.moved_to == (None if moved_to is None else server.url(moved_to))


@pytest.mark.parametrize(
    "location", ["feed", "./feed", "../feed", "//127.0.0.1:{port}/feed", "/feed#frag"]
)
def test_relative_locations_are_resolved_first(
    location: str, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/dir/start"] = redirect_handler(location.format(port=server.port))
    server.routes["/dir/feed"] = ok_handler(b"dir")
    server.routes["/feed"] = ok_handler(b"root")
    result = fetchers(allow_private_networks=True).fetch(server.url("/dir/start"))
    assert result.status == "ok", result.error
    assert result.redirects == 1
    assert len(server.paths) == 2


REFUSED_PRIVATE_TARGETS = [
    "http://10.0.0.1/feed",
    "http://192.168.0.10:{port}/feed",
    "http://127.0.0.2:{port}/feed",
    "http://[::1]:{port}/feed",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:127.0.0.1]:{port}/feed",
    "http://intranet.example:{port}/feed",
    "http://rebound.example:{port}/feed",
]


@pytest.mark.usefixtures("loopback_is_public")
@pytest.mark.parametrize("location", REFUSED_PRIVATE_TARGETS)
def test_redirect_to_a_private_address_is_refused(
    location: str, server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    """Strict policy; the test server plays a public host (see ``loopback_is_public``)."""
    server.routes["/feed"] = redirect_handler(location.format(port=server.port))
    resolver = StubResolver(
        {
            "intranet.example": ["192.168.0.10"],
            "rebound.example": ["127.0.0.1", "10.0.0.7"],
        }
    )
    fetcher = fetchers(resolver=resolver)
    result = fetcher.fetch(server.url("/feed"))
    assert_error(result, "redirect_denied", clock, 2.0)
    assert result.redirects == 0
    assert result.http_status == 302
    assert server.paths == ["/feed"]
    assert server.connections == 1


@pytest.mark.parametrize(
    "location",
    [
        "file:///etc/passwd",
        "gopher://127.0.0.1:{port}/_GET%20/",
        "ftp://127.0.0.1/feed",
        "javascript:alert(1)",
        "http://user:pw@127.0.0.1:{port}/feed2",
        "http://@127.0.0.1:{port}/feed2",
        "http://127.0.0.1:{port}\\@evil.example/feed2",
        "http://127.0.0.1:{port}/a\tb",
        "http://[::1",
        # An empty authority names no host (RFC 3986); browsers would read "g" as one.
        "///feed2",
        "//",
        "///",
        "//?x=1",
        "http:///feed2",
        "http://",
        "HTTP://#f",
    ],
)
def test_redirect_to_a_forbidden_url_is_refused(
    location: str, server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server.routes["/feed"] = redirect_handler(location.format(port=server.port))
    server.routes["/feed2"] = ok_handler()
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "redirect_denied", clock, 2.0)
    assert result.error is not None
    assert "pw" not in result.error.message
    assert server.paths == ["/feed"]


def test_redirect_loop_stops_at_the_limit(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server.routes["/a"] = redirect_handler("/b")
    server.routes["/b"] = redirect_handler("/a")
    result = fetchers(allow_private_networks=True, max_redirects=3).fetch(server.url("/a"))
    assert_error(result, "redirect_limit", clock, 2.0)
    assert result.redirects == 3
    assert server.paths == ["/a", "/b", "/a", "/b"]
    # It said only "More than 3 redirects.": a loop is named as one.
    assert result.error is not None
    assert result.error.message == (
        "More than 3 redirects: they loop (a URL redirects back to one already requested)."
    )


def test_a_url_that_redirects_to_itself_loops(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/a"] = redirect_handler("/a")
    result = fetchers(allow_private_networks=True, max_redirects=0).fetch(server.url("/a"))
    assert_error(result, "redirect_limit")
    assert result.error is not None and "they loop" in result.error.message


def test_redirect_chain_past_the_limit(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    for hop in range(1, 5):
        server.routes[f"/r{hop}"] = redirect_handler(f"/r{hop + 1}" if hop < 4 else "/feed")
    server.routes["/feed"] = ok_handler()
    result = fetchers(allow_private_networks=True, max_redirects=3).fetch(server.url("/r1"))
    assert_error(result, "redirect_limit", clock, 2.0)
    assert server.paths == ["/r1", "/r2", "/r3", "/r4"]
    assert result.error is not None and result.error.message == "More than 3 redirects."
    # Exactly at the limit is fine.
    result = fetchers(allow_private_networks=True, max_redirects=3).fetch(server.url("/r2"))
    assert result.status == "ok"
    assert result.redirects == 3


def test_zero_redirects_allowed(server: Server, fetchers: Callable[..., Fetcher]) -> None:
    server.routes["/a"] = redirect_handler("/feed")
    server.routes["/feed"] = ok_handler()
    result = fetchers(allow_private_networks=True, max_redirects=0).fetch(server.url("/a"))
    assert_error(result, "redirect_limit")
    assert server.paths == ["/a"]


def test_redirect_without_location_is_bad_response(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/a"] = lambda request, wire: wire.respond(302)
    assert_error(fetchers(allow_private_networks=True).fetch(server.url("/a")), "bad_response")
    assert server.paths == ["/a"]


def test_redirect_whose_body_is_a_bomb_is_not_read(
    server: Server, fetchers: Callable[..., Fetcher], gzip_bomb: bytes, clock: Clock
) -> None:
    def bomb_redirect(request: Request, wire: Wire) -> bool:
        head = [("Location", "/feed"), ("Content-Encoding", "gzip")]
        wire.respond(302, gzip_bomb, head)
        return True

    server.routes["/a"] = bomb_redirect
    server.routes["/feed"] = ok_handler(b"<rss/>")
    fetcher = fetchers(allow_private_networks=True, max_feed_bytes=1 << 20)
    result, peak = fetch_with_peak(fetcher, server.url("/a"))
    assert result.status == "ok", result.error
    assert result.body == b"<rss/>"
    assert peak < 4 << 20
    assert clock.elapsed < 3
    assert server.paths == ["/a", "/feed"]


@pytest.mark.parametrize(
    ("location", "asked"),
    [
        ("/caf\xc3\xa9", "/caf%C3%A9"),  # raw UTF-8 bytes, as servers send them
        ("/caf\xe9", "/caf%C3%A9"),  # one Latin-1 byte: no UTF-8, read as Latin-1
        ("/a b", "/a%20b"),  # a space inside
    ],
)
def test_a_location_is_read_as_browsers_read_it(
    location: str, asked: str, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/start"] = redirect_handler(location)
    server.routes[asked] = ok_handler(b"<rss/>")
    result = fetchers(allow_private_networks=True).fetch(server.url("/start"))
    assert result.status == "ok", result.error
    assert server.paths == ["/start", asked]


def test_a_redirect_from_https_to_plain_http_is_refused(
    tls_server: Server, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """The request, its query (a token) with it, would go out in clear text, and what
    came back could have been forged on the way, yet be read as the https feed."""
    tls_server.routes["/feed"] = redirect_handler(server.url("/feed?token=SECRET"), 301)
    server.routes["/feed"] = ok_handler()
    result = fetchers(allow_private_networks=True).fetch(tls_server.url("/feed?token=SECRET"))
    assert_error(result, "redirect_denied")
    assert result.error is not None
    assert result.error.message == "A redirect from https to plain http was refused."
    assert result.http_status == 301
    assert result.redirects == 0
    assert server.requests == []
    # The other way round, and https to https, are followed.
    server.routes["/up"] = redirect_handler(tls_server.url("/up2"))
    tls_server.routes["/up2"] = redirect_handler("/feed2")
    tls_server.routes["/feed2"] = ok_handler()
    upgraded = fetchers(allow_private_networks=True).fetch(server.url("/up"))
    assert upgraded.status == "ok", upgraded.error
    assert upgraded.redirects == 2


def test_a_same_host_redirect_chain_keeps_its_connection(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """Each hop's answer declares an empty body: the next hop goes on the same connection."""
    server.routes["/r1"] = redirect_handler("/r2", 301)
    server.routes["/r2"] = redirect_handler("/r3", 302)
    server.routes["/r3"] = redirect_handler("/feed", 307)
    server.routes["/feed"] = ok_handler(b"<rss/>")
    fetcher = fetchers(allow_private_networks=True)
    for _ in range(2):
        result = fetcher.fetch(server.url("/r1"))
        assert result.status == "ok", result.error
        assert result.redirects == 3
    assert server.paths == ["/r1", "/r2", "/r3", "/feed"] * 2
    assert server.connections == 1


def test_a_same_host_redirect_over_tls_keeps_its_connection(
    tls_server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    tls_server.routes["/old"] = redirect_handler("/feed")
    tls_server.routes["/feed"] = ok_handler(b"<rss/>")
    result = fetchers(allow_private_networks=True).fetch(tls_server.url("/old"))
    assert result.status == "ok", result.error
    assert tls_server.connections == 1


SMALL_PAGE = b"<html><body><a href='/feed'>Moved</a></body></html>"


def _redirect_with(head: bytes, body: bytes = b"") -> Callable[[Request, Wire], bool]:
    def handle(request: Request, wire: Wire) -> bool:
        wire.send(b"HTTP/1.1 302 Found\r\nLocation: /feed\r\n" + head + b"\r\n" + body)
        return True

    return handle


@pytest.mark.parametrize(
    ("head", "body", "reused"),
    [
        (b"Content-Length: 0\r\n", b"", True),
        (f"Content-Length: {len(SMALL_PAGE)}\r\n".encode(), SMALL_PAGE, True),
        (b"Content-Length: 65536\r\n", b"x" * 65536, True),
        (b"Content-Length: 65537\r\n", b"x" * 65537, False),
        (b"Transfer-Encoding: chunked\r\n", b"5\r\nmoved\r\n0\r\n\r\n", False),
        (b"Content-Length: 0\r\nContent-Length: 5\r\n", b"moved", False),
        (b"Content-Length: 5\r\nConnection: close\r\n", b"moved", False),
        (b"Content-Length: 20\r\n", b"", False),  # declared, never sent
        (b"Content-Length : 0\r\n", b"", False),  # no field: no framing
    ],
    ids=[
        "empty",
        "small-page",
        "64k",
        "over-64k",
        "chunked",
        "two-lengths",
        "close",
        "stalled",
        "misframed",
    ],
)
def test_a_redirect_body_is_read_only_when_small_and_framed_by_its_length(
    head: bytes, body: bytes, reused: bool, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """Anything else closes the connection, as before, and the redirect is still followed."""
    server.routes["/old"] = _redirect_with(head, body)
    server.routes["/feed"] = ok_handler(b"<rss/>")
    result = fetchers(allow_private_networks=True).fetch(server.url("/old"))
    assert result.status == "ok", result.error
    assert result.body == b"<rss/>"
    assert server.paths == ["/old", "/feed"]
    assert server.connections == (1 if reused else 2)


def test_a_redirect_to_another_host_never_takes_this_hosts_connection(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """feed.example resolves to the same address and port, yet is another pool key: its
    hop opens its own connection, and the hop back reuses the first host's."""
    server.routes["/a"] = redirect_handler(server.url("/b", host="feed.example"))
    server.routes["/b"] = redirect_handler(server.url("/feed"))
    server.routes["/feed"] = ok_handler(b"<rss/>")
    fetcher = fetchers(StubResolver({"feed.example": ["127.0.0.1"]}), allow_private_networks=True)
    result = fetcher.fetch(server.url("/a"))
    assert result.status == "ok", result.error
    assert result.redirects == 2
    hosts = [(r.path, r.connection, r.headers["host"].split(":")[0]) for r in server.requests]
    assert hosts == [("/a", 1, "127.0.0.1"), ("/b", 2, "feed.example"), ("/feed", 1, "127.0.0.1")]
    assert server.connections == 2


@pytest.mark.parametrize(
    ("behaviour", "code", "status"),
    [("stall", "timeout", None), ("too-long", "bad_response", 200), ("gone", "feed_gone", 410)],
)
def test_a_failure_after_a_redirect_shows_the_hop_that_failed(
    behaviour: str,
    code: str,
    status: int | None,
    server: Server,
    fetchers: Callable[..., Fetcher],
) -> None:
    """The row's final_url and http_status are those of the URL where the fetch failed,
    not the redirect before it: a 302 next to a timeout read as the server's answer."""

    def target(request: Request, wire: Wire) -> None:
        if behaviour == "stall":
            wire.sleep(2)
        elif behaviour == "too-long":
            wire.send(b"HTTP/1.1 200 OK\r\nX-Huge: " + b"a" * 70_000 + b"\r\n\r\n")
        else:
            wire.respond(410, b"gone")

    server.routes["/start"] = redirect_handler("/feed")
    server.routes["/feed"] = target
    fetcher = fetchers(allow_private_networks=True, request_timeout_seconds=0.3)
    result = fetcher.fetch(server.url("/start"))
    assert_error(result, code)
    assert (result.final_url, result.http_status) == (server.url("/feed"), status)
    assert result.redirects == 1
