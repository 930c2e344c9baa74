"""Our own corpus of hard real-world cases: ``cases/NAME.EXT`` with ``NAME.expected.json``.

Expected keys (all optional): ``content_type``, ``url`` (inputs); ``error`` and
``advertised_feeds``; ``format``, ``is_truncated``, ``item_count``; ``feed`` (attributes
of the ParsedFeed); ``feed_issue_codes`` (codes that must be among the feed's issues);
``items`` (per item: attributes, ``issue_codes``, ``title_bytes``, ``author_name_bytes``);
``feed_item_issue_codes`` (per item, codes that must be among its issues).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tap_feeddelta.errors import ParseError
from tap_feeddelta.models import ParsedFeed, ParsedItem
from tap_feeddelta.parse import parse_feed

CASES_DIR = Path(__file__).with_name("cases")
CASES = sorted(p for p in CASES_DIR.iterdir() if not p.name.endswith(".expected.json"))


def _codes(issues: tuple[Any, ...]) -> list[str]:
    return [issue.code for issue in issues]


def _check_item(item: ParsedItem, expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        if key == "issue_codes":
            assert set(value) <= set(_codes(item.issues)), item.issues
        elif key == "title_bytes":
            assert item.title is not None
            assert len(item.title.encode()) <= value
            assert len(item.title.encode()) > value - 4
        elif key == "author_name_bytes":
            name = item.authors[0].name
            assert name is not None
            assert value - 4 < len(name.encode()) <= value
        elif key in ("authors", "enclosures"):
            assert [asdict(x) for x in getattr(item, key)] == value
        elif key == "tags":
            assert list(item.tags) == value
        else:
            assert getattr(item, key) == value, key


def _check_feed(feed: ParsedFeed, expected: dict[str, Any]) -> None:
    if "format" in expected:
        assert feed.format == expected["format"]
    if "is_truncated" in expected:
        assert feed.is_truncated is expected["is_truncated"]
    if "item_count" in expected:
        assert len(feed.items) == expected["item_count"]
    for key, value in expected.get("feed", {}).items():
        assert getattr(feed, key) == value, key
    assert set(expected.get("feed_issue_codes", [])) <= set(_codes(feed.issues)), feed.issues
    for item, codes in zip(feed.items, expected.get("feed_item_issue_codes", []), strict=False):
        assert set(codes) <= set(_codes(item.issues)), item.issues
    items = expected.get("items", [])
    assert len(feed.items) >= len(items)
    for item, item_expected in zip(feed.items, items, strict=False):
        _check_item(item, item_expected)


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_case(path: Path) -> None:
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text("utf-8"))
    body = path.read_bytes()
    url = expected.get("url", "https://example.org/feed")
    content_type = expected.get("content_type")
    if "error" in expected:
        with pytest.raises(ParseError) as caught:
            parse_feed(body, content_type, url)
        assert caught.value.code == expected["error"]
        if "advertised_feeds" in expected:
            assert list(caught.value.advertised_feeds) == expected["advertised_feeds"]
        return
    feed = parse_feed(body, content_type, url)
    _check_feed(feed, expected)
    # every issue is one of the table's codes and says nothing of the document
    for issue in (*feed.issues, *(i for item in feed.items for i in item.issues)):
        assert len(issue.message) < 120
