"""Re-sharding as the README says: meltano state get → tap-feeddelta-state → meltano state set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tap_feeddelta.sharding import shard_of
from tests.e2e.harness import MeltanoProject

pytestmark = pytest.mark.e2e

STATE_ID = "dev:tap-feeddelta-to-target-jsonl:reshard"


def _partition(url: str) -> dict[str, object]:
    return {"context": {"monitor_id": "default", "feed_url": url}, "v": 1, "items": ""}


def _tool(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tap_feeddelta.statetool", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_two_shards_become_three_through_meltanos_state_store(
    project: MeltanoProject, tmp_path: Path
) -> None:
    urls = [f"https://example.org/{n}.xml" for n in range(30)]
    for index in range(2):
        parts = [_partition(u) for u in urls if shard_of("default", u, 2) == index]
        state = {"singer_state": {"bookmarks": {"feed_items": {"partitions": parts}}}}
        project.run(
            "state", "set", "--force", f"{STATE_ID}:shard-{index}", json.dumps(state)
        ).check()

    old_files = []
    for index in range(2):
        path = tmp_path / f"old-{index}.json"
        path.write_text(json.dumps(project.state(f"{STATE_ID}:shard-{index}")))
        old_files.append(str(path))
    merged = tmp_path / "all.json"
    merged.write_text(_tool("merge", *old_files))
    _tool("split", "--shard-count", "3", "--out-dir", str(tmp_path / "new"), str(merged))
    for index in range(3):
        text = (tmp_path / "new" / f"shard-{index}.json").read_text()
        project.run("state", "set", "--force", f"{STATE_ID}:shard-{index}", text).check()

    seen: list[str] = []
    for index in range(3):
        state = project.state(f"{STATE_ID}:shard-{index}")
        partitions = state["singer_state"]["bookmarks"]["feed_items"]["partitions"]
        for partition in partitions:
            url = partition["context"]["feed_url"]
            assert shard_of("default", url, 3) == index
            seen.append(url)
    assert sorted(seen) == sorted(urls)  # every feed once, in its new shard
