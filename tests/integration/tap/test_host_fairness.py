"""Feeds waiting for a slot of their host (max_per_host) leave the run's max_concurrency
slots to feeds of other hosts: a host with many slow feeds holds up no other host."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from tap_feeddelta.config import settings_from_config
from tap_feeddelta.fetch import Fetcher, FetchPolicy
from tap_feeddelta.run import FeedRun
from tests.feedserver import FeedServer, rss

SLOW_FEEDS = 6
FAST_FEEDS = 2


@pytest.fixture
def two_hosts() -> Iterator[tuple[FeedServer, FeedServer]]:
    slow = FeedServer(host="127.0.0.1").start()
    fast = FeedServer(host="127.0.0.2").start()
    yield slow, fast
    slow.stop()
    fast.stop()


def test_feeds_waiting_for_their_host_leave_the_run_to_other_hosts(
    two_hosts: tuple[FeedServer, FeedServer],
) -> None:
    slow, fast = two_hosts
    for n in range(SLOW_FEEDS):
        slow.put(f"/s{n}.xml", rss([(f"s-{n}", "Slow", "slow")]))
    for n in range(FAST_FEEDS):
        fast.put(f"/f{n}.xml", rss([(f"f-{n}", "Fast", "fast")]))
    # The slow host's first answer waits until the other host has been asked for all its
    # feeds (or 5 s pass: the run must end either way; no time is asserted on).
    arrivals: list[str] = []
    lock = threading.Lock()
    fast_all_asked = threading.Event()

    def slow_request(path: str) -> None:
        with lock:
            arrivals.append(path)
        if path == "/s0.xml":
            fast_all_asked.wait(5)

    def fast_request(path: str) -> None:
        with lock:
            arrivals.append(path)
            if sum(p.startswith("/f") for p in arrivals) == FAST_FEEDS:
                fast_all_asked.set()

    slow.on_request, fast.on_request = slow_request, fast_request
    urls = [slow.url(f"/s{n}.xml") for n in range(SLOW_FEEDS)]
    urls += [fast.url(f"/f{n}.xml") for n in range(FAST_FEEDS)]
    settings = settings_from_config(
        {
            "feed_urls": urls,
            "allow_private_networks": True,
            "first_run_mode": "emit_all",
            "max_concurrency": 2,
            "max_per_host": 1,
        }
    )
    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True, max_per_host=1))
    run = FeedRun(settings, fetcher, logging.getLogger("test"))
    outcomes = list(run.outcomes({}, commit=True))
    # Every feed read, and the outcomes in config order, whatever order they finished in.
    assert [o.task.feed_url for o in outcomes] == urls
    assert [o.status for o in outcomes] == ["ok"] * len(urls)
    # The other host's feeds were asked for while the slow host's first answer was held:
    # before its second feed was (max_per_host 1: that one waited for the first).
    assert arrivals.index("/s1.xml") > max(
        arrivals.index(f"/f{n}.xml") for n in range(FAST_FEEDS)
    ), arrivals
