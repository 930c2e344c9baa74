"""A fault of the tap's own on one feed ends only that feed's check: the run goes on, the
feed is reported as internal_error, its state is kept, and nothing is lost."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests import tapharness
from tests.feedserver import FeedServer, rss
from tests.tapharness import run_tap

# The tap with a parser that fails on one feed's document, as a bug would.
FAULTY_TAP = [
    sys.executable,
    "-c",
    """
import tap_feeddelta.parse as parse
real = parse.parse_feed
def faulty(body, content_type, url):
    if url.endswith("/faulty.xml"):
        raise ValueError("quoting the document: " + body.decode()[:60])
    return real(body, content_type, url)
parse.parse_feed = faulty
from tap_feeddelta.cli import main
main()
""",
]


def _config(server: FeedServer) -> dict[str, Any]:
    return {
        "feed_urls": [server.url("/faulty.xml"), server.url("/fine.xml")],
        "allow_private_networks": True,
    }


def _put(server: FeedServer, *ids: str) -> None:
    for path in ("/faulty.xml", "/fine.xml"):
        server.put(path, rss([(i, f"Title {i}", "s") for i in ids]))


def test_a_fault_on_one_feed_is_reported_and_loses_nothing(
    server: FeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _put(server, "a")
    baseline = run_tap(_config(server))
    assert baseline.returncode == 0, baseline.stderr
    faulty_url = server.url("/faulty.xml")
    before = baseline.partition(faulty_url)

    _put(server, "b", "a")
    monkeypatch.setattr(tapharness, "TAP", FAULTY_TAP)
    broken = run_tap(_config(server), baseline.final_state)
    monkeypatch.undo()

    assert broken.returncode == 0, broken.stderr
    assert [(i["feed_url"], i["item_id"]) for i in broken.items] == [(server.url("/fine.xml"), "b")]
    faulty_row = next(h for h in broken.health if h["feed_url"] == faulty_url)
    assert (faulty_row["status"], faulty_row["error_code"]) == ("error", "internal_error")
    assert faulty_row["item_counts"]["remembered"] == 1
    assert broken.partition(faulty_url) == before
    assert "internal_error" in broken.stderr and "ValueError" in broken.stderr
    assert "quoting the document" not in broken.stderr + broken.stdout

    fixed = run_tap(_config(server), broken.final_state)
    assert fixed.returncode == 0, fixed.stderr
    assert [(i["feed_url"], i["item_id"]) for i in fixed.items] == [(faulty_url, "b")]
