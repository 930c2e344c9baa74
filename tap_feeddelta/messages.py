"""How Singer messages leave the process: msgspec for every message, records written
without a flush each, and STATE written without the SDK's deep copies.

The SDK flushes stdout after every message: one write system call (and one wake-up of the
target reading the pipe) per record. Records here go through the buffer; every other
message flushes it, so a STATE never reaches the target before the records it covers.

The full state holds one partition per feed (megabytes at 10,000 feeds). The SDK turns
a STATE message into a dict with ``dataclasses.asdict`` (a recursive copy) and keeps a
``copy.deepcopy`` of the last state it wrote to skip repeats; together they were a tenth
of an unchanged run's CPU. Here the state is encoded once, straight from the live dict,
and the encoded line itself is what the next STATE is compared with.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from singer_sdk.contrib.msgspec import MsgSpecWriter, serialize_jsonl
from singer_sdk.helpers._state import StateWriter
from singer_sdk.singerlib import Message, RecordMessage, StateMessage

if TYPE_CHECKING:
    from singer_sdk.helpers.types import TapState


class FeedDeltaWriter(MsgSpecWriter):
    """The SDK's msgspec writer, encoding a STATE message's value without copying it
    first (it is written at once, so the live state cannot change under it), and
    leaving records in the output buffer until the next other message or ``flush``."""

    def serialize_message(self, message: Message) -> bytearray:
        if type(message) is StateMessage:
            return serialize_jsonl({"type": "STATE", "value": message.value})
        return super().serialize_message(message)

    def write_message(self, message: Message) -> None:
        line = self.format_message(message)
        if type(message) is RecordMessage:
            sys.stdout.buffer.write(line)
        else:
            self.write_line(line)

    def write_line(self, line: bytes | bytearray) -> None:
        """Write an encoded message after what is buffered, and flush."""
        sys.stdout.buffer.write(line)
        sys.stdout.flush()

    def flush(self) -> None:
        """Hand what is buffered to the target (after a feed's records)."""
        sys.stdout.flush()


class EncodedStateWriter(StateWriter):
    """Writes a STATE message when the state differs from the last one written, as the
    SDK's writer does, comparing encoded lines instead of keeping a deep copy."""

    def __init__(self, message_writer: FeedDeltaWriter) -> None:
        super().__init__(message_writer)
        self._writer = message_writer
        self._last_line: bytes | None = None

    def write_state(self, state: TapState) -> None:
        # serialize_jsonl reuses one buffer: keep an immutable copy of the line.
        line = bytes(self._writer.format_message(StateMessage(value=state)))
        if line == self._last_line:
            return
        self._writer.write_line(line)
        self._last_line = line
