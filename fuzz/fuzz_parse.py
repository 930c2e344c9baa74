"""Coverage-guided fuzz target (atheris) for the feed parser, and the whole pure path.

Each input is parsed; a parsed feed then goes through change detection and the state
codec. Anything but the project's own ParseError, or a bound exceeded, is a finding.
Run it with ``./scripts/fuzz [SECONDS]`` (bounded; seeds come from the corpora).
"""

from __future__ import annotations

import json
import sys

import atheris

with atheris.instrument_imports():
    from tap_feeddelta.delta import DeltaSettings, diff_items
    from tap_feeddelta.errors import ParseError
    from tap_feeddelta.parse import parse_feed
    from tap_feeddelta.state import FeedBookmark, decode_bookmark, encode_bookmark

SETTINGS = DeltaSettings("fuzz", "https://example.org/feed", "emit_all", max_state_items=100)
CONTENT_TYPES = (None, "application/rss+xml", "text/html; charset=latin-1", "application/json")


def test_one_input(data: bytes) -> None:
    content_type = CONTENT_TYPES[data[0] % len(CONTENT_TYPES)] if data else None
    try:
        feed = parse_feed(data[1:], content_type, "https://example.org/feed")
    except ParseError:
        return
    assert len(feed.items) <= 10_000
    for item in feed.items:
        assert item.title is None or len(item.title.encode()) <= 1024
        assert item.summary is None or len(item.summary.encode()) <= 4096
        assert item.content_text is None or len(item.content_text.encode()) <= 65536
        for url in (item.url, *(e.url for e in item.enclosures)):
            assert url is None or url.startswith(("http://", "https://"))
    delta = diff_items(None, feed.items, SETTINGS)
    bookmark = FeedBookmark(success_at="2024-01-01T00:00:00Z", items=delta.remembered_items)
    encoded = json.loads(json.dumps(encode_bookmark(bookmark)))
    assert decode_bookmark(encoded, "fuzz") == bookmark
    assert len(encoded["items"]) <= 16 * 100
    assert diff_items(bookmark, feed.items, SETTINGS).changes == ()


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
