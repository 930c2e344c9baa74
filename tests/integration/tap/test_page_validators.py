"""A web page that leads to a feed (discover_from_websites) is asked on its own validators:
an unchanged page answers 304 and costs its publisher no download, and the feed it led
to is read as before. In this process (the code the tap runs), against a real server."""

from __future__ import annotations

from typing import Any

from tap_feeddelta.check import FeedOutcome
from tap_feeddelta.config import settings_from_config
from tests.feedserver import FeedServer, rss
from tests.tapharness import run_in_process

POSTS = [("a", "A", "a"), ("b", "B", "b")]
PAGE_FIELDS = ("page_etag", "page_last_modified", "page_url_hash")


def _page(href: str) -> str:
    # A page weighs tens of kilobytes: what every run downloaded again.
    padding = "<p>" + "words " * 8_000 + "</p>"
    return (
        f'<!DOCTYPE html><html><head><link rel="alternate" type="application/rss+xml"'
        f' href="{href}"></head><body>{padding}</body></html>'
    )


def _run(server: FeedServer, state: dict[str, Any], *paths: str) -> list[FeedOutcome]:
    """One run of the tap's feeds on feed_items' ``state``, which it moves."""
    settings = settings_from_config(
        {
            "feed_urls": [server.url(path) for path in paths],
            "discover_from_websites": True,
            "allow_private_networks": True,
        }
    )
    return run_in_process(settings, state)


def _partition(state: dict[str, Any], server: FeedServer, path: str) -> dict[str, Any]:
    [partition] = [p for p in state["partitions"] if p["context"]["feed_url"] == server.url(path)]
    return dict(partition)


def test_an_unchanged_page_answers_304_and_its_feed_is_still_read(server: FeedServer) -> None:
    """The page was asked with its feed's validators, which it never matches: every run
    downloaded the whole page before asking the feed conditionally."""
    server.put("/feed.xml", rss(POSTS))
    server.put("/blog", _page("/feed.xml"), content_type="text/html")
    server.put("/direct.xml", rss(POSTS))
    state: dict[str, Any] = {}
    _run(server, state, "/blog", "/direct.xml")
    page_etag = server.documents["/blog"].etag
    assert _partition(state, server, "/blog")["page_etag"] == page_etag
    # Only a discovered feed's partition holds them.
    assert not set(PAGE_FIELDS) & set(_partition(state, server, "/direct.xml"))

    [outcome, _] = _run(server, state, "/blog", "/direct.xml")  # nothing changed
    [page_ask] = server.requests_to("/blog")[1:]
    assert page_ask.if_none_match == page_etag
    row = outcome.health_record
    assert (row["status"], row["bytes_received"]) == ("not_modified", 0)
    assert (row["discovered_from"], row["final_url"]) == (
        server.url("/blog"),
        server.url("/feed.xml"),
    )
    assert row["advertised_feeds"] == []  # a 304 lists no links
    assert row["conditional_request"] == {
        "etag_sent": True,
        "last_modified_sent": True,
        "not_modified": True,
    }

    server.put("/feed.xml", rss([("c", "C", "c"), *POSTS]))
    [outcome, _] = _run(server, state, "/blog", "/direct.xml")  # the page unchanged
    assert [item["item_id"] for item in outcome.item_records] == ["c"]
    row = outcome.health_record
    assert row["status"] == "ok"
    assert row["bytes_received"] == len(server.documents["/feed.xml"].body)
    assert row["discovered_from"] == server.url("/blog")
    [found] = [i for i in row["issues"] if i["code"] == "feed_discovered"]
    assert "304" in found["message"]
    assert [r.if_none_match for r in server.requests_to("/blog")[2:]] == [page_etag]
    assert _partition(state, server, "/blog")["page_etag"] == page_etag


def test_an_old_bookmark_reads_the_page_once_then_keeps_its_validators(
    server: FeedServer,
) -> None:
    """A partition written before the page's validators were kept: its first run asks as
    before (the feed's validators), reads the page, and keeps the page's."""
    server.put("/feed.xml", rss(POSTS))
    server.put("/blog", _page("/feed.xml"), content_type="text/html")
    state: dict[str, Any] = {}
    _run(server, state, "/blog")
    [partition] = state["partitions"]
    for name in PAGE_FIELDS:
        del partition[name]  # as written before they were kept

    [outcome] = _run(server, state, "/blog")
    assert server.requests_to("/blog")[-1].if_none_match == partition["etag"]  # the feed's
    row = outcome.health_record
    assert (row["status"], row["advertised_feeds"]) == ("not_modified", [server.url("/feed.xml")])
    assert row["bytes_received"] == len(server.documents["/blog"].body)
    page_etag = server.documents["/blog"].etag
    assert _partition(state, server, "/blog")["page_etag"] == page_etag

    [outcome] = _run(server, state, "/blog")
    assert server.requests_to("/blog")[-1].if_none_match == page_etag
    assert (outcome.health_record["status"], outcome.health_record["bytes_received"]) == (
        "not_modified",
        0,
    )


def test_a_changed_page_that_leads_to_another_feed_is_read_and_its_validators_kept(
    server: FeedServer,
) -> None:
    server.put("/feed.xml", rss(POSTS))
    comments = [(f"comment-{n}", "C", "c") for n in range(3)]
    server.put("/comments.xml", rss(comments, title="Comments"))
    server.put("/blog", _page("/feed.xml"), content_type="text/html")
    state: dict[str, Any] = {}
    _run(server, state, "/blog")

    server.put("/blog", _page("/comments.xml"), content_type="text/html")
    [outcome] = _run(server, state, "/blog")
    row = outcome.health_record
    assert (row["status"], row["final_url"]) == ("ok", server.url("/comments.xml"))
    assert outcome.item_records == []  # another feed: read as on a first run
    assert "another feed" in str(row["issues"])
    assert row["advertised_feeds"] == [server.url("/comments.xml")]
    page_etag = server.documents["/blog"].etag
    assert _partition(state, server, "/blog")["page_etag"] == page_etag

    server.put("/comments.xml", rss([("comment-9", "C", "c"), *comments], title="Comments"))
    [outcome] = _run(server, state, "/blog")  # the page unchanged since: a 304
    assert server.requests_to("/blog")[-1].if_none_match == page_etag
    assert [item["item_id"] for item in outcome.item_records] == ["comment-9"]
    assert outcome.health_record["final_url"] == server.url("/comments.xml")


def test_a_304_from_another_page_the_page_now_redirects_to_is_not_trusted(
    server: FeedServer,
) -> None:
    """A server that compares If-Modified-Since by date answers 304 for any older page:
    the page's date, sent on to the page it now redirects to, says nothing about that
    one, which leads to another feed."""
    dated = {"compares_dates": True, "content_type": "text/html"}
    server.put("/feed.xml", rss(POSTS))
    server.put("/news.xml", rss([("n1", "N", "n")], title="News"))
    server.put("/blog", _page("/feed.xml"), last_modified=1.6e9, **dated)
    state: dict[str, Any] = {}
    _run(server, state, "/blog")
    assert "page_last_modified" in _partition(state, server, "/blog")

    server.put("/news", _page("/news.xml"), last_modified=1e9, **dated)
    server.put("/blog", b"", status=302, headers={"Location": "/news"})
    [outcome] = _run(server, state, "/blog")
    row = outcome.health_record
    assert (row["status"], row["final_url"]) == ("ok", server.url("/news.xml"))
    assert row["discovered_from"] == server.url("/news")
    assert [r.if_modified_since is not None for r in server.requests_to("/news")] == [True, False]
