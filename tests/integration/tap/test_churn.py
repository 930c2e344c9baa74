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


def dai_episode(fetch: int) -> str:
    """A podcast episode with no guid or link, served with dynamic ad insertion: another
    `?updated=` query and length on every fetch."""
    audio = f"https://traffic.megaphone.fm/ABC123.mp3?updated={1700000000 + fetch}"
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Pod</title>'
        "<item><title>Episode 1</title><pubDate>Mon, 01 Jan 2024 10:00:00 +0000</pubDate>"
        f'<enclosure url="{audio}" length="{5000000 + fetch * 1111}" type="audio/mpeg"/>'
        "</item></channel></rss>"
    )


def test_an_episode_known_by_its_ignored_enclosure_is_quiet(server: FeedServer) -> None:
    server.put("/dai.xml", dai_episode(0))
    first = run_tap(config(server, "/dai.xml"))
    assert first.returncode == 0, first.stderr
    # Turned on over a state kept without it, as the enclosure churns.
    cfg = config(server, "/dai.xml", ignored_changes=["enclosures"])
    state = first.final_state
    for fetch in (0, 1, 2):
        server.put("/dai.xml", dai_episode(fetch))
        run = run_tap(cfg, without_validators(state))
        assert run.returncode == 0, run.stderr
        assert run.items == []
        assert run.health[0]["item_counts"]["unchanged"] == 1
        state = run.final_state


def image_posts(scheme: str) -> str:
    """A Ghost-like feed whose featured images come as http:// or https://, as the cache
    that answered was asked."""
    items = "".join(
        f"<item><title>Post {n}</title><link>https://g.example/p{n}/</link><guid>65a{n}</guid>"
        f'<media:content url="{scheme}://g.example/content/images/a{n}.jpg" medium="image"/></item>'
        for n in (1, 2, 3)
    )
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">'
        f"<channel><title>G</title>{items}</channel></rss>"
    )


def test_an_enclosure_scheme_flip_is_no_update(server: FeedServer) -> None:
    server.put("/ghost.xml", image_posts("http"))
    cfg = config(server, "/ghost.xml")
    state = run_tap(cfg).final_state
    for scheme in ("https", "http"):
        server.put("/ghost.xml", image_posts(scheme))
        run = run_tap(cfg, without_validators(state))
        assert run.returncode == 0, run.stderr
        assert run.items == []
        assert run.health[0]["item_counts"]["unchanged"] == 3
        state = run.final_state
