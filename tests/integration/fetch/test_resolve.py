"""The system resolver: real lookups on a reused helper thread, a short memory of
answers, and a budget that a hung lookup cannot stretch for anyone else."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.resolve import SystemResolver, Verdicts, checked_answers


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
