"""How the URL the tap read is shown, remembered and used: after redirects, discovery and
the fetcher's own re-encoding of the URL asked for."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tests.feedserver import FeedServer, rss
from tests.tapharness import run_tap

ITEMS = [(f"id-{n}", f"Title {n}", f"<p>Summary {n}</p>") for n in range(5)]


def config(server: FeedServer, *paths: str, **extra: Any) -> dict[str, Any]:
    return {
        "feed_urls": [server.url(p) for p in paths],
        "allow_private_networks": True,
        "request_timeout_seconds": 10,
        **extra,
    }


def _page(href: str) -> str:
    return f'<html><head><link rel="alternate" type="application/rss+xml" href="{href}">'


def test_a_query_the_fetcher_re_encodes_is_kept_and_a_switch_is_another_feed(
    server: FeedServer,
) -> None:
    """The fetcher sends /rss?cat=новости as /rss?cat=%D0%BD...: the URL it read is the
    one the page advertised, in another spelling, not one a redirect chose."""
    news, sport = (f"/rss?cat={quote(word)}" for word in ("новости", "спорт"))
    server.put(news, rss(ITEMS[:2], title="News"))
    server.put(sport, rss([(f"sport-{n}", "S", "s") for n in range(3)], title="Sport"))
    server.put("/blog", _page("/rss?cat=новости"), content_type="text/html")
    cfg = config(server, "/blog", discover_from_websites=True)
    first = run_tap(cfg)
    [row] = first.health
    assert (row["status"], row["final_url"]) == ("ok", server.url(news))

    server.put("/blog", _page("/rss?cat=спорт"), content_type="text/html")
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["final_url"]) == ("ok", server.url(sport))
    assert second.items == []  # baseline_only: the other feed's backlog is not emitted
    assert [i["code"] for i in row["issues"]].count("feed_discovered") == 1

    # Without discovery or redirect: lower-case %xx, sent upper-case, is the user's query.
    lower = news.lower()
    run = run_tap(config(server, lower))
    [row] = run.health
    assert (row["status"], row["redirects"], row["final_url"]) == ("ok", 0, server.url(news))
