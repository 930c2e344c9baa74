"""The log names each feed that failed, after the run summary: where it is in feed_urls,
its URL without what can hold a secret (query, userinfo), its code and message."""

from __future__ import annotations

import re

from tap_feeddelta.run import MAX_FAILED_FEEDS_LOGGED
from tests.feedserver import FeedServer, rss
from tests.integration.tap.configs import config
from tests.tapharness import run_tap


def _warnings(stderr: str) -> list[str]:
    return [line.split("| ", 3)[-1] for line in stderr.splitlines() if "| WARNING" in line]


def test_each_failed_feed_is_one_warning_without_its_query(server: FeedServer) -> None:
    server.put("/ok.xml", rss([("id-1", "One", "first")]))
    cfg = config(server, "/ok.xml", "/missing.xml?token=SECRET-Q", "/gone.xml?k=1#SECRET-F")
    run = run_tap(cfg)
    assert run.returncode == 0, run.stderr
    port = server.port
    assert _warnings(run.stderr) == [
        f"Feed failed: feed_urls[1] http://127.0.0.1:{port}/missing.xml?…: http_error:"
        " 127.0.0.1 answered HTTP 404.",
        f"Feed failed: feed_urls[2] http://127.0.0.1:{port}/gone.xml?…: http_error:"
        " 127.0.0.1 answered HTTP 404.",
    ]
    assert "SECRET" not in run.stderr
    summary = next(i for i, line in enumerate(run.stderr.splitlines()) if "Run summary" in line)
    assert "Feed failed: feed_urls[1]" in run.stderr.splitlines()[summary + 1]


def test_the_failed_feeds_logged_are_capped(server: FeedServer) -> None:
    failing = MAX_FAILED_FEEDS_LOGGED + 3
    run = run_tap(config(server, *(f"/missing-{n}.xml" for n in range(failing))))
    assert run.returncode == 0, run.stderr
    warnings = _warnings(run.stderr)
    assert len(warnings) == MAX_FAILED_FEEDS_LOGGED + 1
    assert [int(re.findall(r"feed_urls\[(\d+)\]", w)[0]) for w in warnings[:-1]] == list(
        range(MAX_FAILED_FEEDS_LOGGED)
    )
    assert warnings[-1] == "... and 3 more failed feeds: see feed_health"
