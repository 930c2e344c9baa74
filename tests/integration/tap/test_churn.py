"""Change detection through real runs: edits that must come out and churn that must not,
served by a loopback server."""

from __future__ import annotations

from tests.feedserver import FeedServer
from tests.integration.tap.configs import config
from tests.tapharness import run_tap, without_validators

PARAGRAPH = "<p>" + "This paragraph is part of a long article about feeds. " * 90 + "</p>"


def full_text_post(price: int) -> str:
    """A full-text RSS feed as Drupal, Squarespace or Tumblr write it: the whole post in
    <description>, no content:encoded; the summary is cut to 4 KiB."""
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>D</title>'
        "<link>https://d.example/</link><item><title>Long post</title>"
        '<link>https://d.example/node/1</link><guid isPermaLink="false">1 at d</guid>'
        f"<description><![CDATA[{PARAGRAPH}<p>Price: ${price}.</p>]]></description>"
        "</item></channel></rss>"
    )


def test_an_edit_past_the_summary_cap_comes_out(server: FeedServer) -> None:
    server.put("/long.xml", full_text_post(10))
    cfg = config(server, "/long.xml", content_mode="feed_content")
    first = run_tap(cfg)
    assert first.returncode == 0, first.stderr
    server.put("/long.xml", full_text_post(99))
    edited = run_tap(cfg, without_validators(first.final_state))
    assert edited.returncode == 0, edited.stderr
    [record] = edited.items
    assert record["change_type"] == "updated"
    # The record keeps the cut text and says so.
    assert len(record["summary"]) <= 4096
    assert [issue["code"] for issue in record["issues"]] == ["summary_truncated"]
