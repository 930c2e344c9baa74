"""1,000 feeds in one run, 10% of them hostile in different ways: the healthy ones give
exactly what they give alone, the run keeps its deadlines, every hostile feed gets a
feed_health row with its code, and no hostile feed's state moves."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.feedserver import rss
from tests.hostile import BEHAVIOURS, HostileServer
from tests.tapharness import run_tap

FEEDS = 1_000
HOSTILE_EVERY = 10  # every 10th feed misbehaves
TIMEOUT_SECONDS = 2

EXPECTED_CODE = {
    "drip": {"timeout"},
    "stall": {"timeout"},
    "endless": {"timeout", "response_too_large"},
    "gzip": {"response_too_large"},
    "deflate": {"response_too_large"},
    "loop": {"redirect_limit"},
    "invalid": {"invalid_feed", "not_a_feed"},
    "types": {"invalid_feed"},
    "429": {"rate_limited"},
    "500": {"http_error"},
}


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    srv = HostileServer().start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def limiting() -> Iterator[HostileServer]:
    """The rate-limited feeds' host: a host that answers 429 is asked for nothing more in
    the run (its other feeds are skipped), so they have one of their own."""
    srv = HostileServer(host="127.0.0.2").start()
    yield srv
    srv.stop()


def _set_documents(server: HostileServer, version: int) -> None:
    for n in range(FEEDS):
        path = f"/ok/{n}"
        items = [(f"{n}-{k}", f"T{k}", "<p>s</p>") for k in range(5)]
        if version and n % 7 == 0:
            items.insert(0, (f"{n}-v{version}", "Fresh", "new"))
        server.documents[path] = rss(items).encode()
        server.etags[path] = f'"{n}-{version if n % 7 == 0 else 0}"'


def _config(urls: list[str]) -> dict[str, Any]:
    return {
        "feed_urls": urls,
        "allow_private_networks": True,
        "request_timeout_seconds": TIMEOUT_SECONDS,
        "max_concurrency": 16,
        "max_per_host": 8,
    }


def test_hostile_feeds_do_not_hurt_the_others(
    server: HostileServer, limiting: HostileServer
) -> None:
    _set_documents(server, 0)
    all_ok = [server.url("ok", n) for n in range(FEEDS)]
    hostile = {
        n: BEHAVIOURS[(n // HOSTILE_EVERY) % len(BEHAVIOURS)]
        for n in range(0, FEEDS, HOSTILE_EVERY)
    }
    mixed = [
        (limiting if hostile[n] == "429" else server).url(hostile[n], n)
        if n in hostile
        else all_ok[n]
        for n in range(FEEDS)
    ]

    baseline = run_tap(_config(mixed), timeout=300)
    assert baseline.returncode == 0, baseline.stderr[-2000:]
    state0 = baseline.final_state
    assert state0 is not None

    _set_documents(server, 1)
    started = time.monotonic()
    run = run_tap(_config(mixed), state0, timeout=300)
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-2000:]
    # The slow feeds run in parallel: the whole run ends within a few feeds' deadlines.
    assert elapsed < 120

    healthy = [url for n, url in enumerate(mixed) if n not in hostile]
    alone = run_tap(_config(healthy), _only(state0, set(healthy)), timeout=300)
    assert sorted(r["delivery_id"] for r in run.items) == sorted(
        r["delivery_id"] for r in alone.items
    )
    assert len(run.items) == len([n for n in range(FEEDS) if n % 7 == 0 and n not in hostile])

    health = {h["feed_url"]: h for h in run.health}
    assert len(run.health) == FEEDS
    before = _partitions(state0)
    after = _partitions(run.final_state)
    for n, behaviour in hostile.items():
        row = health[mixed[n]]
        if behaviour == "huge":
            assert row["status"] == "ok"
            assert row["is_truncated"] is True
            assert "too_many_items" in {i["code"] for i in row["issues"]}
            continue
        if behaviour == "429":
            # the first run kept the server's Retry-After (its host's, for the feeds not
            # asked for after its first 429); this one does not ask again
            first = next(h for h in baseline.health if h["feed_url"] == mixed[n])
            assert first["error_code"] in ("rate_limited", "retry_later")
            assert first["retry_after_at"] is not None
            assert before[mixed[n]]["retry_after_at"] == first["retry_after_at"]
            assert (row["status"], row["error_code"]) == ("skipped", "retry_later")
        else:
            assert row["status"] == "error", (behaviour, row)
            assert row["error_code"] in EXPECTED_CODE[behaviour], (behaviour, row["error_code"])
        assert row["fetch_ms"] < (TIMEOUT_SECONDS + 2) * 1000, (behaviour, row["fetch_ms"])
        # A failure moves nothing but its streak and its time.
        streak = before[mixed[n]].get("failures", 0) + 1
        assert after[mixed[n]] == {
            **before[mixed[n]],
            "failures": streak,
            "failed_at": row["checked_at"],
        }, behaviour

    peak_mb = max(baseline.peak_rss_mb, run.peak_rss_mb)
    assert 0 < peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"


def _partitions(state: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    assert state is not None
    return {p["context"]["feed_url"]: p for p in state["bookmarks"]["feed_items"]["partitions"]}


def _only(state: dict[str, Any], urls: set[str]) -> dict[str, Any]:
    partitions = [
        p
        for p in state["bookmarks"]["feed_items"]["partitions"]
        if p["context"]["feed_url"] in urls
    ]
    return {"bookmarks": {"feed_items": {"partitions": partitions}}}
