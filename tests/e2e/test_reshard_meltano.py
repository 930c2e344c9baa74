"""Re-sharding as docs/scheduling-and-scaling.md says: its script (meltano state get →
tap-feeddelta-state → meltano state set --input-file), run verbatim against Meltano's
state store."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tap_feeddelta.sharding import shard_of
from tap_feeddelta.state import FeedBookmark, encode_bookmark
from tests.e2e.harness import ROOT, MeltanoProject

pytestmark = pytest.mark.e2e

STATE_ID = "dev:tap-feeddelta-to-target-jsonl:reshard"
# Linux's cap on one command-line argument (MAX_ARG_STRLEN): a state passed as an argument
# (`meltano state set ID "$(cat file)"`) fails past it with "Argument list too long".
MAX_ARG_BYTES = 128 * 1024
FEEDS = 300
ITEMS_PER_FEED = 100  # ~1.7 KB a partition: each new shard's state is well past MAX_ARG_BYTES


def _readme_script() -> str:
    """The re-sharding script of docs/scheduling-and-scaling.md (the bash block that runs
    the state tool's split)."""
    readme = (ROOT / "docs" / "scheduling-and-scaling.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.DOTALL)
    [script] = [b for b in blocks if "tap-feeddelta-state split" in b]
    return "".join(line.removeprefix("  ") + "\n" for line in script.splitlines())


def _partition(url: str, rng: random.Random) -> dict[str, Any]:
    items = rng.randbytes(12 * ITEMS_PER_FEED)
    bookmark = FeedBookmark(success_at="2026-01-01T00:00:00Z", items=items)
    return {"context": {"monitor_id": "default", "feed_url": url}, **encode_bookmark(bookmark)}


def _shims(tmp_path: Path, meltano: str) -> dict[str, str]:
    """PATH entries for the commands the script names: Meltano, and this tree's state tool.
    Meltano's `state set` of the id in $FAIL_ONCE fails once (as a full disk would)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    failed = tmp_path / "failed-once"
    shim = bin_dir / "meltano"
    shim.write_text(
        "#!/bin/sh\n"
        'last=""; for arg in "$@"; do last=$arg; done\n'
        'case " $* " in *" state set "*) setting=1 ;; *) setting="" ;; esac\n'
        f'if [ -n "$setting" ] && [ -n "${{FAIL_ONCE:-}}" ] && [ "$last" = "$FAIL_ONCE" ] '
        f'&& [ ! -e "{failed}" ]; then touch "{failed}"; echo "disk full" >&2; exit 1; fi\n'
        f'exec "{meltano}" "$@"\n'
    )
    shim.chmod(0o755)
    tool = bin_dir / "tap-feeddelta-state"
    tool.write_text(
        f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m tap_feeddelta.statetool "$@"\n'
    )
    tool.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _run_script(
    project: MeltanoProject, script: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script), *args],
        cwd=project.root,
        env={**project.env, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _partitions(project: MeltanoProject, state_id: str) -> list[dict[str, Any]]:
    state = project.state(state_id)
    parts: list[dict[str, Any]] = state["singer_state"]["bookmarks"]["feed_items"]["partitions"]
    return parts


def test_readme_script_moves_two_shards_to_three_past_the_argument_cap(
    project: MeltanoProject, tmp_path: Path
) -> None:
    rng = random.Random(14)
    partitions = {
        url: _partition(url, rng) for url in (f"https://example.org/{n}.xml" for n in range(FEEDS))
    }
    for index in range(2):
        parts = [p for u, p in partitions.items() if shard_of("default", u, 2) == index]
        path = tmp_path / f"stored-{index}.json"
        path.write_text(
            json.dumps({"singer_state": {"bookmarks": {"feed_items": {"partitions": parts}}}})
        )
        project.run(
            "state", "set", "--force", "--input-file", str(path), f"{STATE_ID}:shard-{index}"
        ).check()

    script = tmp_path / "reshard.sh"
    script.write_text(_readme_script())
    env = _shims(tmp_path, project.command()[0])

    # A wrong old shard count reads an unknown id ({}): the script stops before any write.
    done = _run_script(project, script, env, "3", "4", STATE_ID)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "the state is empty" in done.stderr
    assert project.state(f"{STATE_ID}:shard-3") == {}

    # A `state set` that fails mid-way (shard 1's): the script stops, and run again with
    # the directory it printed, it reads no shard again and finishes from its files.
    failing = {**env, "FAIL_ONCE": f"{STATE_ID}:shard-1"}
    done = _run_script(project, script, failing, "2", "3", STATE_ID)
    assert done.returncode != 0, done.stdout + done.stderr
    [resume] = re.findall(r"after a failure: (bash reshard\.sh .+)\)", done.stderr)
    files = resume.split()[-1]
    done = _run_script(project, script, env, "2", "3", STATE_ID, files)
    assert done.returncode == 0, done.stdout + done.stderr

    seen: list[str] = []
    for index in range(3):
        parts = _partitions(project, f"{STATE_ID}:shard-{index}")
        # The argument form of `meltano state set` could not have carried this state.
        assert len(json.dumps({"singer_state": parts})) > MAX_ARG_BYTES
        for partition in parts:
            url = partition["context"]["feed_url"]
            assert shard_of("default", url, 3) == index
            assert partition == partitions[url]  # moved whole, items and all
            seen.append(url)
    assert sorted(seen) == sorted(partitions)  # every feed once, in its new shard

    # Back to the unsharded pipeline (M = 1): its id has no suffix, and no shard id is left.
    done = _run_script(project, script, env, "3", "1", STATE_ID)
    assert done.returncode == 0, done.stdout + done.stderr
    whole = _partitions(project, STATE_ID)
    assert sorted(p["context"]["feed_url"] for p in whole) == sorted(partitions)
    for index in range(3):
        assert project.state(f"{STATE_ID}:shard-{index}") == {}

    # And out again (N = 1): the unsharded id is read, then cleared.
    done = _run_script(project, script, env, "1", "2", STATE_ID)
    assert done.returncode == 0, done.stdout + done.stderr
    assert project.state(STATE_ID) == {}
    halves = [_partitions(project, f"{STATE_ID}:shard-{index}") for index in range(2)]
    assert sorted(p["context"]["feed_url"] for half in halves for p in half) == sorted(partitions)
