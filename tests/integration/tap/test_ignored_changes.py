"""ignored_changes through real runs: a YouTube-like channel feed whose entries' <updated>
moves with every like or view, served by a loopback server."""

from __future__ import annotations

from tests.feedserver import FeedServer
from tests.integration.tap.configs import config
from tests.tapharness import run_tap, without_validators

VIDEOS = ["dQw4w9WgXcQ", "9bZkp7q19f0", "kJQP7kiw5Fk"]


def channel(minute: int, titles: dict[str, str] | None = None) -> str:
    """A channel feed as YouTube serves it: each entry's <updated> is the last time its
    statistics changed (``minute``), nothing a viewer sees."""
    entries = "".join(
        f"<entry><id>yt:video:{vid}</id><yt:videoId>{vid}</yt:videoId>"
        f"<title>{(titles or {}).get(vid, f'Video {n}')}</title>"
        f'<link rel="alternate" href="https://www.youtube.com/watch?v={vid}"/>'
        "<author><name>Rick Astley</name></author>"
        f"<published>2024-02-0{n + 1}T00:00:00+00:00</published>"
        f"<updated>2024-03-01T10:{minute:02d}:0{n}+00:00</updated>"
        f"<media:group><media:description>Description {n}</media:description>"
        f'<media:community><media:statistics views="{5000 + 321 * minute}"/>'
        "</media:community></media:group></entry>"
        for n, vid in enumerate(VIDEOS)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><feed xmlns:yt="http://www.youtube.com/xml/'
        'schemas/2015" xmlns:media="http://search.yahoo.com/mrss/" '
        'xmlns="http://www.w3.org/2005/Atom"><id>yt:channel:x</id><title>Rick Astley</title>'
        f"{entries}</feed>"
    )


def test_a_bumped_updated_date_is_no_update_with_updated_at_ignored(server: FeedServer) -> None:
    server.put("/videos.xml", channel(0))
    plain = config(server, "/videos.xml")
    ignoring = config(server, "/videos.xml", ignored_changes=["updated_at"])
    first = run_tap(plain)
    assert first.returncode == 0, first.stderr
    assert first.health[0]["item_counts"]["remembered"] == 3

    # Turned on over a state kept without it: the same document reads as unchanged.
    turned_on = run_tap(ignoring, without_validators(first.final_state))
    assert turned_on.returncode == 0, turned_on.stderr
    assert turned_on.items == []
    assert turned_on.health[0]["item_counts"]["unchanged"] == 3

    # The statistics moved: every <updated> with them.
    server.put("/videos.xml", channel(10))
    without = run_tap(plain, first.final_state)
    assert [r["change_type"] for r in without.items] == ["updated"] * 3
    bumped = run_tap(ignoring, turned_on.final_state)
    assert bumped.returncode == 0, bumped.stderr
    assert bumped.items == []
    assert bumped.health[0]["item_counts"]["unchanged"] == 3

    # A visible edit still comes out, with the entry's current updated_at.
    server.put("/videos.xml", channel(20, titles={VIDEOS[1]: "Video 1 (4K remaster)"}))
    edited = run_tap(ignoring, bumped.final_state)
    [record] = edited.items
    assert (record["item_id"], record["change_type"]) == (f"yt:video:{VIDEOS[1]}", "updated")
    assert record["title"] == "Video 1 (4K remaster)"
    assert record["updated_at"] == "2024-03-01T10:20:01Z"
