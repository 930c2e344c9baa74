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

After a signal the tap has a grace period, then ends whatever it is doing (a target that
stopped reading would hold it for ever). Ending in the middle of a line would hand the
target a broken message, so from the signal on (``finish_by``) the output is written so
that it can only end on a whole line: the line being written when the signal came is
finished (that cannot be helped), then, on a Linux pipe, a piece of whole lines is written
only into an empty pipe that holds all of it. Such a write completes at once, even if the
process is ended meanwhile; what cannot go out that way before the grace ends (a slow
target, a final STATE larger than the pipe can be made) is left out, and with it
everything after it, the final STATE included: the last STATE the target received stands.
The descriptor is made non-blocking for that, so that the write in progress when the
signal came (which Python retries after the handler) cannot block on the rest of its
records either. Other outputs (files, terminals, sockets) are written as before.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import logging
import os
import select
import stat
import sys
import time
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
# After a signal, the largest pipe asked for to take a message whole (the kernel allows an
# unprivileged process /proc/sys/fs/pipe-max-size, 1 MiB by default).
MAX_PIPE_BYTES = 16 << 20
_NEWLINE = ord("\n")


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
        self._line_open = False  # the output ends part-way through a line
        # After a signal (finish_by): when the output must be done, where it is a pipe
        # handled so (with its flags before), and whether the rest was left out.
        self._deadline: float | None = None
        self._logger = logging.getLogger(__name__)
        self._pipe_fd: int | None = None
        self._pipe_flags = 0
        self._gave_up = False

    def finish_by(self, deadline: float, logger: logging.Logger) -> None:
        """After a signal: from now on, write only what reaches the target whole by
        ``deadline`` (time.monotonic()), after the line being written (see above)."""
        self._deadline, self._logger = deadline, logger
        if sys.platform != "linux" or self._pipe_fd is not None:
            return
        with contextlib.suppress(AttributeError, ValueError, OSError):
            fd = sys.stdout.buffer.fileno()
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                self._pipe_flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                fcntl.fcntl(fd, fcntl.F_SETFL, self._pipe_flags | os.O_NONBLOCK)
                self._pipe_fd = fd

    def restore_output(self) -> None:
        """Give stdout back its flags before the process ends (another process may write
        to the same pipe)."""
        if sys.platform == "linux" and self._pipe_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.fcntl(self._pipe_fd, fcntl.F_SETFL, self._pipe_flags)

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
                self._send(fd, self._pending)
                self._send(fd, line)
        except BrokenPipeError:
            raise OutputClosed from None
        finally:
            self.is_writing = False
            action, self.after_write = self.after_write, None
            if action is not None:
                action()

    def _send(self, fd: int, data: bytes | bytearray) -> None:
        """Write ``data`` (whole lines), or what of it may go after a signal."""
        sent = 0
        try:
            while sent < len(data):
                sent += self._send_some(fd, data, sent)
        finally:
            if data is self._pending:
                del self._pending[:sent]
            elif sent < len(data):
                # Stopped part-way by an exception (none is expected: a signal's handler
                # waits for the write): the rest of the line is what goes out next.
                self._pending += memoryview(data)[sent:]

    def _send_some(self, fd: int, data: bytes | bytearray, start: int) -> int:
        """Write from ``data[start:]``; how many bytes went (or were left out)."""
        if self._gave_up:
            return len(data) - start
        end = len(data)
        if self._deadline is not None and fd == self._pipe_fd:
            if not self._line_open:
                return self._send_whole_lines(fd, data, start)
            end = data.find(b"\n", start) + 1 or end  # the line in progress, and only it
        try:
            return self._write_part(fd, data, start, end)
        except BlockingIOError:  # non-blocking since the signal: wait until it may go on
            select.select([], [fd], [])  # (the grace period's end ends a wait too long)
            return 0

    def _write_part(self, fd: int, data: bytes | bytearray, start: int, end: int) -> int:
        """One write of ``data[start:end]``; how many bytes went."""
        with memoryview(data) as view, view[start:end] as part:
            written = os.write(fd, part)
        self._line_open = data[start + written - 1] != _NEWLINE
        return written

    def _send_whole_lines(self, fd: int, data: bytes | bytearray, start: int) -> int:
        """After a signal, on a pipe: whole lines into the empty pipe, as many as it holds,
        or leave the rest out once that cannot be done in time."""
        assert self._deadline is not None
        needed = (data.find(b"\n", start) + 1 or len(data)) - start  # the next line
        capacity = _pipe_capacity(fd, needed)
        if capacity < needed:
            why = (
                f"a message of {needed} bytes cannot go out whole: more than the pipe to the "
                f"target holds ({capacity} bytes)"
            )
            return self._give_up(len(data) - start, why)
        if not _wait_until_empty(fd, self._deadline):
            why = "the target did not read the output fast enough to take the rest in time"
            return self._give_up(len(data) - start, why)
        end = data.rfind(b"\n", start, start + capacity) + 1
        try:  # all of it: the pipe is empty and holds it
            return self._write_part(fd, data, start, end)
        except BlockingIOError:
            return 0

    def _give_up(self, size: int, why: str) -> int:
        self._gave_up = True
        self._logger.warning(
            "After the signal, %s: the %d bytes left to write and everything after them, "
            "the final STATE included, are left out so that the output ends on a whole line. "
            "The last STATE the target received stands.",
            why,
            size,
        )
        return size


if sys.platform == "linux":
    import fcntl
    import termios

    def _pipe_capacity(fd: int, needed: int) -> int:
        """How much the pipe holds: made larger if it is less than ``needed``, where the
        kernel allows (up to MAX_PIPE_BYTES)."""
        capacity = fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
        if capacity < needed <= MAX_PIPE_BYTES:
            with contextlib.suppress(OSError):  # EPERM above pipe-max-size
                capacity = fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, needed)
        return capacity

    def _wait_until_empty(fd: int, deadline: float) -> bool:
        """Wait until the target has read everything in the pipe; False at ``deadline``.
        (Only the tap writes to it, so its room can only grow meanwhile.)"""
        unread = array.array("i", [0])
        while True:
            fcntl.ioctl(fd, termios.FIONREAD, unread)
            if unread[0] == 0:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)


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


class NoStateWriter(StateWriter):
    """A test run's (--test): writes no STATE. singer-sdk's test mode never reads
    --state, so its state is a new first run's, cut short at a stream's first record: a
    target that saved it would forget the baseline of every feed."""

    def write_state(self, state: TapState) -> None:
        pass


def _digest(line: bytes | bytearray) -> bytes:
    """What tells two encoded states apart (a collision of 256 bits is not a concern)."""
    return hashlib.blake2b(line, digest_size=32).digest()
