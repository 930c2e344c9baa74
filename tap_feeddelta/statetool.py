"""``tap-feeddelta-state``: merge and split Singer states by shard, for re-sharding.

Going from N to M shards without losing a baseline (README, "Scaling out", has the script),
from the Meltano project directory, stopping at the first failure (``set -e``)::

    for i in 0..N-1:  meltano state get <state-id>:shard-$i > old-$i.json
    tap-feeddelta-state merge old-*.json > all.json
    tap-feeddelta-state split --shard-count M --out-dir new all.json
    for j in 0..M-1:  meltano state set --force --input-file new/shard-$j.json <state-id>:shard-$j

Pass each state as a file (``--input-file``), never as an argument: Linux caps one argument
at 128 KiB, which a shard's state passes at about 50 feeds.

Both commands read plain Singer states and Meltano's ``{"singer_state": …}`` form, and write
the form they read. Every input is validated as the tap would validate it. Any error (a
state that cannot be used, a file that cannot be read or written, a bad argument) is one
line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tap_feeddelta.config import MAX_SHARD_COUNT
from tap_feeddelta.errors import StateError
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.state import feed_items_state, index_partitions, partition_key, state_text

_WRAPPER = "singer_state"


def _unwrap(document: Any) -> tuple[dict[str, Any], bool]:
    if isinstance(document, dict) and set(document) == {_WRAPPER}:
        inner = document[_WRAPPER]
        if not isinstance(inner, dict):
            raise StateError("state: 'singer_state' must be an object")
        return inner, True
    if not isinstance(document, dict):
        raise StateError("state: the state must be a JSON object")
    return document, False


def _partitions(state: dict[str, Any]) -> list[dict[str, Any]]:
    feed_state = feed_items_state(state)
    if feed_state is None:
        return []
    index_partitions(feed_state)
    return list(feed_state.get("partitions", []))


def merge_states(states: list[dict[str, Any]]) -> dict[str, Any]:
    """One state holding every feed partition of ``states``.

    A feed present in several inputs keeps the most recently checked partition.
    """
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for state in states:
        for partition in _partitions(state):
            key = partition_key(partition, "state")
            current = chosen.get(key)
            if current is None or (partition.get("checked_at") or "") > (
                current.get("checked_at") or ""
            ):
                chosen[key] = partition
    return {"bookmarks": {"feed_items": {"partitions": list(chosen.values())}}}


def split_state(state: dict[str, Any], shard_count: int) -> list[dict[str, Any]]:
    """``shard_count`` states; each feed's partition goes to the shard that owns it."""
    shards: list[list[dict[str, Any]]] = [[] for _ in range(shard_count)]
    for partition in _partitions(state):
        monitor_id, feed_url = partition_key(partition, "state")
        shards[shard_of(monitor_id, feed_url, shard_count)].append(partition)
    return [{"bookmarks": {"feed_items": {"partitions": parts}}} for parts in shards]


def _read(path: str) -> tuple[dict[str, Any], bool]:
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        state, wrapped = _unwrap(json.loads(state_text(data, path)))
    except json.JSONDecodeError as exc:
        raise StateError(f"{path}: not valid JSON ({exc.msg})") from None
    if not state:
        # What `meltano state get` prints for a state id it does not know: a wrong id
        # must not pass for a shard without feeds.
        raise StateError(
            f"{path}: the state is empty; is its state id right? (meltano state get prints "
            "{} for an unknown id, and an unsharded pipeline's id has no :shard-N suffix)"
        )
    return state, wrapped


def _dump(state: dict[str, Any], wrapped: bool) -> str:
    return json.dumps({_WRAPPER: state} if wrapped else state, separators=(",", ":"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tap-feeddelta-state", description="Merge and split tap-feeddelta states by shard."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    merge = commands.add_parser("merge", help="merge states into one (stdout)")
    merge.add_argument("files", nargs="+", help="state files ('-' for stdin)")
    split = commands.add_parser("split", help="split one state into shard states")
    split.add_argument("file", help="state file ('-' for stdin)")
    split.add_argument("--shard-count", type=int, required=True)
    split.add_argument("--out-dir", required=True, help="writes shard-<i>.json here")
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            read = [_read(path) for path in args.files]
            merged = merge_states([state for state, _ in read])
            print(_dump(merged, any(wrapped for _, wrapped in read)))
            return 0
        if not 1 <= args.shard_count <= MAX_SHARD_COUNT:
            # Shard files for a count the tap refuses would only be refused at its start.
            parser.error(
                f"--shard-count must be 1 to {MAX_SHARD_COUNT:,}, as the tap's shard_count"
            )
        state, wrapped = _read(args.file)
        out_dir = Path(args.out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        for index, shard_state in enumerate(split_state(state, args.shard_count)):
            (out_dir / f"shard-{index}.json").write_text(_dump(shard_state, wrapped) + "\n")
        return 0
    except (StateError, OSError) as exc:
        print(f"tap-feeddelta-state: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
