#!/usr/bin/env python3
"""State size and the time to read and write the state of many feeds.

    .venv/bin/python benchmarks/state_bench.py [--feeds 10000] [--items 100] [--repeat 5]

Builds the Singer state of ``--feeds`` feeds with ``--items`` remembered items each (with
realistic validators, URLs and dates), using tap_feeddelta.state, and times (medians of
``--repeat``, CPU seconds):
- write: encode_bookmark for every feed + json.dumps of the whole state;
- read: json.loads + index_partitions (validates and decodes every partition once);
- read_as_tap: what a run does: json.loads, index_partitions in load_state (validates),
  index_partitions(validate=False) in FeedRun.outcomes, then decode_bookmark once more per
  feed as its task is built.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

from tap_feeddelta.state import (
    FeedBookmark,
    decode_bookmark,
    encode_bookmark,
    feed_items_state,
    index_partitions,
    pack_items,
)


def bookmarks(feeds: int, items: int) -> list[tuple[str, FeedBookmark]]:
    rng = random.Random(6)
    out = []
    for feed in range(feeds):
        pairs = [(rng.getrandbits(64), rng.getrandbits(32)) for _ in range(items)]
        url = f"https://publisher{feed}.example.org/blog/feed.xml"
        out.append(
            (
                url,
                FeedBookmark(
                    etag=f'W/"{rng.getrandbits(64):016x}-gzip"',
                    last_modified="Mon, 01 Jan 2024 10:00:00 GMT",
                    final_url=url,
                    format="rss-2.0",
                    checked_at="2024-01-01T10:00:00.123456Z",
                    success_at="2024-01-01T10:00:00.123456Z",
                    newest_item_at="2024-01-01T09:00:00Z",
                    items=pack_items(pairs),
                ),
            )
        )
    return out


def write_state(marks: list[tuple[str, FeedBookmark]]) -> str:
    partitions: list[dict[str, Any]] = []
    for url, bookmark in marks:
        partition: dict[str, Any] = {"context": {"monitor_id": "default", "feed_url": url}}
        partition.update(encode_bookmark(bookmark))
        partitions.append(partition)
    return json.dumps({"bookmarks": {"feed_items": {"partitions": partitions}}})


def read_state(text: str) -> int:
    index = index_partitions(feed_items_state(json.loads(text)))
    return len(index)


def read_state_as_tap(text: str) -> int:
    stream_state = feed_items_state(json.loads(text))
    index_partitions(stream_state)  # TapFeedDelta.load_state
    index = index_partitions(stream_state, validate=False)  # FeedRun.outcomes
    for position, partition in enumerate(index.values()):  # FeedRun._bookmark per task
        decode_bookmark(partition, f"state partition of feed_urls[{position}]")
    return len(index)


def timed(func: Any, arg: Any, repeat: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        started = time.process_time()
        result = func(arg)
        times.append(time.process_time() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    marks = bookmarks(args.feeds, args.items)
    write_s, text = timed(write_state, marks, args.repeat)
    read_s, count = timed(read_state, text, args.repeat)
    read_tap_s, _ = timed(read_state_as_tap, text, args.repeat)
    assert count == args.feeds
    one = json.loads(text)["bookmarks"]["feed_items"]["partitions"][0]
    items_chars = len(one["items"])
    partition_bytes = len(json.dumps(one))
    print(
        json.dumps(
            {
                "feeds": args.feeds,
                "items_per_feed": args.items,
                "state_bytes": len(text),
                "bytes_per_feed": round(len(text) / args.feeds, 1),
                "items_field_bytes_per_item": items_chars / args.items,
                "partition_overhead_bytes": partition_bytes - items_chars,
                "bytes_per_item_all_in": round(len(text) / (args.feeds * args.items), 2),
                "write_s": round(write_s, 3),
                "read_s": round(read_s, 3),
                "read_plus_write_s": round(read_s + write_s, 3),
                "read_as_tap_s": round(read_tap_s, 3),
                "read_as_tap_plus_write_s": round(read_tap_s + write_s, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
