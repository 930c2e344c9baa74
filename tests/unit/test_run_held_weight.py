"""What a finished feed weighs while it waits in order (run.py's bound on held outcomes):
an estimate of the memory its records take, not the size of the document they came from."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from datetime import UTC, datetime
from typing import Any

import pytest

from tap_feeddelta.check import FeedTask, check_feed
from tap_feeddelta.config import Settings
from tap_feeddelta.models import FetchResult
from tap_feeddelta.run import _held_bytes as held_weight
from tests.feedserver import rss

FEED_URL = "https://blog.example/feed.xml"


class OneAnswer:
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def fetch_async(self, url: str, **_: Any) -> FetchResult:
        return FetchResult(
            "ok",
            url,
            url,
            200,
            "application/rss+xml",
            self.body,
            bytes_received=len(self.body),
            fetch_ms=1,
        )


@pytest.mark.parametrize(
    ("items", "text_chars"),
    [(900, 20), (900, 200), (200, 4000), (5, 20)],
    ids=["many-short-items", "many-items", "long-items", "few-items"],
)
def test_a_finished_feed_weighs_at_least_what_its_records_take(items: int, text_chars: int) -> None:
    body = rss(
        [(f"id-{n}", f"Item {n}", "lorem ipsum " * (text_chars // 12)) for n in range(items)]
    ).encode()
    records, weight, taken = _records_and_weight(body)
    assert len(records) == items
    assert taken <= weight <= 2 * taken, (taken, weight)


# A base as long as a URL may be, less room for the relative part: every relative URL
# resolved against it becomes a URL of about 2 KiB, from a one-character reference.
LONG_BASE = "https://pod.example/" + "d" * 1900 + "/"
MEDIA = 'xmlns:media="http://search.yahoo.com/mrss/"'


def _rss(items: list[str], *, channel: str = "", base: str | None = None) -> str:
    at = f' xml:base="{base}"' if base else ""
    return (
        f'<?xml version="1.0"?><rss version="2.0" {MEDIA}{at}><channel{at}><title>x</title>'
        f"{channel}{''.join(items)}</channel></rss>"
    )


def _atom(entries: list[str], *, feed: str = "") -> str:
    return (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>x</title>'
        f"<id>urn:x</id><updated>2024-01-01T00:00:00Z</updated>{feed}{''.join(entries)}</feed>"
    )


def _person(n: int, k: int) -> str:
    return (
        f"<author><name>{k:02d}{n:04d}{'n' * 240}</name><email>{k}.{n}@{'e' * 200}.example"
        f"</email><uri>https://people.example/{n}/{k}/{'u' * 1990}</uri></author>"
    )


def _json_feed(items: int) -> str:
    entries = [
        {
            "id": f"{n:05d}" + "i" * 1000,
            "url": f"https://blog.example/{n}/" + "p" * 2000,
            "title": "t" * 2000,
            "content_text": "c " * 40_000,
            "authors": [
                {"name": f"{k}{n}" + "n" * 250, "url": f"https://a.example/{n}/{k}/" + "u" * 1990}
                for k in range(16)
            ],
            "tags": [f"{k:02d}{n:04d}" + "t" * 240 for k in range(64)],
            "attachments": [
                {
                    "url": f"https://cdn.example/{n}/{k}/" + "a" * 1990,
                    "mime_type": "audio/" + "m" * 240,
                    "size_in_bytes": 2**62 + k,
                }
                for k in range(32)
            ],
        }
        for n in range(items)
    ]
    return json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "title": "x", "items": entries}
    )


# Every part of an item record the parser lets grow, each at its caps.
RECORD_SHAPES = {
    # 32 one-character media:content URLs each, resolved against a ~1,900-character base.
    "relative-enclosures-long-base": _rss(
        [
            f"<item><guid>g{n}</guid><title>t</title>"
            + "".join(f'<media:content url="{k}" type="audio/mpeg"/>' for k in range(32))
            + "</item>"
            for n in range(100)
        ],
        base=LONG_BASE,
    ),
    "absolute-enclosures": _atom(
        [
            f"<entry><id>e{n}</id><title>t</title><updated>2024-01-01T00:00:00Z</updated>"
            + "".join(
                f'<link rel="enclosure" href="https://cdn.example/{n}/{k}/{"a" * 1990}"'
                f' type="audio/{"m" * 240}" length="{2**62 + k}"/>'
                for k in range(32)
            )
            + "</entry>"
            for n in range(100)
        ]
    ),
    "authors": _atom(
        [
            f"<entry><id>e{n}</id><title>t</title><updated>2024-01-01T00:00:00Z</updated>"
            + "".join(_person(n, k) for k in range(16))
            + "</entry>"
            for n in range(100)
        ]
    ),
    "feed-authors-copied-into-items": _atom(
        [
            f"<entry><id>e{n}</id><title>t</title><updated>2024-01-01T00:00:00Z</updated></entry>"
            for n in range(300)
        ],
        feed="".join(_person(0, k) for k in range(16)),
    ),
    "tags": _rss(
        [
            f"<item><guid>g{n}</guid><title>t</title>"
            + "".join(f"<category>{k:02d}{n:04d}{'t' * 240}</category>" for k in range(64))
            + "</item>"
            for n in range(200)
        ]
    ),
    "long-ids-and-links": _rss(
        [
            f"<item><guid>{n:05d}{'i' * 1010}</guid><title>t</title>"
            f"<link>https://blog.example/{n}/{'p' * 2000}</link></item>"
            for n in range(300)
        ]
    ),
    "ids-from-enclosures": _rss(
        [
            f"<item><title>t</title>"
            f'<enclosure url="https://cdn.example/{n}/{"a" * 2000}" type="audio/mpeg"'
            ' length="1"/></item>'
            for n in range(300)
        ]
    ),
    "texts-cut-and-issues": _rss(
        [
            f"<item><guid>g{n}</guid><title>{n}{'t' * 3000}</title>"
            f"<description>{n}{'s ' * 5000}</description><pubDate>not a date {n}</pubDate>"
            f"<author>{n}{'x' * 9000}</author></item>"
            for n in range(200)
        ]
    ),
    "json-feed-everything": _json_feed(40),
}


def _records_and_weight(body: bytes) -> tuple[list[dict[str, Any]], int, int]:
    """The item records of one check of ``body``, their weight, and the memory they take
    (as Python allocated it: all the check made, less what it freed)."""
    settings = Settings(
        feed_urls=(FEED_URL,),
        first_run_mode="emit_all",
        content_mode="feed_content",
        max_items_per_run=10_000,
    )
    task = FeedTask(0, FEED_URL, None)
    answer = OneAnswer(body)
    asyncio.run(check_feed(task, answer, settings, lambda: datetime.now(UTC)))  # warm-up
    gc.collect()
    tracemalloc.start()
    try:
        outcome = asyncio.run(check_feed(task, answer, settings, lambda: datetime.now(UTC)))
        weight = held_weight(outcome)
        records = outcome.item_records
        del outcome
        gc.collect()
        taken, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return records, weight, taken


@pytest.mark.parametrize("shape", list(RECORD_SHAPES))
def test_no_record_shape_weighs_less_than_it_takes(shape: str) -> None:
    """Whatever the parser lets an item carry (32 enclosures of 2 KiB URLs made from
    one-character ones and a long xml:base, 16 authors, 64 tags, long ids), the estimate
    is never below what the records take: the bound on held outcomes rests on it."""
    records, weight, taken = _records_and_weight(RECORD_SHAPES[shape].encode())
    assert records and records[0]["title"]
    assert taken <= weight, (taken, weight)
    if shape != "feed-authors-copied-into-items":  # those strings are shared: counted each time
        assert weight <= 2 * taken, (taken, weight)
