"""STATE messages: the same line as the SDK's writer, written only when the state changed."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import singer_sdk.contrib.msgspec
from singer_sdk.contrib.msgspec import MsgSpecWriter
from singer_sdk.helpers.types import TapState
from singer_sdk.singerlib import RecordMessage, StateMessage

from tap_feeddelta import messages
from tap_feeddelta.messages import MAX_PENDING_BYTES, EncodedStateWriter, FeedDeltaWriter

if sys.platform == "linux":
    import fcntl


def _state() -> Any:
    return {
        "bookmarks": {
            "feed_items": {
                "partitions": [
                    {"context": {"monitor_id": "m", "feed_url": "https://a.example/f"},
                     "items": "AAAA", "etag": '"x"'}
                ]
            }
        }
    }  # fmt: skip


def test_state_line_matches_the_sdk_writer() -> None:
    state = _state()
    ours = FeedDeltaWriter().serialize_message(StateMessage(value=state))
    sdks = MsgSpecWriter().serialize_message(StateMessage(value=state))
    assert json.loads(bytes(ours)) == json.loads(bytes(sdks)) == {"type": "STATE", "value": state}


def test_other_messages_go_through_the_sdk_writer() -> None:
    message = RecordMessage(stream="feed_items", record={"a": 1})
    assert json.loads(bytes(FeedDeltaWriter().serialize_message(message))) == {
        "type": "RECORD",
        "stream": "feed_items",
        "record": {"a": 1},
    }


def test_state_is_written_again_only_after_it_changed(
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    writer = EncodedStateWriter(FeedDeltaWriter())
    state = _state()
    writer.write_state(state)
    writer.write_state(state)  # unchanged: nothing written
    # changed in place, as the tap changes it: the comparison must see it
    state["bookmarks"]["feed_items"]["partitions"][0]["items"] = "BBBB"
    writer.write_state(state)
    writer.write_state(state)
    lines = capsysbinary.readouterr().out.splitlines()
    values = [json.loads(line)["value"] for line in lines]
    assert len(values) == 2
    assert values[0]["bookmarks"]["feed_items"]["partitions"][0]["items"] == "AAAA"
    assert values[1]["bookmarks"]["feed_items"]["partitions"][0]["items"] == "BBBB"


def test_the_same_state_is_written_again_after_records(
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    writer = FeedDeltaWriter()
    states = EncodedStateWriter(writer)
    state = _state()
    states.mark_written(state)  # the incoming state: the target has it
    states.write_state(state)  # nothing
    writer.write_message(RecordMessage(stream="feed_items", record={"n": 1}))
    states.write_state(state)  # the same state, after a record: written
    states.write_state(state)  # nothing
    lines = capsysbinary.readouterr().out.splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["RECORD", "STATE"]
    assert json.loads(lines[1])["value"] == state


def _big_state(partitions: int, items_bytes: int) -> TapState:
    return {
        "bookmarks": {
            "feed_items": {
                "partitions": [
                    {
                        "context": {"monitor_id": "m", "feed_url": f"https://a.example/{n}"},
                        "items": base64.b64encode(os.urandom(items_bytes)).decode(),
                    }
                    for n in range(partitions)
                ]
            }
        }
    }


def _largest_held(*objects: object) -> int:
    """The size of the largest value the objects hold in their attributes."""
    return max(sys.getsizeof(value) for obj in objects for value in vars(obj).values())


def test_no_copy_of_a_written_state_is_kept(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """What tells the same state again is a digest: no encoded state of the state's size
    stays in the writers, nor in msgspec's buffer shared by every message."""
    writer = FeedDeltaWriter()
    states = EncodedStateWriter(writer)
    state = _big_state(200, 12_000)  # a STATE line of about 3.2 MB
    small = 64 * 1024
    states.mark_written(state)
    assert _largest_held(writer, states) < small
    assert sys.getsizeof(singer_sdk.contrib.msgspec._jsonl_msg_buffer) < small
    state["bookmarks"]["feed_items"]["partitions"][0]["items"] = "AAAA"
    states.write_state(state)
    line = capsysbinary.readouterr().out
    assert len(line) > 3_000_000
    assert json.loads(line)["value"] == state
    assert _largest_held(writer, states) < small
    assert sys.getsizeof(singer_sdk.contrib.msgspec._jsonl_msg_buffer) < small
    states.write_state(state)  # the same again: known by its digest
    assert capsysbinary.readouterr().out == b""


class _Stdout:
    """Stands in for sys.stdout: what was written, and how often it was flushed."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self.flushes = 0
        self.flushed_upto = 0

    def flush(self) -> None:
        self.flushes += 1
        self.flushed_upto = len(self.buffer.getvalue())


def test_records_wait_in_the_buffer_and_a_state_flushes_them_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = _Stdout()
    monkeypatch.setattr(sys, "stdout", out)
    writer = FeedDeltaWriter()
    for n in range(3):
        writer.write_message(RecordMessage(stream="feed_items", record={"n": n}))
    assert out.flushes == 0
    EncodedStateWriter(writer).write_state(_state())
    assert out.flushes == 1
    lines = out.buffer.getvalue().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["RECORD"] * 3 + ["STATE"]
    assert out.flushed_upto == len(out.buffer.getvalue())  # the records went out with it


def test_records_kept_back_go_out_in_pieces_and_on_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _Stdout()
    monkeypatch.setattr(sys, "stdout", out)
    writer = FeedDeltaWriter()
    big = "x" * 100_000
    count = MAX_PENDING_BYTES // 100_000 + 2
    for n in range(count):
        writer.write_message(RecordMessage(stream="feed_items", record={"n": n, "text": big}))
    written = out.buffer.getvalue()
    assert 0 < len(written) < count * 100_000  # a piece left before the flush
    assert out.flushes == 0
    writer.flush()
    lines = out.buffer.getvalue().splitlines()
    assert [json.loads(line)["record"]["n"] for line in lines] == list(range(count))
    assert out.flushes == 1


# After a signal the tap writes to a pipe only lines the target receives whole by the end
# of the grace period. These tests write into a real pipe that nobody reads (a target that
# stopped reading), each in a thread bounded in time: a writer that spins fails, not hangs.
_PIPE_BYTES = 1 << 16
_GRACE_SECONDS = 0.5


@dataclass
class _UnreadPipe:
    read_fd: int
    write_fd: int

    def received(self) -> bytes:
        """Everything in the pipe so far."""
        os.set_blocking(self.read_fd, False)
        out = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self.read_fd, 1 << 16):
                out += chunk
        return out


@pytest.fixture
def unread_pipe() -> Iterator[_UnreadPipe]:
    """A 64 KiB pipe that nobody reads."""
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    yield _UnreadPipe(read_fd, write_fd)
    os.close(read_fd)
    os.close(write_fd)


def _write_after_a_signal(pipe: _UnreadPipe, line: bytes, caplog: pytest.LogCaptureFixture) -> str:
    """Write ``line`` (whole lines) to ``pipe`` as the tap's stdout, as the tap does after
    a signal; the warning logged. (stdout is set here: pytest sets its own between phases.)"""
    writer = FeedDeltaWriter()
    done = threading.Event()

    def write() -> None:
        try:
            writer.write_line(line)
        finally:
            done.set()

    with (
        os.fdopen(pipe.write_fd, "w", closefd=False) as stdout,
        contextlib.redirect_stdout(stdout),
        caplog.at_level(logging.WARNING, logger="tap-test"),
    ):
        writer.finish_by(time.monotonic() + _GRACE_SECONDS, logging.getLogger("tap-test"))
        threading.Thread(target=write, daemon=True).start()
        finished = done.wait(_GRACE_SECONDS + 3)
        writer.restore_output()
    assert finished, "the writer did not stop at the grace's end"
    return caplog.text


def _line(size: int, fill: bytes) -> bytes:
    return fill * (size - 1) + b"\n"


@pytest.mark.skipif(sys.platform != "linux", reason="pipes are handled so on Linux only")
def test_after_a_signal_the_pipe_is_filled_only_with_whole_lines(
    unread_pipe: _UnreadPipe, caplog: pytest.LogCaptureFixture
) -> None:
    """The target must never get part of a JSON line: the two lines the pipe holds go in,
    and the third, which does not fit, is left out whole rather than cut."""
    lines = _line(30_000, b"a") + _line(30_000, b"b") + _line(30_000, b"c")
    log = _write_after_a_signal(unread_pipe, lines, caplog)
    assert unread_pipe.received() == lines[:60_000]
    assert "did not read the output fast enough" in log


@pytest.mark.skipif(sys.platform != "linux", reason="pipes are handled so on Linux only")
def test_after_a_signal_nothing_goes_into_a_pipe_the_target_has_not_emptied(
    unread_pipe: _UnreadPipe, caplog: pytest.LogCaptureFixture
) -> None:
    """A pipe still holding output from before the signal has less room than its size:
    writing then could put part of a line in it, so the writer waits for it to empty."""
    before = _line(40_000, b"p")
    os.write(unread_pipe.write_fd, before)
    log = _write_after_a_signal(unread_pipe, _line(30_000, b"a") + _line(30_000, b"b"), caplog)
    assert unread_pipe.received() == before
    assert "did not read the output fast enough" in log


@pytest.mark.skipif(sys.platform != "linux", reason="pipes are handled so on Linux only")
def test_after_a_signal_a_line_larger_than_the_pipe_is_left_out_at_once(
    unread_pipe: _UnreadPipe, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line (a final STATE) larger than any pipe the kernel allows cannot go out whole:
    it is left out at once, saying why, instead of trying until the grace kills the tap."""
    monkeypatch.setattr(messages, "MAX_PIPE_BYTES", _PIPE_BYTES)  # the kernel's limit
    started = time.monotonic()
    log = _write_after_a_signal(unread_pipe, _line(200_000, b"s"), caplog)
    assert time.monotonic() - started < _GRACE_SECONDS
    assert unread_pipe.received() == b""
    assert "more than the pipe to the target holds" in log
