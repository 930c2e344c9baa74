#!/usr/bin/env python3
"""Where a whole run's CPU goes: tap-feeddelta under py-spy, all threads, grouped.

    .venv/bin/python benchmarks/profile_run.py [--feeds 1000] [--py-spy PATH] [--tap-root DIR]

Needs py-spy (``pip install py-spy`` into any venv; pass its path with --py-spy, default
/tmp/spyvenv/bin/py-spy, or on PATH). Starts benchmarks/feedserver.py, runs the tap cold
(emit_all) and then unchanged (the cold run's state) under ``py-spy record --format raw``
(cProfile would see only the main thread; fetching and parsing run on the fetch loop's thread),
and prints for each: the share of on-CPU samples by self function, and by area
(fetch, parse, delta/records, SDK emit, SDK state, start-up imports, …), inclusive.
Only samples of the thread holding the GIL count (``--gil``): Python CPU, not waiting.
``--tap-root`` profiles another checkout (a private copy with a proposed change).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from run_bench import HOSTS, Server, scan  # noqa: E402

# First matching rule wins, scanning a stack from its leaf towards its root.
AREAS = [
    ("start-up: imports", ("_find_and_load", "_compile_bytecode", "exec_module")),
    ("SDK: state messages", ("_write_state_message", "write_state_message")),
    ("SDK: record emit", ("_write_record_message", "_generate_record_messages")),
    ("parse (lxml, text, dates)", ("parse_feed (tap_feeddelta",)),
    ("delta + records", ("diff_items", "item_record", "health_record")),
    ("state codec", ("index_partitions", "decode_bookmark", "encode_bookmark")),
    ("fetch", ("fetch_async (tap_feeddelta/fetch",)),
    ("SDK: config/catalog/setup", ("_validate_config", "catalog", "setup_mapper", "discover")),
    (
        "feed check bookkeeping (timestamps, health facts, bookmark, ordering)",
        ("check_feed (tap_feeddelta", "(tap_feeddelta/run.py", "(tap_feeddelta/ordered.py"),
    ),
]
# Stacks that match no area above but run inside the event loop: the loop itself, its
# transports' reads and writes (socket system calls) and its wake-ups.
EVENT_LOOP = ("event loop (asyncio: selector, transports, wake-ups)", ("asyncio/", "selectors.py"))


def area_of(frames: list[str]) -> str:
    for frame in reversed(frames):
        for name, needles in AREAS:
            if any(needle in frame for needle in needles):
                return name
    name, needles = EVENT_LOOP
    if any(needle in frame for frame in frames for needle in needles):
        return name
    return "other"


def summarise(raw: Path, top: int) -> dict[str, list[tuple[str, float]]]:
    by_self: Counter[str] = Counter()
    by_area: Counter[str] = Counter()
    by_inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [f for f in stack.split(";") if f and not f.startswith("process ")]
        frames = [f for f in frames if not f.startswith("thread ")]
        if not frames:
            continue
        total += count
        by_self[frames[-1]] += count
        by_area[area_of(frames)] += count
        for frame in set(frames):
            if "tap_feeddelta" in frame or "singer_sdk" in frame or "lxml" in frame:
                by_inclusive[frame] += count
    if not total:
        return {}

    def share(counter: Counter[str], n: int) -> list[tuple[str, float]]:
        return [(name, round(c / total, 3)) for name, c in counter.most_common(n)]

    return {
        "samples": [("total", float(total))],
        "areas": share(by_area, 20),
        "self": share(by_self, top),
        "inclusive": share(by_inclusive, top),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--feeds", type=int, default=1000)
    parser.add_argument("--py-spy", default="/tmp/spyvenv/bin/py-spy")
    parser.add_argument("--tap-root", default=str(BENCH.parent))
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--rate", type=int, default=250)
    args = parser.parse_args()
    spy = args.py_spy if Path(args.py_spy).exists() else shutil.which("py-spy")
    if not spy:
        raise SystemExit("py-spy not found: pip install py-spy, then pass --py-spy PATH")
    work = Path(tempfile.mkdtemp(prefix="feeddelta-prof-"))
    server = Server(args.feeds)
    results = {}
    env = dict(os.environ, PYTHONPATH=args.tap_root)
    try:
        config = work / "config.json"
        config.write_text(
            json.dumps(
                {
                    "feed_urls": server.urls(),
                    "first_run_mode": "emit_all",
                    "allow_private_networks": True,
                }
            )
        )
        state_path = work / "state.json"
        for phase in ("cold", "unchanged"):
            raw = work / f"{phase}.txt"
            out = work / f"{phase}.jsonl"
            cmd = [
                *(spy, "record", "--format", "raw", "--rate", str(args.rate)),
                *("--nonblocking", "--gil", "-o", str(raw), "--"),
                *(sys.executable, "-m", "tap_feeddelta", "--config", str(config)),
            ]
            if phase == "unchanged":
                cmd += ["--state", str(state_path)]
            with out.open("wb") as handle:
                subprocess.run(
                    cmd,
                    stdout=handle,
                    stderr=subprocess.DEVNULL,
                    env=env,
                    cwd=args.tap_root,
                    timeout=900,
                    check=True,
                )
            if phase == "cold":
                _, _, state = scan(out)
                state_path.write_text(json.dumps(state))
            results[phase] = summarise(raw, args.top)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"feeds": args.feeds, "hosts": HOSTS, **results}, indent=1))


if __name__ == "__main__":
    main()
