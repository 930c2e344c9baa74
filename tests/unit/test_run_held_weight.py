"""What a finished feed weighs while it waits in order (run.py's bound on held outcomes):
an estimate of the memory its records take, not the size of the document they came from."""

from __future__ import annotations

import asyncio
import gc
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
    settings = Settings(
        feed_urls=(FEED_URL,),
        first_run_mode="emit_all",
        content_mode="feed_content",
        max_items_per_run=10_000,
    )
    task = FeedTask(0, FEED_URL, None)
    answer = OneAnswer(body)
    asyncio.run(check_feed(task, answer, settings, lambda: datetime.now(UTC)))  # warm-up

    # The records' memory, as Python allocated it: all the check made, less what it freed.
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
    assert len(records) == items
    assert taken <= weight <= 2 * taken, (taken, weight)
