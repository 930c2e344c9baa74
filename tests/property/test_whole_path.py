"""Hypothesis over the whole pure path: bytes → parse → delta → state → decode → delta."""

from __future__ import annotations

import json
from xml.sax.saxutils import escape

from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.errors import ParseError
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import FeedBookmark, decode_bookmark, encode_bookmark

URL = "https://example.org/feed.xml"
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
item = st.tuples(st.none() | text, text, text, st.booleans())


def _rss(items: list[tuple[str | None, str, str, bool]]) -> bytes:
    parts = []
    for guid, title, description, has_link in items:
        body = f"<title>{escape(title)}</title><description>{escape(description)}</description>"
        if guid is not None:
            body += f"<guid>{escape(guid)}</guid>"
        if has_link:
            body += f"<link>https://example.org/{len(title) % 97}</link>"
        parts.append(f"<item>{body}</item>")
    doc = f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>{"".join(parts)}'
    return (doc + "</channel></rss>").encode("utf-8", "surrogatepass")


def _mutate(data: bytes, cuts: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for position, value in cuts:
        if out:
            out[position % len(out)] = value
    return bytes(out)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(item, max_size=25),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
    st.integers(100, 150),
)
def test_whole_path_properties(
    items: list[tuple[str | None, str, str, bool]],
    cuts: list[tuple[int, int]],
    max_state_items: int,
) -> None:
    data = _mutate(_rss(items), cuts)
    try:
        feed = parse_feed(data, "application/rss+xml", URL)
    except ParseError:
        return
    again = parse_feed(data, "application/rss+xml", URL)
    assert again == feed  # deterministic

    s = DeltaSettings("m", URL, "emit_all", max_state_items=max_state_items)
    first = diff_items(None, feed.items, s)
    assert len({c.delivery_id for c in first.changes}) == len(first.changes)
    bookmark = FeedBookmark(success_at="2024-01-01T00:00:00Z", items=first.remembered_items)
    encoded = json.loads(json.dumps(encode_bookmark(bookmark)))
    assert len(encoded["items"]) <= 16 * max_state_items
    decoded = decode_bookmark(encoded, "p")
    assert decoded == bookmark
    second = diff_items(decoded, feed.items, s)
    assert second.changes == ()  # a second identical run yields no changes
    assert second.remembered_items == first.remembered_items
