"""The system resolver: real lookups on a reused helper thread, a short memory of
answers, and a budget that a hung lookup cannot stretch for anyone else."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tap_feeddelta.errors import CODES
from tap_feeddelta.fetch import Fetcher
from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.resolve import SystemResolver, Verdicts, checked_answers

from .conftest import Server, ok_handler


def _resolver_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "feeddelta-resolve")


class CountingLookup:
    """socket.getaddrinfo itself, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return socket.getaddrinfo(*args, **kwargs)


def test_localhost_resolves_to_loopback() -> None:
    answers = SystemResolver()("localhost", 80, 5.0)
    assert answers
    assert set(answers) <= {"127.0.0.1", "::1"}


def test_answers_are_kept_for_max_age_then_looked_up_again() -> None:
    now = [1000.0]
    lookup = CountingLookup()
    resolver = SystemResolver(max_age_seconds=60, lookup=lookup, clock=lambda: now[0])
    first = resolver("localhost", 80, 5.0)
    assert resolver("localhost", 80, 5.0) == first
    assert lookup.calls == 1
    now[0] += 61
    assert resolver("localhost", 80, 5.0) == first
    assert lookup.calls == 2


def test_failures_are_not_kept() -> None:
    calls: list[str] = []

    def flaky(host: str, port: int, **kwargs: Any) -> Any:
        calls.append(host)
        if len(calls) == 1:
            raise socket.gaierror("temporary failure")
        return socket.getaddrinfo(host, port, **kwargs)

    resolver = SystemResolver(lookup=flaky)
    with pytest.raises(socket.gaierror):
        resolver("localhost", 80, 5.0)
    assert resolver("localhost", 80, 5.0)
    assert len(calls) == 2


def test_one_helper_thread_serves_lookups_one_after_another() -> None:
    before = _resolver_threads()
    resolver = SystemResolver(max_age_seconds=0)  # every call looks up
    for _ in range(20):
        resolver("localhost", 80, 5.0)
    assert _resolver_threads() - before == 1


def test_a_hung_lookup_times_out_and_delays_no_other() -> None:
    release = threading.Event()

    def lookup(host: str, port: int, **kwargs: Any) -> Any:
        if host == "hung.test":
            release.wait(30)
            raise socket.gaierror("released")
        return socket.getaddrinfo("localhost", port, **kwargs)

    resolver = SystemResolver(lookup=lookup)
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            resolver("hung.test", 80, 0.3)
        assert time.monotonic() - started < 5
        started = time.monotonic()
        assert resolver("other.test", 80, 5.0)  # its own helper thread: not queued behind
        assert time.monotonic() - started < 2
    finally:
        release.set()


def test_kept_verdicts_give_the_guards_answer_every_time() -> None:
    verdicts: Verdicts = {}
    for _ in range(2):
        assert checked_answers(
            "feed.example",
            ["127.0.0.1", "::ffff:127.0.0.1", "127.0.0.1"],
            None,
            allow_private=True,
            denied_code="destination_denied",
            verdicts=verdicts,
        ) == ("127.0.0.1", "::ffff:7f00:1")
        for address in ("169.254.169.254", "10.0.0.1"):
            with pytest.raises(FetchError) as caught:
                checked_answers(
                    "feed.example",
                    ["93.184.216.34", address],
                    None,
                    allow_private=False,
                    denied_code="destination_denied",
                    verdicts=verdicts,
                )
            assert caught.value.code == "destination_denied"
    assert ("10.0.0.1", False) in verdicts and ("10.0.0.1", True) not in verdicts


def test_a_redirect_into_a_private_network_does_not_suggest_the_flag() -> None:
    # Only the configured URL's own address gets the hint: a public feed redirected to an
    # intranet address is the shape of a request forgery, not a setting left off.
    with pytest.raises(FetchError) as caught:
        checked_answers(
            "feed.example", ["10.0.0.1"], None, allow_private=False, denied_code="redirect_denied"
        )
    assert caught.value.message == "The host feed.example resolves to a refused address (private)."


class HeldLookup:
    """A getaddrinfo that answers 127.0.0.1 once released, counting lookups in flight."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()

    def __call__(self, host: str, port: int, **kwargs: Any) -> Any:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.release.wait(10)
        with self._lock:
            self.in_flight -= 1
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]


def test_the_fetch_loop_waits_for_many_lookups_at_once(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """Lookups run on the resolver's own threads, not a small executor: a run's first
    feeds on many hosts do not queue behind each other's DNS."""
    server.routes["/feed"] = ok_handler()
    lookup = HeldLookup()
    fetcher = fetchers(resolver=SystemResolver(lookup=lookup), allow_private_networks=True)
    hosts = [f"h{n}.example" for n in range(12)]
    futures = [
        fetcher.submit(fetcher.fetch_async(server.url("/feed", host=host))) for host in hosts
    ]
    deadline = time.monotonic() + 10
    while lookup.most_in_flight < len(hosts) and time.monotonic() < deadline:
        time.sleep(0.01)
    lookup.release.set()
    results = [future.result(10) for future in futures]
    assert lookup.most_in_flight == len(hosts)
    assert [r.status for r in results] == ["ok"] * len(hosts)


def test_a_lookup_nobody_waits_for_is_not_started() -> None:
    lookup = HeldLookup()
    resolver = SystemResolver(lookup=lookup)
    busy = resolver.lookup_soon("busy.example", 80)  # holds the only helper thread
    while lookup.in_flight == 0:
        time.sleep(0.01)
    # With no idle helper a new thread starts; cancel before it can run the job.
    abandoned = resolver.lookup_soon("gone.example", 80)
    cancelled = abandoned.cancel()
    lookup.release.set()
    assert busy.result(10) == ["127.0.0.1"]
    if cancelled:  # it had not started: it never asks, and never fails on its own
        time.sleep(0.1)
        assert resolver.kept("gone.example", 80) is None
    assert resolver.kept("busy.example", 80) == ["127.0.0.1"]


def _failing_lookup(number: int, text: str) -> Callable[..., Any]:
    def lookup(host: str, port: int, **kwargs: Any) -> Any:
        raise socket.gaierror(number, text)

    return lookup


NO_SUCH_NAME = (socket.EAI_NONAME, "Name or service not known")
RESOLVER_DOWN = (socket.EAI_AGAIN, "Temporary failure in name resolution")


@pytest.mark.parametrize("through", ["system resolver", "other resolver"])
def test_a_name_that_does_not_exist_and_a_resolver_that_is_down_are_told_apart(
    fetchers: Callable[..., Fetcher], through: str
) -> None:
    """NXDOMAIN is the feed's problem (dns_failed); no answer at all (EAI_AGAIN: our
    resolver, or the domain's name servers, did not answer) is dns_unavailable."""
    results = {}
    for name, (number, text) in {"gone": NO_SUCH_NAME, "down": RESOLVER_DOWN}.items():
        lookup = _failing_lookup(number, text)
        resolver: Any = (
            SystemResolver(lookup=lookup)
            if through == "system resolver"
            else lambda host, port, timeout, lookup=lookup: lookup(host, port)
        )
        results[name] = fetchers(resolver=resolver).fetch("https://feed.example/feed?k=SECRET")
    gone, down = results["gone"].error, results["down"].error
    assert gone is not None and down is not None
    assert gone.code == "dns_failed"
    assert gone.message == "The host name feed.example does not exist."
    assert down.code == "dns_unavailable"
    assert down.message == (
        "The host name feed.example could not be looked up for now: the resolver, or the "
        "domain's name servers, did not answer."
    )
    assert CODES["dns_unavailable"].is_retriable
