"""FeedRun in this process (the same code the tap runs) against a real feed server."""

from __future__ import annotations

import gc
import logging
import threading
from typing import Any

import pytest

from tap_feeddelta.config import Settings, settings_from_config
from tap_feeddelta.fetch import Fetcher, FetchPolicy
from tap_feeddelta.run import RUN_GC_THRESHOLDS, FeedRun
from tests.feedserver import FeedServer, rss


def _two_feeds(server: FeedServer) -> Settings:
    """Settings for two one-item feeds on the server, read in full on the first run."""
    server.put("/a.xml", rss([("id-1", "One", "first")]))
    server.put("/b.xml", rss([("id-2", "Two", "second")]))
    return settings_from_config(
        {
            "feed_urls": [server.url("/a.xml"), server.url("/b.xml")],
            "first_run_mode": "emit_all",
            "allow_private_networks": True,
        }
    )


def test_the_run_raises_gc_thresholds_while_it_runs_and_restores_them(
    server: FeedServer,
) -> None:
    settings = _two_feeds(server)
    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True))
    run = FeedRun(settings, fetcher, logging.getLogger("test"))
    before = gc.get_threshold()
    state: dict[str, Any] = {}
    seen = []
    try:
        for outcome in run.outcomes(state, commit=True):
            assert gc.get_threshold() == RUN_GC_THRESHOLDS
            seen.append([r["item_id"] for r in outcome.item_records])
    finally:
        fetcher.close()
    assert gc.get_threshold() == before
    assert seen == [["id-1"], ["id-2"]]
    assert len(state["partitions"]) == 2


def test_the_run_closes_its_fetcher_when_the_pass_ends(server: FeedServer) -> None:
    settings = _two_feeds(server)
    for stop_early in (False, True):
        fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True))
        run = FeedRun(settings, fetcher, logging.getLogger("test"))
        outcomes = run.outcomes({}, commit=True)
        next(outcomes)
        loop_threads = [t for t in threading.enumerate() if t.name == "feeddelta-fetch"]
        assert len(loop_threads) == 1
        if stop_early:
            outcomes.close()  # the consumer gave up (a broken pipe, an exception)
        else:
            assert len(list(outcomes)) == 1
        assert not loop_threads[0].is_alive()
        with pytest.raises(RuntimeError):
            fetcher.fetch(server.url("/a.xml"))
