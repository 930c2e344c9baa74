"""A private feed's token rotated: `tap-feeddelta-state rename` moves its state to the new
URL, and the tap reads it there as the same feed (no new baseline, no item twice)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.feedserver import FeedServer, rss
from tests.integration.tap.configs import config
from tests.tapharness import TapRun, run_tap

OLD, NEW = "/private.xml?token=OLD-SECRET-1", "/private.xml?token=NEW-SECRET-2"
EPISODES = [(f"ep-{n}", f"Episode {n}", "s") for n in range(1, 4)]


def _renamed(state: dict[str, Any] | None, old: str, new: str, tmp: Path) -> dict[str, Any]:
    """``state`` after `tap-feeddelta-state rename`, in Meltano's form, the URLs from a
    file (as docs/state-and-delivery.md's rotation steps pass them)."""
    state_file, urls_file = tmp / "old.json", tmp / "urls.txt"
    state_file.write_text(json.dumps({"singer_state": state}))
    urls_file.write_text(f"{old}\n{new}\n")
    command = ["rename", "--urls-file", str(urls_file), str(state_file)]
    done = subprocess.run(
        [sys.executable, "-m", "tap_feeddelta.statetool", *command],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "OLD-SECRET-1" not in done.stdout  # nor in the partition's final_url
    renamed: dict[str, Any] = json.loads(done.stdout)["singer_state"]
    return renamed


def _rotated(server: FeedServer, published: int, tmp: Path) -> TapRun:
    """Run 1 on the old URL, the state renamed, then run 2 on the new URL, the old one
    revoked, with ``published`` episodes out: run 2."""
    first = run_tap(config(server, OLD, first_run_mode="emit_recent"))
    assert first.returncode == 0, first.stderr[-2000:]
    assert [item["item_id"] for item in first.items] == ["ep-1", "ep-2"]
    state = _renamed(first.final_state, server.url(OLD), server.url(NEW), tmp)
    server.put(NEW, rss(EPISODES[:published]))
    server.put(OLD, "revoked", status=403, content_type="text/plain")
    second = run_tap(config(server, NEW, first_run_mode="emit_recent"), state)
    assert second.returncode == 0, second.stderr[-2000:]
    assert second.final_state is not None
    assert "OLD-SECRET-1" not in json.dumps(second.final_state)
    [partition] = second.final_state["bookmarks"]["feed_items"]["partitions"]
    assert partition["context"] == {"monitor_id": "default", "feed_url": server.url(NEW)}
    return second


def test_after_a_rename_only_the_item_published_since_comes_out(
    server: FeedServer, tmp_path: Path
) -> None:
    server.put(OLD, rss(EPISODES[:2]))
    second = _rotated(server, 3, tmp_path)
    assert [(i["item_id"], i["change_type"]) for i in second.items] == [("ep-3", "new")]
    [row] = second.health
    assert row["status"] == "ok"
    assert (row["item_counts"]["new"], row["item_counts"]["unchanged"]) == (1, 2)


def test_an_unchanged_feed_answers_304_at_its_new_url_on_the_old_validators(
    server: FeedServer, tmp_path: Path
) -> None:
    server.put(OLD, rss(EPISODES[:2]))
    second = _rotated(server, 2, tmp_path)
    assert second.items == []
    assert [row["status"] for row in second.health] == ["not_modified"]
    [asked] = server.requests_to(NEW)  # no second, unconditional fetch
    assert asked.if_none_match is not None


def test_a_feed_read_behind_a_redirect_is_read_once_in_full_and_keeps_its_items(
    server: FeedServer, tmp_path: Path
) -> None:
    """The old URL redirected to a URL with the old token too (kept whole as final_url):
    where the new one leads is not known, so that is dropped, with the validators."""
    old_feed, new_feed = "/feeds/1.xml?token=OLD-SECRET-1", "/feeds/1.xml?token=NEW-SECRET-2"
    server.put(old_feed, rss(EPISODES[:2]))
    server.put(OLD, "", status=302, headers={"Location": server.url(old_feed)})
    first = run_tap(config(server, OLD, first_run_mode="emit_recent"))
    assert first.health[0]["final_url"] == server.url(old_feed)
    assert len(first.items) == 2
    state = _renamed(first.final_state, server.url(OLD), server.url(NEW), tmp_path)
    server.put(NEW, "", status=302, headers={"Location": server.url(new_feed)})
    server.put(new_feed, rss(EPISODES[:3]))
    server.put(OLD, "revoked", status=403, content_type="text/plain")
    server.put(old_feed, "revoked", status=403, content_type="text/plain")
    second = run_tap(config(server, NEW, first_run_mode="emit_recent"), state)
    assert [(i["item_id"], i["change_type"]) for i in second.items] == [("ep-3", "new")]
    assert second.health[0]["final_url"] == server.url(new_feed)
    assert "OLD-SECRET-1" not in json.dumps(second.final_state)
    [asked] = server.requests_to(new_feed)
    assert asked.if_none_match is None
