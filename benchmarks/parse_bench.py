"""Parsing throughput: tap_feeddelta.parse against feedparser, feedparser-rs and bare lxml.

A generated corpus (RSS 2.0, Atom 1.0 and JSON Feed 1.1; 20, 100, 1,000 and 20,000 items,
each with an HTML summary, title, link, id, date, author and category) is parsed by each
parser in one run, the parsers taking turns (round-robin) so that load from other work on
the machine falls on all of them alike; each figure is the median of several runs. All
speed figures are CPU time (``time.process_time``): MB/s, items/s, CPU ms per document and
the ratios to feedparser and feedparser-rs. Peak memory is measured for each parser on the
1,000- and 20,000-item documents (and on a 20,000-item RSS document of small items, ~2 MB)
in a fresh child process: the growth of its resident set during the one parse (the
kernel's high-water mark is reset just before it, ``/proc/self/clear_refs``; where that is
unavailable, ``ru_maxrss`` growth).

Our parser is measured with full normalization (plain text, dates, URLs, caps). Its
10,000-item reading limit is lifted for the run so that every parser does the same work.
The peers are measured as ``parse(body)`` plus reading each entry's title, link, summary,
id and published date (feedparser-rs builds some of its Python objects lazily). "lxml" is
a bare ``lxml.etree.fromstring`` (``json.loads`` for JSON Feed): the ceiling.

Install the peers into a separate venv (never into the project's dependencies) and run
from the repository root:

    python3 -m venv .venv-bench
    .venv-bench/bin/pip install "lxml>=5.2" feedparser==6.0.14 feedparser-rs==0.7.1
    PYTHONPATH=. .venv-bench/bin/python benchmarks/parse_bench.py --write benchmarks/RESULTS.md

A peer that is not installed is skipped. ``--quick`` runs fewer repetitions. ``--write``
appends benchmarks/parsing_analysis.md (the hand-written reading of the figures: update it
when they change) below the tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZES = (20, 100, 1_000, 20_000)
ANALYSIS_MD = Path(__file__).resolve().parent / "parsing_analysis.md"
FORMATS = ("rss", "atom", "json")
WORDS = [
    *[
        "feed",
        "delta",
        "tap",
        "parser",
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
    ],
    *[
        "sed",
        "do",
        "eiusmod",
        "tempor",
        "incididunt",
        "ut",
        "labore",
        "et",
        "dolore",
        "magna",
        "aliqua",
    ],
    *["caf\u00e9", "na\u00efve", "r\u00e9sum\u00e9"],
]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _summary_html(rng: random.Random) -> str:
    return (
        f"<p>{_words(rng, 20)} <b>{_words(rng, 3)}</b> {_words(rng, 10)}</p>"
        f'<p><a href="https://example.com/{rng.randrange(10**6)}">{_words(rng, 4)}</a> '
        f'{_words(rng, 15)} &amp; {_words(rng, 5)}<br/><img src="https://example.com/i.png"/></p>'
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def generated(fmt: str, count: int) -> bytes:
    rng = random.Random(f"{fmt}-{count}")
    if fmt == "json":
        items = [
            {
                "id": f"https://example.com/posts/{n}",
                "url": f"https://example.com/posts/{n}",
                "title": _words(rng, 8).title(),
                "content_html": _summary_html(rng),
                "date_published": f"2024-0{1 + n % 9}-1{n % 10}T12:{n % 60:02d}:00+02:00",
                "authors": [{"name": "Jane Doe", "url": "https://example.com/jane"}],
                "tags": [rng.choice(WORDS)],
            }
            for n in range(count)
        ]
        doc = {"version": "https://jsonfeed.org/version/1.1", "title": "Bench",
               "home_page_url": "https://example.com/", "items": items}  # fmt: skip
        return json.dumps(doc, ensure_ascii=False).encode()
    parts = []
    if fmt == "rss":
        parts.append(
            '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>Bench</title>'
            "<link>https://example.com/</link><description>Generated</description>"
        )
        for n in range(count):
            parts.append(
                f"<item><title>{_escape(_words(rng, 8).title())}</title>"
                f"<link>https://example.com/posts/{n}</link>"
                f'<guid isPermaLink="true">https://example.com/posts/{n}</guid>'
                f"<pubDate>Mon, 1{n % 10} Jan 2024 12:{n % 60:02d}:00 +0200</pubDate>"
                f"<dc:creator>Jane Doe</dc:creator><category>{rng.choice(WORDS)}</category>"
                f"<description>{_escape(_summary_html(rng))}</description></item>"
            )
        parts.append("</channel></rss>")
    else:
        parts.append(
            '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
            '<title>Bench</title><link href="https://example.com/"/><id>urn:bench</id>'
            "<updated>2024-01-01T00:00:00Z</updated>"
        )
        for n in range(count):
            parts.append(
                f"<entry><title>{_escape(_words(rng, 8).title())}</title>"
                f'<link rel="alternate" href="https://example.com/posts/{n}"/>'
                f"<id>https://example.com/posts/{n}</id>"
                f"<published>2024-01-1{n % 10}T12:{n % 60:02d}:00+02:00</published>"
                f"<updated>2024-01-1{n % 10}T13:{n % 60:02d}:00Z</updated>"
                f"<author><name>Jane Doe</name></author>"
                f'<category term="{rng.choice(WORDS)}"/>'
                f'<summary type="html">{_escape(_summary_html(rng))}</summary></entry>'
            )
        parts.append("</feed>")
    return "".join(parts).encode()


# -- the parsers: each returns the number of items it produced -------------------------


def _ours() -> Callable[[bytes, str], int] | None:
    from tap_feeddelta.parse import atom, jsonfeed, parse_feed, rss

    for module in (rss, atom, jsonfeed):
        module.MAX_ITEMS_READ = 10**6  # type: ignore[misc]  # same work as the peers

    def run(body: bytes, fmt: str) -> int:
        return len(parse_feed(body, None, "https://example.com/feed").items)

    return run


def _touch(entries: Any) -> int:
    count = 0
    for entry in entries:
        for key in ("title", "link", "summary", "id", "published"):
            entry.get(key)
        count += 1
    return count


def _feedparser() -> Callable[[bytes, str], int] | None:
    try:
        import feedparser
    except ImportError:
        return None
    if feedparser.__version__ != "6.0.14":
        print(f"note: feedparser {feedparser.__version__}, not 6.0.14", file=sys.stderr)

    def run(body: bytes, fmt: str) -> int:
        return _touch(feedparser.parse(body).entries)

    return run


def _feedparser_rs() -> Callable[[bytes, str], int] | None:
    try:
        import feedparser_rs
    except ImportError:
        return None

    def run(body: bytes, fmt: str) -> int:
        return _touch(feedparser_rs.parse(body).entries)

    return run


def _lxml() -> Callable[[bytes, str], int] | None:
    try:
        from lxml import etree
    except ImportError:
        return None

    def run(body: bytes, fmt: str) -> int:
        if fmt == "json":
            return len(json.loads(body)["items"])
        root = etree.fromstring(body)
        return len(root.findall(".//{*}item") if fmt == "rss" else root.findall("{*}entry"))

    return run


PARSERS: dict[str, Callable[[], Callable[[bytes, str], int] | None]] = {
    "tap_feeddelta": _ours,
    "feedparser 6.0.14": _feedparser,
    "feedparser-rs 0.7.1": _feedparser_rs,
    "lxml.etree.fromstring": _lxml,
}


def measure_round_robin(
    runners: dict[str, Callable[[bytes, str], int]], body: bytes, fmt: str, runs: int
) -> dict[str, dict[str, float]]:
    """Each parser in turn, ``runs`` times; medians of CPU and wall time per document."""
    cpus: dict[str, list[float]] = {name: [] for name in runners}
    walls: dict[str, list[float]] = {name: [] for name in runners}
    items: dict[str, int] = {name: run(body, fmt) for name, run in runners.items()}  # warm-up
    inner = max(1, 200_000 // max(len(body), 1))  # repeat small documents within a turn
    for _ in range(runs):
        for name, run in runners.items():
            gc.collect()
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(inner):
                run(body, fmt)
            walls[name].append((time.perf_counter() - w0) / inner)
            cpus[name].append((time.process_time() - c0) / inner)
    figures = {}
    for name in runners:
        cpu = statistics.median(cpus[name])
        figures[name] = {
            "wall": statistics.median(walls[name]),
            "cpu": cpu,
            "mb_s": len(body) / 1e6 / cpu,
            "items_s": items[name] / cpu,
            "items": items[name],
            "runs": runs,
        }
    return figures


_PEAK_CHILD = r"""
import gc, pathlib, resource, sys
sys.path[:0] = [{root!r}, {bench!r}]
import parse_bench
run = parse_bench.PARSERS[{name!r}]()
run(parse_bench.generated({fmt!r}, 20), {fmt!r})  # imports and first-use caches
body = pathlib.Path({path!r}).read_bytes()
gc.collect()

def status(field):
    with open("/proc/self/status") as lines:
        for line in lines:
            if line.startswith(field):
                return int(line.split()[1])
    raise LookupError(field)

try:
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to the current resident set
    before = status("VmRSS:")
    result = run(body, {fmt!r})
    print(max(status("VmHWM:") - before, 0) / 1024)
except OSError:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run(body, {fmt!r})
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


def peak_mb(name: str, fmt: str, path: Path) -> float | None:
    """Peak resident-set growth (MB) of one parse in a fresh process."""
    code = _PEAK_CHILD.format(
        path=str(path),
        root=str(Path(__file__).resolve().parents[1]),
        bench=str(Path(__file__).resolve().parent),
        name=name,
        fmt=fmt,
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        print(f"peak probe failed: {name} {fmt}: {result.stderr[-300:]}", file=sys.stderr)
        return None
    return float(result.stdout.strip().splitlines()[-1])


def small_items_rss(count: int) -> bytes:
    """An RSS document of ``count`` small items (title, link, guid): ~100 bytes each."""
    parts = [
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>Small'
        "</title><link>https://example.com/</link><description>Many small items</description>"
    ]
    for n in range(count):
        parts.append(
            f"<item><title>Item {n}</title><link>https://example.com/{n}</link>"
            f"<guid>id-{n}</guid></item>"
        )
    parts.append("</channel></rss>")
    return "".join(parts).encode()


PEAK_DOCUMENTS = (("rss", 1_000), ("rss", 20_000), ("rss-small", 20_000), ("atom", 1_000),
                  ("atom", 20_000), ("json", 1_000), ("json", 20_000))  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--write", help="update the '## Parsing' section of this Markdown file")
    args = ap.parse_args()
    runs = 5 if args.quick else 15
    runners = {name: make() for name, make in PARSERS.items()}
    available = {name: run for name, run in runners.items() if run is not None}
    for name in runners:
        if name not in available:
            print(f"skipped: {name} is not installed", file=sys.stderr)
    rows = []
    for fmt in FORMATS:
        for count in SIZES:
            body = generated(fmt, count)
            takers = {
                name: run
                for name, run in available.items()
                if not (name == "feedparser 6.0.14" and fmt == "json")  # 6.0.14: no JSON Feed
            }
            turns = 3 if count == 20_000 else runs
            for name, figures in measure_round_robin(takers, body, fmt, turns).items():
                rows.append(
                    {"format": fmt, "size": count, "bytes": len(body), "parser": name, **figures}
                )
                print(f"{fmt:5} {count:>6} {name:24} {figures['mb_s']:8.2f} MB/s "
                      f"{figures['items_s']:>10.0f} items/s cpu {figures['cpu'] * 1000:9.2f} ms "
                      f"({figures['runs']} runs)", file=sys.stderr)  # fmt: skip
    peaks = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, count in PEAK_DOCUMENTS:
            path = Path(tmp) / f"bench-{fmt}-{count}"
            path.write_bytes(
                small_items_rss(count) if fmt == "rss-small" else generated(fmt, count)
            )
            run_as = "rss" if fmt == "rss-small" else fmt
            for name in available:
                if name == "feedparser 6.0.14" and run_as == "json":
                    continue
                peaks[(fmt, count, name)] = peak_mb(name, run_as, path)
                print(f"peak {fmt:9} {count:>6} {name:24} {peaks[(fmt, count, name)]} MB",
                      file=sys.stderr)  # fmt: skip
    report = render(rows, peaks, list(available))
    print(report)
    if args.write:
        write_section(Path(args.write), report)
    return 0


def render(
    rows: list[dict[str, Any]],
    peaks: dict[tuple[str, int, str], float | None],
    names: list[str],
) -> str:
    by_key = {(r["format"], r["size"], r["parser"]): r for r in rows}
    lines = [
        "## Parsing",
        "",
        "Produced by `PYTHONPATH=. .venv-bench/bin/python benchmarks/parse_bench.py --write "
        "benchmarks/RESULTS.md` (see the script's docstring for installing the peers). "
        f"Python {sys.version.split()[0]}; generated documents with HTML summaries. Every "
        "speed figure is **CPU time** (`time.process_time`), the median of several runs in "
        "which the parsers take turns; ratios are CPU-time speed-ups (for JSON Feed, which "
        "feedparser 6.0.14 cannot read, n/a). Our 10,000-item reading limit is lifted for the "
        "run so that all parsers do the same work (feedparser-rs stops at 10,000 items "
        "itself: see the 'read' column).",
        "",
        "| format | items | size | parser | MB/s | items/s | CPU ms/doc "
        "| speed-up vs feedparser | vs feedparser-rs |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        base = by_key.get((r["format"], r["size"], "feedparser 6.0.14"))
        rs = by_key.get((r["format"], r["size"], "feedparser-rs 0.7.1"))
        vs_fp = f"{base['cpu'] / r['cpu']:.1f}×" if base else "n/a"
        vs_rs = f"{rs['cpu'] / r['cpu']:.2f}×" if rs else "n/a"
        lines.append(
            f"| {r['format']} | {r['size']:,} ({int(r['items']):,} read) "
            f"| {r['bytes'] / 1e3:,.0f} KB | {r['parser']} | "
            f"{r['mb_s']:.1f} | {r['items_s']:,.0f} | {r['cpu'] * 1000:.1f} | {vs_fp} | {vs_rs} |"
        )
    lines += ["", "Peak memory of one parse (growth of a fresh process's resident set, MB; "
              "'rss-small' is 20,000 items of ~100 bytes, ~2 MB):", "",
              "| document | items | " + " | ".join(names) + " |",
              "|---|---:|" + "---:|" * len(names)]  # fmt: skip
    for fmt, count in PEAK_DOCUMENTS:
        cells = []
        for name in names:
            value = peaks.get((fmt, count, name))
            cells.append("n/a" if value is None else f"{value:.0f}")
        lines.append(f"| {fmt} | {count:,} | " + " | ".join(cells) + " |")
    if ANALYSIS_MD.exists():  # the hand-written reading of the figures, kept across runs
        lines += ["", ANALYSIS_MD.read_text("utf-8").rstrip("\n")]
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    text = path.read_text("utf-8") if path.exists() else "# Benchmarks\n"
    start = text.find("## Parsing")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("" if end < 0 else text[end:])
    path.write_text(text, "utf-8")


if __name__ == "__main__":
    sys.exit(main())
