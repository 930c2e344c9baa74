#!/usr/bin/env python3
"""A/B: this checkout's tap against a candidate checkout, same feeds, interleaved runs.

    .venv/bin/python benchmarks/ab_compare.py --candidate /tmp/bench-copy [--feeds 1000] [--runs 3]

The candidate is a directory holding a modified ``tap_feeddelta/`` (and ``schemas/``),
run with this venv (PYTHONPATH=candidate). For cold (emit_all) and unchanged runs it prints
median CPU, wall and peak RSS of both, and checks that both emit the same feed_items
records (ignoring checked_at, which is the run's clock).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import run_bench  # noqa: E402
from run_bench import Run, Server, measure, scan  # noqa: E402


def records_digest(path: Path) -> list[str]:
    out = []
    with path.open("rb") as handle:
        for line in handle:
            if line.startswith(b'{"type":"RECORD","stream":"feed_items"'):
                record = json.loads(line)["record"]
                record.pop("checked_at", None)
                out.append(json.dumps(record, sort_keys=True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--feeds", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="feeddelta-ab-"))
    roots = {"base": str(BENCH.parent), "candidate": str(Path(args.candidate).resolve())}
    for root in roots.values():
        run_bench.compile_package(Path(root))
    server = Server(args.feeds)
    results: dict[str, list[Run]] = {}
    states: dict[str, Any] = {}
    same_records: bool | None = None
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
        for phase in ("cold", "unchanged"):
            for rep in range(args.runs):
                for name, root in roots.items():
                    cmd = [sys.executable, "-m", "tap_feeddelta", "--config", str(config)]
                    if phase == "unchanged":
                        state_path = work / f"{name}-state.json"
                        cmd += ["--state", str(state_path)]
                    out = work / f"{name}-{phase}.jsonl"
                    os.environ["PYTHONPATH"] = root
                    run_bench.ROOT = Path(root)
                    run = measure(f"{name} {phase}", cmd, out, 900)
                    run.records, run.out_bytes, state = scan(out)
                    results.setdefault(f"{phase} {name}", []).append(run)
                    print(
                        f"{phase:9} {name:9} cpu {run.cpu_s:6.2f} wall {run.wall_s:6.2f} "
                        f"rss {run.peak_rss_mb:5.0f} rec {run.records}",
                        file=sys.stderr,
                    )
                    if phase == "cold" and rep == 0:
                        (work / f"{name}-state.json").write_text(json.dumps(state))
                        states[name] = records_digest(out)
            if phase == "cold":
                same_records = states["base"] == states["candidate"]
    finally:
        os.environ.pop("PYTHONPATH", None)
        server.stop()
    summary = {}
    for key, runs in results.items():
        summary[key] = {
            "cpu_s": round(statistics.median(r.cpu_s for r in runs), 2),
            "wall_s": round(statistics.median(r.wall_s for r in runs), 2),
            "peak_rss_mb": round(statistics.median(r.peak_rss_mb for r in runs)),
        }
    for phase in ("cold", "unchanged"):
        base, cand = summary[f"{phase} base"], summary[f"{phase} candidate"]
        summary[f"{phase} cpu ratio base/candidate"] = round(base["cpu_s"] / cand["cpu_s"], 2)
    summary["same feed_items records"] = same_records
    print(json.dumps({"feeds": args.feeds, **summary}, indent=1))


if __name__ == "__main__":
    main()
