"""Bounds: one deadline over everything, and a size cap on decoded bytes."""

from __future__ import annotations

import concurrent.futures
import gzip
import socket
import threading
import time
import zlib
from collections.abc import Callable

import pytest

from tap_feeddelta.fetch import Fetcher
from tap_feeddelta.fetch.errors import timed_out
from tap_feeddelta.models import FetchResult

from .conftest import (
    Clock,
    Request,
    Server,
    StubResolver,
    Wire,
    assert_error,
    fetch_with_peak,
    ok_handler,
)

DEADLINE = 1.0
SLACK = 1.5


def _fetch(fetchers: Callable[..., Fetcher], url: str, **policy: object) -> FetchResult:
    policy.setdefault("request_timeout_seconds", DEADLINE)
    return fetchers(allow_private_networks=True, **policy).fetch(url)


def test_byte_a_second_body_ends_at_the_deadline(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def drip(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        for _ in range(200):
            wire.send(b"x")
            wire.sleep(0.2)

    server.routes["/feed"] = drip
    result = _fetch(fetchers, server.url("/feed"))
    assert_error(result, "timeout", clock, DEADLINE + SLACK)
    assert clock.elapsed >= DEADLINE * 0.9
    assert server.paths == ["/feed"]


def test_byte_a_second_body_without_length_ends_at_the_deadline(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    """No Content-Length: the watchdog's shutdown must not pass for the end of the body."""

    def drip(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        for _ in range(200):
            wire.send(b"<")
            wire.sleep(0.2)

    server.routes["/feed"] = drip
    result = _fetch(fetchers, server.url("/feed"))
    assert_error(result, "timeout", clock, DEADLINE + SLACK)
    assert server.paths == ["/feed"]


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
@pytest.mark.parametrize(("ending", "code"), [("break", "connection_failed"), ("stall", "timeout")])
def test_a_body_that_fails_midway_counts_the_bytes_read(
    server: Server, fetchers: Callable[..., Fetcher], encoding: str, ending: str, code: str
) -> None:
    # 10,000 decoded bytes of a longer body, then the connection breaks or stalls.
    part = b"<rss>" + b"x" * 9_995
    sent = part
    if encoding == "gzip":  # flushed, so that all of it decodes, the stream not ended
        squeezer = zlib.compressobj(wbits=31)
        sent = squeezer.compress(part) + squeezer.flush(zlib.Z_SYNC_FLUSH)

    def partial(request: Request, wire: Wire) -> None:
        wire.send(
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % (len(sent) * 3)
            + (b"Content-Encoding: gzip\r\n" if encoding == "gzip" else b"")
            + b"\r\n"
            + sent
        )
        if ending == "stall":
            wire.sleep(5)

    server.routes["/feed"] = partial
    result = _fetch(fetchers, server.url("/feed"))
    assert_error(result, code)
    assert isinstance(result, FetchResult)
    assert result.http_status == 200
    assert result.bytes_received == len(part)


def test_stalled_headers_end_at_the_deadline(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def stall(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\n")
        wire.sleep(10)

    server.routes["/feed"] = stall
    result = _fetch(fetchers, server.url("/feed"))
    assert_error(result, "timeout", clock, DEADLINE + SLACK)
    assert server.paths == ["/feed"]


def test_dripped_headers_end_at_the_deadline(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def drip_headers(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        for _ in range(200):
            wire.send(b"a")
            wire.sleep(0.1)

    server.routes["/feed"] = drip_headers
    result = _fetch(fetchers, server.url("/feed"))
    assert_error(result, "timeout", clock, DEADLINE + SLACK)
    assert server.paths == ["/feed"]


def test_silent_server_ends_at_the_deadline(
    silent_port: int, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    result = _fetch(fetchers, f"http://127.0.0.1:{silent_port}/feed")
    assert_error(result, "timeout", clock, DEADLINE + SLACK)


def test_stalled_tls_handshake_ends_at_the_deadline(
    silent_port: int, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    result = _fetch(fetchers, f"https://127.0.0.1:{silent_port}/feed")
    assert_error(result, "timeout", clock, DEADLINE + SLACK)


def test_slow_endless_chunked_body_ends_at_the_deadline(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def endless(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(1000):
            wire.send(b"10\r\n" + b"y" * 16 + b"\r\n")
            wire.sleep(0.05)

    server.routes["/feed"] = endless
    result = _fetch(fetchers, server.url("/feed"))
    assert_error(result, "timeout", clock, DEADLINE + SLACK)
    assert server.paths == ["/feed"]


def test_fast_endless_chunked_body_stops_at_the_cap(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def endless(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"4000\r\n" + b"z" * 0x4000 + b"\r\n"
        for _ in range(100_000):
            wire.send(chunk)

    server.routes["/feed"] = endless
    result = _fetch(fetchers, server.url("/feed"), max_feed_bytes=256 << 10)
    assert_error(result, "response_too_large", clock, DEADLINE + SLACK)
    assert server.paths == ["/feed"]


def test_slow_resolver_ends_at_the_deadline(
    fetchers: Callable[..., Fetcher], clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def hanging(*args: object, **kwargs: object) -> list[object]:
        release.wait(5)
        raise socket.gaierror(socket.EAI_AGAIN, "gave up")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    try:
        result = fetchers(request_timeout_seconds=DEADLINE).fetch("http://slow.example/feed")
    finally:
        release.set()
    assert_error(result, "timeout", clock, DEADLINE + SLACK)


def test_a_host_that_does_not_answer_ends_its_queue_within_three_budgets(
    silent_port: int, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    # Three fetches in a row run out of time holding the host's one slot; the three
    # queued behind them are given up: not one budget each.
    fetcher = fetchers(
        allow_private_networks=True, max_per_host=1, request_timeout_seconds=DEADLINE
    )
    codes = _concurrent_codes(fetcher, f"http://127.0.0.1:{silent_port}/feed", 6)
    assert codes == ["timeout"] * 6
    assert clock.elapsed < 3 * DEADLINE + SLACK


def test_waiting_for_a_slow_but_sure_host_is_outside_the_budget(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # Four fetches, one slot, 0.4 s an answer: the last waits 1.2 s, more than the 1 s
    # budget, yet each fetch itself takes 0.4 s.
    server.routes["/feed"] = _answers_after(0.4)
    fetcher = fetchers(
        allow_private_networks=True, max_per_host=1, request_timeout_seconds=DEADLINE
    )
    results = _concurrent_results(fetcher, server.url("/feed"), 4)
    assert [r.status for r in results] == ["ok"] * 4
    assert max(r.fetch_ms for r in results) < 900  # the waits are left out
    assert server.max_active == 1


def test_a_budget_left_by_earlier_fetches_is_the_deadline(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server.routes["/feed"] = _answers_after(2.0)
    fetcher = fetchers(allow_private_networks=True, request_timeout_seconds=5)
    result = fetcher.fetch(server.url("/feed"), budget_seconds=0.4)
    assert_error(result, "timeout", clock, 0.4 + SLACK)
    assert 300 <= result.fetch_ms < 900
    # More than request_timeout_seconds is never given.
    short = fetchers(allow_private_networks=True, request_timeout_seconds=DEADLINE)
    assert_error(short.fetch(server.url("/feed"), budget_seconds=60), "timeout")


def test_a_fetch_with_no_budget_left_sends_nothing(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server.routes["/feed"] = ok_handler()
    fetcher = fetchers(allow_private_networks=True)
    for left in (0.0, -0.5):
        result = fetcher.fetch(server.url("/feed?token=SECRET"), budget_seconds=left)
        assert_error(result, "timeout", clock, 0.5)
        assert result.error is not None
        assert result.error.message == "The feed's time budget ran out before this fetch."
        assert "SECRET" not in result.requested_url
    assert server.requests == []
    assert server.connections == 0


def test_a_budget_left_still_leaves_out_the_wait_for_a_slot(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # One slot, 0.4 s an answer, 0.6 s left for each: the third waits 0.8 s for the
    # slot, more than what it has left, and is still read.
    server.routes["/feed"] = _answers_after(0.4)
    fetcher = fetchers(allow_private_networks=True, max_per_host=1, request_timeout_seconds=5)
    results = _concurrent_results(fetcher, server.url("/feed"), 3, budget_seconds=0.6)
    assert [r.status for r in results] == ["ok"] * 3
    assert max(r.fetch_ms for r in results) < 600


def test_one_stalled_feed_on_a_working_host_holds_up_no_other(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # One feed of the host never answers; eight others answer in 0.3 s through the
    # second slot, most of them after more than the 1 s budget in the queue.
    fetcher = _stalled_and_answering_feeds(server, fetchers)
    results: dict[str, list[str]] = {"/stalled": [], "/feed": []}

    def work(path: str) -> None:
        result = fetcher.fetch(server.url(path))
        results[path].append(result.error.code if result.error else result.status)

    first = threading.Thread(target=work, args=("/stalled",))
    first.start()
    time.sleep(0.1)
    others = [threading.Thread(target=work, args=("/feed",)) for _ in range(8)]
    for thread in others:
        thread.start()
    for thread in [first, *others]:
        thread.join(15)
    assert results == {"/stalled": ["timeout"], "/feed": ["ok"] * 8}


def test_a_feed_queued_behind_stalled_feeds_of_a_working_host_is_fetched(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # Two feeds of the host never answer and hold both slots until their budgets run
    # out, so the host counts as stalled; the feed queued behind them answers in 0.3 s.
    fetcher = _stalled_and_answering_feeds(server, fetchers)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        stalls = [pool.submit(fetcher.fetch, server.url("/stalled")) for _ in range(2)]
        _wait_until(lambda: server.paths.count("/stalled") == 2)
        result = fetcher.fetch(server.url("/feed"))
        assert [stall.result(10).error for stall in stalls] == [
            timed_out("waiting for the response").as_issue()
        ] * 2
    assert result.status == "ok", result.error
    assert server.paths.count("/feed") == 1
    assert result.fetch_ms < DEADLINE * 1000  # the wait behind the stalled feeds is left out


def test_fetches_given_up_behind_a_host_that_does_not_answer_say_so(
    silent_port: int, fetchers: Callable[..., Fetcher]
) -> None:
    # Two slots: three rounds of two fetches run out of time with nothing back; the two
    # still queued are given up without being sent, and their rows say that, not
    # "while connecting".
    fetcher = fetchers(
        allow_private_networks=True, max_per_host=2, request_timeout_seconds=DEADLINE
    )
    results = _concurrent_results(fetcher, f"http://127.0.0.1:{silent_port}/feed", 8)
    assert [r.error.code if r.error else None for r in results] == ["timeout"] * 8
    given_up = (
        "Not tried: 127.0.0.1 sent nothing back to its last 6 fetches before their time "
        "ran out, so its other fetches in this run were given up."
    )
    by_message: dict[str, list[FetchResult]] = {}
    for result in results:
        assert result.error is not None
        by_message.setdefault(result.error.message, []).append(result)
    assert {message: len(tried) for message, tried in by_message.items()} == {
        timed_out("waiting for the response").message: 6,
        given_up: 2,
    }
    assert all(r.fetch_ms < DEADLINE * 1000 for r in by_message[given_up])  # no wait in it


@pytest.mark.parametrize(("max_per_host", "slow"), [(1, 2), (2, 5)], ids=["one-slot", "two-slots"])
def test_feeds_a_working_host_answers_are_read_after_its_slow_feeds(
    max_per_host: int, slow: int, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # The host's first feeds send nothing back within their budgets, one slot-full after
    # another; the four queued behind them are answered at once and must all be read.
    server.routes["/slow"] = _stalled
    server.routes["/feed"] = ok_handler()
    fetcher = fetchers(
        allow_private_networks=True, max_per_host=max_per_host, request_timeout_seconds=DEADLINE
    )
    results = _queued_in_order(fetcher, [server.url("/slow")] * slow + [server.url("/feed")] * 4)
    assert [r.error.code if r.error else r.status for r in results] == ["timeout"] * slow + [
        "ok"
    ] * 4
    assert server.paths.count("/feed") == 4


def test_a_host_that_answers_but_sends_its_bodies_slowly_is_not_given_up(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # Each slow feed gets its status line and headers back, then its body stalls: the
    # host answers, so however many of them run out of time, the feeds after are read.
    def slow_body(request: Request, wire: Wire) -> bool:
        wire.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n<rss>")
        wire.sleep(5)
        return False

    server.routes["/slow"] = slow_body
    server.routes["/feed"] = ok_handler()
    fetcher = fetchers(
        allow_private_networks=True, max_per_host=1, request_timeout_seconds=DEADLINE
    )
    results = _queued_in_order(fetcher, [server.url("/slow")] * 4 + [server.url("/feed")] * 2)
    assert [r.error.code if r.error else r.status for r in results] == ["timeout"] * 4 + ["ok"] * 2


def test_a_host_given_up_is_not_tried_again_later_in_the_run(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # A feed of the host that comes after its queue was given up (a run starts its feeds
    # a few at a time) is not sent either: a host with many feeds costs a few budgets,
    # not a few per batch of them.
    server.routes["/feed"] = _stalled
    fetcher = fetchers(
        allow_private_networks=True, max_per_host=1, request_timeout_seconds=DEADLINE
    )
    first = _queued_in_order(fetcher, [server.url("/feed")] * 4)
    assert [r.error.code if r.error else r.status for r in first] == ["timeout"] * 4
    sent = len(server.paths)
    later = fetcher.fetch(server.url("/feed"))
    assert later.error is not None
    assert later.error.message.startswith("Not tried: "), later.error
    assert len(server.paths) == sent


@pytest.mark.parametrize(
    ("redirect_after", "target", "expected"),
    [(0.3, "/feed", "ok"), (0.0, "/stalled", "not tried")],
    ids=["reached-late-not-counted", "reached-in-time-counted"],
)
def test_a_host_reached_by_redirects_counts_as_silent_only_with_time_to_answer(
    redirect_after: float,
    target: str,
    expected: str,
    server: Server,
    fetchers: Callable[..., Fetcher],
) -> None:
    # Three feeds (3 x max_per_host) on other hosts redirect to a working host: late in
    # their 0.4 s budget (0.1 s left, it answers in 0.15 s), their time ran out on other
    # servers, and the host's own feed after them is read; at once, to a feed that sends
    # nothing back, the host had its chance three times and is given up.
    def redirect(request: Request, wire: Wire) -> bool:
        wire.sleep(redirect_after)
        wire.respond(302, b"", [("Location", f"http://victim.example:{server.port}{target}")])
        return True

    server.routes["/moved"] = redirect
    server.routes["/feed"] = _answers_after(0.15)
    server.routes["/stalled"] = _stalled
    names = ("one.example", "two.example", "three.example", "victim.example")
    resolver = StubResolver({name: ["127.0.0.1"] for name in names})
    fetcher = fetchers(
        resolver=resolver,
        allow_private_networks=True,
        max_per_host=1,
        request_timeout_seconds=0.4,
    )
    redirected = [
        fetcher.submit(fetcher.fetch_async(server.url("/moved", host=name))) for name in names[:3]
    ]
    assert [future.result(10).error for future in redirected] == [
        timed_out("waiting for the response").as_issue()
    ] * 3
    result = fetcher.fetch(server.url("/feed", host="victim.example"))
    if expected == "ok":
        assert result.status == "ok", result.error
    else:
        assert result.error is not None
        assert result.error.message.startswith("Not tried: victim.example sent nothing back")


def _queued_in_order(fetcher: Fetcher, urls: list[str]) -> list[FetchResult]:
    """The results of fetching ``urls`` at once, queued for their host in that order."""
    futures = [fetcher.submit(fetcher.fetch_async(url)) for url in urls]
    return [future.result(30) for future in futures]


def _stalled_and_answering_feeds(server: Server, fetchers: Callable[..., Fetcher]) -> Fetcher:
    """A host with a feed that never answers (/stalled) and feeds answered in 0.3 s
    (/feed), and a fetcher with two slots for it."""
    server.routes["/stalled"] = _stalled
    server.routes["/feed"] = _answers_after(0.3)
    return fetchers(allow_private_networks=True, max_per_host=2, request_timeout_seconds=DEADLINE)


def _stalled(request: Request, wire: Wire) -> bool:
    """A feed that sends nothing back for longer than any budget of these tests."""
    wire.sleep(5)
    return False


def _answers_after(seconds: float) -> Callable[[Request, Wire], bool]:
    """A handler that answers a small feed after ``seconds``."""

    def slow(request: Request, wire: Wire) -> bool:
        wire.sleep(seconds)
        wire.respond(200, b"<rss/>")
        return True

    return slow


def _concurrent_results(
    fetcher: Fetcher,
    url: str,
    count: int,
    meanwhile: Callable[[], None] = lambda: None,
    budget_seconds: float | None = None,
) -> list[FetchResult]:
    """The results of ``count`` fetches of ``url`` at once, in the order they ended;
    ``meanwhile`` runs while they are in flight."""
    results: list[FetchResult] = []

    def work() -> None:
        results.append(fetcher.fetch(url, budget_seconds=budget_seconds))

    threads = [threading.Thread(target=work) for _ in range(count)]
    for thread in threads:
        thread.start()
    meanwhile()
    for thread in threads:
        thread.join(10)
    return results


def _concurrent_codes(
    fetcher: Fetcher, url: str, count: int, meanwhile: Callable[[], None] = lambda: None
) -> list[str | None]:
    """The error codes of ``count`` fetches of ``url`` at once."""
    results = _concurrent_results(fetcher, url, count, meanwhile)
    return [result.error.code if result.error else None for result in results]


@pytest.mark.parametrize("kind", ["gzip", "deflate", "gzip-members"])
def test_compression_bomb_stops_at_the_cap_with_flat_memory(
    kind: str,
    server: Server,
    fetchers: Callable[..., Fetcher],
    gzip_bomb: bytes,
    deflate_bomb: bytes,
    clock: Clock,
) -> None:
    bombs = {
        "gzip": gzip_bomb,
        "deflate": deflate_bomb,
        "gzip-members": gzip.compress(bytes(1 << 20), 9, mtime=0) * 256,  # 256 × 1 MiB
    }
    encoding = "deflate" if kind == "deflate" else "gzip"
    server.routes["/feed"] = ok_handler(bombs[kind], Content_Encoding=encoding)
    cap = 1 << 20
    fetcher = fetchers(allow_private_networks=True, max_feed_bytes=cap)
    result, peak = fetch_with_peak(fetcher, server.url("/feed"))
    assert_error(result, "response_too_large", clock, 5.0)
    assert peak < 4 * cap, f"peak {peak} bytes"
    assert server.paths == ["/feed"]


@pytest.mark.parametrize("wbits", [16 + zlib.MAX_WBITS, zlib.MAX_WBITS, -zlib.MAX_WBITS])
def test_compressed_bodies_are_decoded(
    wbits: int, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    text = b"<rss>" + b"item " * 20_000 + b"</rss>"
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    body = compressor.compress(text) + compressor.flush()
    encoding = "gzip" if wbits > zlib.MAX_WBITS else "deflate"
    server.routes["/feed"] = ok_handler(body, Content_Encoding=encoding)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert result.status == "ok", result.error
    assert result.body == text
    assert result.bytes_received == len(text)


def test_gzip_members_sent_in_one_write_are_all_decoded(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    first, second = b"<rss><channel>" + b"<item/>" * 50, b"<item/>" * 50 + b"</channel></rss>"
    body = gzip.compress(first, mtime=0) + gzip.compress(second, mtime=0)
    server.routes["/feed"] = ok_handler(body, Content_Encoding="gzip")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert result.status == "ok", result.error
    assert result.body == first + second


def test_decoded_size_exactly_at_the_cap_is_accepted(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    text = b"a" * 5000
    server.routes["/gz"] = ok_handler(zlib.compress(text), Content_Encoding="deflate")
    server.routes["/plain"] = ok_handler(text)
    fetcher = fetchers(allow_private_networks=True, max_feed_bytes=5000)
    assert fetcher.fetch(server.url("/gz")).body == text
    assert fetcher.fetch(server.url("/plain")).body == text
    small = fetchers(allow_private_networks=True, max_feed_bytes=4999)
    assert_error(small.fetch(server.url("/gz")), "response_too_large")
    assert_error(small.fetch(server.url("/plain")), "response_too_large")


def test_content_length_over_the_cap_is_refused_before_reading(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def huge(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n")
        wire.sleep(10)

    server.routes["/feed"] = huge
    result = _fetch(fetchers, server.url("/feed"), request_timeout_seconds=5)
    assert_error(result, "response_too_large", clock, 1.0)
    assert result.error is not None  # the size announced: how far to raise the cap
    assert "announced a body of 1,000,000,000 bytes" in result.error.message


def test_corrupt_compressed_body_is_bad_response(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = ok_handler(b"\x1f\x8bnot really gzip", Content_Encoding="gzip")
    assert_error(fetchers(allow_private_networks=True).fetch(server.url("/feed")), "bad_response")


def test_truncated_compressed_body_is_bad_response(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    whole = zlib.compress(b"x" * 100_000)
    server.routes["/feed"] = ok_handler(whole[: len(whole) // 2], Content_Encoding="deflate")
    assert_error(fetchers(allow_private_networks=True).fetch(server.url("/feed")), "bad_response")


def test_unoffered_encoding_is_bad_response(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = ok_handler(b"???", Content_Encoding="compress")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response")
    assert result.error is not None
    assert result.error.message == "The body uses a Content-Encoding not offered (compress)."


@pytest.mark.parametrize(
    ("header", "layers"),
    [
        ("UTF-8", []),
        ("none", []),
        ("binary", []),
        ("text/xml", []),
        ("aws-chunked", []),
        ("gzip, UTF-8", ["gzip"]),
        ("UTF-8, gzip", ["gzip"]),
    ],
)
def test_a_content_encoding_that_names_no_coding_is_read_as_sent_under_the_cap(
    header: str, layers: list[str], server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """S3 objects stored with ContentEncoding='UTF-8', Ceph's aws-chunked, PHP's
    header('Content-Encoding: none'): browsers and urllib3 read the body as it came."""
    text = b"<rss>" + b"<item>labelled</item>" * 100 + b"</rss>"
    body = gzip.compress(text, mtime=0) if layers else text
    server.routes["/feed"] = ok_handler(body, Content_Encoding=header)
    result = fetchers(allow_private_networks=True, max_feed_bytes=len(text)).fetch(
        server.url("/feed")
    )
    assert (result.status, result.body) == ("ok", text), result.error
    [note] = result.notes
    label = next(name for name in header.split(", ") if name != "gzip").lower()
    assert note.code == "encoding_mismatch" and f'"{label}"' in note.message
    small = fetchers(allow_private_networks=True, max_feed_bytes=len(text) - 1)
    assert_error(small.fetch(server.url("/feed")), "response_too_large")


def test_a_label_shown_in_a_message_is_short_printable_ascii(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = ok_handler(b"<rss/>", Content_Encoding="caf\xe9" + "x" * 300)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    [note] = result.notes
    assert note.message.isascii() and note.message.isprintable()
    assert '"caf?xxx' in note.message and len(note.message) < 200


def test_a_known_coding_that_does_not_decode_is_named(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = ok_handler(b"<rss>plain</rss>", Content_Encoding="gzip")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response")
    assert result.error is not None and "gzip" in result.error.message


def test_a_gzip_body_served_without_content_encoding_is_decoded(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """A .xml.gz uploaded to a bucket without its Content-Encoding metadata."""
    text = b"<rss>" + b"<item>stored compressed</item>" * 100 + b"</rss>"
    server.routes["/feed.xml"] = ok_handler(gzip.compress(text, mtime=0))
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed.xml"))
    assert (result.status, result.body) == ("ok", text), result.error
    assert result.bytes_received == len(text)


def _gzipped(text: bytes, times: int) -> bytes:
    for _ in range(times):
        text = gzip.compress(text, compresslevel=0, mtime=0)  # stored: cheap to build
    return text


@pytest.mark.parametrize("times", [2, 1000], ids=["twice", "a-thousand-times"])
def test_gzip_without_content_encoding_is_undone_once_only(
    times: int, server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    """One undeclared gunzip, not one per layer: a thousand layers took a RecursionError
    (reported as a failure while waiting for the response), hundreds of large ones
    seconds of the loop every fetch shares."""
    server.routes["/feed"] = ok_handler(_gzipped(b"<rss>nested</rss>", times))
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response", clock, 2.0)
    assert result.error is not None
    assert result.error.message == (
        "The body is still gzip data after 1 layer of compression was undone: at most 3"
        " are, and only one that the Content-Encoding does not declare."
    )


@pytest.mark.parametrize(
    ("header", "times", "status"),
    [("gzip, gzip", 3, "ok"), ("gzip, gzip, gzip", 4, "error")],
    ids=["two-declared-one-not", "three-declared-one-not"],
)
def test_an_undeclared_gzip_counts_with_the_declared_layers(
    header: str, times: int, status: str, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    text = b"<rss>layers</rss>"
    server.routes["/feed"] = ok_handler(_gzipped(text, times), Content_Encoding=header)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert result.status == status, result.error
    if status == "ok":
        assert result.body == text
    else:
        assert result.error is not None
        assert result.error.message.startswith("The body is still gzip data after 3 layers")


@pytest.mark.parametrize(
    ("header", "layers"),
    [("gzip, gzip", ["gzip", "gzip"]), ("deflate, gzip", ["deflate", "gzip"])],
    ids=["gzip-gzip", "deflate-gzip"],
)
def test_a_body_compressed_twice_over_is_decoded_within_the_cap(
    header: str, layers: list[str], server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """An app compresses, then its web server compresses again: both layers are undone."""
    text = b"<rss>" + b"<item>twice</item>" * 200 + b"</rss>"
    body = text
    for layer in layers:
        body = gzip.compress(body, mtime=0) if layer == "gzip" else zlib.compress(body)
    server.routes["/feed"] = ok_handler(body, Content_Encoding=header)
    fetcher = fetchers(allow_private_networks=True, max_feed_bytes=len(text))
    result = fetcher.fetch(server.url("/feed"))
    assert (result.status, result.body) == ("ok", text), result.error
    assert result.bytes_received == len(text)
    small = fetchers(allow_private_networks=True, max_feed_bytes=len(text) - 1)
    assert_error(small.fetch(server.url("/feed")), "response_too_large")


def test_body_cut_short_is_connection_failed(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    def short(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 50)

    server.routes["/feed"] = short
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "connection_failed")
    assert server.paths == ["/feed"]


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(150)) + b"\r\n",
        b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n",
        b"SPDY/9 what\r\n\r\n",
    ],
    ids=["too-many-headers", "header-line-too-long", "garbage-status"],
)
def test_malformed_heads_fail_fast(
    head: bytes, server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def send(request: Request, wire: Wire) -> None:
        wire.send(head)
        wire.sleep(10)

    server.routes["/feed"] = send
    result = _fetch(fetchers, server.url("/feed"), request_timeout_seconds=5)
    assert_error(result, "bad_response", clock, 1.0)
    assert server.paths == ["/feed"]


def test_closed_without_response_is_retried_once(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server.routes["/feed"] = lambda request, wire: False  # close without a word
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "connection_failed", clock, 2.0)
    assert server.paths == ["/feed", "/feed"]


@pytest.mark.parametrize(
    "cut",
    [
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Ty",
        b"HTTP/1.1 100 Continue\r\n",
    ],
    ids=["after-the-status-line", "after-a-field", "mid-field", "in-an-interim-head"],
)
def test_a_head_cut_off_by_the_close_is_no_answer(
    cut: bytes, server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    """No blank line ended the head: nothing was answered (RFC 9112 8), not a 200 whose
    body, read to the close, is an empty document (invalid_feed). Tried once more, as a
    close before any answer is."""
    server.routes["/feed"] = lambda request, wire: wire.send(cut)  # then the close
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "connection_failed", clock, 2.0)
    assert result.error is not None
    assert result.error.message == (
        "127.0.0.1 closed the connection in the middle of the response's head."
    )
    assert server.paths == ["/feed", "/feed"]


def test_stale_keepalive_connection_is_replaced(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    calls: list[int] = []

    def once_then_close(request: Request, wire: Wire) -> bool:
        calls.append(request.connection)
        wire.respond(200, b"<rss/>")
        return False  # server drops the kept-alive connection afterwards

    server.routes["/feed"] = once_then_close
    fetcher = fetchers(allow_private_networks=True)
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    assert server.paths == ["/feed", "/feed"]
    assert calls == [1, 2]


def test_stub_resolver_timeout_error_is_timeout(fetchers: Callable[..., Fetcher]) -> None:
    def slow(host: str, port: int, timeout_seconds: float) -> list[str]:
        raise TimeoutError

    assert_error(fetchers(resolver=slow).fetch("http://feed.example/"), "timeout")
    assert_error(fetchers(resolver=StubResolver()).fetch("http://feed.example/"), "dns_failed")


def test_keepalive_connection_dropped_mid_request_is_retried_once(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """The server drops a kept-alive connection on its second request without answering."""
    seen: list[int] = []

    def flaky(request: Request, wire: Wire) -> bool:
        seen.append(request.connection)
        if seen.count(request.connection) == 2:
            return False  # close without a response
        wire.respond(200, b"<rss/>")
        return True

    server.routes["/feed"] = flaky
    fetcher = fetchers(allow_private_networks=True)
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    second = fetcher.fetch(server.url("/feed"))
    assert second.status == "ok", second.error
    assert seen == [1, 1, 2]


def _once_the_next_request_is_in(wire: Wire) -> None:
    """Wait until the client's next request is on the connection (left unread)."""
    wire.sock.recv(1, socket.MSG_PEEK)


def test_stray_bytes_on_a_reused_connection_send_the_request_again_on_a_new_one(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """A 200 shorter than what the server writes (a cache plugin's trailing comment): the
    rest comes after the framed end, late, and is read as the next answer's status line."""
    served: list[int] = []

    def short(request: Request, wire: Wire) -> bool:
        served.append(request.connection)
        wire.respond(200, b"<rss/>")
        if len(served) == 1:
            _once_the_next_request_is_in(wire)
            wire.send(b"\n<!-- Page cached by SuperCache -->\n")
        return True

    server.routes["/feed"] = short
    fetcher = fetchers(allow_private_networks=True)
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    second = fetcher.fetch(server.url("/feed"))
    assert second.status == "ok", second.error
    assert second.body == b"<rss/>"
    # Connection 1 answered the second request too, after the stray bytes; the tap had
    # stopped reading there and asked again on connection 2. The server's thread may
    # take that second request after the answer on connection 2 reached the client.
    deadline = time.monotonic() + 5
    while len(served) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(served) == [1, 1, 2]


def test_a_bad_status_line_on_a_new_connection_is_not_asked_again(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    def garbage(request: Request, wire: Wire) -> bool:
        wire.send(b"<!-- cached -->\nHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n<rss/>")
        return True

    server.routes["/feed"] = garbage
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response")
    assert server.paths == ["/feed"]


def test_a_408_on_a_reused_connection_sends_the_request_again_on_a_new_one(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """A server that closes an idle connection with 408 (Node, HAProxy) as the next
    request comes in on it: that request was never looked at."""
    served: list[int] = []

    def idle_timeout(request: Request, wire: Wire) -> bool:
        served.append(request.connection)
        if served.count(request.connection) == 2:
            wire.respond(408, headers=[("Connection", "close")])
            return False
        wire.respond(200, b"<rss/>")
        return True

    server.routes["/feed"] = idle_timeout
    fetcher = fetchers(allow_private_networks=True)
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    second = fetcher.fetch(server.url("/feed"))
    assert second.status == "ok", second.error
    assert second.http_status == 200
    assert served == [1, 1, 2]


def test_a_408_on_a_new_connection_is_the_feeds_http_error(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = lambda request, wire: wire.respond(408, b"timeout")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "http_error")
    assert result.http_status == 408
    assert server.paths == ["/feed"]


@pytest.mark.parametrize(
    ("fields", "reused"),
    [
        ([], True),
        ([("Content-Length", "0")], True),
        ([("Content-Length", "23")], False),
        ([("Transfer-Encoding", "chunked")], False),
    ],
    ids=["no-length", "length-0", "length-23", "chunked"],
)
def test_a_304_that_declares_a_body_does_not_leave_its_connection_for_reuse(
    fields: list[tuple[str, str]],
    reused: bool,
    server: Server,
    fetchers: Callable[..., Fetcher],
) -> None:
    """A 304 has no body, but a server that declares one may well send it afterwards."""

    def handle(request: Request, wire: Wire) -> bool:
        if request.headers.get("if-none-match"):
            wire.respond(304, headers=[("ETag", '"v1"'), *fields], length=False)
        else:
            wire.respond(200, b"<rss/>")
        return True

    server.routes["/feed"] = handle
    fetcher = fetchers(allow_private_networks=True)
    assert fetcher.fetch(server.url("/feed"), etag='"v1"').status == "not_modified"
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    assert server.connections == (1 if reused else 2)


def test_too_many_headers_fail_fast(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def many(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\n" + b"X-Filler: a\r\n" * 500 + b"\r\n<rss/>")
        wire.sleep(5)

    server.routes["/feed"] = many
    result = _fetch(fetchers, server.url("/feed"), request_timeout_seconds=10)
    assert_error(result, "bad_response", clock, 2.0)
    assert server.paths == ["/feed"]


@pytest.mark.parametrize("status", [200, 404])
def test_too_many_header_fields_are_named_and_the_status_kept(
    status: int, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """CDN debug headers, many Set-Cookie: past http.client's 100 fields the row says
    so, with the status the server gave."""
    fields = [(f"X-Debug-{n}", "v") for n in range(120)]
    server.routes["/feed"] = lambda request, wire: wire.respond(status, b"<rss/>", fields)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response")
    assert result.error is not None
    assert result.error.message == "127.0.0.1 sent more than 100 header fields."
    assert result.http_status == status
    assert result.final_url == server.url("/feed")


def test_too_many_trailer_fields_are_named(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    trailer = b"".join(b"X-T%d: v\r\n" % n for n in range(120))
    body = b"6\r\n<rss/>\r\n0\r\n" + trailer + b"\r\n"
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    server.routes["/feed"] = lambda request, wire: wire.send(head + body)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response")
    assert result.error is not None
    assert result.error.message == "127.0.0.1 sent more than 100 trailer fields."
    assert result.http_status == 200


def test_oversized_header_fails_fast(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    def huge(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nX-Huge: " + b"a" * 200_000 + b"\r\n\r\n<rss/>")
        wire.sleep(5)

    server.routes["/feed"] = huge
    result = _fetch(fetchers, server.url("/feed"), request_timeout_seconds=10)
    assert_error(result, "bad_response", clock, 2.0)
    assert server.paths == ["/feed"]


def test_an_over_long_header_line_keeps_the_status_and_url_of_its_answer(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    def huge(request: Request, wire: Wire) -> None:
        wire.send(b"HTTP/1.1 200 OK\r\nX-Huge: " + b"a" * 70_000 + b"\r\n\r\n<rss/>")

    server.routes["/feed"] = huge
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "bad_response")
    assert result.error is not None
    assert result.error.message == "127.0.0.1 sent a header line that is too long."
    assert (result.http_status, result.final_url) == (200, server.url("/feed"))


def test_heads_past_the_head_bound_are_refused(
    server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    """Sixteen interim answers of 99 fields of 64 KiB each are within every per-line and
    per-head bound, and were ~110 MB read on each fetch: all the heads of an answer take
    at most 256 KiB."""
    field = b"X-Pad: " + b"a" * 60_000 + b"\r\n"

    def bloated(request: Request, wire: Wire) -> None:
        for _ in range(16):
            wire.send(b"HTTP/1.1 103 Early Hints\r\n" + field * 99 + b"\r\n")
        wire.send(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n<rss/>")

    server.routes["/feed"] = bloated
    result = _fetch(fetchers, server.url("/feed"), request_timeout_seconds=10)
    assert_error(result, "bad_response", clock, 2.0)
    assert result.error is not None
    assert result.error.message == "127.0.0.1 sent a response head over 256 KiB."


def test_abort_ends_stalled_fetches_at_once_and_refuses_new_ones(
    silent_port: int, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    fetcher = fetchers(allow_private_networks=True, request_timeout_seconds=30.0)
    url = f"http://127.0.0.1:{silent_port}/feed"

    def abort_once_waiting() -> None:
        time.sleep(0.5)  # all three connected and waiting for an answer that never comes
        fetcher.abort()

    assert _concurrent_codes(fetcher, url, 3, abort_once_waiting) == ["timeout"] * 3
    assert clock.elapsed < 0.5 + SLACK  # not the 30 s budget
    assert_error(fetcher.fetch(url), "timeout")


def test_a_body_of_tiny_chunks_takes_memory_by_its_size(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    size = 256 << 10
    body = bytes(range(256)) * (size // 256)
    chunks = b"".join(b"2\r\n%s\r\n" % body[n : n + 2] for n in range(0, size, 2))
    # Built before tracing starts: the server thread's memory is traced too.
    response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"

    def tiny(request: Request, wire: Wire) -> bool:
        wire.send(response)
        return True

    server.routes["/feed"] = tiny
    fetcher = fetchers(
        allow_private_networks=True, max_feed_bytes=4 << 20, request_timeout_seconds=60
    )
    result, peak = fetch_with_peak(fetcher, server.url("/feed"))
    assert isinstance(result, FetchResult) and result.status == "ok", result.error
    assert result.body == body
    assert peak < 4 * size, f"peak {peak} bytes"


def test_a_body_in_more_chunks_than_an_eighth_of_the_cap_is_bad_response(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    cap = 64 << 10
    ones = b"1\r\nx\r\n" * (cap // 8)

    def chunks(extra: int) -> Callable[[Request, Wire], bool]:
        def send(request: Request, wire: Wire) -> bool:
            head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            wire.send(head + ones + b"1\r\nx\r\n" * extra + b"0\r\n\r\n")
            return True

        return send

    server.routes["/bound"], server.routes["/over"] = chunks(0), chunks(1)
    fetcher = fetchers(allow_private_networks=True, max_feed_bytes=cap)
    assert fetcher.fetch(server.url("/bound")).body == b"x" * (cap // 8)
    assert_error(fetcher.fetch(server.url("/over")), "bad_response")


def test_chunk_extensions_count_against_the_cap_with_the_rest_of_the_framing(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """1-byte chunks with a 60 KB extension each: before, 200 of them (12 MB on the wire,
    200 chunks, well under the chunk bound) were read for a 200-byte body under a
    64 KiB cap, and the bound on chunks let 480 MB through."""
    cap = 64 << 10
    chunk = b"1;" + b"e" * 60_000 + b"\r\nx\r\n"

    def extended(request: Request, wire: Wire) -> bool:
        wire.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(200):
            wire.send(chunk)
        wire.send(b"0\r\n\r\n")
        return True

    def framed(request: Request, wire: Wire) -> bool:  # exactly twice the cap on the wire
        wire.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        wire.send(b"1;" + b"e" * (cap - 19) + b"\r\nx\r\n" + b"%x\r\n" % (cap - 1))
        wire.send(b"y" * (cap - 1) + b"\r\n0\r\n\r\n")
        return True

    server.routes["/feed"], server.routes["/framed"] = extended, framed
    fetcher = fetchers(allow_private_networks=True, max_feed_bytes=cap)
    result = fetcher.fetch(server.url("/feed"))
    assert_error(result, "bad_response")
    assert result.error is not None
    assert "framing" in result.error.message
    assert fetcher.fetch(server.url("/framed")).body == b"x" + b"y" * (cap - 1)


def test_a_connection_with_bytes_after_its_chunked_body_is_not_kept(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    def stray(request: Request, wire: Wire) -> bool:
        wire.send(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"6\r\n<rss/>\r\n0\r\n\r\nstray bytes"
        )
        return True

    server.routes["/feed"] = stray
    fetcher = fetchers(allow_private_networks=True)
    for _ in range(2):
        assert fetcher.fetch(server.url("/feed")).body == b"<rss/>"
    assert server.connections == 2


def _wait_until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("the condition never came true")
