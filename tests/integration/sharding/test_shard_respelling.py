"""A feed whose configured URL is respelled, or replaced by the URL it redirects to, may
move to another shard (shard_of hashes the URL as written). The shard that holds its state
refuses to run for a respelling, and warns for a redirect's target (which may be a
duplicate of it removed); tap-feeddelta-state split, given the configured URLs, moves the
state where the new URL's shard looks for it. Before, that shard silently took a new
baseline and the items published in between were never delivered.

Kept cheap: one tap run takes the baselines of both shards (split in process), and the
refusals are checked on the shard check itself, where no run is needed to see them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from tap_feeddelta.config import Settings
from tap_feeddelta.errors import StateError
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.state import index_partitions
from tap_feeddelta.statefile import check_shard
from tap_feeddelta.statetool import merge_states, split_state
from tests.feedserver import FeedServer, rss
from tests.tapharness import run_tap


def _items(*numbers: int) -> str:
    return rss([(f"g{n}", f"T{n}", "s") for n in sorted(numbers, reverse=True)])


def _config(urls: list[str], shard: int | None = None) -> dict[str, Any]:
    sharding = {} if shard is None else {"shard_count": 2, "shard_index": shard}
    return {"feed_urls": urls, "allow_private_networks": True, **sharding}


def _moving_path(server: FeedServer, respell: Any) -> str:
    """A path whose URL and respelled URL fall in different shards of 2."""
    for n in range(100):
        url = server.url(f"/a{n}.xml")
        if shard_of("default", url, 2) != shard_of("default", respell(url), 2):
            return f"/a{n}.xml"
    raise AssertionError("no path moves")


def _baselines(urls: list[str]) -> list[dict[str, Any]]:
    """Each shard's state after a first run of ``urls``."""
    first = run_tap(_config(urls))
    assert first.returncode == 0 and first.final_state is not None, first.stderr[-2000:]
    return split_state(first.final_state, 2)


def _split_by_config(
    states: Sequence[dict[str, Any] | None], urls: list[str]
) -> list[dict[str, Any]]:
    """The repair the refusal names: merge, then split with the configured URLs."""
    return split_state(merge_states([s for s in states if s is not None]), 2, urls)


def _shard_check(state: dict[str, Any], urls: list[str], shard: int) -> str | None:
    settings = Settings(feed_urls=tuple(urls), shard_count=2, shard_index=shard)
    return check_shard(index_partitions(state["bookmarks"]["feed_items"]), settings)


def _partitions(state: dict[str, Any]) -> list[dict[str, Any]]:
    partitions: list[dict[str, Any]] = state["bookmarks"]["feed_items"]["partitions"]
    return partitions


def test_a_respelled_feed_in_another_shard_is_refused_and_split_moves_its_state(
    server: FeedServer,
) -> None:
    def respell(url: str) -> str:
        return url.replace("http://", "HTTP://")

    path = _moving_path(server, respell)
    old, new = server.url(path), respell(server.url(path))
    server.put(path, _items(1, 2, 3))
    server.put("/c.xml", _items(1))
    states = _baselines([old, server.url("/c.xml")])
    server.put(path, _items(1, 2, 3, 4))

    after = [new, server.url("/c.xml")]
    holder, taker = shard_of("default", old, 2), shard_of("default", new, 2)
    # The new spelling's shard has no state for it and cannot know better: it runs first
    # here and takes a baseline, while g5 is published after it.
    early = run_tap(_config(after, taker), states[taker])
    assert early.returncode == 0 and early.items == []
    server.put(path, _items(1, 2, 3, 4, 5))
    with pytest.raises(StateError) as refused:
        _shard_check(states[holder], after, holder)
    assert refused.value.code == "state_other_shard"
    assert "--feed-urls-file" in str(refused.value) and "127.0.0.1" not in str(refused.value)

    moved = _split_by_config([states[holder], early.final_state], after)
    run = run_tap(_config(after, taker), moved[taker])
    assert run.returncode == 0, run.stderr[-2000:]
    # the older baseline is kept: g4, published before the early run, is not lost
    assert [(r["item_id"], r["feed_url"]) for r in run.items] == [("g5", new), ("g4", new)]
    assert _shard_check(moved[holder], after, holder) is None


def test_a_feed_replaced_by_its_redirect_target_in_another_shard_keeps_its_baseline(
    server: FeedServer,
) -> None:
    path = _moving_path(server, lambda url: url.replace(".xml", "-moved.xml"))
    source, target = server.url(path), server.url(path.replace(".xml", "-moved.xml"))
    server.put(path.replace(".xml", "-moved.xml"), _items(1, 2, 3))
    server.put(path, "", status=301, headers={"Location": target})
    states = _baselines([source])
    server.put(path.replace(".xml", "-moved.xml"), _items(1, 2, 3, 4))

    holder, taker = shard_of("default", source, 2), shard_of("default", target, 2)
    warning = _shard_check(states[holder], [target], holder)  # told, not refused
    assert warning is not None and "1 feeds" in warning and "127.0.0.1" not in warning
    moved = _split_by_config(states, [target])
    run = run_tap(_config([target], taker), moved[taker])
    assert run.returncode == 0, run.stderr[-2000:]
    assert [(r["item_id"], r["change_type"]) for r in run.items] == [("g4", "new")]
    assert _shard_check(moved[taker], [target], taker) is None


def test_a_removed_duplicate_of_a_feed_in_another_shard_stops_no_shard_and_split_keeps_both(
    server: FeedServer,
) -> None:
    """X redirects to Y, both configured in different shards; X is removed. X's shard
    cannot tell that from Y replacing X (Y's partition is in the other shard): it warns
    and runs, and X ages out there. The repair it names keeps Y's own partition."""
    path = _moving_path(server, lambda url: url.replace(".xml", "-y.xml"))
    source, target = server.url(path), server.url(path.replace(".xml", "-y.xml"))
    server.put(path.replace(".xml", "-y.xml"), _items(1, 2, 3))
    server.put(path, "", status=301, headers={"Location": target})
    states = _baselines([source, target])
    holder, owner = shard_of("default", source, 2), shard_of("default", target, 2)

    run = run_tap(_config([target], holder), states[holder])
    assert run.returncode == 0, run.stderr[-2000:]
    [warning] = [line for line in run.stderr.splitlines() if "| WARNING" in line]
    assert "1 feeds" in warning and "--feed-urls-file" in warning
    assert "127.0.0.1" not in warning
    # A shard with no feed left writes no STATE: its state stays as it was.
    assert run.final_state is None

    moved = _split_by_config([states[holder], states[owner]], [target])
    kept = _partitions(moved[owner])
    assert [p["context"]["feed_url"] for p in kept] == [source, target]
    assert kept[1] == _partitions(states[owner])[0]  # Y's own state, not X's renamed
    assert _partitions(moved[holder]) == []
    assert _shard_check(moved[owner], [target], owner) is None  # nothing more to tell
