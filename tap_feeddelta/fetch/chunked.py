"""Chunked transfer coding (RFC 9112 section 7.1), undone as the body is read.

Each read's framing is undone in one pass into one piece of data, so that a body of
many tiny chunks costs a loop turn per chunk, not an await per chunk. What a body may
cost is bounded by the size cap: chunks per capped byte, and wire bytes (framing
included) per capped byte.
"""

from __future__ import annotations

import asyncio
import http.client
import re
from collections.abc import Callable
from typing import Final

from tap_feeddelta.fetch.errors import FetchError, TooManyFields
from tap_feeddelta.fetch.wire import CHUNK_BYTES, MAX_FIELDS, MAX_LINE

# A chunked body may come in at most one chunk per this many bytes of max_feed_bytes:
# each chunk costs a loop turn (~0.7 µs), so a body of millions of 1-byte chunks is
# refused, not worked through (524,288 chunks under the default 4 MiB cap).
CAP_BYTES_PER_CHUNK: Final = 8
# And at most this many bytes on the wire per byte of max_feed_bytes, framing included:
# chunk-size lines, extensions and trailers are dropped, but each was read and scanned,
# so a body of 1-byte chunks with 60 KB extensions cannot have gigabytes read for it.
WIRE_BYTES_PER_CAP_BYTE: Final = 2


async def read_chunked(
    reader: asyncio.StreamReader,
    sink: Callable[[bytes], None],
    host: str,
    max_chunks: int,
    max_wire_bytes: int,
) -> bool:
    """Pass a chunked body's data to ``sink``, read by pieces of CHUNK_BYTES; whether the
    stream was left exactly at the body's end."""
    dechunker = Dechunker(host, max_chunks, max_wire_bytes)
    while not dechunker.done:
        raw = await reader.read(CHUNK_BYTES)
        if not raw:
            if dechunker.in_trailer:  # the close ends the trailer, as in http.client
                return False
            raise FetchError("connection_failed", f"The body from {host} was cut short.")
        if data := dechunker.feed(raw):
            sink(data)
    return not dechunker.overread


# A chunk-size line: the size (1*HEXDIG: leading zeros pass, the value has at most 16
# digits; the line is bounded by MAX_LINE), then extensions (dropped); blanks around the
# size pass. Possessive: the zeros are all read as leading zeros and the value is what
# follows them (empty for a size of zeros only), so a long run of zeros that ends
# badly is read once, not once per way of splitting it ("0*" then "{1,16}" backtracked
# 16 ways per zero).
_CHUNK_LINE = re.compile(rb"[ \t]*+(?=[0-9A-Fa-f])0*+([0-9A-Fa-f]{0,16}+)[ \t\r]*+(?:;[^\n]*+)?\n")
_SIZE, _DATA, _DATA_END, _TRAILER, _DONE = range(5)


class Dechunker:
    """A chunked body's framing, undone on the pieces of the wire as they are read.

    ``feed`` takes what one read gave and returns all the data in it as one piece, so a
    body of tiny chunks costs a loop turn per chunk, not an await, a read and an object
    kept per chunk. Lines are bounded as in the head (MAX_LINE, MAX_FIELDS trailer lines),
    and so are the number of chunks (``max_chunks``) and the bytes fed, framing included
    (``max_wire_bytes``). Bytes after the body's end are read and dropped; ``overread``
    then says the connection is not for another request.
    """

    __slots__ = (
        "_chunks",
        "_fields",
        "_host",
        "_left",
        "_max_chunks",
        "_max_wire_bytes",
        "_state",
        "_tail",
        "_wire_bytes",
        "overread",
    )

    def __init__(self, host: str, max_chunks: int, max_wire_bytes: int) -> None:
        self._host = host
        self._max_chunks = max_chunks
        self._max_wire_bytes = max_wire_bytes
        self._wire_bytes = 0  # fed so far, up to the body's end
        self._state = _SIZE
        self._left = 0  # data bytes left in the current chunk
        self._chunks = 0
        self._fields = 0  # trailer lines read
        self._tail = bytearray()  # an unfinished line, which the next pieces go on
        self.overread = False

    @property
    def done(self) -> bool:
        return self._state == _DONE

    @property
    def in_trailer(self) -> bool:
        return self._state == _TRAILER

    def feed(self, raw: bytes) -> bytes:
        """The data in ``raw``, the next bytes read (b"" when it holds none)."""
        if self._state == _DONE:
            self.overread = self.overread or bool(raw)
            return b""
        self._wire_bytes += len(raw)
        data = self._unframe(raw)
        if self._wire_bytes > self._max_wire_bytes:  # checked once a read: 64 KiB at most past
            raise FetchError(
                "bad_response",
                f"{self._host} sent a chunked body of more than {self._max_wire_bytes} bytes"
                " with its framing.",
            )
        return data

    def _unframe(self, raw: bytes) -> bytes:
        if self._tail:
            if b"\n" not in raw:  # the unfinished line goes on: no new look at it
                self._tail += raw
                if len(self._tail) > MAX_LINE:
                    raise http.client.LineTooLong("chunk line")
                return b""
            data = bytes(self._tail) + raw
            self._tail.clear()
        else:
            data = raw
        out = bytearray()
        pos, end = 0, len(data)
        state, left, chunks = self._state, self._left, self._chunks
        match_line = _CHUNK_LINE.match
        while pos < end:
            if state == _SIZE:
                line = match_line(data, pos)
                if line is None:
                    if self._unfinished(data, pos):
                        break
                    raise self._malformed()
                start = line.end()
                if start - pos > MAX_LINE:
                    raise http.client.LineTooLong("chunk-size line")
                size = int(line.group(1) or b"0", 16)
                chunks += 1
                if chunks > self._max_chunks and size:
                    raise FetchError(
                        "bad_response",
                        f"{self._host} sent a chunked body in more than {self._max_chunks} chunks.",
                    )
                stop = start + size
                if size and data[stop : stop + 2] == b"\r\n":  # the whole chunk is here
                    out += data[start:stop]
                    pos = stop + 2
                    continue
                pos = start
                state, left = (_DATA, size) if size else (_TRAILER, 0)
            elif state == _DATA:
                take = min(left, end - pos)
                out += data[pos : pos + take]
                pos += take
                left -= take
                if not left:
                    state = _DATA_END
            elif state == _DATA_END:
                if data.startswith(b"\r\n", pos):
                    pos += 2
                elif data.startswith(b"\n", pos):
                    pos += 1
                elif data[pos:] == b"\r":
                    break
                else:
                    raise self._malformed()
                state = _SIZE
            else:  # the trailer: field lines, dropped, up to a blank line
                newline = data.find(b"\n", pos)
                if newline < 0:
                    self._unfinished(data, pos)
                    break
                if newline + 1 - pos > MAX_LINE:
                    raise http.client.LineTooLong("trailer line")
                if data[pos:newline] in (b"", b"\r"):
                    state = _DONE
                    self.overread = newline + 1 < end
                    self._wire_bytes -= end - (newline + 1)  # not the body's: raw holds them
                    pos = end
                    break
                self._fields += 1
                if self._fields > MAX_FIELDS:
                    raise TooManyFields("trailer")
                pos = newline + 1
        if pos < end:
            self._tail += data[pos:]
        self._state, self._left, self._chunks = state, left, chunks
        return bytes(out)

    def _unfinished(self, data: bytes, pos: int) -> bool:
        """Whether the line at ``pos`` lacks only its end (the next piece may bring it);
        raises if it is already too long to be a line."""
        if len(data) - pos > MAX_LINE:
            raise http.client.LineTooLong("chunk line")
        return data.find(b"\n", pos) < 0

    def _malformed(self) -> FetchError:
        return FetchError("bad_response", f"{self._host} sent a malformed chunked body.")
