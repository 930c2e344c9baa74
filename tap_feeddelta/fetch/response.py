"""HTTP/1.1 on an asyncio stream: the request on the wire, the response's head, its body.

The fetcher sends one request shape, built from an already checked ``Target``, and reads
a handful of header fields, so it speaks the protocol itself instead of through a general
client: per fetch that is a fraction of http.client's CPU (whose request checks and
email-based header parsing alone were ~45 µs). Bounds are http.client's: 65,536 bytes per
line, 100 field lines; at most 16 interim (1xx) answers are skipped; and all the heads of
one answer take at most 256 KiB (``MAX_HEAD_BYTES``). Failures raise
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

from tap_feeddelta.fetch.chunked import read_chunked
from tap_feeddelta.fetch.errors import FetchError, HeadCutShort, HeadTooLarge, TooManyFields
from tap_feeddelta.fetch.wire import (
    CHUNK_BYTES,
    DRAIN_SECONDS,
    MAX_DRAINED_BYTES,
    MAX_FIELDS,
    MAX_HEAD_BYTES,
    MAX_INTERIM,
    MAX_LINE,
)

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a field name (RFC 9110 token)
_FRAMING_FIELDS = {"content-length": "Content-Length", "transfer-encoding": "Transfer-Encoding"}


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

    __slots__ = ("_values", "misframed")

    def __init__(self) -> None:
        self._values: dict[str, list[str]] = {}
        # A framing field sent with whitespace before its colon ("Content-Length : 6"),
        # which is no field (RFC 9112 5.1): where the body ends is then unknown.
        self.misframed: str | None = None

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
    # Of every Transfer-Encoding field, in order, identity left out.
    transfer_codings: tuple[str, ...] = ()


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


class HeadBytes:
    """What is left of the bytes all the heads of one answer may take (MAX_HEAD_BYTES)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_HEAD_BYTES

    def take(self, line: bytes) -> bytes:
        self.left -= len(line)
        if self.left < 0:
            raise HeadTooLarge
        return line


async def read_fields(reader: asyncio.StreamReader, budget: HeadBytes) -> HeaderFields:
    """Field lines up to the blank line that ends them.

    A line that is not ``name: value`` is skipped (servers do send stray lines); a folded
    line continues the field before it. The end of the stream before the blank line is
    ``HeadCutShort``: a head that never ended is no answer (RFC 9112 8), not a whole head
    whose body, read to the close, is empty.
    """
    fields = HeaderFields()
    values = fields._values
    last: list[str] | None = None
    for _ in range(MAX_FIELDS + 1):
        line = budget.take(await read_line(reader))
        if line in (b"\r\n", b"\n"):
            return fields
        if not line:
            raise HeadCutShort
        text = line.decode("iso-8859-1")
        if text[0] in " \t":  # obsolete line folding: one space joins it to the field
            more = text.strip()
            if last is not None and more:
                last[-1] = f"{last[-1]} {more}" if last[-1] else more
            continue
        name, colon, value = text.partition(":")
        if not colon or not _TOKEN.fullmatch(name):
            framing = _FRAMING_FIELDS.get(name.rstrip(" \t").lower()) if colon else None
            if framing is not None:
                fields.misframed = framing
            last = None
            continue
        last = values.setdefault(name.lower(), [])
        last.append(value.strip(" \t\r\n"))
    raise TooManyFields("header")


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


StatusLine = tuple[int, int, str]  # (10 or 11, status, reason)


async def read_head(reader: asyncio.StreamReader, *, method: str = "GET") -> Head:
    """The final answer's head; interim answers (1xx but 101) are skipped."""
    budget = HeadBytes()
    status_line = await read_status_line(reader, budget)
    return await read_rest_of_head(reader, status_line, budget, method=method)


async def read_status_line(reader: asyncio.StreamReader, budget: HeadBytes) -> StatusLine:
    """The final answer's status line; interim answers (1xx but 101) are skipped. (Read
    apart from the fields, so that a head that then fails still tells its status.) The
    heads read take from ``budget``, the fields read next too."""
    for _ in range(MAX_INTERIM + 1):
        version, status, reason = _status_line(budget.take(await read_line(reader)))
        if not (100 <= status < 200) or status == 101:
            return version, status, reason
        await read_fields(reader, budget)  # an interim answer's fields are dropped
    raise http.client.HTTPException("too many interim responses")


async def read_rest_of_head(
    reader: asyncio.StreamReader,
    status_line: StatusLine,
    budget: HeadBytes,
    *,
    method: str = "GET",
) -> Head:
    """The head whose status line was read: its fields, and how its body is framed."""
    version, status, reason = status_line
    fields = await read_fields(reader, budget)
    named = _transfer_codings(fields)
    # identity (RFC 2616's "no coding", since dropped from the registry) changes nothing.
    codings = tuple(coding for coding in named if coding != "identity")
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
    # Without chunked last the body ends with the connection (6.3 (4), (7)). A length
    # beside a Transfer-Encoding puts the framing in doubt (6.3 (3): smuggling and
    # response splitting look so): the body is read by chunked, or by the length beside
    # identity alone (as in http.client), and the connection is not used again.
    will_close = (
        _closes(version, fields)
        or fields.misframed is not None
        or (not chunked and length is None)
        or (bool(named) and declared is not None)
    )
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
        return await read_chunked(reader, sink, host, max_chunks, max_wire_bytes)
    if head.length is not None:
        await _read_exactly(reader, head.length, sink, host)
        return True
    while part := await reader.read(CHUNK_BYTES):
        sink(part)
    return True


async def drain_small_body(
    reader: asyncio.StreamReader,
    head: Head,
    *,
    max_bytes: int = MAX_DRAINED_BYTES,
    seconds: float = DRAIN_SECONDS,
) -> bool:
    """Read and drop a body that one Content-Length declares at most ``max_bytes`` long;
    whether the stream was so left at the answer's end (the connection is then reusable).

    Any other framing (chunked, to the close, lengths in doubt), a larger body, or one
    that has not all come within ``seconds`` is not read, or not to its end: False, and
    the caller closes the connection. Nothing here fails the fetch.
    """
    if head.will_close or head.length is None or head.length > max_bytes:
        return False
    if len(head.fields.get_all("content-length")) != 1:  # two fields: which one frames it?
        return False
    if head.length == 0:
        return True
    try:
        async with asyncio.timeout(seconds):
            await reader.readexactly(head.length)
    except (TimeoutError, asyncio.IncompleteReadError, OSError):
        return False
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


def length_members(head: Head) -> set[str]:
    """The values of every Content-Length field, each list member apart ("6, 6")."""
    lengths = head.fields.get_all("Content-Length")
    return {member.strip() for value in lengths for member in value.split(",")}


def declares_body(head: Head) -> bool:
    """Whether a bodiless answer (a 304) has a Transfer-Encoding or a Content-Length
    other than 0: its server may send that body after it."""
    if head.fields.get("Transfer-Encoding") is not None:
        return True
    return bool(length_members(head) - {"0"})
