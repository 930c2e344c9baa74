"""A host's 429 holds for all its feeds: the run asks it for nothing more, and the feeds
not asked for are skipped as a feed waiting out its own Retry-After is, losing nothing."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

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


def test_a_pause_without_a_time_and_a_gone_feed_are_not_asked_on_every_run(
    server: FeedServer,
) -> None:
    """429 or 503 without Retry-After: the feed waits by its failure streak (5 minutes
    first); 410: feed_gone, checked again after a day; a 500 is checked on every run.
    (The 429 has a host of its own: it rests its host for the run.)"""
    limiting = FeedServer(host="127.0.0.2").start()
    try:
        limiting.put("/429.xml", "slow down", status=429, content_type="text/plain")
        server.put("/503.xml", "busy", status=503, content_type="text/plain")
        server.put("/410.xml", "gone", status=410, content_type="text/plain")
        server.put("/500.xml", "oops", status=500, content_type="text/plain")
        cfg = config(server, "/503.xml", "/410.xml", "/500.xml")
        cfg["feed_urls"].insert(0, limiting.url("/429.xml"))
        first = run_tap(cfg)
        assert first.returncode == 0, first.stderr
        rows = [(r["status"], r["error_code"], r["http_status"]) for r in first.health]
        assert rows == [
            ("error", "rate_limited", 429),
            ("error", "rate_limited", 503),
            ("error", "feed_gone", 410),
            ("error", "http_error", 500),
        ]
        waits = [r["retry_after_at"] for r in first.health]
        assert all(waits[:3]) and waits[3] is None
        assert waits[2] > waits[0]  # a day for the gone feed, 5 minutes for the others
        for url, wait in zip(cfg["feed_urls"], waits, strict=True):
            assert first.partition(url).get("retry_after_at") == wait

        asked = len(server.requests)
        second = run_tap(cfg, first.final_state)
        assert [(r["status"], r["error_code"]) for r in second.health] == [
            ("skipped", "retry_later"),
            ("skipped", "retry_later"),
            ("skipped", "retry_later"),
            ("error", "http_error"),
        ]
        assert [r.path for r in server.requests[asked:]] == ["/500.xml"]
        assert len(limiting.requests) == 1
    finally:
        limiting.stop()


def test_a_feed_not_asked_waits_for_the_hosts_rest_not_for_its_own_streak(
    server: FeedServer,
) -> None:
    """Feed b failed for 30 hours (500s, checked on every run); its sibling a answers one
    429 without Retry-After, which rests the host for 5 minutes. b, not asked in that
    run, waited by its own streak: a day, though it answered again a minute later."""
    server.put("/a.xml", rss(ITEMS))
    server.put("/b.xml", rss(ITEMS))
    cfg = config(server, "/a.xml", "/b.xml", max_per_host=1, max_concurrency=1)
    read = run_tap(cfg)
    assert read.final_state is not None
    for partition in read.final_state["bookmarks"]["feed_items"]["partitions"]:
        if partition["context"]["feed_url"] == server.url("/b.xml"):
            partition.update(failures=11, checked_at="2020-01-01T00:00:00.000000Z")
            partition["failed_at"] = partition["success_at"]
    server.put("/a.xml", "slow down", status=429)
    limited = run_tap(cfg, read.final_state)
    rows = {row["feed_url"]: row for row in limited.health}
    a, b = rows[server.url("/a.xml")], rows[server.url("/b.xml")]
    assert (a["error_code"], b["status"], b["error_code"]) == (
        "rate_limited",
        "skipped",
        "retry_later",
    )
    rest = datetime.fromisoformat(b["retry_after_at"]) - datetime.fromisoformat(b["checked_at"])
    assert rest <= timedelta(minutes=5)
