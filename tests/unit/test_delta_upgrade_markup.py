"""A title or tag that versions before kept with its markup (a JSON Feed title, a tag,
a title escaped once more than declared) reads as its words now. A state those versions
wrote is read as written: the upgrade sends nothing again, and an edit after it is an
update."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.fingerprints import (
    content_id,
    derived_id,
    fingerprint_bytes,
    key_hash,
    short_hash,
    text_parts,
    title_id,
)
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.fields import whole_text_digests
from tap_feeddelta.parse.limits import MAX_TITLE_BYTES
from tap_feeddelta.state import FeedBookmark, pack_items

URL = "https://m.example/feed"
SETTINGS = DeltaSettings("m", URL)


def _json_items(*items: Mapping[str, object]) -> list[ParsedItem]:
    body = json.dumps({"version": "https://jsonfeed.org/version/1.1", "items": list(items)})
    return list(parse_feed(body.encode(), None, URL).items)


def _rss_items(items_xml: str) -> list[ParsedItem]:
    body = f'<rss version="2.0"><channel><title>F</title>{items_xml}</channel></rss>'
    return list(parse_feed(body.encode(), None, URL).items)


def _state(pairs: list[tuple[str, bytes]]) -> FeedBookmark:
    packed = [(key_hash(item_id), short_hash(full)) for item_id, full in pairs]
    return FeedBookmark(success_at="x", items=pack_items(packed))


# (the item's JSON, the fields as the version before read them)
BEFORE = {
    "json-title": ({"id": "1", "title": "<em>New</em> post"}, {"title": "<em>New</em> post"}),
    "json-script": (
        {"id": "1", "title": "<script>x()</script>Hi", "content_text": "c"},
        {"title": "<script>x()</script>Hi"},
    ),
    "json-double-escaped": ({"id": "1", "title": "AT&amp;amp;T"}, {"title": "AT&amp;T"}),
    "json-tag": (
        {"id": "1", "title": "T", "tags": ["<b>News</b>", "x"]},
        {"tags": ("<b>News</b>", "x")},
    ),
    "json-title-and-tag": (
        {"id": "1", "title": "<i>T</i>", "tags": ["<b>News</b>"]},
        {"title": "<i>T</i>", "tags": ("<b>News</b>",)},
    ),
}


@pytest.mark.parametrize(("raw", "fields_before"), BEFORE.values(), ids=BEFORE.keys())
@pytest.mark.parametrize("ignored", [(), ("updated_at",)], ids=["default", "ignoring"])
def test_a_state_from_before_markup_was_read_sends_nothing_again(
    raw: dict[str, object], fields_before: dict[str, Any], ignored: tuple[str, ...]
) -> None:
    (item,) = _json_items(raw)
    before = item._replace(read_before=(), **fields_before)
    assert before != item._replace(read_before=())  # the reading did change
    settings = dataclasses.replace(SETTINGS, ignored_changes=ignored)
    upgraded = diff_items(
        _state([("1", fingerprint_bytes(before, ignored=ignored))]), [item], settings
    )
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    bookmark = FeedBookmark(success_at="x", items=upgraded.remembered_items)
    (edited,) = _json_items({**raw, "title": "Another title"})
    after = diff_items(bookmark, [edited], settings)
    assert [change.change_type for change in after.changes] == ["updated"]


def test_a_cut_title_is_remembered_by_the_digest_of_the_title_as_read_before() -> None:
    long_title = "<b>" + "word " * 400 + "</b>"  # over the 1 KiB cap as read before
    (item,) = _json_items({"id": "1", "title": long_title})
    assert [cut[0] for cut in item.cut_digests] == ["title"]
    as_read_then = " ".join(["word"] * 400)
    as_read_then = f"<b>{as_read_then} </b>"
    cut_then = as_read_then.encode()[:MAX_TITLE_BYTES].decode()
    assert len(cut_then.encode()) == MAX_TITLE_BYTES
    before = item._replace(
        read_before=(),
        title=cut_then,
        cut_digests=(("title", *whole_text_digests(as_read_then)),),
    )
    upgraded = diff_items(_state([("1", fingerprint_bytes(before))]), [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)


def test_items_sharing_an_id_keep_the_title_ids_they_had() -> None:
    raw = [
        {"id": "s", "title": "<em>One</em>", "date_published": "2024-01-01T00:00:00Z"},
        {"id": "s", "title": "<em>Two</em>", "date_published": "2024-01-02T00:00:00Z"},
    ]
    items = _json_items(*raw)
    befores = [
        item._replace(read_before=(), title=str(entry["title"]))
        for item, entry in zip(items, raw, strict=True)
    ]
    state = _state([(title_id(before, "s"), fingerprint_bytes(before)) for before in befores])
    delta = diff_items(state, items, SETTINGS)
    assert (delta.changes, delta.counts.unchanged) == ((), 2)


def test_items_sharing_id_and_title_keep_their_content_ids() -> None:
    raw = [{"id": "s", "title": "<em>Same</em>", "content_text": f"Part {n}."} for n in range(2)]
    items = _json_items(*raw)
    befores = [item._replace(read_before=(), title="<em>Same</em>") for item in items]
    fulls = [fingerprint_bytes(before) for before in befores]
    state = _state([(content_id("s", full), full) for full in fulls])
    delta = diff_items(state, items, SETTINGS)
    assert (delta.changes, delta.counts.unchanged) == ((), 2)


def test_an_item_without_id_or_link_keeps_the_id_derived_from_its_title_then() -> None:
    title_xml = "&amp;lt;b&amp;gt;Bold&amp;lt;/b&amp;gt; news"  # escaped once more
    (item,) = _rss_items(f"<item><title>{title_xml}</title><description>D</description></item>")
    assert item.title == "Bold news"
    before = item._replace(read_before=(), title="<b>Bold</b> news")
    old_id = derived_id(text_parts(before))
    upgraded = diff_items(_state([(old_id, fingerprint_bytes(before))]), [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
    assert upgraded.counts.new == 0


def test_an_rss_title_read_as_html_for_an_active_tag_keeps_its_memory() -> None:
    # Versions before read it as plain text: it showed no element closed after it opened.
    (item,) = _rss_items(
        '<item><guid>g</guid><title>&lt;a href="https://x.example/"&gt;Read more</title></item>'
    )
    assert item.title == "Read more"
    before = item._replace(read_before=(), title='<a href="https://x.example/">Read more')
    upgraded = diff_items(_state([("g", fingerprint_bytes(before))]), [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)


ITUNES = 'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'


def _podcast_items(item_xml: str) -> list[ParsedItem]:
    body = f'<rss version="2.0" {ITUNES}><channel><title>F</title>{item_xml}</channel></rss>'
    return list(parse_feed(body.encode(), None, URL).items)


def test_a_json_summary_read_as_html_for_an_active_tag_keeps_its_memory() -> None:
    (item,) = _json_items({"id": "1", "title": "T", "summary": 'Hi <span onclick="x()">Read'})
    assert item.summary == "Hi Read"
    before = item._replace(read_before=(), summary='Hi <span onclick="x()">Read')
    upgraded = diff_items(_state([("1", fingerprint_bytes(before))]), [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)


def test_show_notes_read_as_html_keep_the_id_derived_from_them_then() -> None:
    # No guid, no link: the id is derived from the title, date and summary.
    notes = "&lt;a href=&quot;https://x.example/&quot;&gt;Notes"
    (item,) = _podcast_items(
        f"<item><title>Ep</title><itunes:summary>{notes}</itunes:summary></item>"
    )
    assert item.summary == "Notes"
    before = item._replace(read_before=(), summary='<a href="https://x.example/">Notes')
    old_id = derived_id(text_parts(before))
    upgraded = diff_items(_state([(old_id, fingerprint_bytes(before))]), [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)


def test_an_itunes_title_read_as_html_for_an_active_tag_keeps_its_memory() -> None:
    title = "&lt;a href=&quot;https://x.example/&quot;&gt;Ep 1"
    (item,) = _podcast_items(
        f"<item><guid>g</guid><title></title><itunes:title>{title}</itunes:title></item>"
    )
    assert item.title == "Ep 1"
    before = item._replace(read_before=(), title='<a href="https://x.example/">Ep 1')
    upgraded = diff_items(_state([("g", fingerprint_bytes(before))]), [item], SETTINGS)
    assert (upgraded.changes, upgraded.counts.unchanged) == ((), 1)
