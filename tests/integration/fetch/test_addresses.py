"""A host with several addresses: the connection races them (happy eyeballs, RFC 8305)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Iterator

import pytest
import trustme

from tap_feeddelta.fetch import Fetcher
from tap_feeddelta.fetch.connection import MAX_CONNECT_ATTEMPTS, interleaved

from .conftest import Server, StubResolver, assert_error, ok_handler, server_context


@pytest.fixture
def stalling_address(server: Server) -> Iterator[str]:
    """127.0.0.2 on the server's port, where a connect hangs: a listener whose accept
    queue is full drops new SYNs, as a blackholed route or a dead server would."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.2", server.port))
    listener.listen(0)
    fillers = []
    for _ in range(3):
        filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):  # connecting: it stays queued
            filler.connect(("127.0.0.2", server.port))
        fillers.append(filler)
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.settimeout(0.3)
    with pytest.raises(TimeoutError):  # the address really stalls
        probe.connect(("127.0.0.2", server.port))
    probe.close()
    yield "127.0.0.2"
    for sock in [*fillers, listener]:
        sock.close()


def _fetch_via(
    server: Server, fetchers: Callable[..., Fetcher], addresses: list[str], budget: float
) -> object:
    resolver = StubResolver({"feed.example": addresses})
    fetcher = fetchers(
        resolver=resolver, allow_private_networks=True, request_timeout_seconds=budget
    )
    return fetcher.fetch(server.url("/feed", host="feed.example"))


def test_a_stalling_first_address_does_not_use_up_the_budget(
    server: Server, fetchers: Callable[..., Fetcher], stalling_address: str
) -> None:
    """Before, the first address kept the connect until the feed's budget ran out."""
    server.routes["/feed"] = ok_handler()
    result = _fetch_via(server, fetchers, [stalling_address, "127.0.0.1"], budget=2.5)
    assert getattr(result, "status", None) == "ok", getattr(result, "error", None)
    assert server.paths == ["/feed"]
    assert server.connections == 1


def test_refusing_addresses_fall_through_to_the_one_that_answers(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """Nothing listens on 127.0.0.3 and .4 at the server's port: both refuse at once."""
    server.routes["/feed"] = ok_handler()
    result = _fetch_via(server, fetchers, ["127.0.0.3", "127.0.0.4", "127.0.0.1"], budget=5.0)
    assert getattr(result, "status", None) == "ok", getattr(result, "error", None)
    assert server.paths == ["/feed"]


def test_every_address_refusing_is_one_connection_failure(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    result = _fetch_via(server, fetchers, ["127.0.0.3", "127.0.0.4"], budget=5.0)
    assert_error(result, "connection_failed")
    assert server.paths == []


@pytest.mark.parametrize(
    "addresses",
    [["127.0.0.3", "127.0.0.1"], ["127.0.0.1", "127.0.0.3"]],
    ids=["refused-first", "refused-last"],
)
def test_a_bad_certificate_is_reported_over_a_refusal_and_not_retried(
    servers: Callable[..., Server],
    ca: trustme.CA,
    fetchers: Callable[..., Fetcher],
    addresses: list[str],
) -> None:
    """Before, the first attempt's error was the race's: with the refusing address first,
    the fetch retried the race and reported connection_failed (ECONNREFUSED), never the
    certificate the one reachable address presented."""
    server = servers(server_context(ca.issue_cert("other.example")))
    server.routes["/feed"] = ok_handler()
    result = _fetch_via(server, fetchers, addresses, budget=5.0)
    assert_error(result, "tls_failed")
    assert server.connections == 1  # a TLS failure is not worth another race
    assert server.paths == []


def test_attempts_per_connection_are_bounded(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """A name with many addresses that refuse does not get a connect attempt each."""
    server.routes["/feed"] = ok_handler()
    refusing = [f"127.0.1.{n}" for n in range(1, MAX_CONNECT_ATTEMPTS + 1)]
    result = _fetch_via(server, fetchers, [*refusing, "127.0.0.1"], budget=5.0)
    assert_error(result, "connection_failed")
    assert server.paths == []


def test_address_families_take_turns_in_the_resolvers_order() -> None:
    assert interleaved(["2001:db8::1", "2001:db8::2", "192.0.2.1", "192.0.2.2"]) == [
        "2001:db8::1",
        "192.0.2.1",
        "2001:db8::2",
        "192.0.2.2",
    ]
    assert interleaved(["192.0.2.1", "2001:db8::1", "2001:db8::2"]) == [
        "192.0.2.1",
        "2001:db8::1",
        "2001:db8::2",
    ]
    assert interleaved(["192.0.2.1"]) == ["192.0.2.1"]
