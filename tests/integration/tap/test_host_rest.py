"""A host's 429 holds for all its feeds: the run asks it for nothing more, and the feeds
not asked for are skipped as a feed waiting out its own Retry-After is, losing nothing."""

from __future__ import annotations

from collections import Counter

from tests.feedserver import FeedServer, rss
from tests.integration.tap.configs import config
from tests.tapharness import run_tap

FEEDS = [f"/f{n}.xml" for n in range(6)]
ITEMS = [("id-1", "One", "first")]


def test_a_hosts_429_skips_its_other_feeds_for_as_long_as_it_asked(server: FeedServer) -> None:
    for path in FEEDS:
        server.put(path, rss(ITEMS))
    cfg = config(server, *FEEDS, max_per_host=1)
    read = run_tap(cfg)
    assert [row["status"] for row in read.health] == ["ok"] * len(FEEDS)

    for path in FEEDS:
        server.put(path, "slow down", status=429, headers={"Retry-After": "3600"})
    asked_before = len(server.requests)
    limited = run_tap(cfg, read.final_state)
    assert limited.returncode == 0, limited.stderr
    assert len(server.requests) - asked_before == 1  # max_per_host 1: one in flight
    rows = {row["feed_url"]: row for row in limited.health}
    assert Counter((r["status"], r["error_code"]) for r in rows.values()) == {
        ("error", "rate_limited"): 1,
        ("skipped", "retry_later"): len(FEEDS) - 1,
    }
    [told] = {row["retry_after_at"] for row in rows.values()}
    assert told is not None
    for url, row in rows.items():
        if row["status"] != "skipped":
            continue
        assert row["http_status"] is None
        assert row["consecutive_failures"] == 1
        assert row["item_counts"]["remembered"] == 1
        # The feed keeps everything (validators, items), counts the failure, and waits.
        before, after = read.partition(url), limited.partition(url)
        streak = {"failures": 1, "failed_at": row["checked_at"], "retry_after_at": told}
        assert after == {**before, **streak}

    asked_before = len(server.requests)
    waiting = run_tap(cfg, limited.final_state)
    assert len(server.requests) == asked_before
    assert {(r["status"], r["error_code"]) for r in waiting.health} == {("skipped", "retry_later")}
