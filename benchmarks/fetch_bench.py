"""CPU cost per request: Fetcher vs a bare urllib3 PoolManager loop vs requests.

A keep-alive HTTP server runs in a separate process on 127.0.0.1 so that
``time.process_time()`` in this process counts only the client's CPU (the Fetcher's
loop thread included). The Fetcher is measured twice: ``fetch_async`` awaited one after
another on its loop (how a tap run uses it), and the blocking ``fetch`` (one hand-off
to the loop thread and back per call). Each client does the same requests with the same headers:
a conditional GET answered 304, and a plain GET answered 200 with a ~20 KiB body.
Medians over several runs; ratios against the bare urllib3 loop.

    .venv/bin/python benchmarks/fetch_bench.py [--requests 2000] [--runs 5] [--write]

``--write`` puts the table into benchmarks/RESULTS.md under "## Fetching".
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import statistics
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

import requests
import urllib3

from tap_feeddelta.fetch import Fetcher, FetchPolicy

ETAG = '"bench-1"'
BODY = b"<rss><channel>" + b"<item><title>x</title></item>" * 700 + b"</channel></rss>"
UA = "tap-feeddelta-bench/0.1"
RESULTS = Path(__file__).with_name("RESULTS.md")
SECTION = "## Fetching"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.headers.get("If-None-Match") == ETAG:
            self.send_response(304)
            self.send_header("ETag", ETAG)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("ETag", ETAG)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


def _serve(port_box: Any) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port_box.put(server.server_address[1])
    server.serve_forever()


Batch = Callable[[bool, int], None]  # (conditional, how many requests)


def _one_by_one(call: Callable[[bool], None]) -> Batch:
    def batch(conditional: bool, count: int) -> None:
        for _ in range(count):
            call(conditional)

    return batch


def _clients(url: str) -> dict[str, tuple[Batch, Callable[[], None]]]:
    fetcher = Fetcher(FetchPolicy(user_agent=UA, allow_private_networks=True))
    expected = {True: "not_modified", False: "ok"}

    def via_fetcher(conditional: bool) -> None:
        result = fetcher.fetch(url, etag=ETAG if conditional else None)
        assert result.status == expected[conditional], result.error

    def on_the_loop(conditional: bool, count: int) -> None:
        async def batch() -> None:
            for _ in range(count):
                result = await fetcher.fetch_async(url, etag=ETAG if conditional else None)
                assert result.status == expected[conditional], result.error

        fetcher.submit(batch()).result()

    pool = urllib3.PoolManager(maxsize=2)
    base = {"User-Agent": UA, "Accept": "application/rss+xml", "Accept-Encoding": "gzip, deflate"}
    conditional_headers = {**base, "If-None-Match": ETAG}

    def via_urllib3(conditional: bool) -> None:
        resp = pool.request(
            "GET",
            url,
            headers=conditional_headers if conditional else base,
            redirect=False,
            retries=False,
            timeout=30.0,
        )
        assert resp.status == (304 if conditional else 200)
        _ = resp.data

    session = requests.Session()

    def via_requests(conditional: bool) -> None:
        resp = session.get(
            url,
            headers=conditional_headers if conditional else base,
            allow_redirects=False,
            timeout=30,
        )
        assert resp.status_code == (304 if conditional else 200)
        _ = resp.content

    return {
        "urllib3 PoolManager (bare loop)": (_one_by_one(via_urllib3), pool.clear),
        "Fetcher": (on_the_loop, fetcher.close),
        "Fetcher, blocking fetch()": (_one_by_one(via_fetcher), lambda: None),
        "requests.Session": (_one_by_one(via_requests), session.close),
    }


def _measure(batch: Batch, conditional: bool, count: int) -> tuple[float, float]:
    batch(conditional, 50)  # warm up: connection open, caches filled
    cpu, wall = time.process_time(), time.perf_counter()
    batch(conditional, count)
    return (
        (time.process_time() - cpu) * 1000 / count,
        (time.perf_counter() - wall) * 1000 / count,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    box: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(box,), daemon=True)
    server.start()
    try:
        url = f"http://127.0.0.1:{box.get(timeout=10)}/feed.xml"
        clients = _clients(url)
        table: dict[tuple[str, bool], list[tuple[float, float]]] = {}
        for _ in range(args.runs):  # interleave clients so drift hits all of them alike
            for name, (call, _close) in clients.items():
                for conditional in (True, False):
                    table.setdefault((name, conditional), []).append(
                        _measure(call, conditional, args.requests)
                    )
        for _call, close in clients.values():
            close()
    finally:
        server.terminate()
        server.join(5)

    lines = _report(table, args.requests, args.runs)
    print("\n".join(lines))
    if args.write:
        _write(lines)


def _report(
    table: dict[tuple[str, bool], list[tuple[float, float]]], count: int, runs: int
) -> list[str]:
    def median_cpu(name: str, conditional: bool) -> float:
        return statistics.median(cpu for cpu, _ in table[(name, conditional)])

    def median_wall(name: str, conditional: bool) -> float:
        return statistics.median(wall for _, wall in table[(name, conditional)])

    base = "urllib3 PoolManager (bare loop)"
    lines = [
        SECTION,
        "",
        "Client CPU per request (`time.process_time`, server in another process), keep-alive "
        f"on 127.0.0.1; median of {runs} runs of {count} requests each.",
        "",
        "| client | 304 path CPU ms/req | ×urllib3 | 200 path (~20 KiB) CPU ms/req | ×urllib3 "
        "| wall ms/req 304 / 200 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    names = sorted({name for name, _ in table}, key=lambda n: (n != base, n))
    for name in names:
        c304, c200 = median_cpu(name, True), median_cpu(name, False)
        lines.append(
            f"| {name} | {c304:.3f} | {c304 / median_cpu(base, True):.2f} "
            f"| {c200:.3f} | {c200 / median_cpu(base, False):.2f} "
            f"| {median_wall(name, True):.3f} / {median_wall(name, False):.3f} |"
        )
    fetch_304, req_304 = median_cpu("Fetcher", True), median_cpu("requests.Session", True)
    fetch_200, req_200 = median_cpu("Fetcher", False), median_cpu("requests.Session", False)
    lines += [
        "",
        f"requests costs {req_304 / fetch_304:.2f}× the Fetcher's CPU on the 304 path and "
        f"{req_200 / fetch_200:.2f}× on the 200 path.",
        "",
        f"Python {platform.python_version()}, urllib3 {version('urllib3')}, "
        f"requests {version('requests')}, {platform.machine()}; shared 2-core machine, "
        "so treat differences under ~10 % as noise.",
        "",
        f"Command: `.venv/bin/python benchmarks/fetch_bench.py --requests {count} "
        f"--runs {runs} --write`",
        "",
    ]
    return lines


def _write(lines: list[str]) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    start = text.find(SECTION + "\n")
    section = "\n".join(lines)
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(SECTION))
        text = text[:start] + section + ("" if end == -1 else text[end + 1 :])
    RESULTS.write_text(text.rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
