#!/usr/bin/env python3
"""Emitting records, measured apart from fetching and parsing.

    .venv/bin/python benchmarks/emit_bench.py RECORDS.jsonl [--limit N] > /dev/null

Reads feed_items RECORD messages written by a cold benchmark run, then times, in CPU
seconds per record:
- ``sdk_path``: the tap's real feed_items stream in the SDK (its per-record steps,
  RecordMessage, the tap's msgspec writer, buffered write to stdout; run with stdout on
  /dev/null), with get_records replaying the saved records;
- ``serialize``: serialize_json(RecordMessage.to_dict()) alone (what goes on the wire);
- ``stdlib_json``: json.dumps of the bare record, for scale.
Prints one JSON line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from singer_sdk.singerlib import RecordMessage
from singer_sdk.singerlib.json import serialize_json

from tap_feeddelta.streams import FeedItemsStream
from tap_feeddelta.tap import TapFeedDelta


def load_records(path: str, limit: int) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    with Path(path).open("rb") as handle:
        for line in handle:
            if line.startswith(b'{"type":"RECORD","stream":"feed_items"'):
                records.append(json.loads(line)["record"])
                if len(records) >= limit:
                    break
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records")
    parser.add_argument("--limit", type=int, default=20_000)
    args = parser.parse_args()
    records = load_records(args.records, args.limit)
    if not records:
        raise SystemExit("no feed_items records found")

    class ReplayItems(FeedItemsStream):
        def get_records(self, context: Any) -> Iterable[dict[str, Any]]:
            for record in records:
                yield dict(record)

    class ReplayTap(TapFeedDelta):
        def discover_streams(self) -> list[Any]:
            return [ReplayItems(self)]

    tap = ReplayTap(
        config={"feed_urls": ["http://127.0.0.1:9/unused.xml"], "allow_private_networks": True},
        setup_mapper=True,
    )
    stream = tap.streams["feed_items"]
    started = time.process_time()
    for _ in stream._sync_records(None, write_messages=True):
        pass
    sdk_path = time.process_time() - started

    started = time.process_time()
    for record in records:
        serialize_json(RecordMessage(stream="feed_items", record=record).to_dict())
    serialize = time.process_time() - started

    started = time.process_time()
    for record in records:
        json.dumps(record)
    stdlib = time.process_time() - started

    count = len(records)
    print(
        json.dumps(
            {
                "records": count,
                "mean_record_bytes": sum(len(json.dumps(r)) for r in records) // count,
                "sdk_path_us_per_record": round(sdk_path / count * 1e6, 1),
                "serialize_us_per_record": round(serialize / count * 1e6, 1),
                "stdlib_json_us_per_record": round(stdlib / count * 1e6, 1),
            }
        ),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
