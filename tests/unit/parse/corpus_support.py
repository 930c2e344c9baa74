"""Helpers shared by the parse tests: where the shared corpus lives, and our result in the
corpus vocabulary (what ``check_corpus.py`` compares)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from tap_feeddelta.errors import ParseError
from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse import parse_feed

REPO_ROOT = Path(__file__).resolve().parents[3]
CORPUS = (REPO_ROOT / ".." / "shared" / "corpus").resolve()
EXPECTATIONS = CORPUS / "expectations.jsonl"
KNOWN_MISSES = Path(__file__).with_name("corpus_known_misses.txt")

_FAMILY = {"rss-1.0": "rdf"}


def corpus_available() -> bool:
    return EXPECTATIONS.is_file()


def load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_corpus", CORPUS / "check_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_cases() -> list[dict[str, Any]]:
    if not corpus_available():
        return []
    with EXPECTATIONS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip() and not line.startswith("#")]


def case_id(case: dict[str, Any], index: int) -> str:
    what = case.get("field") or case.get("expect")
    return f"{index:03d}:{case['file'].removeprefix('feedparser/')}:{what}"


def corpus_result(feed: ParsedFeed) -> dict[str, Any]:
    return {
        "format": _FAMILY.get(feed.format, feed.format.split("-")[0]),
        "feed": {"title": feed.title, "link": feed.link},
        "items": [
            {
                "id": item.native_id,
                "title": item.title,
                "url": item.url,
                "published": item.published_at,
                "updated": item.updated_at,
                "summary": item.summary,
                "content": item.content_text,
                "authors": [{"name": a.name, "email": a.email, "url": a.url} for a in item.authors],
                "tags": list(item.tags),
                "enclosures": [
                    {"url": e.url, "type": e.type, "length": e.length_bytes}
                    for e in item.enclosures
                ],
            }
            for item in feed.items
        ],
        "error": None,
    }


def parse_corpus_file(relative: str) -> dict[str, Any]:
    path = CORPUS / relative
    content_type = "application/json" if path.suffix == ".json" else "application/xml"
    try:
        feed = parse_feed(path.read_bytes(), content_type, f"http://corpus.invalid/{relative}")
    except ParseError as exc:
        return {
            "format": None,
            "feed": {},
            "items": [],
            "error": {"code": exc.code, "message": exc.message},
            "feeds": list(exc.advertised_feeds),
        }
    return corpus_result(feed)
