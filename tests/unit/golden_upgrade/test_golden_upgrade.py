"""After an upgrade, nothing a feed did not change comes out again: for each document of
documents.py, a state the previous version wrote (remembered.json, made by that
version's own code with generate.py, not stated by hand) is read by this version's
parser and change detection as unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tap_feeddelta.delta import DeltaSettings, diff_items
from tap_feeddelta.errors import ParseError
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.state import FeedBookmark, pack_items
from tests.unit.golden_upgrade.documents import all_documents

REMEMBERED: dict[str, Any] = json.loads(Path(__file__).with_name("remembered.json").read_text())[
    "documents"
]
DOCUMENTS = all_documents()


def test_every_document_has_what_the_previous_version_remembered() -> None:
    assert sorted(DOCUMENTS) == sorted(REMEMBERED), "run generate.py with the previous version"


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_document_read_after_the_upgrade_holds_no_change(name: str) -> None:
    body, content_type, url = DOCUMENTS[name]
    remembered = REMEMBERED[name]
    if isinstance(remembered, str):  # no feed to the previous version: its error code
        with pytest.raises(ParseError) as raised:
            parse_feed(body, content_type, url)
        assert raised.value.code == remembered
        return
    items = parse_feed(body, content_type, url).items
    bookmark = FeedBookmark(success_at="x", items=pack_items([tuple(p) for p in remembered]))
    delta = diff_items(bookmark, items, DeltaSettings("m", url))
    changed = [(change.change_type, change.item.url) for change in delta.changes]
    assert changed == []
