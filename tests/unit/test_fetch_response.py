"""The request writer and the response reader, against http.client's own reading."""

from __future__ import annotations

import asyncio
import http.client
import io
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.fetch import chunked
from tap_feeddelta.fetch.chunked import Dechunker
from tap_feeddelta.fetch.errors import FetchError, HeadTooLarge
from tap_feeddelta.fetch.response import (
    Head,
    HeadBytes,
    read_body,
    read_fields,
    read_head,
    request_bytes,
)
from tap_feeddelta.fetch.wire import CHUNK_BYTES, MAX_FIELDS, MAX_HEAD_BYTES, MAX_INTERIM, MAX_LINE

MAX_CHUNKS = 1 << 20
MAX_WIRE = 1 << 40


class _Sock:
    """Just what HTTPResponse asks of a socket: a file of the bytes it would receive."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str) -> io.BytesIO:
        return io.BytesIO(self._data)


def _reader(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=MAX_LINE)
    reader.feed_data(data)
    reader.feed_eof()
    return reader


class Lean:
    """A head read by ``read_head`` and the rest of the stream, for a body read."""

    def __init__(self, data: bytes) -> None:
        async def head() -> tuple[Head, asyncio.StreamReader]:
            reader = _reader(data)
            return await read_head(reader), reader

        self.head, self._reader = asyncio.run(head())
        self.status, self.version, self.reason = (
            self.head.status,
            self.head.version,
            self.head.reason,
        )
        self.fields, self.length = self.head.fields, self.head.length
        self.chunked, self.will_close = self.head.chunked, self.head.will_close

    def read(self) -> bytes:
        parts: list[bytes] = []

        async def body() -> None:
            await read_body(
                self._reader,
                self.head,
                parts.append,
                "feed.example",
                max_chunks=MAX_CHUNKS,
                max_wire_bytes=MAX_WIRE,
            )

        asyncio.run(body())
        return b"".join(parts)


def lean(data: bytes) -> Lean:
    return Lean(data)


def stdlib(data: bytes) -> http.client.HTTPResponse:
    resp = http.client.HTTPResponse(_Sock(data), method="GET")  # type: ignore[arg-type]
    resp.begin()
    return resp


def test_request_bytes_are_one_plain_get() -> None:
    wire = request_bytes(
        "/feed.xml?a=1",
        "example.org:8080",
        {"User-Agent": "ua/1", "If-None-Match": '"v1"'},
    )
    assert wire == (
        b"GET /feed.xml?a=1 HTTP/1.1\r\nHost: example.org:8080\r\n"
        b'User-Agent: ua/1\r\nIf-None-Match: "v1"\r\n\r\n'
    )


def test_request_that_http_cannot_carry_is_refused() -> None:
    with pytest.raises(FetchError) as caught:
        request_bytes("/caf\u00e9", "example.org", {})
    assert caught.value.code == "invalid_url"


def test_fields_are_read_by_lower_case_name_with_repeats_kept() -> None:
    resp = lean(
        b'HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nETag:  "a" \r\n'
        b"Set-Cookie: one\r\nSET-COOKIE: two\r\nContent-Length: 0\r\n\r\n"
    )
    assert resp.status == 200 and resp.reason == "OK" and resp.version == 11
    assert resp.fields.get("content-type") == "text/xml"
    assert resp.fields.joined("ETag") == '"a"'
    assert resp.fields.get_all("Set-Cookie") == ["one", "two"]
    assert resp.fields.joined("set-cookie") == "one, two"
    assert resp.fields.joined("Missing") is None
    assert resp.fields.get_all("Missing") == []
    assert resp.length == 0 and not resp.will_close


def test_folded_lines_continue_and_stray_lines_are_skipped() -> None:
    resp = lean(
        b"HTTP/1.1 200 OK\r\nX-Long: one\r\n  two\r\n\tthree\r\nnot a field\r\n"
        b"Bad Name: x\r\nContent-Length: 3\r\n\r\nabc"
    )
    assert resp.fields.get("x-long") == "one two three"
    assert resp.fields.get("bad name") is None
    assert resp.length == 3
    assert resp.read() == b"abc"


def test_bare_newlines_end_lines_too() -> None:
    resp = lean(b'HTTP/1.1 304 Not Modified\nETag: "x"\n\n')
    assert resp.status == 304 and resp.fields.get("etag") == '"x"' and resp.length == 0


def test_interim_answers_are_skipped_up_to_a_bound() -> None:
    resp = lean(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    )
    assert resp.status == 200 and resp.fields.get("link") is None and resp.read() == b"ok"
    endless = b"HTTP/1.1 103 Early Hints\r\n\r\n" * (MAX_INTERIM + 1)
    with pytest.raises(http.client.HTTPException):
        lean(endless + b"HTTP/1.1 200 OK\r\n\r\n")


def test_head_bounds_are_http_clients() -> None:
    too_many = b"".join(b"X-%d: v\r\n" % n for n in range(MAX_FIELDS + 1))
    with pytest.raises(http.client.HTTPException):
        lean(b"HTTP/1.1 200 OK\r\n" + too_many + b"\r\n")
    with pytest.raises(http.client.LineTooLong):
        lean(b"HTTP/1.1 200 OK\r\nX: " + b"a" * MAX_LINE + b"\r\n\r\n")
    with pytest.raises(http.client.LineTooLong):
        lean(b"HTTP/1.1 200 " + b"a" * MAX_LINE + b"\r\n\r\n")


@pytest.mark.parametrize(
    "line",
    [
        b"garbage\r\n",
        b"HTTP/1.1\r\n",
        b"HTTP/1.1 2000 Big\r\n",
        b"HTTP/1.1 20x OK\r\n",
        b"HTTP/1.1 099 Low\r\n",
        b"ICY 200 OK\r\n",
        b"HTTP/2.0 200 OK\r\n",
    ],
)
def test_bad_status_lines_fail_as_http_client_fails(line: bytes) -> None:
    with pytest.raises(http.client.HTTPException):
        lean(line + b"Content-Length: 0\r\n\r\n")


def test_a_connection_closed_before_any_answer_is_remote_disconnected() -> None:
    # The fetcher retries a reused connection once on exactly this.
    with pytest.raises(http.client.RemoteDisconnected):
        lean(b"")


_NAMES = st.sampled_from(
    [
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Keep-Alive",
        "ETag",
        "Content-Type",
        "Proxy-Connection",
        "Last-Modified",
        "X-Other",
    ]
)
_VALUES = st.sampled_from(
    [
        "0",
        "12",
        "+5",
        "-3",
        " 7 ",
        "abc",
        "chunked",
        "CHUNKED",
        "gzip, chunked",
        "chunked, gzip",
        "gzip",
        "close",
        "keep-alive",
        "Keep-Alive, Upgrade",
        "",
        '"v1"',
        "text/xml; charset=utf-8",
        "9" * 5000,  # more digits than int() reads
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    version=st.sampled_from(["HTTP/1.1", "HTTP/1.0"]),
    status=st.sampled_from([200, 204, 301, 304, 404, 429, 503]),
    fields=st.lists(st.tuples(_NAMES, _VALUES), max_size=6),
)
def test_framing_matches_http_client(
    version: str, status: int, fields: list[tuple[str, str]]
) -> None:
    """Same status, chunked, length and will_close as http.client for the same head;
    only a signed Content-Length ("+5", which int() takes) is refused and read to the
    close instead (unless the body is chunked, which decides alone), and Transfer-Encoding
    is read as RFC 9112 says, where http.client looks at the first field's whole value:
    the codings of every field, chunked when it is last, no length with any coding; and a
    length beside chunked puts the framing in doubt (6.3 (3)): the connection is not kept."""
    head = f"{version} {status} Reason\r\n" + "".join(f"{n}: {v}\r\n" for n, v in fields)
    data = head.encode("latin-1") + b"\r\n"
    ours, theirs = lean(data), stdlib(data)
    assert (ours.status, ours.version) == (theirs.status, theirs.version)
    codings = ours.head.transfer_codings
    length = next((v for n, v in fields if n == "Content-Length"), None)
    signed = length is not None and length.strip().startswith("+") and not theirs.chunked
    beside = ours.chunked and length is not None
    if codings != (("chunked",) if theirs.chunked else ()):  # where the RFC differs
        assert ours.chunked == (codings[-1] == "chunked")
        assert ours.length == (0 if status in (204, 304) else None)
        assert ours.will_close or ours.chunked or ours.length == 0
    elif not signed:
        assert (ours.chunked, ours.length) == (theirs.chunked, theirs.length)
        assert ours.will_close == (theirs.will_close or beside)
    else:  # "+5": http.client's int() takes it; we read to the close instead
        assert (ours.length, ours.will_close) == (
            (0, theirs.will_close) if status in (204, 304) else (None, True)
        )
    for name, _ in fields:  # http.client keeps a value's trailing blanks; we drop them
        theirs_value = theirs.getheader(name)
        expected = (
            None
            if theirs_value is None
            else ", ".join(v.strip(" \t") for v in theirs.headers.get_all(name) or ())
        )
        assert ours.fields.joined(name) == expected


def test_read_fields_stops_at_the_blank_line() -> None:
    async def scenario() -> tuple[str | None, bytes]:
        reader = _reader(b"A: 1\r\n\r\nbody")
        return (await read_fields(reader, HeadBytes())).get("a"), await reader.read()

    assert asyncio.run(scenario()) == ("1", b"body")


def _chunked(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body


def test_chunked_bodies_are_joined_with_extensions_and_trailers_dropped() -> None:
    resp = lean(_chunked(b"3;name=x\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"))
    assert resp.chunked and resp.length is None and not resp.will_close
    assert resp.read() == b"abc0123456789"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"zz\r\nabc\r\n0\r\n\r\n", "bad_response"),  # not a size
        (b"-3\r\nabc\r\n0\r\n\r\n", "bad_response"),
        (b"1" * 17 + b"\r\n", "bad_response"),  # a size no body can have
        (b"3\r\nabcX\r\n0\r\n\r\n", "bad_response"),  # no line end after the data
        (b"5\r\nabc", "connection_failed"),  # cut in the data
        (b"3\r\nabc\r\n", "connection_failed"),  # cut before the last chunk
    ],
)
def test_broken_chunked_framing_is_a_stable_error(body: bytes, code: str) -> None:
    with pytest.raises(FetchError) as caught:
        lean(_chunked(body)).read()
    assert caught.value.code == code
    assert "feed.example" in caught.value.message and "abc" not in caught.value.message


def test_a_body_shorter_than_its_length_is_cut_short() -> None:
    resp = lean(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
    with pytest.raises(FetchError) as caught:
        resp.read()
    assert caught.value.code == "connection_failed"


def test_without_length_the_body_runs_to_the_close_in_bounded_pieces() -> None:
    payload = bytes(range(256)) * (CHUNK_BYTES // 64)
    pieces: list[bytes] = []
    resp = lean(b"HTTP/1.1 200 OK\r\n\r\n" + payload)
    assert resp.length is None and resp.will_close

    async def body() -> None:
        await read_body(
            resp._reader,
            resp.head,
            pieces.append,
            "feed.example",
            max_chunks=MAX_CHUNKS,
            max_wire_bytes=MAX_WIRE,
        )

    asyncio.run(body())
    assert b"".join(pieces) == payload
    assert max(len(piece) for piece in pieces) <= CHUNK_BYTES


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=300), max_size=8), st.data())
def test_any_chunking_gives_back_the_same_body(parts: list[bytes], data: st.DataObject) -> None:
    wire = b"".join(
        b"%x%s\r\n%s\r\n" % (len(p), data.draw(st.sampled_from([b"", b";ext=1"])), p) for p in parts
    )
    assert lean(_chunked(wire + b"0\r\n\r\n")).read() == b"".join(parts)


def _pieces(data: bytes, max_chunks: int = MAX_CHUNKS) -> tuple[list[bytes], bool]:
    """The pieces the sink gets for a response, and whether the stream was left clean."""
    pieces: list[bytes] = []

    async def body() -> bool:
        reader = _reader(data)
        head = await read_head(reader)
        return await read_body(
            reader,
            head,
            pieces.append,
            "feed.example",
            max_chunks=max_chunks,
            max_wire_bytes=MAX_WIRE,
        )

    return pieces, asyncio.run(body())


def test_tiny_chunks_reach_the_sink_in_a_few_pieces_not_one_per_chunk() -> None:
    payload = bytes(range(256)) * 256  # 64 KiB in 1-byte chunks: 384 KiB on the wire
    wire = b"".join(b"1\r\n%s\r\n" % payload[n : n + 1] for n in range(len(payload)))
    pieces, clean = _pieces(_chunked(wire + b"0\r\n\r\n"))
    assert b"".join(pieces) == payload and clean
    assert len(pieces) <= len(wire) // CHUNK_BYTES + 2
    assert max(len(piece) for piece in pieces) <= CHUNK_BYTES


def test_a_body_in_more_chunks_than_the_bound_is_bad_response() -> None:
    wire = b"1\r\nx\r\n" * 101 + b"0\r\n\r\n"
    pieces, _ = _pieces(_chunked(b"1\r\nx\r\n" * 100 + b"0\r\n\r\n"), max_chunks=100)
    assert b"".join(pieces) == b"x" * 100
    with pytest.raises(FetchError) as caught:
        _pieces(_chunked(wire), max_chunks=100)
    assert caught.value.code == "bad_response" and "100 chunks" in caught.value.message


def test_a_chunked_body_is_capped_on_its_wire_bytes_framing_included() -> None:
    # Extensions, size lines and trailers are dropped, but each was read and scanned.
    body = b"1;" + b"e" * 1000 + b"\r\nx\r\n"
    wire = body * 10 + b"0\r\nX-T: " + b"v" * 1000 + b"\r\n\r\n"
    dechunker = Dechunker("feed.example", max_chunks=MAX_CHUNKS, max_wire_bytes=len(wire))
    assert dechunker.feed(wire) == b"x" * 10 and dechunker.done
    for cut in (1, 2000, len(wire) - 1):  # one byte over, wherever the reads break
        dechunker = Dechunker("feed.example", max_chunks=MAX_CHUNKS, max_wire_bytes=len(wire) - 1)
        dechunker.feed(wire[:cut])
        with pytest.raises(FetchError) as caught:
            dechunker.feed(wire[cut:])
        assert caught.value.code == "bad_response" and "framing" in caught.value.message


def test_reading_stops_once_the_wire_cap_is_passed() -> None:
    endless = b"1;" + b"e" * 60_000 + b"\r\nx\r\n"
    left: list[int] = []

    async def body() -> None:
        reader = _reader(_chunked(endless * 200))
        head = await read_head(reader)
        try:
            await read_body(
                reader,
                head,
                lambda _: None,
                "feed.example",
                max_chunks=MAX_CHUNKS,
                max_wire_bytes=1000,
            )
        finally:
            left.append(len(reader._buffer))  # type: ignore[attr-defined]

    with pytest.raises(FetchError):
        asyncio.run(body())
    assert left[0] > len(endless) * 198  # not read past the read that passed the cap


def test_bytes_read_past_a_chunked_body_leave_the_stream_unclean() -> None:
    pieces, clean = _pieces(_chunked(b"3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"))
    assert b"".join(pieces) == b"abc" and clean
    pieces, clean = _pieces(_chunked(b"3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n"))
    assert b"".join(pieces) == b"abc" and not clean


@pytest.mark.parametrize(
    "body",
    [
        b"3\r\nabc\r\n0\r\n" + b"X: v\r\n" * (MAX_FIELDS + 1) + b"\r\n",
        b"3;" + b"e" * MAX_LINE + b"\r\nabc\r\n0\r\n\r\n",
        b"3\r\nabc\r\n0\r\nX: " + b"v" * MAX_LINE + b"\r\n\r\n",
    ],
    ids=["too-many-trailers", "long-size-line", "long-trailer-line"],
)
def test_chunk_lines_and_trailers_are_bounded_as_the_head_is(body: bytes) -> None:
    with pytest.raises(http.client.HTTPException):
        lean(_chunked(body)).read()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=40), max_size=8),
    st.sampled_from([b"\r\n", b"\n"]),
    st.sampled_from([b"", b";ext=1", b" ; a=b"]),
    st.sampled_from([b"", b"X-T: 1\r\n", b"A: 1\nB: 2\n"]),
    st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_the_dechunker_gives_back_the_body_wherever_the_reads_break(
    parts: list[bytes], eol: bytes, extension: bytes, trailer: bytes, cuts: list[int]
) -> None:
    wire = b"".join(b"%x%s%s%s%s" % (len(p), extension, eol, p, eol) for p in parts)
    wire += b"0" + eol + trailer + eol
    dechunker = Dechunker("feed.example", max_chunks=len(parts), max_wire_bytes=len(wire))
    out = bytearray()
    start = 0
    for cut in [*sorted({min(cut, len(wire)) for cut in cuts}), len(wire)]:
        if cut > start:
            assert not dechunker.done
            out += dechunker.feed(wire[start:cut])
            start = cut
    assert dechunker.done and not dechunker.overread
    assert out == b"".join(parts)


def test_a_close_in_the_trailer_ends_the_body_as_in_http_client() -> None:
    data = _chunked(b"3\r\nabc\r\n0\r\n")
    pieces, clean = _pieces(data)
    assert b"".join(pieces) == b"abc" == stdlib(data).read() and not clean


class _CountingPattern:
    """A compiled pattern that counts its ``match`` calls."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern, self.calls = pattern, 0

    def match(self, data: bytes, pos: int) -> re.Match[bytes] | None:
        self.calls += 1
        return self.pattern.match(data, pos)


def test_a_line_dripped_byte_by_byte_is_looked_at_once_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not again on every read: that is quadratic in the line's length (20 s of CPU for a
    # 60 KB chunk extension sent a byte per packet).
    counting = _CountingPattern(chunked._CHUNK_LINE)
    monkeypatch.setattr(chunked, "_CHUNK_LINE", counting)
    wire = b"3;" + b"e" * 20_000 + b"\r\nabc\r\n0\r\nX: " + b"v" * 20_000 + b"\r\n\r\n"
    dechunker = chunked.Dechunker("feed.example", max_chunks=1, max_wire_bytes=MAX_WIRE)
    out = bytearray()
    for n in range(len(wire)):
        out += dechunker.feed(wire[n : n + 1])
    assert out == b"abc" and dechunker.done
    assert counting.calls <= 4


@pytest.mark.parametrize("zeros", [1, 16, 40, 1000])
def test_chunk_sizes_may_have_leading_zeros(zeros: int) -> None:
    # RFC 9112: chunk-size = 1*HEXDIG. Only the value is bounded (16 hex digits).
    pad = b"0" * zeros
    data = _chunked(pad + b"3\r\nabc\r\n" + pad + b"A;x=1\r\n0123456789\r\n" + pad + b"\r\n\r\n")
    assert lean(data).read() == b"abc0123456789" == stdlib(data).read()


def test_a_chunk_size_over_sixteen_digits_after_its_zeros_is_refused() -> None:
    with pytest.raises(FetchError) as caught:
        lean(_chunked(b"0" * 20 + b"1" + b"0" * 16 + b"\r\nabc\r\n0\r\n\r\n")).read()
    assert caught.value.code == "bad_response"


# The chunk-size line as first written: "0*" then "{1,16}" split a run of zeros 16 ways
# per zero when the line ended badly. The grammar stays this one.
_FIRST_CHUNK_LINE = re.compile(rb"[ \t]*0*([0-9A-Fa-f]{1,16})[ \t\r]*(?:;[^\n]*)?\n")


def _size_line(pattern: re.Pattern[bytes], line: bytes) -> tuple[int, int] | None:
    found = pattern.match(line)
    return None if found is None else (found.end(), int(found.group(1) or b"0", 16))


def test_the_chunk_size_line_grammar_is_unchanged() -> None:
    pieces = [b"0", b"1", b"f", b"g", b" ", b";", b"\r", b"\n"]
    lines = [b"".join(parts) for n in range(1, 7) for parts in itertools.product(pieces, repeat=n)]
    for zeros, digits in itertools.product((0, 1, 17, 100), (0, 1, 15, 16, 17)):
        for end in (b"\n", b" \r\n", b";x\n", b"g\n", b""):
            lines.append(b"0" * zeros + b"1" + b"0" * digits + end)
            lines.append(b"0" * (zeros + digits + 1) + end)
    for line in lines:
        assert _size_line(chunked._CHUNK_LINE, line) == _size_line(_FIRST_CHUNK_LINE, line), line


def test_a_long_run_of_zeros_that_ends_badly_is_refused() -> None:
    dechunker = Dechunker("feed.example", max_chunks=1, max_wire_bytes=MAX_WIRE)
    with pytest.raises(FetchError) as caught:
        dechunker.feed(b"0" * (MAX_LINE - 8) + b"g\n")
    assert caught.value.code == "bad_response"
    data = _chunked(b"0" * (MAX_LINE - 8) + b"3\r\nabc\r\n0\r\n\r\n")
    assert lean(data).read() == b"abc"


@pytest.mark.parametrize(
    ("fields", "codings", "chunked"),
    [
        ([], (), False),
        (["chunked"], ("chunked",), True),
        (["gzip, Chunked"], ("gzip", "chunked"), True),
        (["gzip", "chunked"], ("gzip", "chunked"), True),
        (["chunked, "], ("chunked",), True),
        (["chunked, gzip"], ("chunked", "gzip"), False),
        (["gzip;q=1"], ("gzip",), False),
        ([" , "], (), False),
        (["identity, chunked"], ("chunked",), True),  # identity is no coding
    ],
)
def test_transfer_codings_are_the_list_of_every_field(
    fields: list[str], codings: tuple[str, ...], chunked: bool
) -> None:
    """RFC 9112 6.1: the codings of every Transfer-Encoding field in order; the body is
    chunked when chunked is the last. With any coding, Content-Length is not the length
    (6.3): a body not chunked then runs to the close, and the connection is not kept
    (the length beside a coding puts the framing in doubt, 6.3 (3))."""
    head = "".join(f"Transfer-Encoding: {value}\r\n" for value in fields)
    resp = lean(f"HTTP/1.1 200 OK\r\n{head}Content-Length: 3\r\n\r\n".encode())
    assert (resp.head.transfer_codings, resp.chunked) == (codings, chunked)
    assert resp.length == (3 if not codings else None)
    assert resp.will_close == bool(codings)


@pytest.mark.parametrize("length", ["Content-Length: 3\r\n", ""], ids=["length", "no-length"])
def test_transfer_encoding_identity_alone_frames_by_length_or_close_and_is_not_kept(
    length: str,
) -> None:
    """identity changes nothing: a length frames the body (as in http.client), else the
    close (RFC 9112 6.3 (7)); a length beside a Transfer-Encoding is in doubt, so the
    connection is not used again."""
    resp = lean(f"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n{length}\r\nabcdef".encode())
    assert resp.head.transfer_codings == () and not resp.chunked
    assert resp.length == (3 if length else None)
    assert resp.will_close
    assert resp.read() == (b"abc" if length else b"abcdef")


def test_all_the_heads_of_one_answer_take_at_most_the_head_bound() -> None:
    # Each head within the line and field bounds, together past MAX_HEAD_BYTES: interim
    # answers count, so 16 of them cannot make a fetch read ~110 MB of fields.
    field = b"X-Pad: " + b"a" * 60_000 + b"\r\n"
    interim = b"HTTP/1.1 103 Early Hints\r\n" + field * 2 + b"\r\n"
    final = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

    async def scenario(data: bytes) -> Head:
        return await read_head(_reader(data))

    assert asyncio.run(scenario(interim * 2 + final)).status == 200  # ~240 KB: within
    with pytest.raises(HeadTooLarge):
        asyncio.run(scenario(interim * 3 + final))
    one_big_head = b"HTTP/1.1 200 OK\r\n" + field * 5 + b"\r\n"
    with pytest.raises(HeadTooLarge):
        asyncio.run(scenario(one_big_head))
    assert len(field) * 5 > MAX_HEAD_BYTES
