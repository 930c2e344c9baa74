"""The floor of a Python feed parser on lxml: how fast the least possible work runs.

A *floor parser* reads the benchmark's generated documents (``parse_bench.generated``) as
no real parser can afford to: it knows their exact shape (RSS 2.0, Atom 1.0, JSON Feed
1.1 as generated, one date format each), pulls each item's fields with one dict per item,
turns the summary's HTML into text with this project's own ``html_text`` (the fastest
known here) and the title with ``" ".join(split())``, reads the date by slicing, and
builds one tuple per item. No bounds, no control characters, no URL resolution or safety,
no ids, no authors' parts, no issues, no other shapes: every check that the parse issue
asks for is left out. What it costs is the least that lxml plus Python take for these
fields, so ``feedparser / floor`` is the highest speed-up over feedparser that a
pure-Python parser on lxml can reach on these documents, before doing any of its work.

It is measured beside tap_feeddelta.parse, feedparser 6.0.14, feedparser-rs 0.7.1 and a
bare parse, taking turns (CPU time, minimum of several turns), on the 1,000-item
documents. Run from the repository root with the peers' venv (see parse_bench.py):

    PYTHONPATH=. .venv-bench/bin/python benchmarks/parse_floor.py
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from lxml import etree

from benchmarks.parse_bench import generated
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.text import html_text

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)
_ATOM = "{http://www.w3.org/2005/Atom}"
_DC_CREATOR = "{http://purl.org/dc/elements/1.1/}creator"
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, 1)}

Row = tuple[Any, ...]


def _words(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def _rfc822(text: str) -> tuple[int, ...]:
    """``Mon, 10 Jan 2024 12:00:00 +0200`` and nothing else."""
    _, day, month, year, clock, zone = text.split()
    hour, minute, second = clock.split(":")
    east = int(zone[1:3]) * 60 + int(zone[3:5])
    offset = east if zone[0] == "+" else -east
    return (int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second), offset)


def _rfc3339(text: str) -> tuple[int | str, ...]:
    """``2024-01-10T12:00:00+02:00`` and nothing else."""
    return (int(text[:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]),
            int(text[14:16]), int(text[17:19]), text[19:])  # fmt: skip


def floor_rss(body: bytes) -> list[Row]:
    rows = []
    for item in etree.fromstring(body, _PARSER)[0].iterchildren("item"):
        found = {child.tag: child.text for child in item}
        rows.append(
            (
                found.get("guid"),
                found.get("link"),
                _words(found.get("title")),
                html_text(found.get("description") or ""),
                _rfc822(found["pubDate"]),
                found.get(_DC_CREATOR),
                found.get("category"),
            )
        )
    return rows


def floor_atom(body: bytes) -> list[Row]:
    rows = []
    for entry in etree.fromstring(body, _PARSER).iterchildren(_ATOM + "entry"):
        found: dict[str, str | None] = {}
        for child in entry:
            tag = child.tag
            if tag == _ATOM + "link":
                found["link"] = child.get("href")
            elif tag == _ATOM + "author":
                found["author"] = child[0].text
            elif tag == _ATOM + "category":
                found["category"] = child.get("term")
            else:
                found[tag] = child.text
        rows.append(
            (
                found.get(_ATOM + "id"),
                found.get("link"),
                _words(found.get(_ATOM + "title")),
                html_text(found.get(_ATOM + "summary") or ""),
                _rfc3339(found[_ATOM + "published"] or ""),
                _rfc3339(found[_ATOM + "updated"] or ""),
                found.get("author"),
                found.get("category"),
            )
        )
    return rows


def floor_json(body: bytes) -> list[Row]:
    return [
        (
            item.get("id"),
            item.get("url"),
            _words(item.get("title")),
            html_text(item.get("content_html") or ""),
            _rfc3339(item["date_published"]),
            [author.get("name") for author in item.get("authors", ())],
            list(item.get("tags", ())),
        )
        for item in json.loads(body)["items"]
    ]


_FLOORS: dict[str, Callable[[bytes], list[Row]]] = {
    "rss": floor_rss,
    "atom": floor_atom,
    "json": floor_json,
}


def _touch(entries: Any) -> None:
    for entry in entries:
        for key in ("title", "link", "summary", "id", "published"):
            entry.get(key)


def _parsers() -> dict[str, Callable[[bytes, str], object]]:
    parsers: dict[str, Callable[[bytes, str], object]] = {
        "floor": lambda body, fmt: _FLOORS[fmt](body),
        "tap_feeddelta": lambda body, fmt: parse_feed(body, None, "https://example.com/feed"),
    }
    try:
        import feedparser

        parsers["feedparser"] = lambda body, fmt: _touch(feedparser.parse(body).entries)
    except ImportError:
        pass
    try:
        import feedparser_rs

        parsers["feedparser-rs"] = lambda body, fmt: _touch(feedparser_rs.parse(body).entries)
    except ImportError:
        pass
    parsers["bare parse"] = lambda body, fmt: (
        json.loads(body) if fmt == "json" else etree.fromstring(body, _PARSER)
    )
    return parsers


def main() -> int:
    turns = 15
    parsers = _parsers()
    print("| format | parser | CPU ms/doc (1,000 items) | vs feedparser | vs feedparser-rs |")
    print("|---|---|---:|---:|---:|")
    for fmt in ("rss", "atom", "json"):
        body = generated(fmt, 1000)
        best: dict[str, float] = {}
        for turn in range(turns):
            for name, parse in parsers.items():
                if name == "feedparser" and (fmt == "json" or turn >= 5):
                    continue  # it cannot read JSON Feed; five turns of it are enough
                start = time.process_time()
                parse(body, fmt)
                spent = time.process_time() - start
                best[name] = min(best.get(name, spent), spent)
        for name, spent in best.items():
            slow, rust = best.get("feedparser"), best.get("feedparser-rs")
            versus_slow = f"{slow / spent:.1f}×" if slow else "n/a"
            versus_rust = f"{rust / spent:.2f}×" if rust else "n/a"
            print(f"| {fmt} | {name} | {spent * 1000:.1f} | {versus_slow} | {versus_rust} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
