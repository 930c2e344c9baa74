#!/usr/bin/env python3
"""Throughput of 1, 2 and 4 tap shards running side by side on this machine.

    .venv/bin/python benchmarks/shard_bench.py [--feeds 4000] [--runs 3] [--no-write]

The same generated feeds (benchmarks/feedserver.py, ~20 KB each, on 1,000 loopback hosts)
are checked by N shard processes at once (shard_count N, shard_index 0..N-1), cold
(first run, emit_all) and unchanged (all 304, from each shard's own state). Reports the
wall time of the slowest shard, feeds per second overall, and the projected feeds per
hour per shard; medians of ``--runs`` runs. Writes a "## Shards" section to
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from run_bench import PY, ROOT, Server, machine_facts  # noqa: E402

RESULTS = BENCH / "RESULTS.md"
SECTION = "## Shards"


def _run_shard(
    config: dict[str, Any], state: dict[str, Any] | None
) -> tuple[float, dict[str, Any]]:
    """One shard run; its wall seconds and its final state."""
    with tempfile.TemporaryDirectory() as tmp:
        config_path = Path(tmp) / "config.json"
        config_path.write_text(json.dumps(config))
        command = [str(PY), "-m", "tap_feeddelta", "--config", str(config_path)]
        if state is not None:
            state_path = Path(tmp) / "state.json"
            state_path.write_text(json.dumps(state))
            command += ["--state", str(state_path)]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=1_800, check=True)
        wall = time.perf_counter() - started
    final: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        if line.startswith(b'{"type":"STATE"'):
            final = json.loads(line)["value"]
    return wall, final


def _side_by_side(
    urls: list[str], shards: int, states: list[dict[str, Any] | None]
) -> tuple[float, list[dict[str, Any]]]:
    configs = [
        {
            "feed_urls": urls,
            "allow_private_networks": True,
            "first_run_mode": "emit_all",
            "shard_count": shards,
            "shard_index": index,
        }
        for index in range(shards)
    ]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=shards) as pool:
        results = list(pool.map(_run_shard, configs, states))
    return time.perf_counter() - started, [state for _, state in results]


def measure(server: Server, shards: int, runs: int) -> dict[str, Any]:
    urls = server.urls()
    cold: list[float] = []
    unchanged: list[float] = []
    for _ in range(runs):
        wall, states = _side_by_side(urls, shards, [None] * shards)
        cold.append(wall)
        wall, _ = _side_by_side(urls, shards, list(states))
        unchanged.append(wall)
    feeds = len(urls)
    cold_s, unchanged_s = statistics.median(cold), statistics.median(unchanged)
    return {
        "shards": shards,
        "feeds": feeds,
        "cold_wall_s": round(cold_s, 2),
        "unchanged_wall_s": round(unchanged_s, 2),
        "cold_feeds_per_s": round(feeds / cold_s, 1),
        "unchanged_feeds_per_s": round(feeds / unchanged_s, 1),
        "unchanged_feeds_per_hour_per_shard": int(feeds / unchanged_s * 3600 / shards),
        "cold_feeds_per_hour_per_shard": int(feeds / cold_s * 3600 / shards),
    }


def render(rows: list[dict[str, Any]], command: str) -> str:
    facts = machine_facts()
    lines = [
        SECTION,
        "",
        f"Command: `{command}` — {facts['cores']} cores, load {facts['loadavg_at_start']}, "
        "shard processes side by side on one machine, medians.",
        "",
        "| shards | feeds | cold wall s | cold feeds/s | unchanged wall s | unchanged feeds/s "
        "| projected feeds/hour per shard (unchanged) | (cold) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['shards']} | {row['feeds']:,} | {row['cold_wall_s']} | "
            f"{row['cold_feeds_per_s']} | {row['unchanged_wall_s']} | "
            f"{row['unchanged_feeds_per_s']} | {row['unchanged_feeds_per_hour_per_shard']:,} | "
            f"{row['cold_feeds_per_hour_per_shard']:,} |"
        )
    lines += [
        "",
        "On one 2-core machine shards compete for the same cores, so more shards here shows "
        "the cost of running them side by side, not a speed-up; across machines each shard "
        "brings its own cores and the per-shard figure is what to size with.",
        "",
    ]
    return "\n".join(lines)


def write_section(section: str) -> None:
    import re

    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## (?!#)|\Z)", re.M | re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip("\n") + "\n\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--feeds", type=int, default=4_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shards", default="1,2,4")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    server = Server(args.feeds)
    try:
        rows = []
        for shards in (int(s) for s in args.shards.split(",")):
            row = measure(server, shards, args.runs)
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    finally:
        server.stop()
    command = "python benchmarks/shard_bench.py " + " ".join(sys.argv[1:])
    section = render(rows, command.strip())
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
