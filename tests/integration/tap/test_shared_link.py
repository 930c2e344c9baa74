"""Items that share a link, through real runs: a podcast without guid whose every <link> is
the show's page, each episode with its own enclosure. Runs against a real server, in this
process (the code the tap runs)."""

from __future__ import annotations

from typing import Any

from tap_feeddelta.config import settings_from_config
from tests.feedserver import FeedServer
from tests.tapharness import run_in_process


def podcast(ep2_title: str, *, with_enclosures: bool = True) -> str:
    items = "".join(
        f"<item><title>{title}</title><link>https://show.example/</link>"
        f"<pubDate>{n:02d} Jan 2024 10:00:00 GMT</pubDate>"
        + (
            f'<enclosure url="https://cdn.example/ep{n}.mp3" length="{n}000" type="audio/mpeg"/>'
            if with_enclosures
            else ""
        )
        + "</item>"
        for n, title in ((3, "Ep 3: Hello"), (2, ep2_title), (1, "Ep 1: Pilot"))
    )
    return f'<rss version="2.0"><channel><title>Show</title>{items}</channel></rss>'


def _runs(server: FeedServer, documents: list[str]) -> list[dict[str, Any]]:
    """Each document served in turn to one run, on one state: each run's records as
    (change_type, item_id, id_source, title), and its item_counts."""
    settings = settings_from_config(
        {"feed_urls": [server.url("/show.xml")], "allow_private_networks": True}
    )
    state: dict[str, Any] = {}
    seen = []
    for body in documents:
        server.put("/show.xml", body)
        [outcome] = run_in_process(settings, state)
        records = [
            (r["change_type"], r["item_id"], r["id_source"], r["title"])
            for r in outcome.item_records
        ]
        seen.append({"records": records, "counts": outcome.health_record["item_counts"]})
    return seen


def test_a_title_fix_of_an_episode_sharing_the_show_link_is_one_update(
    server: FeedServer,
) -> None:
    typo, fixed = podcast("Ep 2: Wrold news"), podcast("Ep 2: World news")
    runs = _runs(server, [typo, typo, fixed])
    assert [run["records"] for run in runs] == [
        [],
        [],
        [("updated", "https://cdn.example/ep2.mp3", "enclosure", "Ep 2: World news")],
    ]
    assert runs[2]["counts"]["remembered"] == 3


def test_a_title_fix_on_a_status_page_is_a_new_item_as_before(server: FeedServer) -> None:
    """Shared link and nothing else of their own: told apart by title and date."""
    runs = _runs(
        server,
        [
            podcast("Outage", with_enclosures=False),
            podcast("Outage (resolved)", with_enclosures=False),
        ],
    )
    assert [(r[0], r[2], r[3]) for r in runs[1]["records"]] == [
        ("new", "derived", "Outage (resolved)")
    ]


def test_a_title_fix_of_a_post_sharing_its_guid_is_an_update_under_its_link(
    server: FeedServer,
) -> None:
    def blog(title_2: str) -> str:
        items = "".join(
            f'<item><guid isPermaLink="false">post</guid><title>{title}</title>'
            f"<link>https://blog.example/{n}</link></item>"
            for n, title in ((2, title_2), (1, "Post 1"))
        )
        return f'<rss version="2.0"><channel><title>Blog</title>{items}</channel></rss>'

    runs = _runs(server, [blog("Post 2"), blog("Post 2 (fixed)")])
    assert runs[1]["records"] == [("updated", "https://blog.example/2", "url", "Post 2 (fixed)")]
