#!/usr/bin/env python3
"""Whole-tap contract fuzzer: the tap's promises, checked over many runs of random feeds.

Serves five feeds from 127.0.0.1 (RSS 2.0, RSS 1.0, Atom, JSON Feed, and an RSS feed found
through a web page that advertises it), edits them at random between runs and changes how
they are served (errors, redirects, bogus 304s, truncated or malformed documents, charsets,
gzip), runs this checkout's tap again and again carrying the last STATE forward as Meltano
does, and checks each run against an independent model of what must come out: records valid
against their SCHEMA message and schemas/*.json, codes from the README's table and never
internal_error, nothing lost, duplicated or spuriously updated from an intact document, one
delivery_id per item change, counts that add up, a bounded state the next run can read, and
items before health rows before the last STATE.

    python fuzz/contract_fuzz.py [--runs N] [--seed S] [--max-items-per-run K]
                                 [--minutes M] [--keep DIR] [--no-stray-end-tags]

Bounded: stops after N runs or M minutes, whichever comes first. The same seed makes the
same feeds and edits. Exit status 1 when a violation was found, with a report.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from contract_checks import (
    Contract,
    FeedRun,
    RunOutput,
    Violations,
    check_feed,
    check_run,
    read_contract,
    read_output,
)
from contract_feeds import BASE_TIME, ERROR_MODES, Document, Feed, Format, markup_damage
from contract_server import Route, Site

REPO = Path(__file__).resolve().parent.parent
TAP_TIMEOUT_SECONDS = 120  # a hang guard: a run takes about a second
PROGRESS_EVERY_RUNS = 10

FEEDS: tuple[tuple[str, Format, str], ...] = (
    ("f0", "rss2", "/rss2.xml"),
    ("f1", "rss1", "/rss1.rdf"),
    ("f2", "atom", "/atom.xml"),
    ("f3", "json", "/feed.json"),
    ("f4", "rss2", "/disc.xml"),  # configured as the page that advertises it
)
PAGE_PATH, PAGE_REDIRECT_TARGET = "/page.html", "/page2.html"
FEED_MODES = ("ok", "404", "500", "429", "503ra", "bogus304", "redirect", "truncate", "brokenxml")
FEED_MODE_WEIGHTS = (70, 3, 3, 2, 2, 3, 6, 6, 5)
PAGE_MODES, PAGE_MODE_WEIGHTS = ("ok", "500", "redirect"), (90, 5, 5)


@dataclass(frozen=True)
class Options:
    runs: int
    seed: int
    max_items_per_run: int
    minutes: float
    keep: Path | None
    with_stray_end_tags: bool

    def command(self) -> str:
        """The command line that repeats this session."""
        line = (
            f"python fuzz/contract_fuzz.py --seed {self.seed} --runs {self.runs} "
            f"--max-items-per-run {self.max_items_per_run} --minutes {self.minutes:g}"
        )
        return line + ("" if self.with_stray_end_tags else " --no-stray-end-tags")


def parse_options(argv: list[str] | None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=150, help="tap runs at most (150)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    parser.add_argument(
        "--max-items-per-run", type=int, default=500, help="the tap's setting (500)"
    )
    parser.add_argument("--minutes", type=float, default=8, help="wall time at most (8)")
    parser.add_argument("--keep", type=Path, default=None, help="work directory to keep")
    parser.add_argument(
        "--no-stray-end-tags",
        action="store_true",
        help="damage XML without the stray </p> (the same runs otherwise)",
    )
    args = parser.parse_args(argv)
    return Options(
        runs=args.runs,
        seed=args.seed,
        max_items_per_run=args.max_items_per_run,
        minutes=args.minutes,
        keep=args.keep,
        with_stray_end_tags=not args.no_stray_end_tags,
    )


class Session:
    """One fuzzing session: the site, the feeds' models, the tap's files and the findings."""

    def __init__(self, options: Options, site: Site, work: Path) -> None:
        self.options, self.site, self.work = options, site, work
        self.rng = random.Random(options.seed)
        # each feed has its own generator, so that one feed's edits do not shift another's
        self.feeds = [
            Feed(name, fmt, path, random.Random(self.rng.random())) for name, fmt, path in FEEDS
        ]
        self.urls = [site.url(path) for _, _, path in FEEDS[:-1]] + [site.url(PAGE_PATH)]
        self.damage: Callable[[random.Random], str] = markup_damage(options.with_stray_end_tags)
        self.contract: Contract = read_contract(REPO)
        self.violations = Violations()
        self.config_path = work / "config.json"
        self.state_path = work / "state.json"
        self.bodies = work / "bodies"

    def run_all(self) -> int:
        """Runs the tap until the run or time bound, or a run the next cannot follow;
        returns the number of runs made."""
        self.bodies.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(self._config()), encoding="utf-8")
        self.state_path.write_text("{}", encoding="utf-8")
        started = time.monotonic()
        runs_done = 0
        for run in range(self.options.runs):
            if time.monotonic() - started > self.options.minutes * 60:
                break
            documents = {feed.name: self._publish(feed, run) for feed in self.feeds}
            self._publish_page()
            self.site.clear_log()
            output = self._run_tap(run)
            runs_done += 1
            if output is None:
                break  # no state to carry forward
            self._check(run, output, documents)
            if run % PROGRESS_EVERY_RUNS == 0:
                statuses = [row["status"] for row in output.health]
                print(
                    f"run {run}: {len(output.items)} items, statuses {statuses}, "
                    f"{time.monotonic() - started:.0f}s",
                    flush=True,
                )
        return runs_done

    def _config(self) -> dict[str, object]:
        return {
            "feed_urls": self.urls,
            "allow_private_networks": True,  # the site is on 127.0.0.1
            "first_run_mode": "emit_all",
            "discover_from_websites": True,
            "request_timeout_seconds": 5,
            "max_items_per_run": self.options.max_items_per_run,
            "content_mode": "feed_content",
        }

    def _publish(self, feed: Feed, run: int) -> tuple[Document, list[str]]:
        """Edits the feed (from the second run on) and serves it in a random mode."""
        edits = feed.mutate(run) if run > 0 else []
        mode = self.rng.choices(FEED_MODES, FEED_MODE_WEIGHTS)[0]
        if feed.fmt == "json" and mode == "brokenxml":
            mode = "truncate"  # markup damage is for XML
        document = feed.document(mode, self.damage)
        (self.bodies / f"{feed.name}.{run}.body").write_bytes(document.body)
        route = Route(
            mode=mode if mode in ERROR_MODES else "ok",
            body=document.body,
            content_type=document.content_type,
            etag=document.etag,
            last_modified=document.last_modified,
            is_gzipped=document.is_gzipped,
        )
        if mode == "redirect":
            target = feed.path + ".alt"
            self.site.set_route(feed.path, Route("redirect", redirect_to=self.site.url(target)))
            self.site.set_route(target, route)
        else:
            self.site.set_route(feed.path, route)
        return document, edits

    def _publish_page(self) -> None:
        mode = self.rng.choices(PAGE_MODES, PAGE_MODE_WEIGHTS)[0]
        discovered = self.site.url(FEEDS[-1][2])
        page = Route(
            mode="ok" if mode == "redirect" else mode,
            body=(
                '<!doctype html><html><head><title>Blog</title><link rel="alternate" '
                f'type="application/rss+xml" href="{discovered}"></head><body>hi</body></html>'
            ).encode(),
            content_type="text/html; charset=utf-8",
            etag='"p"',
            last_modified=email.utils.format_datetime(BASE_TIME, usegmt=True),
        )
        if mode == "redirect":
            target = self.site.url(PAGE_REDIRECT_TARGET)
            self.site.set_route(PAGE_PATH, Route("redirect", redirect_to=target))
            self.site.set_route(PAGE_REDIRECT_TARGET, page)
        else:
            self.site.set_route(PAGE_PATH, page)

    def _run_tap(self, run: int) -> RunOutput | None:
        """One tap run; its last STATE becomes the next run's input. None when the run
        failed or gave no state."""
        out_path, err_path = self.work / f"out{run}.jsonl", self.work / f"err{run}.log"
        command = [
            *(sys.executable, "-m", "tap_feeddelta"),
            *("--config", str(self.config_path), "--state", str(self.state_path)),
        ]
        # This checkout's tap, whatever is installed in the environment.
        python_path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
        with out_path.open("wb") as out, err_path.open("wb") as err:
            try:
                done = subprocess.run(
                    command,
                    stdout=out,
                    stderr=err,
                    cwd=self.work,
                    env={**os.environ, "PYTHONPATH": python_path},
                    timeout=TAP_TIMEOUT_SECONDS,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                self.violations.add(run, f"the tap did not finish in {TAP_TIMEOUT_SECONDS} s")
                return None
        stderr = err_path.read_text(encoding="utf-8", errors="replace")
        if done.returncode != 0:
            self.violations.add(run, f"exit {done.returncode}; stderr tail: {stderr[-400:]}")
            return None
        if "Traceback" in stderr:
            self.violations.add(
                run, "traceback in stderr: " + stderr[stderr.find("Traceback") :][:300]
            )
        lines = out_path.read_text(encoding="utf-8").splitlines()
        output = read_output(lines, self.contract, run, self.violations)
        if not output.states:
            self.violations.add(run, "no STATE message")
            return None
        self.state_path.write_text(json.dumps(output.states[-1]), encoding="utf-8")
        return output

    def _check(
        self, run: int, output: RunOutput, documents: dict[str, tuple[Document, list[str]]]
    ) -> None:
        check_run(run, output, self.urls, self.contract, self.violations)
        health_by_url = {row["feed_url"]: row for row in output.health}
        page_statuses = self.site.statuses_served({PAGE_PATH, PAGE_REDIRECT_TARGET})
        for feed, url in zip(self.feeds, self.urls, strict=True):
            health = health_by_url.get(url)
            if health is None:
                continue  # check_run has reported the missing row
            document, edits = documents[feed.name]
            served = FeedRun(
                document=document,
                edits=edits,
                statuses=self.site.statuses_served({feed.path, feed.path + ".alt"}),
                page_failed=feed is self.feeds[-1] and page_statuses[-1:] == [500],
            )
            records = [record for record in output.items if record["feed_url"] == url]
            check_feed(
                run, feed, served, health, records, self.options.max_items_per_run, self.violations
            )


def report(options: Options, violations: Violations, runs_done: int, work: Path) -> None:
    print(f"done: seed {options.seed}, {runs_done} runs, {len(violations.found)} violations")
    if not violations.found:
        return
    print("first of each kind:")
    for line in violations.distinct():
        print(" -", line[:400])
    print(f"work dir (config, state, each run's output and bodies): {work}")
    print(f"repeat: {options.command()} --keep DIR")


def main(argv: list[str] | None = None) -> int:
    options = parse_options(argv)
    work = options.keep or Path(tempfile.mkdtemp(prefix="contract-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    site = Site().start()
    try:
        session = Session(options, site, work)
        runs_done = session.run_all()
    finally:
        site.stop()
    report(options, session.violations, runs_done, work)
    if session.violations.found:
        return 1
    if options.keep is None:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
