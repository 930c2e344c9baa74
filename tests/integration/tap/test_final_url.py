"""How the URL the tap read is shown, remembered and used: after redirects, discovery and
the fetcher's own re-encoding of the URL asked for."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from tests.feedserver import FeedServer, rss
from tests.integration.tap.configs import config
from tests.tapharness import run_tap, without_validators

ITEMS = [(f"id-{n}", f"Title {n}", f"<p>Summary {n}</p>") for n in range(5)]


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


def test_feeds_that_differ_only_in_a_query_a_redirect_adds_are_two_feeds(
    server: FeedServer,
) -> None:
    """WordPress: /feed/ and /comments/feed/ redirect to /index.php?feed=rss2 and
    ?feed=comments-rss2, on a static host with one Last-Modified for every file. Both
    show as /index.php; the posts feed's validators must not buy a 304 for comments."""
    static = {"compares_dates": True, "last_modified": 1e9}
    server.put("/index.php?feed=rss2", rss(ITEMS[:2], title="Posts"), **static)
    comments = [(f"comment-{n}", "C", "c") for n in range(3)]
    server.put("/index.php?feed=comments-rss2", rss(comments, title="Comments"), **static)
    server.put("/feed/", b"", status=301, headers={"Location": "/index.php?feed=rss2"})
    moved = {"Location": "/index.php?feed=comments-rss2"}
    server.put("/comments/feed/", b"", status=301, headers=moved)
    server.put("/", _page("/feed/"), content_type="text/html")
    cfg = config(server, "/", discover_from_websites=True)
    first = run_tap(cfg)
    [row] = first.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/index.php"))
    assert "rss2" not in first.partition(server.url("/"))["final_url"]

    server.put("/", _page("/comments/feed/"), content_type="text/html")
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["feed_title"]) == ("ok", "Comments")
    assert second.items == []  # another feed: read as on a first run
    assert [i["code"] for i in row["issues"]].count("feed_discovered") == 1
    assert "another feed" in str(row["issues"])

    # The comments feed changes: its one new item comes out, not its backlog.
    newer = rss([("comment-9", "C", "c"), *comments], title="Comments")
    server.put("/index.php?feed=comments-rss2", newer, compares_dates=True, last_modified=2e9)
    third = run_tap(cfg, second.final_state)
    assert [r["item_id"] for r in third.items] == ["comment-9"]


def _signed_bucket(server: FeedServer, run: int, document: str) -> None:
    """/feed redirects to a freshly signed bucket URL (a pre-signed download)."""
    signed = f"/bucket/feed.xml?X-Amz-Signature=SIG{run}"
    server.put(signed, document)
    server.put("/", _page("/feed"), content_type="text/html")
    server.put("/feed", b"", status=302, headers={"Location": signed})


def _cache_buster(server: FeedServer, run: int, document: str) -> None:
    """/feed redirects to a new query every time, one no list of signing names knows."""
    busted = f"/feed.xml?cb={run}"
    server.put(busted, document)
    server.put("/", _page("/feed"), content_type="text/html")
    server.put("/feed", b"", status=302, headers={"Location": busted})


def _echoed_session(server: FeedServer, run: int, document: str) -> None:
    """The page's redirect hands out a session id, which the page echoes into its link."""
    token = f"sid=SESSION{run}"
    server.put("/", b"", status=302, headers={"Location": f"/?{token}"})
    server.put(f"/?{token}", _page(f"/rss.xml?{token}"), content_type="text/html")
    server.put(f"/rss.xml?{token}", document)


@pytest.mark.parametrize(
    "serve",
    [_signed_bucket, _cache_buster, _echoed_session],
    ids=["signed-redirect", "cache-buster-redirect", "echoed-session-id"],
)
def test_a_discovered_feed_read_through_a_new_token_every_run_emits_its_new_items(
    server: FeedServer, serve: Callable[[FeedServer, int, str], None]
) -> None:
    """The page advertises the same feed every run; only a token on the way to it
    changes. That is no other feed: a feed that shows its latest post only has none of
    its items remembered each run, and they must come out, not be read as a baseline."""
    serve(server, 1, rss(ITEMS[:1]))
    cfg = config(server, "/", discover_from_websites=True)
    first = run_tap(cfg)
    assert (first.health[0]["status"], first.items) == ("ok", [])
    serve(server, 2, rss(ITEMS[1:2]))
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert [(r["item_id"], r["change_type"]) for r in second.items] == [(ITEMS[1][0], "new")]
    assert "another feed" not in str(row["issues"])
    serve(server, 3, rss(ITEMS[2:3]))
    third = run_tap(cfg, second.final_state)
    assert [(r["item_id"], r["change_type"]) for r in third.items] == [(ITEMS[2][0], "new")]


def test_a_state_from_before_the_advertised_link_was_kept_emits_the_new_items(
    server: FeedServer,
) -> None:
    """Such a state knows the feed's URL only as it was shown: the signed query a
    redirect adds is not part of it, so a new signature is no other feed either."""
    _signed_bucket(server, 1, rss(ITEMS[:1]))
    cfg = config(server, "/", discover_from_websites=True)
    first = run_tap(cfg)
    assert first.final_state is not None
    [partition] = first.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["advertised_url_hash"].startswith("v1:")
    del partition["advertised_url_hash"]  # as written before it was kept
    _signed_bucket(server, 2, rss(ITEMS[1:2]))
    second = run_tap(cfg, first.final_state)
    assert [(r["item_id"], r["change_type"]) for r in second.items] == [(ITEMS[1][0], "new")]
    assert second.partition(server.url("/"))["advertised_url_hash"].startswith("v1:")


def _signed_object(server: FeedServer, run: int, document: str) -> str:
    """/feed redirects to the feed's object, signed anew on every visit (S3's query
    authentication); the object's ETag and Last-Modified stay while it is unchanged."""
    signed = f"/obj.xml?X-Amz-Date=2024010{run}T000000Z&X-Amz-Signature=SIG{run}"
    server.put(signed, document, last_modified=1e9)
    server.put("/feed", b"", status=302, headers={"Location": signed})
    return signed


def test_a_feed_behind_a_redirect_signed_anew_every_visit_gets_its_304(
    server: FeedServer,
) -> None:
    """The object answers 304 to its validators whatever the signature: that 304 is
    trusted, not thrown away for a second, unconditional download."""
    _signed_object(server, 1, rss(ITEMS))
    cfg = config(server, "/feed")
    first = run_tap(cfg)
    assert first.health[0]["status"] == "ok"
    signed = _signed_object(server, 2, rss(ITEMS))
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert row["status"] == "not_modified"
    assert row["conditional_request"] == {
        "etag_sent": True,
        "last_modified_sent": True,
        "not_modified": True,
    }
    assert [r.if_none_match is not None for r in server.requests_to(signed)] == [True]
    changed = [("id-9", "Title 9", "<p>new</p>"), *ITEMS]
    _signed_object(server, 3, rss(changed))
    third = run_tap(cfg, second.final_state)
    assert [(r["item_id"], r["change_type"]) for r in third.items] == [("id-9", "new")]


def test_a_state_hashed_with_the_signature_reads_the_feed_once_with_no_change(
    server: FeedServer,
) -> None:
    """A bookmark written before the signature was left out hashes the whole signed URL:
    the first 304 after the upgrade is not trusted, the feed is read once more (no item
    comes out), and the row still says the validators were sent."""
    first_signed = _signed_object(server, 1, rss(ITEMS))
    cfg = config(server, "/feed")
    first = run_tap(cfg)
    assert first.final_state is not None
    [partition] = first.final_state["bookmarks"]["feed_items"]["partitions"]
    whole = server.url(first_signed)
    partition["final_url_hash"] = "v1:" + hashlib.sha256(whole.encode()).hexdigest()[:16]
    signed = _signed_object(server, 2, rss(ITEMS))
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], second.items, row["item_counts"]["updated"]) == ("ok", [], 0)
    assert row["conditional_request"] == {
        "etag_sent": True,
        "last_modified_sent": True,
        "not_modified": False,
    }
    assert [r.if_none_match is not None for r in server.requests_to(signed)] == [True, False]
    signed = _signed_object(server, 3, rss(ITEMS))
    third = run_tap(cfg, second.final_state)
    assert (third.health[0]["status"], third.items) == ("not_modified", [])
    assert len(server.requests_to(signed)) == 1


def test_a_state_without_the_final_url_hash_still_loads(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS[:2]))
    first = run_tap(config(server, "/feed.xml"))
    assert first.final_state is not None
    [partition] = first.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["final_url_hash"].startswith("v1:")
    del partition["final_url_hash"]  # as written before it was kept
    second = run_tap(config(server, "/feed.xml"), first.final_state)
    assert second.returncode == 0, second.stderr
    assert (second.health[0]["status"], second.items) == ("not_modified", [])


CHANGELOG = """<?xml version="1.0"?><rss version="2.0"><channel><title>Changelog</title>
<item><guid isPermaLink="false">v1</guid><title>v1</title><link>#entry-1</link></item>
<item><title>v2 (no guid)</title><link>#entry-2</link></item>
</channel></rss>"""


def test_relative_links_resolve_against_the_url_as_shown(server: FeedServer) -> None:
    """A redirect to a pre-signed URL whose signature rotates: fragment-only links
    resolved against it carried the signature into url and item_id, and every run
    sent the items again."""

    def sign(n: int) -> str:
        signed = f"/bucket/feed.xml?X-Amz-Expires=60&X-Amz-Signature=SIGSECRET{n}"
        server.put(signed, CHANGELOG)
        server.put("/feed.xml", b"", status=302, headers={"Location": signed})
        return signed

    sign(1)
    cfg = config(server, "/feed.xml", first_run_mode="emit_all")
    first = run_tap(cfg)
    shown = server.url("/bucket/feed.xml")
    assert [(r["item_id"], r["url"]) for r in first.items] == [
        ("v1", shown + "#entry-1"),
        (shown + "#entry-2", shown + "#entry-2"),
    ]
    sign(2)
    second = run_tap(cfg, without_validators(first.final_state))  # read again, not a 304
    assert (second.health[0]["status"], second.items) == ("ok", [])
    everything = json.dumps([first.messages, second.messages])
    assert "SIGSECRET" not in everything


def test_a_session_id_a_redirect_adds_to_the_path_is_neither_shown_nor_kept(
    server: FeedServer,
) -> None:
    """Tomcat's /feed;jsessionid=…: a new one every run, like a signed query."""

    def session(n: int) -> None:
        server.put(f"/feed;jsessionid=SESSIONSECRET{n}", rss(ITEMS[:2]))
        moved = {"Location": f"/feed;jsessionid=SESSIONSECRET{n}"}
        server.put("/feed", b"", status=302, headers=moved)

    session(1)
    cfg = config(server, "/feed", first_run_mode="emit_all")
    first = run_tap(cfg)
    [row] = first.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/feed"))
    assert {r["final_url"] for r in first.items} == {server.url("/feed")}
    session(2)
    second = run_tap(cfg, first.final_state)
    # The same resource: its 304 is trusted.
    assert (second.health[0]["status"], second.items) == ("not_modified", [])
    assert "SESSIONSECRET" not in json.dumps([first.messages, second.messages])


def test_a_token_a_redirect_hands_the_web_page_is_not_kept_when_the_page_echoes_it(
    server: FeedServer,
) -> None:
    def session(n: int) -> None:
        token = f"sid=SESSIONSECRET{n}"
        server.put("/blog", b"", status=302, headers={"Location": f"/blog?{token}"})
        server.put(f"/blog?{token}", _page(f"/feed?{token}"), content_type="text/html")
        server.put(f"/feed?{token}", rss(ITEMS[:2]))

    session(1)
    cfg = config(server, "/blog", discover_from_websites=True, first_run_mode="emit_all")
    first = run_tap(cfg)
    [row] = first.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/feed"))
    assert row["advertised_feeds"] == [server.url("/feed")]
    assert row["discovered_from"] == server.url("/blog")
    assert {r["final_url"] for r in first.items} == {server.url("/feed")}
    session(2)
    second = run_tap(cfg, first.final_state)
    assert (second.health[0]["status"], second.items) == ("ok", [])
    assert "SESSIONSECRET" not in json.dumps([first.messages, second.messages])


def test_without_discovery_the_echoed_token_is_not_shown_either(server: FeedServer) -> None:
    server.put("/blog", b"", status=302, headers={"Location": "/blog?sid=SESSIONSECRET"})
    server.put(
        "/blog?sid=SESSIONSECRET", _page("/feed?sid=SESSIONSECRET"), content_type="text/html"
    )
    run = run_tap(config(server, "/blog"))
    [row] = run.health
    assert (row["error_code"], row["advertised_feeds"]) == ("not_a_feed", [server.url("/feed")])
    assert "SESSIONSECRET" not in json.dumps(run.messages)


def test_a_state_kept_under_another_spelling_the_fetcher_sends_alike_keeps_its_baseline(
    server: FeedServer,
) -> None:
    """A state written for /x/../feed.xml (accepted before, and the same request) carries
    over when the config is cleaned up to /feed.xml: no new baseline, no change lost."""
    server.put("/feed.xml", rss(ITEMS[:2]))
    first = run_tap(config(server, "/x/../feed.xml"))
    assert first.final_state is not None
    server.put("/feed.xml", rss(ITEMS[:3]))
    second = run_tap(config(server, "/feed.xml"), first.final_state)
    assert second.returncode == 0, second.stderr
    assert [(r["item_id"], r["change_type"]) for r in second.items] == [(ITEMS[2][0], "new")]
    assert second.final_state is not None
    [partition] = second.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["context"]["feed_url"] == server.url("/feed.xml")


def _moved(row: dict[str, Any]) -> list[str]:
    return [issue["message"] for issue in row["issues"] if issue["code"] == "feed_moved"]


def test_a_permanent_redirect_tells_where_the_feed_moved(server: FeedServer) -> None:
    """A show moved with a 301 must update its URL (the old host drops the redirect after
    a while); behind a 302 it must keep the old one. The row names the new URL as
    scheme, host and path: the token the redirect hands out is not shown."""
    server.put("/new-home", rss(ITEMS))
    server.put("/new-home?token=s3cret", rss(ITEMS))
    server.put("/moved", b"", status=301, headers={"Location": "/new-home"})
    server.put("/signed", b"", status=301, headers={"Location": "/new-home?token=s3cret"})
    server.put("/temporary", b"", status=302, headers={"Location": "/new-home"})
    server.put("/hop", b"", status=308, headers={"Location": "/moved"})
    server.put("/gone", b"", status=301, headers={"Location": "/nowhere"})
    cfg = config(server, "/moved", "/temporary", "/hop", "/gone", "/signed")
    first = run_tap(cfg)
    moved, temporary, hop, gone, signed = first.health
    assert moved["status"] == "ok"
    [message] = _moved(moved)
    assert server.url("/new-home") in message
    assert "permanent" in message
    assert {i["severity"] for i in moved["issues"] if i["code"] == "feed_moved"} == {"info"}
    [message] = _moved(signed)
    assert message.endswith(server.url("/new-home"))
    assert "s3cret" not in json.dumps(signed["issues"])
    assert _moved(temporary) == []
    [message] = _moved(hop)  # two permanent hops: where the last one led
    assert server.url("/new-home") in message
    assert (gone["status"], gone["error_code"]) == ("error", "http_error")
    [message] = _moved(gone)  # moved, and the new URL fails: both are told
    assert server.url("/nowhere") in message

    second = run_tap(cfg, first.final_state)  # a 304 after the redirect: still moved
    moved, temporary, *_ = second.health
    assert moved["status"] == "not_modified"
    assert len(_moved(moved)) == 1
    assert _moved(temporary) == []

    # The user follows the move: the feed keeps its baseline (nothing comes out again).
    alone = run_tap(config(server, "/moved"))
    followed = run_tap(config(server, "/new-home", first_run_mode="emit_all"), alone.final_state)
    [row] = followed.health
    assert (row["status"], followed.items, _moved(row)) == ("not_modified", [], [])


def test_a_permanent_redirect_names_the_new_url_as_final_url_shows_it(
    server: FeedServer,
) -> None:
    """A 301 that hands out a session id in the path: feed_moved names the new URL without
    it, as final_url does (a new one every visit, and a secret)."""
    server.put("/feed.xml;jsessionid=SESSIONSECRET", rss(ITEMS))
    server.put("/feed", b"", status=301, headers={"Location": "/feed.xml;jsessionid=SESSIONSECRET"})
    run = run_tap(config(server, "/feed"))
    [row] = run.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/feed.xml"))
    [message] = _moved(row)
    assert message.endswith(server.url("/feed.xml"))
    assert "SESSIONSECRET" not in json.dumps(run.messages)


def test_itunes_new_feed_url_tells_where_the_show_moved(server: FeedServer) -> None:
    """Apple's way to move a podcast: the old feed, frozen, names the new one in
    itunes:new-feed-url (often with no redirect). The row of the run that reads it
    tells it, the new URL as scheme, host and path (a private feed's token is not shown);
    its validators are kept, so the frozen feed answers 304 afterwards."""
    body = rss(ITEMS, title="Show")
    server.put("/old/rss", body)
    cfg = config(server, "/old/rss")
    first = run_tap(cfg)
    assert _moved(first.health[0]) == []

    new = "https://new-host.example/show/feed.xml?auth=s3cret"
    moved = body.replace(
        "<title>Show</title>",
        f"<title>Show</title><itunes:new-feed-url>{new}</itunes:new-feed-url>",
    ).replace("<rss ", '<rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" ')
    server.put("/old/rss", moved)
    run = run_tap(cfg, first.final_state)
    [row] = run.health
    assert (row["status"], run.items, row["advertised_feeds"]) == ("ok", [], [])
    [message] = _moved(row)
    assert "itunes:new-feed-url" in message
    assert message.endswith("https://new-host.example/show/feed.xml")
    assert "s3cret" not in json.dumps(row)
    again = run_tap(cfg, run.final_state)
    assert again.health[0]["status"] == "not_modified"


def test_itunes_new_feed_url_naming_the_configured_url_behind_a_redirect_is_no_move(
    server: FeedServer,
) -> None:
    """A vanity URL that redirects temporarily (302) to the host's feed, which names the
    vanity URL (or a URL of the redirect chain) in itunes:new-feed-url: the show asks
    apps to use the URL they already use. No move, whatever the host's case or scheme's."""
    vanity, tracker = server.url("/podcast"), server.url("/tracker")

    def naming(url: str) -> str:
        return (
            rss(ITEMS, title="Show")
            .replace(
                "<title>Show</title>",
                f"<title>Show</title><itunes:new-feed-url>{url}</itunes:new-feed-url>",
            )
            .replace("<rss ", '<rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" ')
        )

    server.put("/podcast", b"", status=302, headers={"Location": "/tracker"})
    server.put("/tracker", b"", status=302, headers={"Location": "/host/show/rss"})
    for named in (vanity, vanity.replace("http://", "HTTP://"), tracker):
        server.put("/host/show/rss", naming(named))
        [row] = run_tap(config(server, "/podcast")).health
        assert (row["status"], _moved(row)) == ("ok", [])
    server.put("/host/show/rss", naming(server.url("/elsewhere")))
    [row] = run_tap(config(server, "/podcast")).health
    [message] = _moved(row)
    assert message.endswith(server.url("/elsewhere"))
