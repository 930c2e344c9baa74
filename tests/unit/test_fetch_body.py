"""The capped body decoder: every gzip member, however the bytes arrive, within the cap."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Iterator

import pytest

from tap_feeddelta.fetch.body import CappedBody
from tap_feeddelta.fetch.errors import FetchError

FIRST = b"<rss><channel><item><guid>a</guid></item>"
SECOND = b"<item><guid>b</guid></item></channel></rss>"
TWO_MEMBERS = gzip.compress(FIRST, mtime=0) + gzip.compress(SECOND, mtime=0)


def _decoded(pieces: list[bytes], max_bytes: int = 1 << 20) -> bytes:
    body = CappedBody(["gzip"], max_bytes)
    for piece in pieces:
        body.feed(piece)
    return body.finish()


def _splits(data: bytes) -> Iterator[list[bytes]]:
    for cut in range(len(data) + 1):
        yield [data[:cut], data[cut:]]


def test_two_members_in_one_piece_are_both_decoded() -> None:
    assert _decoded([TWO_MEMBERS]) == FIRST + SECOND


def test_two_members_are_decoded_wherever_the_pieces_break() -> None:
    for pieces in _splits(TWO_MEMBERS):
        assert _decoded(pieces) == FIRST + SECOND, [len(p) for p in pieces]
    assert _decoded([bytes([b]) for b in TWO_MEMBERS]) == FIRST + SECOND


def test_a_body_of_too_many_members_is_bad_response() -> None:
    """200,000 empty members (4 MiB) took seconds of CPU: a member count past any real
    compressor's is refused."""
    from tap_feeddelta.fetch.body import MAX_GZIP_MEMBERS

    empty = gzip.compress(b"", mtime=0)
    ok = empty * MAX_GZIP_MEMBERS
    assert _decoded([ok[i : i + 65_536] for i in range(0, len(ok), 65_536)]) == b""
    too_many = empty * (MAX_GZIP_MEMBERS + 1)
    with pytest.raises(FetchError) as caught:
        _decoded([too_many[i : i + 65_536] for i in range(0, len(too_many), 65_536)])
    assert caught.value.code == "bad_response"


def test_many_members_in_one_piece_are_all_decoded() -> None:
    parts = [b"<item>%d</item>" % n for n in range(200)] + [b""]
    body = b"".join(gzip.compress(part, mtime=0) for part in parts)
    assert _decoded([body]) == b"".join(parts)


@pytest.mark.parametrize(
    "garbage", [b"\x00" * 8, b"junk", b"\x1f", b"\x1f\x00rest"], ids=["zeros", "text", "1f", "1f00"]
)
def test_bytes_after_the_last_member_are_ignored(garbage: bytes) -> None:
    data = TWO_MEMBERS + garbage
    for pieces in _splits(data):
        assert _decoded(pieces) == FIRST + SECOND, [len(p) for p in pieces]


def test_a_member_after_trailing_bytes_is_ignored_too() -> None:
    late = gzip.compress(b"<late/>", mtime=0)
    assert _decoded([TWO_MEMBERS, b"junk", late]) == FIRST + SECOND
    assert _decoded([TWO_MEMBERS + b"junk" + late]) == FIRST + SECOND


def test_a_second_member_cut_short_is_bad_response() -> None:
    cut = TWO_MEMBERS[:-5]
    for pieces in _splits(cut):
        with pytest.raises(FetchError) as caught:
            _decoded(pieces)
        assert caught.value.code == "bad_response"


def test_a_member_that_does_not_decode_is_bad_response() -> None:
    with pytest.raises(FetchError) as caught:
        _decoded([TWO_MEMBERS[:40] + b"\x1f\x8bnot really gzip"])
    assert caught.value.code == "bad_response"


def test_bytes_after_a_deflate_stream_are_ignored() -> None:
    stream = zlib.compress(FIRST)
    assert CappedBody(["deflate"], 1 << 20).finish() == b""
    body = CappedBody(["deflate"], 1 << 20)
    body.feed(stream + gzip.compress(SECOND, mtime=0))
    assert body.finish() == FIRST


@pytest.mark.parametrize("piece_bytes", [65_536, 1 << 30], ids=["64KiB-reads", "one-read"])
def test_a_bomb_of_many_members_stops_at_the_cap_with_flat_memory(piece_bytes: int) -> None:
    cap = 1 << 20
    member = gzip.compress(bytes(256 << 10), compresslevel=9, mtime=0)  # 256 KiB of zeros
    bomb = member * 64  # 16 MiB decoded from about 16 KiB
    body = CappedBody(["gzip"], cap)
    tracemalloc.start()
    try:
        with pytest.raises(FetchError) as caught:
            for start in range(0, len(bomb), piece_bytes):
                body.feed(bomb[start : start + piece_bytes])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == "response_too_large"
    assert peak < 3 * cap, f"peak {peak} bytes"


def test_a_body_fed_in_tiny_pieces_takes_memory_by_its_size() -> None:
    # A chunked body of 1-byte chunks arrives as one piece per chunk at worst: the body
    # must not cost an object per piece.
    size = 256 << 10
    for encodings in ([], ["gzip"]):
        data = gzip.compress(bytes(size), mtime=0) if encodings else bytes(size)
        body = CappedBody(encodings, 1 << 20)
        tracemalloc.start()
        try:
            for start in range(len(data)):
                body.feed(data[start : start + 1])
            result = body.finish()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result == bytes(size)
        assert peak < 3 * size, f"{encodings}: peak {peak} bytes"


def _stacked(data: bytes, encodings: list[str]) -> bytes:
    """``data`` with ``encodings`` applied in order, as Content-Encoding lists them."""
    for encoding in encodings:
        data = gzip.compress(data, mtime=0) if encoding == "gzip" else zlib.compress(data)
    return data


@pytest.mark.parametrize(
    "encodings",
    [["gzip", "gzip"], ["deflate", "gzip"], ["gzip", "deflate"], ["gzip", "gzip", "gzip"]],
    ids=["gzip-gzip", "deflate-gzip", "gzip-deflate", "gzip-x3"],
)
def test_stacked_codings_are_undone_last_applied_first(encodings: list[str]) -> None:
    data = _stacked(FIRST + SECOND, encodings)
    for pieces in (_splits(data), [[bytes([b]) for b in data]]):
        for split in pieces:
            body = CappedBody(encodings, 1 << 20)
            for piece in split:
                body.feed(piece)
            assert body.finish() == FIRST + SECOND
            assert body.decoded_bytes == len(FIRST + SECOND)


@pytest.mark.parametrize(
    "encodings", [["gzip", "gzip"], ["gzip", "deflate"]], ids=["gzip-gzip", "gzip-deflate"]
)
def test_a_stacked_bomb_stops_at_the_cap_with_flat_memory(encodings: list[str]) -> None:
    cap = 1 << 20
    bomb = _stacked(bytes(64 << 20), encodings)  # 64 MiB of zeros from a few KiB
    body = CappedBody(encodings, cap)
    tracemalloc.start()
    try:
        with pytest.raises(FetchError) as caught:
            for start in range(0, len(bomb), 65_536):
                body.feed(bomb[start : start + 65_536])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == "response_too_large"
    assert peak < 3 * cap, f"peak {peak} bytes"


def test_the_cap_holds_on_an_outer_layers_output_too() -> None:
    """An outer layer that decodes to more than the cap is refused, even though the last
    layer would make little of it (here: bytes after the inner gzip member, ignored)."""
    middle = gzip.compress(b"<rss/>", mtime=0) + bytes(2 << 20)
    body = CappedBody(["gzip", "gzip"], 1 << 20)
    with pytest.raises(FetchError) as caught:
        body.feed(gzip.compress(middle, mtime=0))
    assert caught.value.code == "response_too_large"
    small = CappedBody(["gzip", "gzip"], 4 << 20)
    small.feed(gzip.compress(middle, mtime=0))
    assert small.finish() == b"<rss/>"


@pytest.mark.parametrize(
    ("encodings", "accepted"),
    [
        (["gzip", "deflate", "gzip"], True),
        (["gzip"] * 4, False),  # more layers than any server stacks by mistake
        (["gzip", "compress"], False),
        (["zstd"], False),
        (["x-gzip", "gzip"], True),
    ],
)
def test_codings_beyond_the_known_or_the_layer_bound_are_refused(
    encodings: list[str], accepted: bool
) -> None:
    from tap_feeddelta.fetch.body import refusal

    message = refusal(encodings)
    assert (message is None) == accepted
    if "zstd" in encodings or "compress" in encodings:
        assert message is not None and "(" in message  # a registered coding is named


@pytest.mark.parametrize(
    ("encodings", "decoded", "ignored"),
    [
        (["gzip"], ["gzip"], []),
        (["utf-8"], [], ["utf-8"]),
        (["gzip", "none", "deflate"], ["gzip", "deflate"], ["none"]),
        (["aws-chunked", "zstd"], ["zstd"], ["aws-chunked"]),  # zstd: still refused
    ],
)
def test_labels_that_name_no_content_coding_are_read_past(
    encodings: list[str], decoded: list[str], ignored: list[str]
) -> None:
    from tap_feeddelta.fetch.body import decoded_codings

    assert decoded_codings(encodings) == (decoded, ignored)


def _whole(encodings: list[str], data: bytes, max_bytes: int = 1 << 20) -> bytes:
    body = CappedBody(encodings, max_bytes)
    for start in range(0, len(data), 1000):
        body.feed(data[start : start + 1000])
    return body.finish()


@pytest.mark.parametrize(
    ("declared", "applied"),
    [([], ["gzip"]), (["gzip"], ["gzip", "gzip"]), (["deflate"], ["gzip", "deflate"])],
    ids=["none-declared", "gzip-declared-once", "deflate-declared"],
)
def test_a_gzip_body_the_server_did_not_declare_is_decoded(
    declared: list[str], applied: list[str]
) -> None:
    """A .xml.gz uploaded without its Content-Encoding, a cache storing compressed pages:
    no feed starts with 1f 8b 08 (a control character), so the gzip is undone."""
    text = FIRST + SECOND
    assert _whole(declared, _stacked(text, applied)) == text


def test_an_undeclared_gzip_body_is_found_whatever_pieces_its_start_comes_in() -> None:
    """The signature is looked for as the body comes, also across pieces of one byte."""
    text = FIRST + SECOND
    for declared, applied in (([], ["gzip"]), (["gzip"], ["gzip", "gzip"])):
        body = CappedBody(declared, 1 << 20)
        for byte in _stacked(text, applied):
            body.feed(bytes([byte]))
        assert body.finish() == text


def test_an_undeclared_gzip_body_is_capped_like_a_declared_one() -> None:
    bomb = gzip.compress(bytes(8 << 20), mtime=0)
    with pytest.raises(FetchError) as caught:
        _whole([], bomb)
    assert caught.value.code == "response_too_large"
    text = FIRST * 100
    assert _whole([], gzip.compress(text, mtime=0), max_bytes=len(text)) == text
    with pytest.raises(FetchError) as caught:
        _whole([], gzip.compress(text, mtime=0), max_bytes=len(text) - 1)
    assert caught.value.code == "response_too_large"


def test_an_undeclared_gzip_body_that_does_not_decode_says_what_it_is() -> None:
    with pytest.raises(FetchError) as caught:
        _whole([], b"\x1f\x8b\x08not really gzip")
    assert caught.value.code == "bad_response"
    assert "gzip" in caught.value.message and "Content-Encoding" in caught.value.message


@pytest.mark.parametrize("data", [b"\x1f\x8b", b"\x1f\x8b\x09rest", b"<rss/>\x1f\x8b\x08"])
def test_other_bytes_are_left_as_they_came(data: bytes) -> None:
    assert _whole([], data) == data
