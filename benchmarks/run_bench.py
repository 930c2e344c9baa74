#!/usr/bin/env python3
"""Whole-run benchmarks: tap-feeddelta against its peer tap-feed 1.1.1 and the floor.

    .venv/bin/python benchmarks/run_bench.py --quick     # ~5 minutes
    .venv/bin/python benchmarks/run_bench.py --full      # more runs, the peer on 10,000 too

Setup, once (the peer in its own venv, never a project dependency; done by this script
when missing, or by hand):

    python3 -m venv benchmarks/.venv-peers
    benchmarks/.venv-peers/bin/pip install --ignore-requires-python tap-feed==1.1.1

What runs, side by side, on one loopback feed server (benchmarks/feedserver.py: ~20 KB
RSS documents with 20 items, ETag/Last-Modified and 304s, feeds spread over 1,000 loopback
hosts so that the per-host limit and the keep-alive pool behave as with many publishers):
1. cold: tap-feeddelta, first_run_mode emit_all, no state; 1,000 and 10,000 feeds;
2. unchanged: the state of the cold run again (every feed answers 304);
3. 5% changed: a chain of runs, each after 5% of the feeds gained an item;
4. the peer tap-feed 1.1.1 on the same 1,000 feeds, cold and with its state (it sends no
   conditional requests, so "unchanged" downloads and parses everything again);
5. peak RSS of every run; state size and the time to read and write a 10,000-feed state
   with 100 items each (benchmarks/state_bench.py);
6. the floor: benchmarks/bare_client.py fetching the same URLs at the same concurrency;
plus record emitting apart (benchmarks/emit_bench.py) and start-up cost (a 1-feed run).

Each run is a child process; CPU time is its user+sys from os.wait4's rusage, peak RSS its
ru_maxrss, wall the time until it exits. Medians over the runs, ratios against the peer.
Results go to benchmarks/RESULTS.md under "## Whole runs" (only that section is replaced)
and, raw, to benchmarks/results-whole-runs.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PY = Path(sys.executable)
TAP = [str(PY), "-m", "tap_feeddelta"]
PEER_VENV = BENCH / ".venv-peers"
PEER = [str(PEER_VENV / "bin" / "tap-feed")]
RESULTS_MD = BENCH / "RESULTS.md"
RESULTS_JSON = BENCH / "results-whole-runs.json"
SECTION = "## Whole runs"
HOSTS = 1000
TIME_BIN = Path("/usr/bin/time")
ANALYSIS_MD = BENCH / "whole_runs_analysis.md"

sys.path.insert(0, str(BENCH))
from feedserver import feed_url  # noqa: E402  (benchmarks/ is not a package)

# -- processes ----------------------------------------------------------------------------


@dataclass
class Run:
    label: str
    wall_s: float
    cpu_s: float
    user_s: float
    sys_s: float
    peak_rss_mb: float
    returncode: int
    records: int = 0
    out_bytes: int = 0
    server: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def measure(label: str, cmd: list[str], out_path: Path | None, timeout_s: float) -> Run:
    """Run ``cmd`` as a child; its own rusage via wait4; killed after ``timeout_s``."""
    out = out_path.open("wb") if out_path else subprocess.DEVNULL
    err_path = Path(tempfile.mkstemp(prefix="bench-err-")[1])
    # Peak RSS through /usr/bin/time's own fork: a child started straight from this
    # (large) process by vfork+exec inherits this process's RSS high-water mark in its
    # ru_maxrss. CPU still comes from wait4 (time's own share is negligible).
    rss_path = Path(tempfile.mkstemp(prefix="bench-rss-")[1])
    if TIME_BIN.exists():
        cmd = [str(TIME_BIN), "-f", "%M", "-o", str(rss_path), *cmd]
    with err_path.open("wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT, start_new_session=True)
        killer = threading.Timer(timeout_s, _kill_group, args=(proc.pid,))
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if out_path:
        out.close()  # type: ignore[union-attr]
    stderr_tail = err_path.read_bytes()[-2000:].decode("utf-8", "replace")
    err_path.unlink()
    if proc.returncode != 0:
        print(f"  !! {label}: exit {proc.returncode}\n{stderr_tail}", file=sys.stderr)
    run = Run(
        label=label,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        user_s=usage.ru_utime,
        sys_s=usage.ru_stime,
        peak_rss_mb=_peak_rss_kb(rss_path, usage.ru_maxrss) / 1024,
        returncode=proc.returncode,
    )
    rss_path.unlink()
    run.extra["stderr_tail"] = stderr_tail[-300:]
    return run


def _peak_rss_kb(rss_path: Path, fallback_kb: int) -> int:
    lines = rss_path.read_text().split()
    return int(lines[-1]) if lines and lines[-1].isdigit() else fallback_kb


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


class Server:
    """benchmarks/feedserver.py as a child process, controlled over its stdin."""

    def __init__(self, feeds: int) -> None:
        self.feeds = feeds
        self.proc = subprocess.Popen(
            [str(PY), str(BENCH / "feedserver.py"), "--feeds", str(feeds), "--hosts", str(HOSTS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.port = int(self._answer()["port"])
        self._ask("warm")

    def _answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the feed server stopped")
        return json.loads(line)  # type: ignore[no-any-return]

    def _ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def urls(self) -> list[str]:
        return [feed_url(i, HOSTS, self.port) for i in range(self.feeds)]

    def change(self, fraction: float, seed: int) -> int:
        return int(self._ask(f"change {fraction} {seed}")["changed"])

    def stats(self) -> dict[str, Any]:
        return self._ask("stats")

    def reset(self) -> None:
        self._ask("reset-stats")

    def stop(self) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def with_server_stats(server: Server, run_one: Any) -> Any:
    """Call ``run_one``; attach the server's counts during it to the Run it returns."""
    server.reset()
    cpu_before = server.stats()["cpu_s"]
    result = run_one()
    run: Run = result[0] if isinstance(result, tuple) else result
    stats = server.stats()
    run.server = {k: stats.get(k, 0) for k in ("200", "304", "connections")}
    run.server["cpu_s"] = round(stats["cpu_s"] - cpu_before, 2)
    return result


# -- output scanning ----------------------------------------------------------------------


def scan(path: Path) -> tuple[int, int, dict[str, Any] | None]:
    """(feed_items records, bytes, last state value) of a tap's stdout file."""
    records = 0
    last_state: bytes | None = None
    with path.open("rb") as handle:
        for line in handle:
            head = line[:40]
            if b'"RECORD"' in head and b'"feed_health"' not in head:
                records += 1  # feed_items (ours) or feed (the peer)
            elif b'"STATE"' in head:
                last_state = line
    state = json.loads(last_state)["value"] if last_state else None
    return records, path.stat().st_size, state


# -- the tools under test -----------------------------------------------------------------


class Bench:
    def __init__(self, work: Path, concurrency: int) -> None:
        self.work = work
        self.concurrency = concurrency

    def ours(
        self, label: str, urls: list[str], state: dict[str, Any] | None, timeout_s: float
    ) -> tuple[Run, dict[str, Any] | None]:
        config = self.work / "ours-config.json"
        config.write_text(
            json.dumps(
                {
                    "feed_urls": urls,
                    "first_run_mode": "emit_all",
                    "allow_private_networks": True,
                    "max_concurrency": self.concurrency,
                    "request_timeout_seconds": 30,
                }
            )
        )
        cmd = [*TAP, "--config", str(config)]
        if state is not None:
            state_path = self.work / "ours-state-in.json"
            state_path.write_text(json.dumps(state))
            cmd += ["--state", str(state_path)]
        out = self.work / "ours-out.jsonl"
        run = measure(label, cmd, out, timeout_s)
        run.records, run.out_bytes, new_state = scan(out)
        return run, new_state

    def peer(
        self, label: str, urls: list[str], state: dict[str, Any] | None, timeout_s: float
    ) -> tuple[Run, dict[str, Any] | None]:
        config = self.work / "peer-config.json"
        config.write_text(
            json.dumps({"feed_urls": urls, "feed_entry_fields": ["id", "title", "link", "summary"]})
        )
        cmd = [*PEER, "--config", str(config)]
        if state is not None:
            state_path = self.work / "peer-state-in.json"
            state_path.write_text(json.dumps(state))
            cmd += ["--state", str(state_path)]
        out = self.work / "peer-out.jsonl"
        run = measure(label, cmd, out, timeout_s)
        run.records, run.out_bytes, new_state = scan(out)
        return run, new_state

    def floor(self, label: str, urls: list[str], etags_in: bool, timeout_s: float) -> Run:
        url_file = self.work / "urls.txt"
        url_file.write_text("\n".join(urls))
        etags = self.work / "floor-etags.json"
        cmd = [
            str(PY),
            str(BENCH / "bare_client.py"),
            "--urls",
            str(url_file),
            "--concurrency",
            str(self.concurrency),
            "--per-host",
            "2",
        ]
        cmd += ["--etags-in", str(etags)] if etags_in else ["--etags-out", str(etags)]
        out = self.work / "floor-out.json"
        run = measure(label, cmd, out, timeout_s)
        run.extra["counts"] = json.loads(out.read_text() or "{}")
        return run


def compile_package(root: Path) -> None:
    """Byte-compile the tap as installing it would.

    An installed package (the peer's, in its venv) ships compiled; a checkout run with
    PYTHONDONTWRITEBYTECODE set (this machine does) would compile every module on every
    start and measure the compiler.
    """
    subprocess.run(
        [str(PY), "-m", "compileall", "-q", str(root / "tap_feeddelta")],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def ensure_peer() -> bool:
    if (PEER_VENV / "bin" / "tap-feed").exists():
        return True
    print("setting up the peer: tap-feed 1.1.1 in benchmarks/.venv-peers", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    pip = PEER_VENV / "bin" / "pip"
    done = subprocess.run(
        [str(pip), "install", "-q", "--ignore-requires-python", "tap-feed==1.1.1"],
        check=False,
        timeout=600,
    )
    return done.returncode == 0


# -- the scenarios ------------------------------------------------------------------------


def scenario(
    bench: Bench,
    feeds: int,
    runs: int,
    peer_runs: int,
    timeout_s: float,
    log: Any,
) -> dict[str, list[Run]]:
    """All runs at one size, interleaved tool by tool so drift hits each alike."""
    server = Server(feeds)
    results: dict[str, list[Run]] = {}

    def add(key: str, run: Run) -> None:
        results.setdefault(key, []).append(run)
        log(
            f"  {feeds:>6} {key:<22} wall {run.wall_s:7.2f}s cpu {run.cpu_s:7.2f}s "
            f"rss {run.peak_rss_mb:6.0f}MB rec {run.records:>7} srv {run.server}"
        )

    try:
        urls = server.urls()
        state: dict[str, Any] | None = None
        peer_state: dict[str, Any] | None = None
        for rep in range(max(runs, peer_runs)):
            if rep < runs:
                run, out_state = with_server_stats(
                    server, lambda: bench.ours("ours cold", urls, None, timeout_s)
                )
                state = state or out_state
                add("ours_cold", run)
                add(
                    "floor_cold",
                    with_server_stats(
                        server, lambda: bench.floor("floor cold", urls, False, timeout_s)
                    ),
                )
            if rep < peer_runs:
                run, out_state = with_server_stats(
                    server, lambda: bench.peer("peer cold", urls, None, timeout_s * 4)
                )
                peer_state = peer_state or out_state
                add("peer_cold", run)
        for rep in range(max(runs, peer_runs)):
            if rep < runs:
                run, _ = with_server_stats(
                    server, lambda: bench.ours("ours unchanged", urls, state, timeout_s)
                )
                add("ours_unchanged", run)
                add(
                    "floor_unchanged",
                    with_server_stats(
                        server, lambda: bench.floor("floor unchanged", urls, True, timeout_s)
                    ),
                )
            if rep < peer_runs:
                run, _ = with_server_stats(
                    server, lambda: bench.peer("peer unchanged", urls, peer_state, timeout_s * 4)
                )
                add("peer_unchanged", run)
        # 5% changed: a chain; each run starts from the state the previous one left.
        chain = state
        for rep in range(runs):
            server.change(0.05, seed=1000 + rep)
            run, chain = with_server_stats(
                server,
                lambda current=chain: bench.ours("ours 5% changed", urls, current, timeout_s),
            )
            add("ours_changed5", run)
        if state is not None:
            results["_state"] = [state_facts(state)]  # type: ignore[list-item]
    finally:
        server.stop()
    return results


def state_facts(state: dict[str, Any]) -> dict[str, Any]:
    partitions = state["bookmarks"]["feed_items"]["partitions"]
    text = json.dumps(state, separators=(",", ":"))
    items = sum(len(p.get("items", "")) // 16 for p in partitions)
    return {
        "feeds": len(partitions),
        "remembered_items": items,
        "state_bytes": len(text),
        "bytes_per_feed": round(len(text) / len(partitions), 1),
        "bytes_per_item_all_in": round(len(text) / max(items, 1), 1),
    }


def startup(bench: Bench, runs: int, with_peer: bool, log: Any) -> dict[str, list[Run]]:
    """A 1-feed cold run: interpreter, imports, SDK set-up and one fetch."""
    server = Server(1)
    results: dict[str, list[Run]] = {}
    try:
        urls = server.urls()
        for _ in range(runs):
            run, _ = bench.ours("ours 1 feed", urls, None, 60)
            results.setdefault("ours_startup", []).append(run)
            if with_peer:
                run, _ = bench.peer("peer 1 feed", urls, None, 60)
                results.setdefault("peer_startup", []).append(run)
    finally:
        server.stop()
    log(
        "  startup: ours cpu "
        + ", ".join(f"{r.cpu_s:.2f}" for r in results["ours_startup"])
        + (
            "; peer cpu " + ", ".join(f"{r.cpu_s:.2f}" for r in results["peer_startup"])
            if with_peer
            else ""
        )
    )
    return results


def side_tool(cmd: list[str], timeout_s: float, stdout_json: bool) -> dict[str, Any]:
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    text = proc.stdout if stdout_json else proc.stderr
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"exit {proc.returncode}: {proc.stderr[-500:]}"}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


# -- summarising --------------------------------------------------------------------------


def med(runs: list[Run], attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in runs)


def spread(runs: list[Run], attr: str) -> str:
    values = [getattr(r, attr) for r in runs]
    if len(values) < 2:
        return ""
    return f" ({min(values):.2f}–{max(values):.2f})"


def machine_facts() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": round(mem_gb, 1),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "loadavg_at_start": [round(x, 2) for x in load],
    }


def verdict(ok: bool) -> str:
    return "**met**" if ok else "**missed**"


def render(report: dict[str, Any]) -> str:
    sizes = report["sizes"]
    lines = [SECTION, ""]
    lines.append(
        f"Measured {report['when']} with `{report['command']}` "
        f"({report['mode']}: {report['runs']} runs per figure for tap-feeddelta and the floor, "
        f"{report['peer_runs']} for the peer at 1,000 feeds; medians, min–max in brackets)."
    )
    m = report["machine"]
    lines.append(
        f"Machine: {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python {m['python']}, "
        f"Linux {m['kernel']}; load average at start {m['loadavg_at_start']} (shared machine: "
        "other engineers' tests may have run at the same time; CPU time is steadier than wall)."
    )
    lines.append("")
    lines.append(
        "Setup: `benchmarks/feedserver.py` (asyncio, one process) serves RSS 2.0 documents of "
        "~20.7 KB with 20 items each (HTML descriptions), ETag + Last-Modified, 304 on a match, "
        "keep-alive, no compression. Feed *n* is on loopback host `127.77.x.y` number "
        f"*n* mod {HOSTS}: the tap keys its per-host limit by host name and its keep-alive pool "
        "by (scheme, host, port, address), so 1,000 hosts behave like many publishers (one host "
        "would cap it at `max_per_host` requests at once; IP literals: no DNS, no TLS — both "
        "would add to every tool alike). tap-feeddelta runs with its defaults "
        f"(`max_concurrency` {report['concurrency']}, `max_per_host` 2) and `first_run_mode: "
        "emit_all`; the floor (`benchmarks/bare_client.py`, raw asyncio, keep-alive, conditional "
        f"GET) with the same limits. Peer: tap-feed 1.1.1 (singer-sdk 0.8, requests, "
        "feedparser; fetches one feed after another and sends no conditional requests) with "
        "`feed_entry_fields: [id, title, link, summary]`. CPU = user+sys of the tap process "
        "(os.wait4 rusage), peak RSS = its ru_maxrss as GNU time reports it (a child spawned "
        "directly would inherit the harness's own high-water mark)."
    )
    lines.append("")
    lines.append(
        "| feeds | run | wall s | CPU s | CPU ms/feed | feeds/CPU-s | feeds/wall-s | "
        "peak RSS MB | records | server 200/304 |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    names = {
        "ours_cold": "tap-feeddelta cold (emit_all)",
        "ours_unchanged": "tap-feeddelta unchanged (all 304)",
        "ours_changed5": "tap-feeddelta 5% changed",
        "peer_cold": "tap-feed 1.1.1 cold",
        "peer_unchanged": "tap-feed 1.1.1 second run",
        "floor_cold": "floor: bare asyncio client, cold",
        "floor_unchanged": "floor: bare asyncio client, conditional",
    }
    for size, results in sizes.items():
        n = int(size)
        for key, name in names.items():
            runs = results.get(key)
            if not runs:
                continue
            wall, cpu = med(runs, "wall_s"), med(runs, "cpu_s")
            server = runs[0].server
            lines.append(
                f"| {n:,} | {name} | {wall:.2f}{spread(runs, 'wall_s')} | "
                f"{cpu:.2f}{spread(runs, 'cpu_s')} | {cpu / n * 1000:.2f} | {n / cpu:,.0f} | "
                f"{n / wall:,.0f} | {med(runs, 'peak_rss_mb'):.0f} | "
                f"{runs[0].records if not key.startswith('floor') else '–'} | "
                f"{server.get('200', 0)}/{server.get('304', 0)} |"
            )
    st = report["startup"]
    lines.append("")
    ours_start = med(st["ours_startup"], "cpu_s")
    start_line = (
        f"Start-up (a 1-feed run): tap-feeddelta {ours_start:.2f} s CPU, "
        f"{med(st['ours_startup'], 'wall_s'):.2f} s wall"
    )
    peer_start = None
    if st.get("peer_startup"):
        peer_start = med(st["peer_startup"], "cpu_s")
        start_line += (
            f"; tap-feed {peer_start:.2f} s CPU, {med(st['peer_startup'], 'wall_s'):.2f} s wall"
        )
    lines.append(start_line + ". *Marginal* figures below subtract it.")
    lines.append("")

    # goals
    g = report["goals"]
    lines.append("### Goals")
    lines.append("")
    lines.append("| goal | measured | verdict |")
    lines.append("|---|---|---|")
    for row in g:
        lines.append(f"| {row['goal']} | {row['measured']} | {verdict(row['ok'])} |")
    lines.append("")

    es = report.get("emit", {})
    if "sdk_path_us_per_record" in es:
        lines.append("### Emitting records (measured apart)")
        lines.append("")
        lines.append(
            f"`benchmarks/emit_bench.py` replays {es['records']:,} feed_items records of the "
            f"1,000-feed cold run (mean {es['mean_record_bytes']} bytes of JSON each) through the "
            f"real feed_items stream of the SDK: **{es['sdk_path_us_per_record']} µs CPU per "
            "record** (the SDK's per-record steps, RecordMessage, msgspec encoding, buffered "
            "write); the SDK's simplejson serialize_json of the message alone "
            f"{es['serialize_us_per_record']} µs; "
            f"stdlib json.dumps {es['stdlib_json_us_per_record']} µs. {report['emit_share']}"
        )
        lines.append("")
    ss = report.get("state", {})
    if "write_s" in ss:
        lines.append("### State")
        lines.append("")
        lines.append(
            f"`benchmarks/state_bench.py`: {ss['feeds']:,} feeds × {ss['items_per_feed']} "
            f"remembered items = {ss['state_bytes'] / 1e6:.1f} MB of JSON; "
            f"`items` costs {ss['items_field_bytes_per_item']:.0f} bytes per item; each partition "
            f"adds {ss['partition_overhead_bytes']} bytes (context, validators, dates), so "
            f"{ss['bytes_per_feed']:,.0f} bytes per feed, {ss['bytes_per_item_all_in']} bytes per "
            f"item all-in. Write (encode + json.dumps) {ss['write_s']:.3f} s, read (json.loads + "
            f"index_partitions) {ss['read_s']:.3f} s: **{ss['read_plus_write_s']:.3f} s**; the "
            f"tap's own read path decodes every partition twice "
            f"(load_state, then FeedRun._bookmark per feed): {ss['read_as_tap_s']:.3f} s, "
            f"{ss['read_as_tap_plus_write_s']:.3f} s with the write."
        )
        for size, results in sizes.items():
            facts = results.get("_state")
            if facts:
                f = facts[0]
                lines.append(
                    f"Real state after the {int(size):,}-feed cold run (20 items per feed): "
                    f"{f['state_bytes']:,} bytes, {f['bytes_per_feed']:.0f} bytes per feed, "
                    f"{f['bytes_per_item_all_in']} bytes per remembered item all-in."
                )
        lines.append("")
    for note in report.get("notes", []):
        lines.append(note)
    if ANALYSIS_MD.exists():  # the hand-written profile findings, kept beside the figures
        lines.append(ANALYSIS_MD.read_text().strip())
    lines.append("")
    return "\n".join(lines)


def goals(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    sizes = report["sizes"]
    small = sizes.get("1000", {})
    big = sizes.get("10000", {})

    def ratio_row(
        goal: str, ours_key: str, peer_key: str, target: float, results: Any, n: int
    ) -> None:
        ours, peer = results.get(ours_key), results.get(peer_key)
        if not ours or not peer:
            return
        cpu_ratio = med(peer, "cpu_s") / med(ours, "cpu_s")
        wall_ratio = med(peer, "wall_s") / med(ours, "wall_s")
        st = report["startup"]
        marginal = ""
        if st.get("peer_startup"):
            o = med(ours, "cpu_s") - med(st["ours_startup"], "cpu_s")
            p = med(peer, "cpu_s") - med(st["peer_startup"], "cpu_s")
            marginal = f"; marginal CPU (start-up subtracted) {p / o:.1f}×"
        ok = cpu_ratio >= target and wall_ratio >= target
        short = min(cpu_ratio, wall_ratio) / target
        rows.append(
            {
                "goal": goal,
                "measured": f"{n:,} feeds: per CPU-second {cpu_ratio:.1f}×, per wall-second "
                f"{wall_ratio:.1f}×{marginal}" + ("" if ok else f" — {short:.0%} of the goal"),
                "ok": ok,
            }
        )

    ratio_row("Cold run ≥ 15× tap-feed's throughput", "ours_cold", "peer_cold", 15, small, 1000)
    ratio_row("Cold run ≥ 15× tap-feed's throughput", "ours_cold", "peer_cold", 15, big, 10000)
    ratio_row(
        "Unchanged run ≥ 30× tap-feed's throughput",
        "ours_unchanged",
        "peer_unchanged",
        30,
        small,
        1000,
    )
    ratio_row(
        "Unchanged run ≥ 30× tap-feed's throughput",
        "ours_unchanged",
        "peer_unchanged",
        30,
        big,
        10000,
    )
    start = med(report["startup"]["ours_startup"], "cpu_s")
    for size, results in sizes.items():
        runs = results.get("ours_unchanged")
        if runs:
            n = int(size)
            per = med(runs, "cpu_s") / n * 1000
            marginal = (med(runs, "cpu_s") - start) / n * 1000
            rows.append(
                {
                    "goal": "Unchanged run ≤ 1.5 ms CPU per feed",
                    "measured": f"{n:,} feeds: {per:.2f} ms per feed (marginal {marginal:.2f} ms)",
                    "ok": per <= 1.5,
                }
            )
    if big:
        peak = max(
            (
                max(r.peak_rss_mb for r in runs)
                for k, runs in big.items()
                if k.startswith("ours") and runs
            ),
            default=0.0,
        )
        rows.append(
            {
                "goal": "10,000 feeds: peak RSS ≤ 256 MB",
                "measured": f"highest of all 10,000-feed runs {peak:.0f} MB",
                "ok": peak <= 256,
            }
        )
        if big.get("ours_unchanged"):
            wall = med(big["ours_unchanged"], "wall_s")
            rows.append(
                {
                    "goal": "10,000 feeds unchanged < 60 s wall",
                    "measured": f"{wall:.1f} s",
                    "ok": wall < 60,
                }
            )
    ss = report.get("state", {})
    if "write_s" in ss:
        rows.append(
            {
                "goal": "State ≤ 16 bytes per remembered item",
                "measured": f"`items`: {ss['items_field_bytes_per_item']:.0f} bytes per item; "
                f"all-in with the per-feed fields at 100 items: {ss['bytes_per_item_all_in']}",
                "ok": ss["items_field_bytes_per_item"] <= 16,
            }
        )
        rows.append(
            {
                "goal": "Read + write the state of 10,000 feeds × 100 items < 1 s",
                "measured": f"{ss['read_plus_write_s']:.2f} s (codec); "
                f"{ss['read_as_tap_plus_write_s']:.2f} s as the tap reads it",
                "ok": ss["read_as_tap_plus_write_s"] < 1,
            }
        )
    es = report.get("emit", {})
    if "sdk_path_us_per_record" in es:
        rows.append(
            {
                "goal": "Emitting records is not the bottleneck",
                "measured": report["emit_share"],
                "ok": report["emit_fraction"] < 0.5,
            }
        )
    return rows


def replace_section(text: str, section: str) -> str:
    """Replace the '## Whole runs' section (up to the next '## ' heading) or append it."""
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## (?!#)|\Z)", re.M | re.S)
    if pattern.search(text):
        return pattern.sub(lambda _: section.rstrip("\n") + "\n\n", text, count=1)
    if not text.strip():
        return "# Benchmark results\n\n" + section
    return text.rstrip("\n") + "\n\n" + section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="~5 minutes (default)")
    mode.add_argument("--full", action="store_true", help="more runs; the peer on 10,000 too")
    parser.add_argument("--sizes", default="1000,10000", help="feed counts, comma-separated")
    parser.add_argument("--concurrency", type=int, default=8, help="tap max_concurrency")
    parser.add_argument("--no-write", action="store_true", help="do not touch RESULTS.md")
    args = parser.parse_args()
    full = args.full
    runs = 5 if full else 3
    peer_runs = 3 if full else 2
    sizes = [int(s) for s in args.sizes.split(",")]
    have_peer = ensure_peer()
    compile_package(ROOT)
    machine = machine_facts()
    log_lines: list[str] = []

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)
        log_lines.append(msg)

    work = Path(tempfile.mkdtemp(prefix="feeddelta-bench-"))
    bench = Bench(work, args.concurrency)
    report: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": ".venv/bin/python benchmarks/run_bench.py "
        + ("--full" if full else "--quick")
        + ("" if args.sizes == "1000,10000" else f" --sizes {args.sizes}"),
        "mode": "full" if full else "quick",
        "runs": runs,
        "peer_runs": peer_runs if have_peer else 0,
        "concurrency": args.concurrency,
        "machine": machine,
        "sizes": {},
        "notes": [],
    }
    started = time.monotonic()
    try:
        log("start-up runs")
        report["startup"] = startup(bench, runs, have_peer, log)
        for n in sizes:
            log(f"{n} feeds")
            big = n >= 5000
            report["sizes"][str(n)] = scenario(
                bench,
                n,
                runs=(3 if full else 1) if big else runs,
                peer_runs=(1 if full else 0) if big else (peer_runs if have_peer else 0),
                timeout_s=600 if big else 180,
                log=log,
            )
        # Records for the emit benchmark: the output of one more 1,000-feed cold run.
        log("emit and state benchmarks")
        server = Server(1000)
        try:
            run, _ = bench.ours("ours cold (records)", server.urls(), None, 180)
        finally:
            server.stop()
        report["emit"] = side_tool(
            [str(PY), str(BENCH / "emit_bench.py"), str(work / "ours-out.jsonl")], 300, False
        )
        report["state"] = side_tool(
            [str(PY), str(BENCH / "state_bench.py"), "--repeat", str(runs)], 300, True
        )
        es = report["emit"]
        if "sdk_path_us_per_record" in es and run.records:
            records = run.records
            emit_cpu = es["sdk_path_us_per_record"] * records / 1e6
            total = run.cpu_s
            report["emit_fraction"] = emit_cpu / total
            report["emit_share"] = (
                f"In the 1,000-feed cold run ({records:,} records, {total:.2f} s CPU) emitting "
                f"accounts for ~{emit_cpu:.2f} s CPU, {emit_cpu / total:.0%} of the run."
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["elapsed_s"] = round(time.monotonic() - started, 1)
    log(f"done in {report['elapsed_s']} s")
    report["goals"] = goals(report)
    raw = json.loads(json.dumps(report, default=lambda o: asdict(o)))
    RESULTS_JSON.write_text(json.dumps(raw, indent=1))
    section = render(report)
    print(section)
    if not args.no_write:
        existing = RESULTS_MD.read_text() if RESULTS_MD.exists() else ""  # re-read right now
        RESULTS_MD.write_text(replace_section(existing, section))


if __name__ == "__main__":
    main()
