"""Discovery end to end: which feed a web page leads to, and what the state makes of it."""

from __future__ import annotations

from tests.feedserver import FeedServer, rss
from tests.integration.tap.configs import config
from tests.tapharness import run_tap


def _page(*hrefs: str) -> str:
    links = "".join(
        f'<link rel="alternate" type="application/rss+xml" href="{href}" />\n' for href in hrefs
    )
    return f"<!DOCTYPE html><html><head><title>Blog</title>\n{links}</head><body></body></html>"


def test_a_wordpress_category_page_leads_to_its_own_feed(server: FeedServer) -> None:
    """WordPress prints the site's feed and the comments feed before a category's own:
    two category pages both read the site's feed, every post sent under both."""
    server.put("/feed/", rss([("p1", "Recipe", "r"), ("p2", "News", "n")], title="Blog"))
    server.put("/comments/feed/", rss([("c1", "Comment", "c")], title="Comments"))
    for category, post in (("news", ("p2", "News", "n")), ("recipes", ("p1", "Recipe", "r"))):
        server.put(f"/category/{category}/feed/", rss([post], title=category))
        server.put(
            f"/category/{category}/",
            _page("/feed/", "/comments/feed/", f"/category/{category}/feed/"),
            content_type="text/html; charset=utf-8",
        )
    cfg = config(
        server,
        "/category/news/",
        "/category/recipes/",
        discover_from_websites=True,
        first_run_mode="emit_all",
    )
    run = run_tap(cfg)
    assert [row["final_url"] for row in run.health] == [
        server.url("/category/news/feed/"),
        server.url("/category/recipes/feed/"),
    ]
    # advertised_feeds stays in document order.
    assert run.health[0]["advertised_feeds"] == [
        server.url("/feed/"),
        server.url("/comments/feed/"),
        server.url("/category/news/feed/"),
    ]
    assert [(item["feed_url"], item["item_id"]) for item in run.items] == [
        (server.url("/category/news/"), "p2"),
        (server.url("/category/recipes/"), "p1"),
    ]
    assert server.requests_to("/feed/") == []
