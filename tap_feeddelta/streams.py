"""The two streams. feed_items runs first (see the TapFeedDelta.streams property): it
drives the run, writes each feed's changes and then moves that feed's state; feed_health
replays the health rows of the same run, so each feed is fetched once for both streams."""

from __future__ import annotations

import json
import time
from collections.abc import Generator, Iterable, Iterator
from datetime import UTC, datetime
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from singer_sdk import Stream, metrics
from singer_sdk.exceptions import MappingError
from singer_sdk.helpers.conform import TypeConformanceLevel
from singer_sdk.singerlib import RecordMessage, SchemaMessage

from tap_feeddelta.messages import EncodedStateWriter, FeedDeltaWriter

if TYPE_CHECKING:
    from tap_feeddelta.tap import TapFeedDelta

_REPO_SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A stream's JSON schema: from the checkout's schemas/, else from the wheel."""
    path = _REPO_SCHEMAS / f"{name}.json"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        text = (resources.files("tap_feeddelta") / "schemas" / f"{name}.json").read_text(
            encoding="utf-8"
        )
    schema: dict[str, Any] = json.loads(text)
    return schema


def _required_only_if_present(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without the names in "required" that it has no property for."""
    required = schema.get("required")
    properties = schema.get("properties") or {}
    if not isinstance(required, list) or all(name in properties for name in required):
        return schema
    return {**schema, "required": [name for name in required if name in properties]}


def _map_failed(stream: str, exc: Exception) -> MappingError:
    """A stream map expression that raised on a record: a config error, told without the
    exception's text, which quotes the record's values or stream_map_config's (a salt)."""
    return MappingError(
        f"an expression of {stream}'s stream map raised {type(exc).__name__} on a record "
        "(its values are not shown); make the expression handle every value of the field"
    )


class _FeedStream(Stream):
    # records.py builds every value in its schema type already; the SDK's recursive
    # conforming pass was a quarter of a cold run's CPU (benchmarks/RESULTS.md).
    TYPE_CONFORMANCE_LEVEL = TypeConformanceLevel.NONE

    @cached_property
    def _selects_every_property(self) -> bool:
        return all(self.mask.values())

    def _generate_record_messages(
        self, record: dict[str, Any]
    ) -> Generator[RecordMessage, None, None]:
        if not self._selects_every_property:
            try:
                yield from super()._generate_record_messages(record)
            except MappingError:
                raise
            except Exception as exc:  # the SDK's own steps are the stream maps' here
                raise _map_failed(self.name, exc) from None
            return
        # The SDK's own steps, less the walk that pops deselected properties (4 us a
        # record, to pop nothing) and the type conforming that is off (level NONE).
        for stream_map in self.stream_maps:
            try:
                mapped_record = stream_map.transform(record)
            except MappingError:
                raise
            except Exception as exc:
                raise _map_failed(self.name, exc) from None
            if mapped_record is not None:
                yield RecordMessage(
                    stream=stream_map.stream_alias,
                    record=mapped_record,
                    version=self._stream_version,
                    time_extracted=datetime.now(UTC),
                )

    def _generate_schema_messages(self) -> Generator[SchemaMessage, None, None]:
        # Flattening replaces an object (feed_health's item_counts) by its columns
        # (item_counts__seen, ...), and a stream map can drop a property, but the SDK
        # leaves both names in "required": every record would fail its own SCHEMA.
        for message in super()._generate_schema_messages():
            yield SchemaMessage(
                message.stream,
                _required_only_if_present(message.schema),
                message.key_properties,
                message.bookmark_properties,
            )

    def get_records(self, context: Any) -> Iterable[dict[str, Any]]:
        # A run has no record limit: only a test run (run_sync_dry_run) sets one.
        records = self.stream_records()
        limit = self.ABORT_AT_RECORD_COUNT
        return records if limit is None else self._records_up_to(records, limit)

    def stream_records(self) -> Generator[dict[str, Any], None, None]:
        """The stream's records (its one unit of work: see partitions)."""
        raise NotImplementedError

    def _records_up_to(
        self, records: Generator[dict[str, Any], None, None], limit: int
    ) -> Iterator[dict[str, Any]]:
        """A test run's records (--test: one a stream). The SDK stops a stream at the
        record past its limit by aborting it, which it logs as an unhandled error; ended
        here at the limit, the stream ends as a run's does."""
        try:
            for count, record in enumerate(records, start=1):
                yield record
                if count >= limit:
                    self.logger.info(
                        "Test run: '%s' ends after its first %s, a test run's limit",
                        self.name,
                        "record" if limit == 1 else f"{limit} records",
                    )
                    return
        finally:
            records.close()  # the feed_items pass ends here: its fetcher is closed
            writer = self.feed_tap.message_writer
            if isinstance(writer, FeedDeltaWriter):
                writer.flush()

    @property
    def partitions(self) -> list[dict[str, Any]] | None:
        # The tap keeps its own per-feed partitions (indexed, not scanned); to the SDK
        # the stream is one unit of work.
        return None

    @property
    def feed_tap(self) -> TapFeedDelta:
        from tap_feeddelta.tap import TapFeedDelta

        assert isinstance(self._tap, TapFeedDelta)
        return self._tap


class FeedItemsStream(_FeedStream):
    name = "feed_items"
    primary_keys = ["delivery_id"]  # noqa: RUF012
    # The state holds every feed's partition (megabytes at 10,000 feeds): it is written
    # every state_interval_seconds between feeds (get_records), at the end of the stream
    # and on SIGTERM, not every 10,000 records. A killed run then re-sends the records
    # since the last STATE its target confirmed, with the same delivery_ids.
    STATE_MSG_FREQUENCY = 1_000_000
    replication_key = None
    schema = load_schema("feed_items")

    def stream_records(self) -> Generator[dict[str, Any], None, None]:
        tap = self.feed_tap
        writer = tap.message_writer
        interval = tap.feed_settings.state_interval_seconds
        last_state = time.monotonic()

        def write_state_when_due() -> None:
            # Called once a feed's records are out and its bookmark is in the state,
            # before the wait for the next feed (which may be a slow one): a STATE now
            # covers every feed finished, after their health rows (before_state).
            nonlocal last_state
            if time.monotonic() - last_state >= interval:
                # A feed's state moves without records too (a 304): write it anyway.
                self.state_manager.is_flushed = False
                self._write_state_message()
                last_state = time.monotonic()

        # Only where the health rows go out ahead of a STATE (EncodedStateWriter): a
        # STATE must not move past feeds whose rows were never written.
        due = write_state_when_due if isinstance(tap.state_writer, EncodedStateWriter) else None
        for outcome in tap.feed_run.outcomes(self.stream_state, commit=True, after_commit=due):
            if outcome.item_records:
                yield from outcome.item_records
                # Records are kept back (messages.py): a feed's changes reach the target
                # in one write as the feed is done.
                if isinstance(writer, FeedDeltaWriter):
                    writer.flush()


class FeedHealthStream(_FeedStream):
    name = "feed_health"
    primary_keys = ["monitor_id", "feed_url", "checked_at"]  # noqa: RUF012
    replication_key = None
    schema = load_schema("feed_health")

    _schema_written = False
    _written_early = 0  # rows written before a STATE (write_finished_rows)

    def get_record_counter(
        self,
        *,
        endpoint: str | None = None,
        log_interval: float = metrics.DEFAULT_LOG_INTERVAL,
    ) -> metrics.Counter:
        # The SDK counts the records get_records yields: the rows written before the
        # STATE that ended feed_items count too.
        counter = super().get_record_counter(endpoint=endpoint, log_interval=log_interval)
        counter.value += self._written_early
        self._written_early = 0
        return counter

    def _write_schema_message(self) -> None:
        # Once: rows written before a STATE during feed_items (write_finished_rows) came
        # after it already, and a SCHEMA again at the stream's start would be the run's
        # last message instead of its STATE.
        if not self._schema_written:
            super()._write_schema_message()
            self._schema_written = True

    def stream_records(self) -> Generator[dict[str, Any], None, None]:
        tap = self.feed_tap
        items_state = (tap.state.get("bookmarks") or {}).get(FeedItemsStream.name) or {}
        yield from tap.feed_run.health_records(items_state)
        # The last rows must not wait for a STATE that may never come (an unchanged
        # state is not written again).
        if isinstance(tap.message_writer, FeedDeltaWriter):
            tap.message_writer.flush()

    def write_finished_rows(self) -> None:
        """Write now the rows of the feeds the run has finished and not reported yet:
        before a STATE that covers those feeds (during and at the end of feed_items, a
        SIGTERM)."""
        run = self.feed_tap.__dict__.get("feed_run")
        if not self.selected or run is None:
            return
        for row in run.finished_health_unsent():
            self._write_schema_message()  # once (see _write_schema_message)
            self._write_record_message(row)
            self._written_early += 1
