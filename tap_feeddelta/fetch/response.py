"""HTTP/1.1 on an asyncio stream: the request on the wire, the response's head, its body.

The fetcher sends one request shape, built from an already checked ``Target``, and reads
a handful of header fields, so it speaks the protocol itself instead of through a general
client: per fetch that is a fraction of http.client's CPU (whose request checks and
email-based header parsing alone were ~45 µs). Bounds are http.client's: 65,536 bytes per
line, 100 field lines; at most 16 interim (1xx) answers are skipped. Failures raise
http.client's exception types, so that one mapping (``errors.failure_from_exception``)
serves every layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from tap_feeddelta.fetch.errors import FetchError

MAX_LINE: Final = 65_536  # bytes in the status line or one field line
MAX_FIELDS: Final = 100  # field lines in one head, or in a chunked body's trailer
MAX_INTERIM: Final = 16  # 1xx answers before the final one
CHUNK_BYTES: Final = 65_536  # body bytes read at once
# A chunked body may come in at most one chunk per this many bytes of max_feed_bytes:
# each chunk costs a loop turn (~0.7 µs), so a body of millions of 1-byte chunks is
# refused, not worked through (524,288 chunks under the default 4 MiB cap).
CAP_BYTES_PER_CHUNK: Final = 8
# And at most this many bytes on the wire per byte of max_feed_bytes, framing included:
# chunk-size lines, extensions and trailers are dropped, but each was read and scanned,
# so a body of 1-byte chunks with 60 KB extensions cannot have gigabytes read for it.
WIRE_BYTES_PER_CAP_BYTE: Final = 2
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a field name (RFC 9110 token)


def request_bytes(request_target: str, authority: str, headers: Mapping[str, str]) -> bytes:
    """``GET`` as sent on the wire. The target and authority come from a checked URL
    (no controls or spaces, ASCII); header values were cleaned before they got here."""
    head = f"GET {request_target} HTTP/1.1\r\nHost: {authority}\r\n"
    fields = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    try:
        return head.encode("ascii") + fields.encode("latin-1") + b"\r\n"
    except UnicodeEncodeError:
        raise FetchError("invalid_url", "The request cannot be written in HTTP/1.1.") from None


class HeaderFields:
    """A response's header fields by lower-case name; repeated fields keep every value."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[str, list[str]] = {}

    def get(self, name: str) -> str | None:
        """The first value of ``name``."""
        values = self._values.get(name.lower())
        return values[0] if values else None

    def get_all(self, name: str) -> list[str]:
        return self._values.get(name.lower(), [])

    def joined(self, name: str) -> str | None:
        """All values of ``name`` joined by ", " (HTTP's list rule), or None."""
        values = self._values.get(name.lower())
        return ", ".join(values) if values else None


@dataclass(frozen=True, slots=True)
class Head:
    """A final response's status line and fields, and how its body is framed."""

    version: int  # 10 or 11
    status: int
    reason: str
    fields: HeaderFields
    chunked: bool  # chunked is the last transfer coding
    length: int | None  # Content-Length; None: chunked or read to the close
    will_close: bool  # the connection cannot carry another request
    transfer_codings: tuple[str, ...] = ()  # of every Transfer-Encoding field, in order


async def read_line(reader: asyncio.StreamReader) -> bytes:
    """One line with its ending; b"" at the end of the stream; ``LineTooLong`` if long."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        if len(exc.partial) > MAX_LINE:
            raise http.client.LineTooLong("line") from None
        return exc.partial
    except asyncio.LimitOverrunError:
        raise http.client.LineTooLong("line") from None


async def read_fields(reader: asyncio.StreamReader) -> HeaderFields:
    """Field lines up to the blank line that ends them.

    A line that is not ``name: value`` is skipped (servers do send stray lines); a folded
    line continues the field before it. The end of the stream ends the fields too.
    """
    fields = HeaderFields()
    values = fields._values
    last: list[str] | None = None
    for _ in range(MAX_FIELDS + 1):
        line = await read_line(reader)
        if line in (b"\r\n", b"\n", b""):
            return fields
        text = line.decode("iso-8859-1")
        if text[0] in " \t":  # obsolete line folding: one space joins it to the field
            more = text.strip()
            if last is not None and more:
                last[-1] = f"{last[-1]} {more}" if last[-1] else more
            continue
        name, colon, value = text.partition(":")
        if not colon or not _TOKEN.fullmatch(name):
            last = None
            continue
        last = values.setdefault(name.lower(), [])
        last.append(value.strip(" \t\r\n"))
    raise http.client.HTTPException(f"got more than {MAX_FIELDS} headers")


def _one_length(value: str) -> str:
    """A Content-Length value; a list of one repeated value ("106, 106", which RFC 9110
    8.6 lets a recipient take as that value) is that value. Differing members stay as
    they are: no length, and the body reader refuses them."""
    value = value.strip()
    if "," in value:
        members = {member.strip() for member in value.split(",")}
        if len(members) == 1:
            return members.pop()
    return value


async def read_head(reader: asyncio.StreamReader, *, method: str = "GET") -> Head:
    """The final answer's head; interim answers (1xx but 101) are skipped."""
    for _ in range(MAX_INTERIM + 1):
        version, status, reason = _status_line(await read_line(reader))
        if not (100 <= status < 200) or status == 101:
            break
        await read_fields(reader)  # an interim answer's fields are dropped
    else:
        raise http.client.HTTPException("too many interim responses")
    fields = await read_fields(reader)
    codings = _transfer_codings(fields)
    chunked = bool(codings) and codings[-1] == "chunked"
    length: int | None = None
    declared = fields.get("content-length")
    if declared is not None and not codings:  # any transfer coding overrides it (6.3)
        declared = _one_length(declared)
        if declared.isascii() and declared.isdigit():
            with contextlib.suppress(ValueError):  # past int()'s digit limit: none, as http.client
                length = int(declared)
    if status in (204, 304) or 100 <= status < 200 or method == "HEAD":
        length = 0
    will_close = _closes(version, fields) or (not chunked and length is None)
    return Head(version, status, reason, fields, chunked, length, will_close, codings)


def _transfer_codings(fields: HeaderFields) -> tuple[str, ...]:
    """The transfer codings of every Transfer-Encoding field, in the order applied
    (RFC 9112 6.1), lower case, without parameters or empty list members."""
    codings = []
    for value in fields.get_all("transfer-encoding"):
        for member in value.split(","):
            coding = member.split(";", 1)[0].strip(" \t").lower()
            if coding:
                codings.append(coding)
    return tuple(codings)


def _status_line(line: bytes) -> tuple[int, int, str]:
    """(10 or 11, status, reason) of a status line."""
    if not line:
        raise http.client.RemoteDisconnected("closed without a response")
    parts = line.decode("iso-8859-1").split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise http.client.BadStatusLine("not an HTTP status line")
    version, code = parts[0], parts[1]
    if len(code) != 3 or not (code.isascii() and code.isdigit()) or code[0] == "0":
        raise http.client.BadStatusLine("not an HTTP status code")
    if version in ("HTTP/1.0", "HTTP/0.9"):
        minor = 10
    elif version.startswith("HTTP/1."):
        minor = 11
    else:
        raise http.client.UnknownProtocol("not HTTP/1")
    return minor, int(code), parts[2].strip() if len(parts) > 2 else ""


def _closes(version: int, fields: HeaderFields) -> bool:
    """Whether the server closes the connection after this response (http.client's rule)."""
    connection = (fields.get("connection") or "").lower()
    if version == 11:
        return "close" in connection
    if fields.get("keep-alive") or "keep-alive" in connection:
        return False
    return "keep-alive" not in (fields.get("proxy-connection") or "").lower()


async def read_body(
    reader: asyncio.StreamReader,
    head: Head,
    sink: Callable[[bytes], None],
    host: str,
    *,
    max_chunks: int,
    max_wire_bytes: int,
) -> bool:
    """Pass the body's bytes to ``sink`` as they come, in pieces of at most CHUNK_BYTES;
    whether the stream was left exactly at the body's end (else the connection is not
    for another request).

    ``sink`` may raise to stop reading (the size cap). A body that ends before its
    framing says it should is ``connection_failed``; broken chunk framing, or a chunked
    body in more than ``max_chunks`` chunks or ``max_wire_bytes`` bytes with its framing,
    ``bad_response``.
    """
    if head.chunked:
        return await _read_chunked(reader, sink, host, max_chunks, max_wire_bytes)
    if head.length is not None:
        await _read_exactly(reader, head.length, sink, host)
        return True
    while part := await reader.read(CHUNK_BYTES):
        sink(part)
    return True


async def _read_exactly(
    reader: asyncio.StreamReader, size: int, sink: Callable[[bytes], None], host: str
) -> None:
    while size:
        part = await reader.read(min(size, CHUNK_BYTES))
        if not part:
            raise FetchError("connection_failed", f"The body from {host} was cut short.")
        size -= len(part)
        sink(part)


async def _read_chunked(
    reader: asyncio.StreamReader,
    sink: Callable[[bytes], None],
    host: str,
    max_chunks: int,
    max_wire_bytes: int,
) -> bool:
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
# size pass.
_CHUNK_LINE = re.compile(rb"[ \t]*0*([0-9A-Fa-f]{1,16})[ \t\r]*(?:;[^\n]*)?\n")
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
                size = int(line.group(1), 16)
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
                    raise http.client.HTTPException(f"got more than {MAX_FIELDS} trailers")
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
