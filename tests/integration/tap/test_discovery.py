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


def test_a_wordpress_site_without_feeds_is_a_page_that_advertises_none(server: FeedServer) -> None:
    """Its REST API link (plain JSON) was read as a broken JSON Feed, every run."""
    server.put("/wp-json/wp/v2/pages/2", '{"id": 2}', content_type="application/json")
    server.put(
        "/",
        "<!DOCTYPE html><html><head><title>Site</title>"
        '<link rel="alternate" title="JSON" type="application/json"'
        ' href="/wp-json/wp/v2/pages/2" /></head><body></body></html>',
        content_type="text/html; charset=utf-8",
    )
    run = run_tap(config(server, "/", discover_from_websites=True))
    [row] = run.health
    assert (row["error_code"], row["final_url"]) == ("not_a_feed", server.url("/"))
    assert (row["advertised_feeds"], row["discovered_from"]) == ([], None)
    assert server.requests_to("/wp-json/wp/v2/pages/2") == []
