"""How Singer messages leave the process: msgspec for every message, records written
without a flush each, and STATE written without the SDK's deep copies.

The SDK flushes stdout after every message: one write system call (and one wake-up of the
target reading the pipe) per record. Records here wait in a buffer of our own and leave
in one write when the streams say so (after each feed) or before any other message, so a
STATE never reaches the target before the records it covers. One write per feed also
means one hand-off of the interpreter lock per feed, not one per 8 KiB of records (the
fetch loop's thread is waiting for the lock meanwhile).

The full state holds one partition per feed (megabytes at 10,000 feeds; 16 bytes per
remembered item). The SDK turns a STATE message into a dict with ``dataclasses.asdict`` (a
recursive copy) and keeps a ``copy.deepcopy`` of the last state it wrote to skip repeats;
together they were a tenth of an unchanged run's CPU. Here the state is encoded once,
straight from the live dict, into a line of its own (not msgspec's buffer shared by every
message, which would stay at the state's size), written from there and dropped; what the
next STATE is compared with is the line's BLAKE2b digest. So a run holds the parsed state
and, while a STATE is written, one encoded copy: not a copy of the last line for the whole
run, nor a copy of the line in the output buffer.

Output goes out with ``os.write`` on the stdout descriptor, and what was written leaves
the buffer at once: a SIGTERM can stop a write to a slow target half-way (the pipe is
full), and the rest of the line must be what goes out next, not the whole line again. A
signal handler must not write while a write is in progress (the count it returned may not
be recorded yet): it hands its work to ``after_write``, run once the write is done.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from singer_sdk.contrib.msgspec import MsgSpecWriter, encoder
from singer_sdk.helpers._state import StateWriter
from singer_sdk.singerlib import Message, RecordMessage, StateMessage

from tap_feeddelta.errors import OutputClosed

if TYPE_CHECKING:
    from singer_sdk.helpers.types import TapState

# Records kept back at most (a feed of big items goes out in pieces of about this size).
MAX_PENDING_BYTES = 1 << 20


class FeedDeltaWriter(MsgSpecWriter):
    """The SDK's msgspec writer, encoding a STATE message's value without copying it
    first (it is written at once, so the live state cannot change under it), and
    keeping records until the next other message or ``flush``."""

    def __init__(self) -> None:
        super().__init__()
        self._pending = bytearray()  # encoded records not written yet
        self.records_since_state = False  # a RECORD went out after the last STATE
        self.is_writing = False  # inside a write: the buffer and the output may disagree
        # Run once the write in progress is done (a signal handler's work, see above).
        self.after_write: Callable[[], None] | None = None

    def serialize_message(self, message: Message) -> bytes | bytearray:  # type: ignore[override]
        if type(message) is StateMessage:
            # A line of its own, of exactly its size (with its newline), and the SDK's
            # encoder (the same hooks): msgspec's shared buffer would keep the size of the
            # largest state until the next message.
            return encoder.encode_lines(({"type": "STATE", "value": message.value},))
        return super().serialize_message(message)

    def write_message(self, message: Message) -> None:
        line = self.format_message(message)
        if type(message) is RecordMessage:
            self.records_since_state = True
            self._pending += line
            if len(self._pending) >= MAX_PENDING_BYTES:
                self._write_pending()
        else:
            self.write_line(line)

    def write_line(self, line: bytes | bytearray) -> None:
        """Write an encoded message after the records kept, and flush. The line is
        written from where it is (a STATE's is megabytes), not copied behind them."""
        self._write_pending(line)
        self._flush_stdout()

    def flush(self) -> None:
        """Hand the records kept to the target (after a feed's records)."""
        self._write_pending()
        self._flush_stdout()

    def _flush_stdout(self) -> None:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            raise OutputClosed from None

    def _write_pending(self, line: bytes | bytearray = b"") -> None:
        """Write the records kept, then ``line``."""
        if not self._pending and not line:
            return
        self.is_writing = True
        try:
            fd = _stdout_fd()
            if fd is None:  # stdout is not a file (captured in memory: tests)
                sys.stdout.buffer.write(self._pending)
                self._pending.clear()
                sys.stdout.buffer.write(line)
            else:
                while self._pending:
                    del self._pending[: os.write(fd, self._pending)]
                if line:
                    self._write_line(fd, line)
        except BrokenPipeError:
            raise OutputClosed from None
        finally:
            self.is_writing = False
            action, self.after_write = self.after_write, None
            if action is not None:
                action()

    def _write_line(self, fd: int, line: bytes | bytearray) -> None:
        written = 0
        try:
            with memoryview(line) as view:
                while written < len(view):
                    with view[written:] as rest:
                        written += os.write(fd, rest)
        finally:
            if 0 < written < len(line):
                # Stopped part-way by an exception (none is expected: a signal's handler
                # waits for the write): the rest of the line is what goes out next.
                self._pending[:0] = memoryview(line)[written:]


def _stdout_fd() -> int | None:
    """The descriptor under sys.stdout, after what was written to sys.stdout itself."""
    try:
        fd = sys.stdout.buffer.fileno()
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both
        return None
    sys.stdout.flush()
    return fd


class EncodedStateWriter(StateWriter):
    """Writes a STATE message when the state differs from the last one written, as the
    SDK's writer does, comparing digests of encoded lines instead of keeping a deep copy;
    and the same state again when records went out after it, so a run ends on a STATE."""

    def __init__(self, message_writer: FeedDeltaWriter) -> None:
        super().__init__(message_writer)
        self._writer = message_writer
        self._last_digest: bytes | None = None  # of the last line written
        # Run before a STATE goes out: the tap writes there the feed_health rows of the
        # feeds the state covers, so that no STATE can move past rows never written.
        self.before_state: Callable[[], None] | None = None

    def mark_written(self, state: TapState) -> None:
        """Take ``state`` as written already: it is written only once it changes."""
        self._last_digest = _digest(self._writer.format_message(StateMessage(value=state)))

    def write_state(self, state: TapState) -> None:
        if self.before_state is not None:
            self.before_state()
        line = self._writer.format_message(StateMessage(value=state))
        digest = _digest(line)
        # The same state again is written only after records: many targets confirm
        # (and the orchestrator stores) only a STATE that follows the last record.
        if digest == self._last_digest and not self._writer.records_since_state:
            return
        self._writer.write_line(line)
        self._writer.records_since_state = False
        self._last_digest = digest


def _digest(line: bytes | bytearray) -> bytes:
    """What tells two encoded states apart (a collision of 256 bits is not a concern)."""
    return hashlib.blake2b(line, digest_size=32).digest()
