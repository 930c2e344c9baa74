"""Shard runs side by side equal one unsharded run; re-sharding loses and repeats nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tap_feeddelta.sharding import shard_of
from tests.feedserver import FeedServer, rss
from tests.tapharness import TapRun, run_tap

FEEDS = 40


def _publish(server: FeedServer, version: int) -> None:
    """Version v: every feed has items 0..3; feeds n % 3 == v % 3 gain one, n % 5 edit one."""
    for n in range(FEEDS):
        items = [(f"{n}-{k}", f"T{k}", "s") for k in range(4)]
        for v in range(1, version + 1):
            if n % 3 == v % 3:
                items.insert(0, (f"{n}-v{v}", f"New in {v}", "s"))
        if version and n % 5 == 0:
            items[-1] = (f"{n}-3", f"T3 edit {version}", "s")
        server.put(f"/f{n}.xml", rss(items))


def _config(server: FeedServer, **extra: Any) -> dict[str, Any]:
    return {
        "feed_urls": [server.url(f"/f{n}.xml") for n in range(FEEDS)],
        "allow_private_networks": True,
        "max_concurrency": 4,
        **extra,
    }


def _state_tool(*args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tap_feeddelta.statetool", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        check=True,
    )
    return done.stdout


def _run_shards(server: FeedServer, states: list[dict[str, Any]], tmp: Path) -> list[TapRun]:
    count = len(states)
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [
            pool.submit(run_tap, _config(server, shard_count=count, shard_index=i), states[i])
            for i in range(count)
        ]
        runs = [f.result() for f in futures]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    return runs


def _split(state: dict[str, Any], count: int, tmp: Path) -> list[dict[str, Any]]:
    source = tmp / f"merged-{count}.json"
    source.write_text(json.dumps({"singer_state": state}))  # Meltano's form
    out = tmp / f"split-{count}"
    _state_tool("split", "--shard-count", str(count), "--out-dir", str(out), str(source))
    return [json.loads((out / f"shard-{i}.json").read_text())["singer_state"] for i in range(count)]


def _merge(states: list[dict[str, Any] | None], tmp: Path) -> dict[str, Any]:
    paths = []
    for i, state in enumerate(states):
        assert state is not None
        path = tmp / f"part-{len(states)}-{i}.json"
        path.write_text(json.dumps(state))
        paths.append(str(path))
    merged: dict[str, Any] = json.loads(_state_tool("merge", *paths))
    return merged


def _delivery_ids(runs: list[TapRun]) -> list[str]:
    return sorted(r["delivery_id"] for run in runs for r in run.items)


def test_shards_equal_one_run_and_resharding_loses_nothing(
    server: FeedServer, tmp_path: Path
) -> None:
    _publish(server, 0)
    baseline = run_tap(_config(server))
    assert baseline.returncode == 0, baseline.stderr
    state: dict[str, Any] = baseline.final_state or {}

    for version, (old_count, new_count) in enumerate([(1, 3), (3, 5), (5, 3)], start=1):
        _publish(server, version)
        reference = run_tap(_config(server), state)  # what one unsharded run delivers
        assert reference.returncode == 0
        assert reference.items, "the scenario must have changes"

        shard_states = _split(state, new_count, tmp_path)
        runs = _run_shards(server, shard_states, tmp_path)
        ids = _delivery_ids(runs)
        assert ids == _delivery_ids([reference]), f"{old_count} -> {new_count} shards"
        assert len(ids) == len(set(ids))
        # every feed checked by exactly one shard, and kept only in that shard's state
        checked = sorted(h["feed_url"] for run in runs for h in run.health)
        assert checked == sorted(_config(server)["feed_urls"])
        for index, run in enumerate(runs):
            for partition in (run.final_state or {})["bookmarks"]["feed_items"]["partitions"]:
                feed_url = partition["context"]["feed_url"]
                assert shard_of("default", feed_url, new_count) == index

        state = _merge([run.final_state for run in runs], tmp_path)
        again = run_tap(_config(server), state)
        assert again.items == [], "the merged state knows every change already"


def test_rendezvous_moves_few_feeds() -> None:
    urls = [f"https://example.org/{n}.xml" for n in range(5_000)]
    for count in (2, 3, 5, 8):
        owners = [shard_of("m", u, count) for u in urls]
        sizes = [owners.count(i) for i in range(count)]
        assert min(sizes) > 0.8 * len(urls) / count
        grown = [shard_of("m", u, count + 1) for u in urls]
        moved = sum(a != b for a, b in zip(owners, grown, strict=True))
        # only the feeds the new shard takes move: about 1 / (count + 1) of them
        assert moved < 1.25 * len(urls) / (count + 1)
        assert all(b == count for a, b in zip(owners, grown, strict=True) if a != b)


def test_a_state_written_for_other_shards_is_refused_not_rebaselined(
    server: FeedServer, tmp_path: Path
) -> None:
    """shard_count changed without moving the state: before, the moved feeds silently
    started over (their changes lost) and the run said nothing above INFO."""
    _publish(server, 0)
    states = _split(run_tap(_config(server)).final_state or {}, 3, tmp_path)
    _publish(server, 1)
    # A shard of 3 whose state holds a feed that 4 shards give to another: rendezvous
    # moves about a quarter of each shard's feeds to the new one, which ones depends on
    # the server's port (shard 0 kept all of its 13 or so for 2.8% of ports).
    index = next(
        i
        for i, state in enumerate(states)
        if any(
            shard_of("default", partition["context"]["feed_url"], 4) != i
            for partition in state["bookmarks"]["feed_items"]["partitions"]
        )
    )
    wrong = run_tap(_config(server, shard_count=4, shard_index=index), states[index])
    assert wrong.returncode == 1
    assert "state_other_shard: state: it holds" in wrong.stderr
    assert "Traceback" not in wrong.stderr
    assert wrong.items == [] and wrong.health == []
    right = run_tap(_config(server, shard_count=3, shard_index=index), states[index])
    assert right.returncode == 0, right.stderr[-2000:]


def test_more_feeds_than_one_run_takes_are_split_over_shards(
    server: FeedServer, tmp_path: Path
) -> None:
    """A config may list more than 10,000 feeds when each shard checks at most that many.
    Before, feed_urls was capped at 10,000 whatever shard_count said."""
    urls = [f"https://feeds{n % 500}.example/{n}.xml" for n in range(12_000)]
    one = run_tap({"feed_urls": urls, "shard_count": 1})
    assert one.returncode == 1
    assert one.stdout == ""
    assert "this shard would check 12,000 feeds" in one.stderr
    assert "shard_count'] of at least 2" in one.stderr
    two = run_tap({"feed_urls": urls, "shard_count": 2, "shard_index": 1}, args=("--test=schema",))
    assert two.returncode == 0, two.stderr[-2000:]
