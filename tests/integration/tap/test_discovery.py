"""Discovery end to end: which feed a web page leads to, and what the state makes of it."""

from __future__ import annotations

import hashlib

import pytest

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


def test_a_page_behind_a_consent_wall_reads_the_feed_it_led_to_before(
    server: FeedServer,
) -> None:
    """A site puts a consent page on another host in front of its pages, while its feed
    keeps answering: every run ended not_a_feed, and new items waited for a config edit."""
    posts = [("a", "A", "a"), ("b", "B", "b")]
    server.put("/videos.xml?channel=1", rss(posts))
    server.put("/@chan", _page("/videos.xml?channel=1"), content_type="text/html")
    cfg = config(server, "/@chan", discover_from_websites=True)
    first = run_tap(cfg)
    assert first.health[0]["status"] == "ok"

    consent = f"http://localhost:{server.port}/consent"
    server.put("/@chan", b"", status=302, headers={"Location": consent})
    server.put("/consent", _page(), content_type="text/html")
    server.put("/videos.xml?channel=1", rss([("c", "C", "c"), *posts]))
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/videos.xml?channel=1"))
    assert [item["item_id"] for item in second.items] == ["c"]
    [issue] = [i for i in row["issues"] if i["code"] == "discovery_failed"]
    assert issue["severity"] == "warning"
    assert "another host" in issue["message"]
    assert (row["discovered_from"], row["advertised_feeds"]) == (None, [])

    third = run_tap(cfg, second.final_state)  # still behind the wall: a 304 for the feed
    [row] = third.health
    assert (row["status"], third.items) == ("not_modified", [])
    assert "discovery_failed" in {i["code"] for i in row["issues"]}

    server.put("/@chan", _page("/videos.xml?channel=1"), content_type="text/html")
    server.put("/videos.xml?channel=1", rss([("d", "D", "d"), ("c", "C", "c"), *posts]))
    fourth = run_tap(cfg, third.final_state)  # the wall gone: the same feed, no switch
    [row] = fourth.health
    assert [item["item_id"] for item in fourth.items] == ["d"]
    [issue] = [i for i in row["issues"] if i["code"] != "stale_feed"]
    assert issue == {
        "code": "feed_discovered",
        "severity": "info",
        "message": "the feed was found through a web page",
    }


def test_a_rate_limited_web_page_does_not_send_the_tap_to_the_feed_it_led_to_before(
    server: FeedServer,
) -> None:
    """A page that answers 429 with Retry-After asks the tap to wait: reading the feed it
    led to before in the same run would ignore that. (The feed is on another host: on the
    page's own host, the host's rest after a 429 also keeps it from being asked.)"""
    server.put("/feed.xml", rss([("a", "A", "a"), ("b", "B", "b")]))
    server.put("/blog", _page(f"http://localhost:{server.port}/feed.xml"), content_type="text/html")
    cfg = config(server, "/blog", discover_from_websites=True)
    first = run_tap(cfg)
    assert first.health[0]["status"] == "ok"
    asked = len(server.requests_to("/feed.xml"))
    server.put(
        "/blog", "slow down", status=429, content_type="text/plain", headers={"Retry-After": "600"}
    )
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["error_code"]) == ("error", "rate_limited")
    assert len(server.requests_to("/feed.xml")) == asked


def test_a_page_behind_a_wall_says_so_when_its_feed_is_not_known_whole(
    server: FeedServer,
) -> None:
    """A feed read through a redirect that added a token is remembered without it: not
    asked for on its own, the row names the cause."""
    server.put("/feed.xml?token=t1", rss([("a", "A", "a")]))
    server.put("/feed.xml", b"", status=302, headers={"Location": server.url("/feed.xml?token=t1")})
    server.put("/blog", _page("/feed.xml"), content_type="text/html")
    cfg = config(server, "/blog", discover_from_websites=True)
    first = run_tap(cfg)
    assert first.health[0]["final_url"] == server.url("/feed.xml")

    consent = f"http://localhost:{server.port}/consent"
    server.put("/blog", b"", status=302, headers={"Location": consent})
    server.put("/consent", _page(), content_type="text/html")
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["error_code"]) == ("error", "not_a_feed")
    assert "another host" in row["error_message"]
    assert len(server.requests_to("/feed.xml")) == 1


def test_a_feed_url_replaced_by_its_web_page_keeps_the_feed_s_baseline(
    server: FeedServer,
) -> None:
    """The page got a first run: an item published between the two runs went into its
    baseline and was never sent. (The opposite edit, page to feed, keeps it.)"""
    posts = [("a", "A", "a"), ("b", "B", "b")]
    server.put("/feed.xml", rss(posts))
    server.put("/", _page("/feed.xml"), content_type="text/html")
    first = run_tap(config(server, "/feed.xml"))
    server.put("/feed.xml", rss([("c", "C", "c"), *posts]))
    cfg = config(server, "/", "/other/", discover_from_websites=True)
    server.put("/other/", _page("/feed.xml"), content_type="text/html")  # the same feed
    second = run_tap(cfg, first.final_state)
    # One of the pages takes the feed's partition over; the other starts a first run.
    assert [item["item_id"] for item in second.items] == ["c"]
    assert second.final_state is not None
    partitions = second.final_state["bookmarks"]["feed_items"]["partitions"]
    assert sorted(p["context"]["feed_url"] for p in partitions) == [
        server.url("/"),
        server.url("/other/"),
    ]


@pytest.mark.parametrize("signed", ["anew", "before-the-upgrade"])
def test_a_feed_behind_a_signing_redirect_replaced_by_its_page_keeps_its_baseline(
    server: FeedServer, signed: str
) -> None:
    """The feed redirects to a pre-signed object URL: its partition names the object,
    not the signature (new on every visit), so the page that replaces it takes it over;
    as it does a partition an earlier version wrote with the whole signed URL's hash."""
    posts = [("a", "A", "a"), ("b", "B", "b")]

    def serve(run: int, document: str) -> None:
        query = f"X-Amz-Signature=SIG{run}" if signed == "anew" else "token=fixed"
        server.put(f"/obj.xml?{query}", document)
        server.put("/feed.xml", b"", status=302, headers={"Location": f"/obj.xml?{query}"})

    serve(1, rss(posts))
    server.put("/", _page("/feed.xml"), content_type="text/html")
    first = run_tap(config(server, "/feed.xml"))
    assert first.final_state is not None
    if signed != "anew":
        [partition] = first.final_state["bookmarks"]["feed_items"]["partitions"]
        whole = server.url("/obj.xml?token=fixed").encode()
        partition["final_url_hash"] = "v1:" + hashlib.sha256(whole).hexdigest()[:16]
    serve(2, rss([("c", "C", "c"), *posts]))
    second = run_tap(config(server, "/", discover_from_websites=True), first.final_state)
    assert [item["item_id"] for item in second.items] == ["c"]
    assert second.final_state is not None
    [partition] = second.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["context"]["feed_url"] == server.url("/")


@pytest.mark.parametrize("failing", ["/feed.xml", "/"], ids=["its-feed-fails", "the-page-fails"])
def test_a_web_page_that_fails_its_first_run_still_takes_over_its_feed_s_partition(
    server: FeedServer, failing: str
) -> None:
    """The failed run gave the page a partition of its own (its failure streak), and a
    page with a partition was never offered the feed's: the next run read the feed as a
    first run, an item published in between went into the new baseline unsent, and the
    feed's partition lay orphaned until the 30-day prune."""
    posts = [("a", "A", "a"), ("b", "B", "b")]
    server.put("/feed.xml", rss(posts))
    server.put("/", _page("/feed.xml"), content_type="text/html")
    first = run_tap(config(server, "/feed.xml"))
    cfg = config(server, "/", discover_from_websites=True)
    server.put(failing, "busy", status=500, content_type="text/plain")
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["error_code"], row["consecutive_failures"]) == (
        "error",
        "http_error",
        1,
    )

    server.put("/feed.xml", rss([("c", "C", "c"), *posts]))
    server.put("/", _page("/feed.xml"), content_type="text/html")
    third = run_tap(cfg, second.final_state)
    [row] = third.health
    assert (row["status"], row["consecutive_failures"]) == ("ok", 0)
    assert [item["item_id"] for item in third.items] == ["c"]
    assert third.final_state is not None
    # The feed's partition became the page's; the page's failure-only one is gone.
    [partition] = third.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["context"]["feed_url"] == server.url("/")
    assert ("failures" not in partition, "failed_at" not in partition) == (True, True)

    fourth = run_tap(cfg, third.final_state)  # nothing new: the page's own feed, kept
    [row] = fourth.health
    assert (row["status"], fourth.items) == ("not_modified", [])
    # Found through the page as on a read: the 304 row says so too.
    assert row["discovered_from"] == server.url("/")
    assert "feed_discovered" in {issue["code"] for issue in row["issues"]}


@pytest.mark.parametrize(
    "configured", ["/feed.xml", "/"], ids=["replaced-by-its-feed", "redirecting-to-its-feed"]
)
def test_a_web_page_become_its_feed_fetches_the_failing_feed_once(
    server: FeedServer, configured: str
) -> None:
    """The feed URL keeps the page's partition, which names the feed the page led to:
    while the feed failed, the fallback for a page that leads to none asked for the very
    URL just fetched again, and a second ask that happened to succeed was reported as
    discovery_failed ("the web page could not be read"), though no page is configured.
    (Alike for a page that now redirects to its feed.)"""
    posts = [("a", "A", "a"), ("b", "B", "b")]
    server.put("/feed.xml", rss(posts))
    server.put("/", _page("/feed.xml"), content_type="text/html")
    first = run_tap(config(server, "/", discover_from_websites=True))
    assert first.health[0]["discovered_from"] == server.url("/")

    cfg = config(server, configured, discover_from_websites=True)
    server.put("/", b"", status=302, headers={"Location": server.url("/feed.xml")})
    server.put("/feed.xml", "busy", status=500, content_type="text/plain")

    def answer_next_time(path: str) -> None:  # a flaky feed: any second ask succeeds
        if path == "/feed.xml":
            server.put("/feed.xml", rss(posts))

    server.on_request = answer_next_time
    asked_before = len(server.requests_to("/feed.xml"))
    second = run_tap(cfg, first.final_state)
    server.on_request = None
    [row] = second.health
    assert len(server.requests_to("/feed.xml")) - asked_before == 1
    assert (row["status"], row["error_code"]) == ("error", "http_error")
    assert "discovery_failed" not in {issue["code"] for issue in row["issues"]}


def test_a_page_configured_without_discovery_says_what_to_change(server: FeedServer) -> None:
    """A newcomer's first mistake: the row says which setting reads the page's feed."""
    server.put("/blog/", _page("/blog/feed/"), content_type="text/html; charset=utf-8")
    server.put("/plain/", "<html><body>No feeds</body></html>", content_type="text/html")
    run = run_tap(config(server, "/blog/", "/plain/"))
    rows = {row["feed_url"]: row for row in run.health}
    row = rows[server.url("/blog/")]
    assert (row["error_code"], row["advertised_feeds"]) == (
        "not_a_feed",
        [server.url("/blog/feed/")],
    )
    assert "Set discover_from_websites" in row["error_message"]
    assert "/blog/feed/" not in row["error_message"]  # the row lists the links, not the message
    # A page that advertises nothing has nothing to read: no such advice.
    assert "discover_from_websites" not in rows[server.url("/plain/")]["error_message"]
