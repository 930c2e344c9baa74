"""One time budget per feed, whatever fetches the feed needs (the real command)."""

from __future__ import annotations

from tests.feedserver import FeedServer, rss
from tests.tapharness import run_tap

PAGE = """<!doctype html><html><head><title>Blog</title>
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
</head><body>hello</body></html>"""


def test_discovery_fits_in_the_feed_s_one_budget(server: FeedServer) -> None:
    # The page and its feed each answer after 0.6 s: within one 1 s budget each, but
    # not both within the feed's one budget.
    server.put("/blog", PAGE, content_type="text/html", delay_seconds=0.6)
    server.put("/feed.xml", rss([("a", "A", "a")]), delay_seconds=0.6)
    config = {
        "feed_urls": [server.url("/blog")],
        "allow_private_networks": True,
        "discover_from_websites": True,
        "request_timeout_seconds": 1,
    }
    run = run_tap(config)
    assert run.returncode == 0, run.stderr
    [row] = run.health
    assert (row["status"], row["error_code"]) == ("error", "timeout")
    assert row["discovered_from"] == server.url("/blog")
    assert row["fetch_ms"] <= 1_050
