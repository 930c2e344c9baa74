"""The tap end to end against a real HTTP server on 127.0.0.1, run as a command."""

from __future__ import annotations

import base64
import json
import re
import ssl
import subprocess
from datetime import UTC, datetime, timedelta
from email.utils import formatdate
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import trustme

from tests.feedserver import FeedServer, rss
from tests.integration.tap.configs import config
from tests.tapharness import TAP, run_tap, without_validators

ITEMS = [(f"id-{n}", f"Title {n}", f"<p>Summary <b>{n}</b></p>") for n in range(5)]


def test_baseline_then_new_then_updated_then_not_modified(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml")

    first = run_tap(cfg)
    assert first.returncode == 0, first.stderr
    assert first.items == []  # baseline_only
    [health] = first.health
    assert health["status"] == "ok"
    assert health["item_counts"]["seen"] == 5
    assert health["item_counts"]["remembered"] == 5
    assert health["item_counts"]["emitted"] == 0

    server.put("/feed.xml", rss([("id-new", "Fresh", "brand new"), *ITEMS]))
    second = run_tap(cfg, first.final_state)
    assert second.returncode == 0, second.stderr
    assert [(r["item_id"], r["change_type"]) for r in second.items] == [("id-new", "new")]
    assert second.health[0]["item_counts"]["new"] == 1
    assert second.health[0]["item_counts"]["unchanged"] == 5

    edited = [("id-new", "Fresh", "brand new"), ("id-0", "Title 0 (corrected)", ITEMS[0][2])]
    server.put("/feed.xml", rss(edited + ITEMS[1:]))
    third = run_tap(cfg, second.final_state)
    assert [(r["item_id"], r["change_type"]) for r in third.items] == [("id-0", "updated")]
    assert third.items[0]["title"] == "Title 0 (corrected)"
    assert third.items[0]["delivery_id"] != second.items[0]["delivery_id"]

    fourth = run_tap(cfg, third.final_state)
    assert fourth.items == []
    [health] = fourth.health
    assert health["status"] == "not_modified"
    assert health["conditional_request"] == {
        "etag_sent": True,
        "last_modified_sent": True,
        "not_modified": True,
    }
    last = server.requests_to("/feed.xml")[-1]
    assert last.if_none_match is not None
    assert last.if_modified_since is not None
    # validators and items are kept through a 304
    assert (
        fourth.partition(cfg["feed_urls"][0])["items"]
        == third.partition(cfg["feed_urls"][0])["items"]
    )
    assert (
        fourth.partition(cfg["feed_urls"][0])["etag"]
        == third.partition(cfg["feed_urls"][0])["etag"]
    )


def test_rows_that_read_no_document_report_what_the_state_keeps(server: FeedServer) -> None:
    """item_counts.remembered is what the state keeps on every row; a 304's document is
    the one read before, so its title and format are the stored ones."""
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    assert first.health[0]["item_counts"]["remembered"] == 5
    title = first.health[0]["feed_title"]
    assert title

    not_modified = run_tap(cfg, first.final_state)
    [row] = not_modified.health
    assert row["status"] == "not_modified"
    assert (row["item_counts"]["remembered"], row["feed_format"]) == (5, "rss-2.0")
    assert row["feed_title"] == title  # before, null: feed_health_daily lost the title

    server.put("/feed.xml", "down", status=500, content_type="text/plain")
    failed = run_tap(cfg, not_modified.final_state)
    [row] = failed.health
    assert (row["status"], row["item_counts"]["remembered"]) == ("error", 5)
    assert row["item_counts"]["seen"] == 0

    server.put("/feed.xml", "slow down", status=429, headers={"Retry-After": "3600"})
    limited = run_tap(cfg, failed.final_state)
    assert (limited.health[0]["error_code"], limited.health[0]["item_counts"]["remembered"]) == (
        "rate_limited",
        5,
    )
    skipped = run_tap(cfg, limited.final_state)
    [row] = skipped.health
    assert (row["status"], row["item_counts"]["remembered"]) == ("skipped", 5)


def test_failed_and_skipped_rows_carry_what_the_state_knows(server: FeedServer) -> None:
    """A feed that goes down stays visible: its error and skipped rows show the stored
    newest item, staleness, title and format (as a 304 row does), when it last answered
    and how many checks in a row failed. Before, all of these were null on such rows, so
    a dead feed never showed up as stale and 'down since' needed the whole history."""
    server.put("/feed.xml", rss(ITEMS))  # items dated January 2024: stale
    cfg = config(server, "/feed.xml", stale_after_days=30)
    first = run_tap(cfg)
    [ok] = first.health
    assert (ok["last_success_at"], ok["consecutive_failures"]) == (ok["checked_at"], 0)
    not_modified = run_tap(cfg, first.final_state)
    [row] = not_modified.health
    assert row["status"] == "not_modified"
    assert (row["last_success_at"], row["consecutive_failures"]) == (row["checked_at"], 0)
    answered = row["checked_at"]

    server.put("/feed.xml", "down", status=500, content_type="text/plain")
    failed = run_tap(cfg, not_modified.final_state)
    failed_again = run_tap(cfg, failed.final_state)
    server.put("/feed.xml", "slow down", status=429, headers={"Retry-After": "3600"})
    limited = run_tap(cfg, failed_again.final_state)
    skipped = run_tap(cfg, limited.final_state)
    rows = [run.health[0] for run in (failed, failed_again, limited, skipped)]
    assert [(r["status"], r["error_code"]) for r in rows] == [
        ("error", "http_error"),
        ("error", "http_error"),
        ("error", "rate_limited"),
        ("skipped", "retry_later"),
    ]
    for streak, row in enumerate(rows, start=1):
        assert row["is_stale"] is True
        assert row["newest_item_at"] == "2024-01-05T10:00:00Z"
        assert (row["feed_title"], row["feed_format"]) == (ok["feed_title"], "rss-2.0")
        assert row["last_success_at"] == answered
        assert row["consecutive_failures"] == streak
        assert "stale_feed" in {i["code"] for i in row["issues"]}
    # The count and time of a failure are the only keys it moves.
    streak_keys = ("failures", "failed_at")
    kept = {k: v for k, v in failed.partition(cfg["feed_urls"][0]).items() if k not in streak_keys}
    assert kept == {
        k: v for k, v in not_modified.partition(cfg["feed_urls"][0]).items() if k not in streak_keys
    }
    assert failed.partition(cfg["feed_urls"][0])["failed_at"] == failed.health[0]["checked_at"]

    server.put("/feed.xml", rss(ITEMS))
    state = json.loads(json.dumps(skipped.final_state))
    for partition in state["bookmarks"]["feed_items"]["partitions"]:
        partition.pop("retry_after_at")
    back = run_tap(cfg, state)
    [row] = back.health
    assert row["status"] in ("ok", "not_modified")
    assert (row["last_success_at"], row["consecutive_failures"]) == (row["checked_at"], 0)
    assert not {"failures", "failed_at"} & set(back.partition(cfg["feed_urls"][0]))


def test_a_feed_never_read_counts_its_failures_from_its_first_check(server: FeedServer) -> None:
    server.put("/feed.xml", "down", status=500, content_type="text/plain")
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["last_success_at"], row["consecutive_failures"]) == (
        "error",
        None,
        2,
    )
    assert (row["is_stale"], row["newest_item_at"], row["feed_title"]) == (None, None, None)


def test_a_feed_whose_first_check_failed_takes_a_baseline_when_it_answers(
    server: FeedServer,
) -> None:
    """A feed added while its host is down has a partition holding only its failure
    streak: when it answers, that is still its first read, so baseline_only takes a
    silent baseline instead of sending its whole archive as new."""
    server.put("/feed.xml", "down", status=500, content_type="text/plain")
    cfg = config(server, "/feed.xml")
    failed = run_tap(cfg)
    assert failed.health[0]["status"] == "error"
    server.put("/feed.xml", rss(ITEMS))
    up = run_tap(cfg, failed.final_state)
    [row] = up.health
    assert (row["status"], row["consecutive_failures"]) == ("ok", 0)
    assert up.items == []
    assert row["item_counts"]["remembered"] == 5


def test_a_document_cut_short_for_a_run_forgets_nothing_through_the_state_file(
    server: FeedServer,
) -> None:
    """History is bounded by the largest document read: that figure must survive the
    state file, or a feed cut to 10 items for one run (a CDN glitch) forgets the rest
    and sends it again as new when the whole document is back."""
    items = [(f"id-{n}", f"Title {n}", f"Summary {n}") for n in range(300)]
    server.put("/feed.xml", rss(items))
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    server.put("/feed.xml", rss(items[:10]))
    short = run_tap(cfg, without_validators(first.final_state))
    server.put("/feed.xml", rss(items))
    back = run_tap(cfg, without_validators(short.final_state))
    assert back.health[0]["item_counts"]["new"] == 0
    assert back.items == []


def test_markup_and_whitespace_only_edits_are_not_changes(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    reformatted = [(g, f"  {t}\n ", f"<div>{d}  </div>") for g, t, d in ITEMS]
    server.put("/feed.xml", rss(reformatted))
    second = run_tap(cfg, first.final_state)
    assert second.items == []
    assert second.health[0]["item_counts"]["unchanged"] == 5


def test_content_mode_change_causes_no_updates(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    first = run_tap(config(server, "/feed.xml", content_mode="metadata"))
    server.put("/feed.xml", rss(ITEMS), headers={"X-Changed": "1"})  # same body, new run
    second = run_tap(
        config(server, "/feed.xml", content_mode="feed_content"),
        without_validators(first.final_state),
    )
    assert second.items == []
    assert second.health[0]["item_counts"]["unchanged"] == 5


def test_same_change_resent_has_same_delivery_id(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml", first_run_mode="emit_all")
    first = run_tap(cfg)
    again = run_tap(cfg)  # the same first run, re-sent (e.g. after a crash)
    assert len(first.items) == 5
    assert [r["delivery_id"] for r in first.items] == [r["delivery_id"] for r in again.items]
    assert len({r["delivery_id"] for r in first.items}) == 5


def test_an_edit_reverted_is_a_version_of_its_own(server: FeedServer) -> None:
    """A, B, then A again: three delivery_ids, so an upserting target keeps all three
    rows (the third had the first's id, and its row replaced the first)."""
    version_a = [("id-0", "Title A", "Summary")]
    server.put("/feed.xml", rss(version_a))
    cfg = config(server, "/feed.xml", first_run_mode="emit_all")
    first = run_tap(cfg)
    server.put("/feed.xml", rss([("id-0", "Title B", "Summary")]))
    second = run_tap(cfg, first.final_state)
    server.put("/feed.xml", rss(version_a))
    third = run_tap(cfg, second.final_state)
    delivered = [r for run in (first, second, third) for r in run.items]
    assert [(r["title"], r["change_type"]) for r in delivered] == [
        ("Title A", "new"),
        ("Title B", "updated"),
        ("Title A", "updated"),
    ]
    assert delivered[0]["fingerprint"] == delivered[2]["fingerprint"]
    assert len({r["delivery_id"] for r in delivered}) == 3


def test_emit_recent_emits_the_newest(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    run = run_tap(config(server, "/feed.xml", first_run_mode="emit_recent", max_initial_items=2))
    # rss() dates item n on day n+1: the newest are id-4 and id-3
    assert sorted(r["item_id"] for r in run.items) == ["id-3", "id-4"]
    assert run.health[0]["item_counts"]["remembered"] == 5


def test_two_monitor_ids_are_independent(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    a = run_tap(config(server, "/feed.xml", monitor_id="alpha"))
    server.put("/feed.xml", rss([("id-x", "X", "x"), *ITEMS]))
    # beta's first run on the same state file is its own baseline
    b = run_tap(
        config(server, "/feed.xml", monitor_id="beta", first_run_mode="emit_all"), a.final_state
    )
    assert len(b.items) == 6
    assert {r["monitor_id"] for r in b.items} == {"beta"}
    a2 = run_tap(config(server, "/feed.xml", monitor_id="alpha"), b.final_state)
    assert [r["item_id"] for r in a2.items] == ["id-x"]
    assert a2.items[0]["delivery_id"] != next(
        r["delivery_id"] for r in b.items if r["item_id"] == "id-x"
    )
    assert a2.final_state is not None
    contexts = [
        p["context"]["monitor_id"] for p in a2.final_state["bookmarks"]["feed_items"]["partitions"]
    ]
    assert sorted(contexts) == ["alpha", "beta"]


def test_deferral_with_max_items_per_run(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml", first_run_mode="emit_all", max_items_per_run=2)
    seen: list[str] = []
    state = None
    for _ in range(3):
        run = run_tap(cfg, state)
        assert run.returncode == 0, run.stderr
        seen += [r["item_id"] for r in run.items]
        state = run.final_state
    assert sorted(seen) == sorted(g for g, _, _ in ITEMS)
    assert len(seen) == 5  # nothing twice
    final = run_tap(cfg, state)
    assert final.items == []


def test_a_capped_run_drains_a_backlog_of_items_of_one_date(server: FeedServer) -> None:
    """A date-only feed (every item on one day) keeping its 6 newest posts, newest first:
    after a burst of 4, it publishes 2 a run with max_items_per_run 2. The deferred posts
    go out first (ties are taken from the end of the document, as undated items are), so
    none leaves the feed undelivered."""
    cfg = config(server, "/feed.xml", max_items_per_run=2)

    def window(newest: int) -> str:
        # guids ending in 0: feedserver.rss dates them all 1 January 2024, 10:00
        return rss([(f"p{n}-0", f"Post {n}", "s") for n in range(newest, newest - 6, -1)])

    server.put("/feed.xml", window(6))
    state = run_tap(cfg).final_state
    delivered: list[str] = []
    newest = 10
    for _ in range(5):
        server.put("/feed.xml", window(newest))
        run = run_tap(cfg, state)
        assert run.returncode == 0, run.stderr
        delivered += [r["item_id"] for r in run.items]
        state = run.final_state
        newest += 2
    # all but the last run's 2 newest, which wait for the next run
    assert sorted(delivered) == sorted(f"p{n}-0" for n in range(7, newest - 2 - 2 + 1))


def test_state_is_bounded_and_compact(server: FeedServer) -> None:
    many = [(f"id-{n}", f"T{n}", "s") for n in range(300)]
    server.put("/feed.xml", rss(many))
    cfg = config(server, "/feed.xml", max_state_items=100)
    run = run_tap(cfg)
    partition = run.partition(cfg["feed_urls"][0])
    assert len(base64.b64decode(partition["items"])) == 100 * 12
    assert len(partition["items"]) == 100 * 16  # 16 bytes of state per remembered item
    assert run.health[0]["item_counts"]["remembered"] == 100
    assert "state_trimmed" in {i["code"] for i in run.health[0]["issues"]}


def test_a_lowered_max_state_items_holds_for_feeds_that_answer_304_or_fail(
    server: FeedServer,
) -> None:
    """The bound applied only when a feed's document changed: an unchanged feed (304),
    or one that failed, kept its 300 items for as long as it did so."""
    server.put("/a.xml", rss([(f"a-{n}", f"T{n}", "s") for n in range(300)]))
    server.put("/b.xml", rss([(f"b-{n}", f"T{n}", "s") for n in range(300)]))
    first = run_tap(config(server, "/a.xml", "/b.xml"))
    assert first.health[0]["item_counts"]["remembered"] == 300
    server.put("/b.xml", "gone", status=500)
    lowered = run_tap(config(server, "/a.xml", "/b.xml", max_state_items=100), first.final_state)
    assert [h["status"] for h in lowered.health] == ["not_modified", "error"]
    for url, row in zip([h["feed_url"] for h in lowered.health], lowered.health, strict=True):
        items = base64.b64decode(lowered.partition(url)["items"])
        # the first 100 remembered: the most relevant (the document's newest) first
        assert items == base64.b64decode(first.partition(url)["items"])[: 100 * 12]
        assert row["item_counts"]["remembered"] == 100


def _state_size_the_readme_gives() -> tuple[float, float]:
    """(bytes of a 20-item feed's partition after its first run, after it remembers its
    120 items), as docs/state-and-delivery.md (linked from the README) says them."""
    docs = Path(__file__).resolve().parents[3] / "docs"
    readme = (docs / "state-and-delivery.md").read_text(encoding="utf-8")
    words = r"about ([\d,]+) bytes after its first run and about ([\d.]+) KB once it remembers"
    said = re.search(words.replace(" ", r"\s+"), readme)
    assert said, "docs/state-and-delivery.md gives a 20-item feed's state size"
    return float(said[1].replace(",", "")), float(said[2]) * 1000


def test_a_20_item_feed_takes_the_state_the_readme_says(server: FeedServer) -> None:
    """The README gave first-run figures only (~450 bytes a feed, 7 MB for 10,000 feeds),
    which a feed passes as soon as it publishes: it keeps 100 items more than its
    document, 16 bytes each, so the state of a long-running shard is three times that."""
    path = "/blog-01/feed.xml"  # a URL of about 40 characters, as many are
    cfg = config(server, path)
    state: dict[str, Any] | None = None
    sizes = []
    for run_number in range(7):  # 20 new items a run: 120 remembered from the sixth on
        newest = 20 * run_number + 20
        server.put(path, rss([(f"post-{n}", f"Post {n}", "s") for n in range(newest - 20, newest)]))
        run = run_tap(cfg, state)
        assert run.returncode == 0, run.stderr
        state = run.final_state
        partition = run.partition(server.url(path))
        assert partition.get("etag") and partition.get("last_modified")
        sizes.append(len(json.dumps(partition, separators=(",", ":")).encode()))
    assert run.health[0]["item_counts"]["remembered"] == 120
    first_run, steady = _state_size_the_readme_gives()
    assert abs(sizes[0] - first_run) <= first_run / 10, sizes
    assert abs(sizes[-1] - steady) <= steady / 10, sizes
    assert sizes[-1] == sizes[-2]  # bounded: no more once 120 are remembered
    # 16 bytes of state per remembered item.
    assert [b - a for a, b in pairwise(sizes)][:5] == [20 * 16] * 5


def test_a_failing_feed_beside_healthy_ones(server: FeedServer) -> None:
    server.put("/good.xml", rss(ITEMS))
    server.put("/broken.xml", "<html><body>not a feed</body></html>", content_type="text/html")
    server.put("/gone.xml", "gone", status=500, content_type="text/plain")
    cfg = config(server, "/good.xml", "/broken.xml", "/gone.xml", first_run_mode="emit_all")
    run = run_tap(cfg)
    assert run.returncode == 0, run.stderr
    by_url = {h["feed_url"]: h for h in run.health}
    assert by_url[server.url("/good.xml")]["status"] == "ok"
    assert by_url[server.url("/broken.xml")]["error_code"] == "not_a_feed"
    assert by_url[server.url("/gone.xml")]["error_code"] == "http_error"
    assert by_url[server.url("/gone.xml")]["http_status"] == 500
    assert len(run.items) == 5
    # The failing feeds keep no baseline, only their failure streak.
    for path in ("/broken.xml", "/gone.xml"):
        partition = run.partition(server.url(path))
        assert {k: v for k, v in partition.items() if k != "context"} == {
            "v": 1,
            "failures": 1,
            "failed_at": by_url[server.url(path)]["checked_at"],
            "items": "",
        }
    assert "Run summary" in run.stderr


def test_a_content_encoding_that_names_no_coding_is_read_and_told_on_the_row(
    server: FeedServer,
) -> None:
    """An S3 object stored with ContentEncoding='UTF-8': the feed is read as sent, its
    row says which label was ignored; a body that then is no feed says so too."""
    server.put("/s3.xml", rss(ITEMS), headers={"Content-Encoding": "UTF-8"})
    server.put("/junk.xml", b"\x00\x01\x02", headers={"Content-Encoding": "x-secret"})
    run = run_tap(config(server, "/s3.xml", "/junk.xml"))
    assert run.returncode == 0, run.stderr
    ok, junk = run.health
    assert (ok["status"], ok["item_counts"]["seen"]) == ("ok", len(ITEMS))
    [note] = [i for i in ok["issues"] if i["code"] == "encoding_mismatch"]
    assert '"utf-8"' in note["message"]
    assert junk["error_code"] in ("invalid_feed", "not_a_feed")
    assert '"x-secret"' in str(junk["issues"])


def test_a_failed_or_skipped_row_names_its_error_code_first_in_its_issues(
    server: FeedServer,
) -> None:
    """The contract the README states (Error and issue codes) and the dbt models count
    with: an error or skipped row's issues begin with its error_code, so issue_count
    counts the failure too; the issues after it are the check's others."""
    server.put("/gone.xml", "gone", status=404, content_type="text/plain")
    server.put(
        "/busy.xml", "", status=429, content_type="text/plain", headers={"Retry-After": "600"}
    )
    cfg = config(server, "/gone.xml", "/busy.xml")
    first = run_tap(cfg)
    second = run_tap(cfg, first.final_state)
    rows = [(h["status"], h["error_code"], h["issues"]) for h in first.health + second.health]
    assert [(status, code) for status, code, _ in rows] == [
        ("error", "http_error"),
        ("error", "rate_limited"),
        ("error", "http_error"),
        ("skipped", "retry_later"),
    ]
    for _, code, issues in rows:
        assert issues[0]["code"] == code
        assert [i["code"] for i in issues].count(code) == 1


def test_a_stale_feed_s_error_row_names_its_error_code_before_stale_feed(
    server: FeedServer,
) -> None:
    """The same contract on a feed that went quiet and then down: its row also carries
    stale_feed, which must not take the error code's place at the head of the issues."""
    server.put("/feed.xml", rss(ITEMS))  # items of January 2024: long stale
    cfg = config(server, "/feed.xml", stale_after_days=30)
    first = run_tap(cfg)
    server.put("/feed.xml", "down", status=500, content_type="text/plain")
    failed = run_tap(cfg, first.final_state)
    [row] = failed.health
    assert (row["status"], row["is_stale"]) == ("error", True)
    assert [i["code"] for i in row["issues"]][:2] == ["http_error", "stale_feed"]


def test_a_document_without_items_leaves_the_newest_item_seen_as_it_was(
    server: FeedServer,
) -> None:
    # Items dated 2 to 5 January 2024; then an empty document; then only items never
    # seen, all newer: the gap is still seen, and the empty run's row still knows the
    # newest item (the feed is stale by it, not "unknown").
    server.put("/feed.xml", rss([(f"id-{n}", f"T{n}", "s") for n in range(1, 5)]))
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    server.put("/feed.xml", rss([]))
    emptied = run_tap(cfg, first.final_state)
    [row] = emptied.health
    assert (row["newest_item_at"], row["is_stale"]) == ("2024-01-05T10:00:00Z", True)
    server.put("/feed.xml", rss([(f"id-{n}", f"T{n}", "s") for n in range(10, 15)]))
    moved_on = run_tap(cfg, emptied.final_state)
    [row] = moved_on.health
    assert "possible_gap" in {issue["code"] for issue in row["issues"]}


def test_an_internal_ca_is_trusted_through_ca_bundle_path(tmp_path: Path) -> None:
    ca = trustme.CA(organization_name="Internal test CA")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    bundle = tmp_path / "internal-ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    intranet = FeedServer(tls=context).start()
    try:
        intranet.put("/feed.xml", rss(ITEMS))
        cfg = config(intranet, "/feed.xml", first_run_mode="emit_all")
        refused = run_tap(cfg)
        trusted = run_tap({**cfg, "ca_bundle_path": str(bundle)})
    finally:
        intranet.stop()
    assert refused.returncode == 0, refused.stderr
    assert refused.health[0]["error_code"] == "tls_failed"
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.health[0]["status"] == "ok"
    assert len(trusted.items) == len(ITEMS)


def test_an_https_page_advertising_a_plain_http_feed_has_it_read_over_https(
    tmp_path: Path,
) -> None:
    # A feed found through a page read over https is read no less safely than the page:
    # its http:// link is asked for over https, never in clear text.
    ca = trustme.CA(organization_name="Internal test CA")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    bundle = tmp_path / "internal-ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    secure, plain = FeedServer(tls=context).start(), FeedServer().start()
    try:
        on_secure = secure.url("/feed.xml").replace("https:", "http:")
        on_plain = plain.url("/feed.xml")
        for path, feed_url in (("/blog", on_secure), ("/plain", on_plain)):
            page = PAGE.replace('"/feed.xml"', f'"{feed_url}"')
            secure.put(path, page, content_type="text/html")
        secure.put("/feed.xml", rss(ITEMS))
        plain.put("/feed.xml", rss(ITEMS))
        cfg = {
            **config(secure, "/blog", discover_from_websites=True, first_run_mode="emit_all"),
            "feed_urls": [secure.url("/blog"), secure.url("/plain")],
            "ca_bundle_path": str(bundle),
        }
        run = run_tap(cfg)
    finally:
        secure.stop()
        plain.stop()
    assert run.returncode == 0, run.stderr
    by_url = {row["feed_url"]: row for row in run.health}
    upgraded, refused = by_url[secure.url("/blog")], by_url[secure.url("/plain")]
    assert (upgraded["status"], upgraded["final_url"]) == ("ok", secure.url("/feed.xml"))
    assert upgraded["advertised_feeds"][0] == on_secure  # the link as the page gives it
    [found] = [issue for issue in upgraded["issues"] if issue["code"] == "feed_discovered"]
    assert "asked for over https" in found["message"]
    assert len(run.items) == len(ITEMS)
    # A server that speaks only plain http is not asked in clear text.
    assert refused["status"] == "error"
    assert plain.requests == []


@pytest.mark.parametrize("kind", ["missing", "directory", "not-pem", "empty"])
def test_a_ca_bundle_that_cannot_be_loaded_stops_the_run(kind: str, tmp_path: Path) -> None:
    secret_dir = tmp_path / "SECRETDIR"
    secret_dir.mkdir()
    path = secret_dir / "ca.pem"
    if kind == "directory":
        path.mkdir()
    elif kind == "not-pem":
        path.write_text("SECRET1 is not a certificate\n")
    elif kind == "empty":
        path.write_text("")
    run = run_tap({"feed_urls": ["https://example.org/feed.xml"], "ca_bundle_path": str(path)})
    assert run.returncode != 0
    assert "ca_bundle_path" in run.stderr
    assert "SECRET1" not in run.stderr and "SECRETDIR" not in run.stderr
    assert '"type": "RECORD"' not in run.stdout


def test_records_leave_in_config_order(server: FeedServer) -> None:
    paths = [f"/f{n}.xml" for n in range(12)]
    for n, path in enumerate(paths):
        server.put(path, rss([(f"{n}-a", "a", "a"), (f"{n}-b", "b", "b")]))
    run = run_tap(config(server, *paths, first_run_mode="emit_all", max_concurrency=4))
    assert [h["feed_url"] for h in run.health] == [server.url(p) for p in paths]
    assert [r["item_id"] for r in run.items] == [f"{n}-{x}" for n in range(12) for x in "ab"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"bogus": 1}, "bogus"),
        ({"max_items_per_run": 0}, "max_items_per_run"),
        ({"max_state_items": 99}, "max_state_items"),
        ({"first_run_mode": "everything"}, "first_run_mode"),
        ({"monitor_id": "has space"}, "monitor_id"),
        # "$" in a pattern matches before a final newline in Python's re (jsonschema).
        ({"monitor_id": "default\n"}, "monitor_id"),
        ({"user_agent": "MyAgent\n"}, "user_agent"),
        ({"start_date": "2024-01-01\n"}, "start_date"),
        ({"start_date": "2024-01-01T00:00:00Z\n"}, "start_date"),
        ({"feed_urls": []}, "feed_urls"),
        ({"feed_urls": ["ftp://example.org/feed"]}, "feed_urls"),
        ({"feed_urls": ["https://example.org/" + "a" * 2100]}, "feed_urls"),
        ({"start_date": "yesterday"}, "start_date"),
        # Out of range once in UTC: a config error, not an OverflowError traceback.
        ({"start_date": "0001-01-01T00:00:00+01:00"}, "config_invalid: config['start_date']"),
        ({"start_date": "9999-12-31T23:59:59-01:00"}, "config_invalid: config['start_date']"),
        ({"feed_urls": ["https://user:s3cret@example.org/feed"]}, "credentials"),
        # A URL the fetcher refuses stops the run at start-up (it gave an invalid_url row).
        (
            {"feed_urls": ["https://example.org/feed.xml", "http://a..b/feed"]},
            "config_invalid: config['feed_urls'][1]: the URL's host name is malformed",
        ),
        # urlsplit raised on the unclosed bracket: a traceback instead of a config error.
        ({"feed_urls": ["http://u@[::1/feed"]}, "config['feed_urls'][0]: "),
        ({"request_timeout_seconds": 0.5}, "request_timeout_seconds"),
        (
            {"ignored_changes": ["updated_at", "views"]},
            "config_invalid: config['ignored_changes'][1]: must be one of ['url', 'title'",
        ),
        (
            {"ignored_changes": ["summary", "summary"]},
            "config_invalid: config['ignored_changes']: has repeated items",
        ),
        (
            {
                "batch_config": {
                    "encoding": {"format": "jsonl", "compression": "none"},
                    "storage": {"root": "file:///tmp", "prefix": "b-"},
                }
            },
            "config['batch_config']: batch mode is not supported",
        ),
        (
            {"feed_urls": ["https://example.org/f", "HTTPS://Example.org:443/f#top"]},
            "feed_urls'][1] is the same feed as config['feed_urls'][0]",
        ),
        (
            {"feed_urls": ["https://example.org/f", "https://example.org/f"]},
            "config_invalid: config['feed_urls'][1] is the same URL as config['feed_urls'][0]",
        ),
    ],
    ids=lambda v: json.dumps(v)[:40] if isinstance(v, dict) else v,
)
def test_strict_config_errors(extra: dict[str, Any], needle: str) -> None:
    cfg = {"feed_urls": ["https://example.org/feed.xml"], **extra}
    run = run_tap(cfg)
    assert run.returncode != 0
    assert needle in run.stderr and "Traceback" not in run.stderr
    assert '"type": "RECORD"' not in run.stdout


def _error_lines(stderr: str) -> list[str]:
    return [line.split("| ", 3)[-1] for line in stderr.splitlines() if "| ERROR" in line]


@pytest.mark.parametrize("args", [(), ("--test",)], ids=["run", "test"])
def test_every_config_problem_is_one_coded_line_told_at_once(args: tuple[str, ...]) -> None:
    """A misspelt key hid every other problem until it was fixed, and the refusal ended
    with an ERROR line without a code (the SDK's "Config validation failed"); --test let
    a traceback out instead."""
    cfg = {
        "feed_urls": ["https://example.org/feed.xml", "https://u:p@example.org/b.xml"],
        "start_date": "0001-01-01T00:00:00+01:00",
        "shard_count": 2,
        "shard_index": 5,
        "max_concurency": 4,
    }
    run = run_tap(cfg, args=args)
    assert run.returncode == 1
    lines = _error_lines(run.stderr)
    assert all(line.startswith("config_invalid: config") for line in lines), lines
    # One line each, in the order of the file's keys.
    assert [line.split(":")[1].split(" ")[1] for line in lines] == [
        "config['feed_urls'][1]",
        "config['start_date']",
        "config['shard_index']",
        "config['max_concurency']",
    ]
    assert lines[-1].endswith("not a setting of this tap (did you mean max_concurrency?)")
    assert "Config validation failed" not in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


def test_a_test_run_stops_after_a_record_without_an_error_and_writes_no_state(
    server: FeedServer,
) -> None:
    """--test syncs one record a stream. The SDK stops a stream at its second record by
    aborting it, which it logs as "An unhandled error occurred" on a run that succeeded;
    and it never reads --state in test mode, so the STATE it wrote was a new first run's,
    which a target saving it would keep in place of the real baseline."""
    server.put("/a.xml", rss(ITEMS))
    server.put("/b.xml", rss(ITEMS[:2]))
    cfg = config(server, "/a.xml", "/b.xml", first_run_mode="emit_all")
    run = run_tap(cfg, {"bookmarks": {"feed_items": {"partitions": []}}}, args=("--test",))
    assert run.returncode == 0, run.stderr
    assert not [line for line in run.stderr.splitlines() if "| ERROR" in line], run.stderr
    messages = [json.loads(line) for line in run.stdout.splitlines()]
    assert [m["type"] for m in messages if m["type"] == "STATE"] == []
    records = [m["stream"] for m in messages if m["type"] == "RECORD"]
    assert records == ["feed_items", "feed_health"], records
    assert "Test run: 'feed_items' ends after its first record, a test run's limit" in run.stderr


SECRET_URL = "https://alice:hunter2@feeds.example/x?token=SECRET1"


@pytest.mark.parametrize(
    "extra",
    [
        {"feed_urls": SECRET_URL},  # a string where a list belongs
        {"feed_urls": ["ftp" + SECRET_URL[5:]]},  # not http(s)
        {"feed_urls": [SECRET_URL + "a" * 2100]},  # too long
        {"feed_urls": [SECRET_URL, SECRET_URL]},  # repeated
        {"feed_urls": ["https://feeds..example/x?token=SECRET1"]},  # malformed host
        {"user_agent": "agent token=SECRET1\r\nX: y"},
    ],
    ids=["string", "ftp", "too-long", "repeated", "malformed-host", "user-agent"],
)
def test_config_errors_never_quote_the_values(extra: dict[str, Any]) -> None:
    run = run_tap({"feed_urls": ["https://example.org/feed.xml"], **extra})
    assert run.returncode != 0
    assert "| config_invalid: config[" in run.stderr
    assert "hunter2" not in run.stderr and "SECRET1" not in run.stderr


@pytest.mark.parametrize(
    "state",
    [
        "{not json",
        "",
        "[]",
        "0",
        '""',
        '"x"',
        {"bookmarks": None},
        {
            "bookmarks": {
                "feed_items": {
                    "replication_key": "published",
                    "replication_key_value": "2024-01-01T00:00:00Z",
                }
            }
        },
        {"bookmarks": {"orders": {"replication_key": "updated_at", "replication_key_value": "1"}}},
        '{"bookmarks": {"feed_items": {"partitions": [{"context": {"monitor_id": "default", '
        '"feed_url": "x"}, "v": 1, "items": "", "largest_document": ' + "9" * 5000 + "}]}}}",
        '{"bookmarks": {"other": ' + "[" * 200_000 + "]" * 200_000 + "}}",
        {"type": "STATE", "value": {"bookmarks": {}}},
        {"singer_state": {"bookmarks": {}}},
        {"bookmarks": {"feed_health": {"partitions": "x"}}},
        {"bookmarks": []},
        {"bookmarks": {"feed_items": {"partitions": {}}}},
        {"bookmarks": {"feed_items": {"partitions": [{"context": {"feed_url": "x"}}]}}},
        {
            "bookmarks": {
                "feed_items": {
                    "partitions": [
                        {
                            "context": {"monitor_id": "default", "feed_url": "x"},
                            "v": 99,
                            "items": "",
                        }
                    ]
                }
            }
        },
        {
            "bookmarks": {
                "feed_items": {
                    "partitions": [
                        {
                            "context": {"monitor_id": "default", "feed_url": "x"},
                            "v": 1,
                            "items": "AAAA",
                        }
                    ]
                }
            }
        },
        {
            "bookmarks": {
                "feed_items": {
                    "partitions": [
                        {"context": {"monitor_id": "default", "feed_url": "x"}, "v": 1, "items": 5}
                    ]
                }
            }
        },
    ],
    ids=[
        "invalid-json",
        "empty-file",
        "empty-list",
        "zero",
        "empty-string",
        "string",
        "bookmarks-null",
        "another-taps-bookmark",
        "another-taps-streams",
        "number-of-5000-digits",
        "nested-200000-deep",
        "state-message",
        "meltano-stored-form",
        "health-partitions-string",
        "bookmarks-list",
        "partitions-object",
        "no-monitor",
        "wrong-version",
        "truncated-items",
        "items-wrong-type",
    ],
)
def test_unreadable_state_is_refused_before_anything_is_emitted(
    server: FeedServer, state: Any
) -> None:
    server.put("/feed.xml", rss(ITEMS))
    run = run_tap(config(server, "/feed.xml", first_run_mode="emit_all"), state)
    assert run.returncode != 0
    assert '"type": "RECORD"' not in run.stdout
    # the tap's own message, alone, with its stable code
    code = "state_unsupported" if '"v": 99' in json.dumps(state) else "state_invalid"
    assert any(
        "| ERROR" in line and f"| {code}: state: " in line for line in run.stderr.splitlines()
    ), run.stderr
    assert "Traceback" not in run.stderr
    assert server.requests == []


def test_a_state_file_holding_a_path_is_refused_not_followed(
    server: FeedServer, tmp_path: Path
) -> None:
    """On the command line the state file's JSON is the state: a string in it is not the
    path of another file to read (the SDK's Python API takes one), nor quoted back."""
    server.put("/feed.xml", rss(ITEMS))
    first = run_tap(config(server, "/feed.xml"))
    elsewhere = tmp_path / "token-SECRET1.json"
    elsewhere.write_text(json.dumps(first.final_state), encoding="utf-8")
    fetched = len(server.requests)
    run = run_tap(config(server, "/feed.xml"), json.dumps(str(elsewhere)))
    assert run.returncode == 1
    [line] = [line for line in run.stderr.splitlines() if "| ERROR" in line]
    assert "| state_invalid: state: the state must be a JSON object" in line
    assert "SECRET1" not in run.stderr and "Traceback" not in run.stderr
    assert len(server.requests) == fetched


@pytest.mark.parametrize(
    ("encoding", "named"),
    [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("latin-1", "not UTF-8")],
    ids=["utf-16-le-bom", "utf-16-be-bom", "latin-1"],
)
def test_a_state_file_not_in_utf8_is_refused_with_its_code(
    server: FeedServer, encoding: str, named: str
) -> None:
    """Windows PowerShell 5.1 saves `meltano state get ID > file` as UTF-16 with a BOM."""
    server.put("/feed.xml", rss(ITEMS))
    state = {"bookmarks": {"feed_items": {"partitions": []}}, "x": "é"}
    text = json.dumps(state, ensure_ascii=False) + "\r\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    run = run_tap(config(server, "/feed.xml"), data)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    [line] = [line for line in run.stderr.splitlines() if "| ERROR" in line]
    assert "| state_invalid: state: the state file is " in line
    assert named in line
    assert server.requests == []


def test_a_state_file_with_a_utf8_bom_is_read(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))
    first = run_tap(config(server, "/feed.xml"))
    assert first.returncode == 0, first.stderr
    again = run_tap(
        config(server, "/feed.xml"), b"\xef\xbb\xbf" + json.dumps(first.final_state).encode()
    )
    assert again.returncode == 0, again.stderr
    assert again.health[0]["status"] == "not_modified"  # the state was read, not ignored


PAGE = """<!doctype html><html><head><title>Blog</title>
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
<link rel="alternate" type="application/atom+xml" href="/atom.xml">
</head><body>hello</body></html>"""


def test_web_page_discovery(server: FeedServer) -> None:
    server.put("/blog", PAGE, content_type="text/html; charset=utf-8")
    server.put("/feed.xml", rss(ITEMS))
    plain = run_tap(config(server, "/blog"))
    [row] = plain.health
    assert (row["status"], row["error_code"]) == ("error", "not_a_feed")
    assert row["advertised_feeds"] == [server.url("/feed.xml"), server.url("/atom.xml")]

    found = run_tap(config(server, "/blog", discover_from_websites=True, first_run_mode="emit_all"))
    [row] = found.health
    assert row["status"] == "ok"
    assert row["discovered_from"] == server.url("/blog")
    assert row["final_url"] == server.url("/feed.xml")
    assert len(found.items) == 5
    assert {r["final_url"] for r in found.items} == {server.url("/feed.xml")}
    assert "feed_discovered" in {i["code"] for i in row["issues"]}
    assert server.requests_to("/atom.xml") == []  # only the first advertised feed is read


def test_a_discovered_feed_is_not_held_back_by_its_older_web_page(server: FeedServer) -> None:
    # The page and the feed come from a server that compares If-Modified-Since by date:
    # the feed's Last-Modified, sent to the older page, would get a 304 for the page.
    # (A state written now keeps the page's own validators: one from before, which sends
    # the page the feed's.)
    server.put("/blog", PAGE, content_type="text/html", compares_dates=True, last_modified=1e9)
    server.put("/feed.xml", rss(ITEMS[:2]), compares_dates=True, last_modified=1.7e9)
    cfg = config(server, "/blog", discover_from_websites=True)
    first = run_tap(cfg)
    assert first.health[0]["status"] == "ok"
    assert first.final_state is not None
    for partition in first.final_state["bookmarks"]["feed_items"]["partitions"]:
        for name in ("page_etag", "page_last_modified", "page_url_hash"):
            partition.pop(name, None)

    server.put("/feed.xml", rss(ITEMS[:3]), compares_dates=True, last_modified=1.7e9 + 60)
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["discovered_from"]) == ("ok", server.url("/blog"))
    assert [r["item_id"] for r in second.items] == [ITEMS[2][0]]
    # Asked again unconditionally, the page led to the feed, fetched on its own validator.
    page_asks = server.requests_to("/blog")[1:]
    assert [r.if_modified_since is not None for r in page_asks] == [True, False]
    assert server.requests_to("/feed.xml")[-1].if_modified_since is not None

    third = run_tap(cfg, second.final_state)  # on the page's own date now: its 304 holds
    assert (third.health[0]["status"], third.items) == ("not_modified", [])
    assert server.requests_to("/blog")[-1].if_modified_since == "Sun, 09 Sep 2001 01:46:40 GMT"


def test_a_token_a_redirect_adds_is_not_shown_in_the_records(server: FeedServer) -> None:
    server.put("/feed.xml?token=redirsecret&x=1", rss(ITEMS[:2]))
    signed = server.url("/feed.xml?token=redirsecret&x=1")
    server.put("/old", b"moved", status=301, headers={"Location": signed})
    run = run_tap(config(server, "/old", first_run_mode="emit_all"))
    [row] = run.health
    assert row["status"] == "ok"
    assert row["final_url"] == server.url("/feed.xml")
    assert {r["final_url"] for r in run.items} == {server.url("/feed.xml")}
    records = [m for m in run.messages if m["type"] == "RECORD"]
    assert len(records) == 3
    assert "redirsecret" not in json.dumps(records)
    # Nor in the state (Meltano stores it), and the next run still gets its 304.
    assert "redirsecret" not in json.dumps(run.final_state)
    again = run_tap(config(server, "/old"), run.final_state)
    assert again.health[0]["status"] == "not_modified"


def test_a_page_that_advertises_another_feed_first_gives_it_a_baseline(
    server: FeedServer,
) -> None:
    server.put("/blog", PAGE, content_type="text/html; charset=utf-8")
    server.put("/feed.xml", rss(ITEMS[:2]))
    server.put("/atom.xml", rss([(f"comment-{n}", "C", "c") for n in range(30)]))
    cfg = config(server, "/blog", discover_from_websites=True)
    first = run_tap(cfg)
    assert first.health[0]["final_url"] == server.url("/feed.xml")

    rss_link, atom_link = (line for line in PAGE.splitlines() if line.startswith("<link"))
    swapped = PAGE.replace(rss_link, "@").replace(atom_link, rss_link).replace("@", atom_link)
    server.put("/blog", swapped, content_type="text/html")
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/atom.xml"))
    assert second.items == []  # baseline_only: the comments' backlog is not emitted
    assert "another feed" in json.dumps(row["issues"])
    assert [i["code"] for i in row["issues"]].count("feed_discovered") == 1
    comments = [(f"comment-{n}", "C", "c") for n in range(30)]
    server.put("/atom.xml", rss([("comment-new", "C", "c"), *comments]))
    third = run_tap(cfg, second.final_state)
    assert [r["item_id"] for r in third.items] == ["comment-new"]


def test_a_feed_that_differs_only_in_its_query_is_another_feed(server: FeedServer) -> None:
    # WordPress advertises its feeds as /?feed=rss2 and /?feed=comments-rss2.
    def page(href: str) -> str:
        return f'<html><head><link rel="alternate" type="application/rss+xml" href="{href}">'

    server.put("/blog", page("/?feed=rss2"), content_type="text/html")
    server.put("/?feed=rss2", rss(ITEMS[:2]))
    server.put("/?feed=comments-rss2", rss([(f"comment-{n}", "C", "c") for n in range(30)]))
    cfg = config(server, "/blog", discover_from_websites=True)
    first = run_tap(cfg)
    [row] = first.health
    # The URL the page advertises is read and shown whole: the page published it.
    assert row["final_url"] == server.url("/?feed=rss2")
    assert first.partition(server.url("/blog"))["final_url"] == server.url("/?feed=rss2")
    # A state from before the query was kept: read in full once, nothing comes out.
    assert first.final_state is not None
    old_state = json.loads(json.dumps(first.final_state).replace("/?feed=rss2", "/"))
    for partition in old_state["bookmarks"]["feed_items"]["partitions"]:
        del partition["final_url_hash"]  # nor its hash, kept since
    upgraded = run_tap(cfg, old_state)
    assert (upgraded.health[0]["status"], upgraded.items) == ("ok", [])
    assert upgraded.partition(server.url("/blog"))["final_url"] == server.url("/?feed=rss2")

    server.put("/blog", page("/?feed=comments-rss2"), content_type="text/html")
    second = run_tap(cfg, first.final_state)
    [row] = second.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/?feed=comments-rss2"))
    assert second.items == []  # baseline_only: the comments' backlog is not emitted
    assert [i["code"] for i in row["issues"]].count("feed_discovered") == 1
    assert "another feed" in json.dumps(row["issues"])


def test_a_token_a_discovered_feed_s_redirect_adds_is_not_shown(server: FeedServer) -> None:
    server.put("/blog", PAGE, content_type="text/html")
    signed = server.url("/feed.xml?feed=1&token=redirsecret")
    server.put("/feed.xml", b"moved", status=302, headers={"Location": signed})
    server.put("/feed.xml?feed=1&token=redirsecret", rss(ITEMS[:2]))
    run = run_tap(config(server, "/blog", discover_from_websites=True, first_run_mode="emit_all"))
    [row] = run.health
    assert (row["status"], row["final_url"]) == ("ok", server.url("/feed.xml"))
    assert len(run.items) == 2
    assert "redirsecret" not in json.dumps([m for m in run.messages if m["type"] == "RECORD"])
    assert "redirsecret" not in json.dumps(run.final_state)


def test_stale_feed_is_flagged(server: FeedServer) -> None:
    server.put("/feed.xml", rss(ITEMS))  # items dated January 2024
    run = run_tap(config(server, "/feed.xml", stale_after_days=30))
    [row] = run.health
    assert row["is_stale"] is True
    assert row["newest_item_at"] == "2024-01-05T10:00:00Z"
    assert "stale_feed" in {i["code"] for i in row["issues"]}
    again = run_tap(config(server, "/feed.xml", stale_after_days=3650), run.final_state)
    [row] = again.health
    assert (row["status"], row["is_stale"]) == ("not_modified", False)


def test_staleness_takes_each_item_s_later_date_and_no_date_in_the_future(
    server: FeedServer,
) -> None:
    """An entry published long ago and updated an hour ago keeps its feed fresh; an item
    dated years ahead (a typo) does not keep a dead feed fresh for ever. Before, the
    published date won over a later updated date, and 2099 was the newest item."""
    now = datetime.now(UTC)
    long_ago = (now - timedelta(days=730)).strftime("%Y-%m-%dT%H:%M:%SZ")
    an_hour_ago = (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    server.put(
        "/atom.xml",
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Runbook</title>'
        f"<id>urn:f</id><updated>{an_hour_ago}</updated><entry><id>urn:e1</id>"
        f"<title>Runbook</title><published>{long_ago}</published>"
        f"<updated>{an_hour_ago}</updated></entry></feed>",
        content_type="application/atom+xml",
    )
    server.put(
        "/dead.xml",
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Dead</title>'
        "<item><guid>1</guid><title>Last post</title>"
        "<pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate></item>"
        "<item><guid>2</guid><title>Typo</title>"
        "<pubDate>Thu, 01 Jan 2099 00:00:00 GMT</pubDate></item></channel></rss>",
    )
    cfg = config(server, "/atom.xml", "/dead.xml", stale_after_days=30)
    run = run_tap(cfg)
    living, dead = run.health
    assert (living["is_stale"], living["newest_item_at"]) == (False, an_hour_ago)
    assert (dead["is_stale"], dead["newest_item_at"]) == (True, "2024-01-01T10:00:00Z")
    # The state keeps the same date, so a 304 tomorrow says the same.
    assert run.partition(server.url("/dead.xml"))["newest_item_at"] == "2024-01-01T10:00:00Z"
    assert run.partition(server.url("/atom.xml"))["newest_item_at"] == an_hour_ago

    # A state written before kept 2099: a 304 no longer trusts it.
    state = json.loads(json.dumps(run.final_state))
    for partition in state["bookmarks"]["feed_items"]["partitions"]:
        partition["newest_item_at"] = "2099-01-01T00:00:00Z"
    again = run_tap(cfg, state)
    assert [(r["status"], r["is_stale"], r["newest_item_at"]) for r in again.health] == [
        ("not_modified", None, None),
        ("not_modified", None, None),
    ]


def _catalog_without_feed_items() -> dict[str, Any]:
    done = subprocess.run(
        [*TAP, "--discover"], capture_output=True, text=True, timeout=60, check=True
    )
    catalog: dict[str, Any] = json.loads(done.stdout)
    for entry in catalog["streams"]:
        for metadata in entry["metadata"]:
            if metadata["breadcrumb"] == []:
                metadata["metadata"]["selected"] = entry["stream"] == "feed_health"
    return catalog


@pytest.mark.parametrize(
    ("start_date", "warned"),
    [
        ("2024-01-03T05:00:00", True),  # as Meltano passes an unquoted YAML timestamp
        ("2024-01-03T05:00:00+02:00", False),
    ],  # (the other spellings: tests/unit/test_configinput.py)
)
def test_a_start_date_without_an_offset_is_read_as_utc_with_a_warning(
    server: FeedServer, start_date: str, warned: bool
) -> None:
    server.put("/feed.xml", rss(ITEMS))
    run = run_tap(config(server, "/feed.xml", start_date=start_date))
    assert run.returncode == 0, run.stderr
    assert ("names no UTC offset" in run.stderr) is warned


@pytest.mark.parametrize(
    "stream_maps",
    [
        {"feed_items": {"t2": "title.("}},  # an expression that does not parse
        {"feed_health": {"monitor_id": "__NULL__"}},  # a key property removed
    ],
)
def test_a_stream_map_the_sdk_refuses_is_one_config_line(stream_maps: dict[str, Any]) -> None:
    run = run_tap({"feed_urls": ["https://example.org/feed.xml"], "stream_maps": stream_maps})
    assert run.returncode == 1
    assert "config_invalid: config['stream_maps']: " in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize("selected", [True, False], ids=["all-fields", "some-fields"])
def test_a_stream_map_that_fails_on_a_record_is_one_config_line_quoting_nothing(
    server: FeedServer, tmp_path: Path, selected: bool
) -> None:
    """int(record['title']) raised on an item's title: the SDK's traceback quoted the
    title (document text), or a stream_map_config value (a salt)."""
    server.put("/feed.xml", rss([("id-1", "SECRET-TITLE-TEXT", "s")]))
    maps = {"feed_items": {"n": "int(record['title'])", "salted": "int(config['salt'])"}}
    cfg = config(
        server,
        "/feed.xml",
        first_run_mode="emit_all",
        stream_maps=maps,
        stream_map_config={"salt": "SECRET-SALT-VALUE"},
    )
    # Not selected: the SDK's own record path, a field deselected.
    run = run_tap(cfg, catalog=None if selected else _catalog_without_summary(tmp_path))
    assert run.returncode == 1
    assert "config_invalid: config['stream_maps']: " in run.stderr
    assert "ValueError" in run.stderr
    for secret in ("SECRET-TITLE-TEXT", "SECRET-SALT-VALUE"):
        assert secret not in run.stderr
    assert "Traceback" not in run.stderr


def test_a_flattening_key_length_too_short_for_the_fields_is_one_config_line() -> None:
    base = {"feed_urls": ["https://example.org/feed.xml"], "flattening_enabled": True}
    run = run_tap({**base, "flattening_max_depth": 3, "flattening_max_key_length": 10})
    assert run.returncode == 1
    assert "config_invalid: config['flattening_max_key_length']: 10 is too short" in run.stderr
    assert "Traceback" not in run.stderr


def test_health_alone_reads_state_but_never_moves_it(server: FeedServer, tmp_path: Path) -> None:
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(_catalog_without_feed_items()))
    server.put("/feed.xml", rss([("id-x", "X", "x"), *ITEMS]))
    health_only = run_tap(cfg, first.final_state, catalog=str(catalog))
    assert health_only.returncode == 0, health_only.stderr
    assert health_only.items == []
    assert "feed_health is selected without feed_items" in health_only.stderr
    [row] = health_only.health
    assert row["conditional_request"]["etag_sent"] is True  # validators came from the state
    assert row["item_counts"]["new"] == 1
    # Nothing was emitted or remembered: the counts say what this run did.
    counts = row["item_counts"]
    assert (counts["emitted"], counts["deferred"], counts["remembered"]) == (0, 1, len(ITEMS))
    assert health_only.final_state == first.final_state  # nothing moved
    assert "0 changes emitted" in health_only.stderr  # the summary says so too
    after = run_tap(cfg, first.final_state)
    assert [r["item_id"] for r in after.items] == ["id-x"]  # the change was not lost


def test_health_alone_behind_the_state_gives_each_check_its_own_time(
    server: FeedServer, tmp_path: Path
) -> None:
    """The state's last check a day ahead of the clock (written while the clock was ahead):
    checks that move the state are timed just after it, those of runs that do not move it
    by the clock, so no two rows of the feed share their key."""
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml")
    state = run_tap(cfg).final_state
    last = datetime.now(UTC) + timedelta(days=1)
    ahead = last.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    state["bookmarks"]["feed_items"]["partitions"][0]["checked_at"] = ahead  # type: ignore[index]
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(_catalog_without_feed_items()))
    times = []
    for _ in range(3):
        health_only = run_tap(cfg, state, catalog=str(catalog))
        assert health_only.returncode == 0, health_only.stderr
        [row] = health_only.health
        times.append(row["checked_at"])
    assert len(set(times)) == 3
    assert times == sorted(times) and times[-1] < ahead
    [row] = run_tap(cfg, state).health
    just_after = last + timedelta(microseconds=1)
    assert row["checked_at"] == just_after.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _catalog_without_summary(tmp_path: Path) -> str:
    """A catalog file (the tap's --discover) with feed_items' summary deselected."""
    done = subprocess.run(
        [*TAP, "--discover"], capture_output=True, text=True, timeout=60, check=True
    )
    catalog: dict[str, Any] = json.loads(done.stdout)
    for entry in catalog["streams"]:
        for metadata in entry["metadata"]:
            if metadata["breadcrumb"] == ["properties", "summary"]:
                metadata["metadata"]["selected"] = False
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(catalog))
    return str(path)


def test_deselected_properties_and_stream_maps_still_apply(
    server: FeedServer, tmp_path: Path
) -> None:
    server.put("/feed.xml", rss(ITEMS))
    catalog_path = _catalog_without_summary(tmp_path)
    cfg = config(
        server,
        "/feed.xml",
        first_run_mode="emit_all",
        stream_maps={"feed_health": {"__alias__": "feed_checks", "error_message": "__NULL__"}},
    )
    run = run_tap(cfg, catalog=catalog_path)
    assert run.returncode == 0, run.stderr
    records = [m for m in run.messages if m["type"] == "RECORD"]
    items = [m["record"] for m in records if m["stream"] == "feed_items"]
    assert items and all("summary" not in r and "title" in r for r in items)
    checks = [m["record"] for m in records if m["stream"] == "feed_checks"]
    assert len(checks) == 1 and "error_message" not in checks[0]
    assert not [m for m in records if m["stream"] == "feed_health"]


@pytest.mark.parametrize("depth", [1, 3])
def test_flattened_records_match_the_schema_sent(server: FeedServer, depth: int) -> None:
    """Flattening turns item_counts and conditional_request into item_counts__seen...,
    and a stream map can drop a property: the SCHEMA sent must not require what the
    records no longer carry."""
    from jsonschema import Draft202012Validator

    server.put("/feed.xml", rss(ITEMS))
    cfg = config(
        server,
        "/feed.xml",
        first_run_mode="emit_all",
        flattening_enabled=True,
        flattening_max_depth=depth,
        # a map that drops a required property: the same mismatch
        stream_maps={"feed_items": {"id_source": "__NULL__"}},
    )
    run = run_tap(cfg)
    assert run.returncode == 0, run.stderr
    schemas = {m["stream"]: m["schema"] for m in run.messages if m["type"] == "SCHEMA"}
    assert set(schemas) == {"feed_items", "feed_health"}
    assert "item_counts__seen" in run.health[0] and "item_counts" not in run.health[0]
    assert "id_source" not in run.items[0]
    for stream, schema in schemas.items():
        records = run.records(stream)
        assert records
        validator = Draft202012Validator(schema)
        for record in records:
            assert [e.message for e in validator.iter_errors(record)] == [], stream
        # what is still required is still there
        assert {"monitor_id", "feed_url", "checked_at"} <= set(schema["required"])


def test_a_run_ends_on_a_state_and_never_echoes_the_incoming_one(server: FeedServer) -> None:
    """The state is megabytes at 10,000 feeds: the incoming state is not written back.
    The run still ends on a STATE after its last record: targets such as target-jsonl
    confirm only a STATE that follows the records."""
    server.put("/feed.xml", rss(ITEMS))
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    second = run_tap(cfg, first.final_state)
    for run in (first, second):
        kinds = [m["type"] for m in run.messages]
        assert kinds[0] == "SCHEMA"  # no echo of the incoming state
        assert kinds[-1] == "STATE"
        # One STATE, after every record: the health rows of the feeds a STATE covers go
        # out before it (a run killed just after it must not lose them).
        assert kinds.count("STATE") == 1
        assert kinds.count("SCHEMA") == 2  # one per stream
        assert run.final_state is not None
        assert set(run.final_state) == {"bookmarks"}
        assert set(run.final_state["bookmarks"]) == {"feed_items", "feed_health"}
    assert second.health[0]["status"] == "not_modified"


def test_no_state_goes_out_before_the_health_rows_of_the_feeds_it_covers(
    server: FeedServer,
) -> None:
    """A run killed (SIGKILL, out of memory) just after the STATE that ends feed_items
    lost the run's health rows for good: the next run starts from that STATE."""
    for n in range(4):
        server.put(f"/f{n}.xml", rss(ITEMS))
    run = run_tap({**config(server), "feed_urls": [server.url(f"/f{n}.xml") for n in range(4)]})
    assert run.returncode == 0, run.stderr
    for at, message in enumerate(run.messages):
        if message["type"] != "STATE":
            continue
        partitions = message["value"]["bookmarks"]["feed_items"].get("partitions", [])
        covered = {p["context"]["feed_url"] for p in partitions}
        rows_before = {
            m["record"]["feed_url"]
            for m in run.messages[:at]
            if m["type"] == "RECORD" and m["stream"] == "feed_health"
        }
        assert covered <= rows_before, covered - rows_before
    # The SDK's record count of feed_health counts the rows written before the STATE.
    counts = [
        metric["value"]
        for metric in map(json.loads, re.findall(r"METRIC: (\{.*\})", run.stderr))
        if metric.get("metric") == "record_count" and metric["tags"].get("stream") == "feed_health"
    ]
    assert sum(counts) == 4, counts


def test_about_offers_neither_activate_version_nor_batch() -> None:
    """The config refuses emit_activate_version_messages (ACTIVATE_VERSION would let a
    target delete the rows of earlier runs of a change stream): --about must agree."""
    about = subprocess.run(
        [*TAP, "--about", "--format=json"], capture_output=True, text=True, timeout=60, check=True
    )
    capabilities = json.loads(about.stdout)["capabilities"]
    assert "activate-version" not in capabilities
    assert "batch" not in capabilities  # the config refuses batch_config too
    assert {"catalog", "state", "discover", "about", "stream-maps"} <= set(capabilities)


def test_another_spelling_of_a_configured_url_keeps_the_feed_s_baseline(
    server: FeedServer,
) -> None:
    """Editing the case of the scheme in the config (or of the host) is no new feed:
    the change published meanwhile is delivered, not swallowed by a new baseline."""
    server.put("/feed.xml", rss(ITEMS[:2]))
    first = run_tap(config(server, "/feed.xml"))
    respelled = server.url("/feed.xml").replace("http://", "HTTP://") + "#latest"
    server.put("/feed.xml", rss(ITEMS[:3]))
    second = run_tap({**config(server), "feed_urls": [respelled]}, first.final_state)
    assert second.returncode == 0, second.stderr
    assert [(r["item_id"], r["change_type"]) for r in second.items] == [(ITEMS[2][0], "new")]
    assert second.final_state is not None
    [partition] = second.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["context"]["feed_url"] == respelled


def test_a_configured_url_replaced_by_the_url_it_led_to_keeps_the_feed_s_baseline(
    server: FeedServer,
) -> None:
    """The rows show final_url /new.xml for /old.xml (a redirect); putting /new.xml in the
    config is the same feed, not a new baseline that swallows the changes since."""
    server.put("/old.xml", b"", status=301, headers={"Location": "/new.xml"})
    server.put("/new.xml", rss(ITEMS[:2]))
    server.put("/other.xml", rss(ITEMS[:1]))
    first = run_tap(config(server, "/old.xml", "/other.xml"))
    assert first.health[0]["final_url"] == server.url("/new.xml")
    server.put("/new.xml", rss(ITEMS[:3]))
    second = run_tap(config(server, "/new.xml", "/other.xml"), first.final_state)
    assert [(r["item_id"], r["change_type"]) for r in second.items] == [(ITEMS[2][0], "new")]
    assert second.final_state is not None
    contexts = [
        p["context"]["feed_url"]
        for p in second.final_state["bookmarks"]["feed_items"]["partitions"]
    ]
    assert sorted(contexts) == sorted([server.url("/new.xml"), server.url("/other.xml")])


def test_two_former_feeds_read_from_one_url_give_it_a_new_baseline(server: FeedServer) -> None:
    server.put("/a.xml", b"", status=301, headers={"Location": "/new.xml"})
    server.put("/b.xml", b"", status=301, headers={"Location": "/new.xml"})
    server.put("/new.xml", rss(ITEMS[:2]))
    first = run_tap(config(server, "/a.xml", "/b.xml"))
    server.put("/new.xml", rss(ITEMS[:3]))
    second = run_tap(config(server, "/new.xml"), first.final_state)
    assert second.items == []  # a first run: which former feed it is, nothing tells
    assert second.health[0]["item_counts"]["new"] == 3


def test_a_web_page_replaced_by_the_feed_it_advertised_keeps_the_feed_s_baseline(
    server: FeedServer,
) -> None:
    page = '<html><head><link rel="alternate" type="application/rss+xml" href="/feed.xml">'
    server.put("/blog", page, content_type="text/html")
    server.put("/feed.xml", rss(ITEMS[:2]))
    first = run_tap(config(server, "/blog", discover_from_websites=True))
    assert first.health[0]["final_url"] == server.url("/feed.xml")
    server.put("/feed.xml", rss(ITEMS[:3]))
    second = run_tap(config(server, "/feed.xml"), first.final_state)
    assert [(r["item_id"], r["change_type"]) for r in second.items] == [(ITEMS[2][0], "new")]


def test_a_url_shown_without_the_query_a_redirect_added_does_not_take_that_feed(
    server: FeedServer,
) -> None:
    """/feed redirects to /feed.php?id=5, shown as /feed.php: /feed.php itself, put in
    the config, is another resource (here the site's default feed), which gets a first
    run of its own rather than feed 5's baseline and a backlog of new items."""
    server.put("/feed", b"", status=302, headers={"Location": "/feed.php?id=5"})
    server.put("/feed.php?id=5", rss(ITEMS[:2], title="Feed five"))
    server.put("/feed.php", rss([(f"default-{n}", "D", "d") for n in range(6)]))
    first = run_tap(config(server, "/feed"))
    assert first.health[0]["final_url"] == server.url("/feed.php")
    second = run_tap(config(server, "/feed.php"), first.final_state)
    [row] = second.health
    assert (row["status"], second.items) == ("ok", [])  # baseline_only: a first run
    assert row["item_counts"]["new"] == 6
    assert second.partition(server.url("/feed"))["final_url"] == server.url("/feed.php")


@pytest.mark.parametrize(
    ("old", "new", "taken"),
    [
        ("/old.xml", "/new.xml", False),  # shown bare? a state without the hash cannot tell
        ("/old.php?cat=5", "/new.php?cat=5", True),  # a query shown is shown whole
    ],
    ids=["no-query", "query"],
)
def test_a_state_without_the_final_url_hash_is_taken_over_only_when_nothing_was_hidden(
    server: FeedServer, old: str, new: str, taken: bool
) -> None:
    server.put(old, b"", status=301, headers={"Location": new})
    server.put(new, rss(ITEMS[:2]))
    first = run_tap(config(server, old))
    assert first.final_state is not None
    [partition] = first.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["final_url"] == server.url(new)
    del partition["final_url_hash"]  # as written before it was kept
    server.put(new, rss(ITEMS[:3]))
    second = run_tap(config(server, new), first.final_state)
    emitted = [(r["item_id"], r["change_type"]) for r in second.items]
    assert emitted == ([(ITEMS[2][0], "new")] if taken else [])


def test_a_last_modified_in_the_future_is_never_sent_back(server: FeedServer) -> None:
    """A file stamped months ahead, on a server that answers 304 to any If-Modified-Since
    not older than the file: sending that date back would hide every change until the
    clock caught up."""
    ahead = (datetime.now(UTC) + timedelta(days=180)).timestamp()
    server.put("/feed.xml", rss(ITEMS[:2]), compares_dates=True, last_modified=ahead)
    cfg = config(server, "/feed.xml")
    first = run_tap(cfg)
    assert "last_modified" not in first.partition(server.url("/feed.xml"))
    server.put("/feed.xml", rss(ITEMS[:3]), compares_dates=True, last_modified=ahead)
    second = run_tap(cfg, first.final_state)
    assert [r["item_id"] for r in second.items] == ["id-2"]
    assert server.requests_to("/feed.xml")[-1].if_modified_since is None

    # A state an earlier version wrote with such a date: not sent, and dropped.
    state = json.loads(json.dumps(second.final_state))
    state["bookmarks"]["feed_items"]["partitions"][0]["last_modified"] = formatdate(
        ahead, usegmt=True
    )
    server.put("/feed.xml", rss(ITEMS[:4]), compares_dates=True, last_modified=ahead)
    third = run_tap(cfg, state)
    assert [r["item_id"] for r in third.items] == ["id-3"]
    assert server.requests_to("/feed.xml")[-1].if_modified_since is None
    assert "last_modified" not in third.partition(server.url("/feed.xml"))
