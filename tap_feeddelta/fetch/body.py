"""Reading a body as a stream, decoded, and capped on the decoded size.

Decompression asks zlib (or brotli) for at most the room left under the cap each time,
so a bomb stops at ``max_bytes`` with memory bounded by the cap plus one chunk.
"""

from __future__ import annotations

import zlib
from typing import Protocol

from tap_feeddelta.errors import Issue, shown_label
from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.wire import CHUNK_BYTES


class _Decoder(Protocol):
    def feed(self, data: bytes, limit: int) -> bytes:
        """Decoded bytes for ``data`` (may be b"" to drain), at most ``limit`` of them."""

    @property
    def has_pending(self) -> bool:
        """Input or output left over after the last call hit ``limit``."""

    def finish(self) -> None:
        """Raise if the stream ended early."""


_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_START = _GZIP_MAGIC + b"\x08"  # and deflate, gzip's one compression method
_GZIP_WBITS = 16 + zlib.MAX_WBITS
# Gzip members in one body, at most. Concatenated files and block compressors (bgzip's
# 64 KiB blocks) make tens; each member costs a new decompressor and a copy of the input
# left after it, so a body of 200,000 empty members took seconds of CPU.
MAX_GZIP_MEMBERS = 4096


class _ZlibDecoder:
    """gzip, every member of it (RFC 1952 lets members follow one another), or deflate.

    Bytes after the last member (or after a deflate stream) that do not start another
    member are ignored, and so is everything after them.
    """

    def __init__(self, encoding: str) -> None:
        self._is_gzip = encoding != "deflate"
        self._obj: zlib._Decompress | None = None
        self._head = b""
        self._rest = b""  # bytes after a member's end: the next member's start, or not
        self._ignoring = False
        self._pending = False
        self._members = 1
        if self._is_gzip:
            self._obj = zlib.decompressobj(_GZIP_WBITS)

    def feed(self, data: bytes, limit: int) -> bytes:
        if self._ignoring:
            return b""
        if self._obj is None:
            # "deflate" is meant to be zlib-wrapped, but raw deflate is common too.
            self._head += data
            if len(self._head) < 2:
                return b""
            first, second = self._head[0], self._head[1]
            wrapped = first & 0x0F == 8 and ((first << 8) | second) % 31 == 0
            self._obj = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self._head = self._head, b""
        obj = self._obj
        if obj.eof:
            data, self._rest = self._rest + data, b""
            if not self._starts_member(data):
                self._pending = False
                return b""
            self._members += 1
            if self._members > MAX_GZIP_MEMBERS:
                raise zlib.error(f"more than {MAX_GZIP_MEMBERS} gzip members")
            obj = self._obj = zlib.decompressobj(_GZIP_WBITS)
        out = obj.decompress(obj.unconsumed_tail + data, limit)
        if obj.eof:
            self._rest = obj.unused_data
        # Input left over, in this member or after it: the caller drains it with b"".
        self._pending = bool(obj.unconsumed_tail or self._rest) or len(out) >= limit
        return out

    def _starts_member(self, data: bytes) -> bool:
        """Whether ``data``, after the end of a stream, starts another gzip member;
        holds a start too short to tell, and ignores the rest for good if not."""
        if self._is_gzip and len(data) < len(_GZIP_MAGIC) and _GZIP_MAGIC.startswith(data):
            self._rest = data
            return False
        if not (self._is_gzip and data.startswith(_GZIP_MAGIC)):
            self._ignoring = True
            return False
        return True

    @property
    def has_pending(self) -> bool:
        return self._pending

    def finish(self) -> None:
        if self._obj is None or not self._obj.eof:
            raise zlib.error("the compressed stream ended early")


class _BrotliDecoder:
    def __init__(self, module: object) -> None:
        self._obj = module.Decompressor()  # type: ignore[attr-defined]
        self._pending = False

    def feed(self, data: bytes, limit: int) -> bytes:
        out: bytes = self._obj.process(data, output_buffer_limit=limit)
        self._pending = not self._obj.can_accept_more_data()
        return out

    @property
    def has_pending(self) -> bool:
        return self._pending

    def finish(self) -> None:
        if not self._obj.is_finished():
            raise zlib.error("the compressed stream ended early")


def _brotli_module() -> object | None:
    """A brotli module whose decompressor can cap its output, or None."""
    for name in ("brotli", "brotlicffi"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        decompressor = getattr(module, "Decompressor", None)
        if decompressor is not None and hasattr(decompressor, "can_accept_more_data"):
            return module
    return None


BROTLI = _brotli_module()
ACCEPT_ENCODING = "gzip, deflate, br" if BROTLI is not None else "gzip, deflate"


# Content codings undone on one body, at most: an app that compresses and a server that
# compresses again make two; each layer's output is capped like the body.
MAX_CODINGS = 3
_DECODED = frozenset(("gzip", "x-gzip", "deflate")) | (
    frozenset(("br",)) if BROTLI is not None else frozenset()
)
# The registered content codings (IANA's registry) the tap does not decode: such a body
# is encoded for sure, and is refused. Any other label names no content coding at all
# ("UTF-8", "none", "binary", "text/xml", Ceph's "aws-chunked"): a server's mistake,
# whose body browsers and urllib3 read as it came, and so does the tap.
_REGISTERED = frozenset(
    ("compress", "x-compress", "zstd", "br", "dcb", "dcz", "aes128gcm", "exi", "pack200-gzip")
)
_REFUSED = _REGISTERED - _DECODED
_KNOWN = _DECODED | _REFUSED


def decoded_codings(encodings: list[str]) -> tuple[list[str], list[str]]:
    """The content codings (in the order applied) to undo or refuse, and the labels that
    name no content coding, to be read as identity."""
    codings = [encoding for encoding in encodings if encoding in _KNOWN]
    if len(codings) == len(encodings):
        return encodings, []
    return codings, [encoding for encoding in encodings if encoding not in _KNOWN]


def refusal(encodings: list[str]) -> str | None:
    """Why a body with these content codings (in the order applied) cannot be decoded,
    or None when it can."""
    for encoding in encodings:
        if encoding not in _DECODED:
            return f"The body uses a Content-Encoding not offered ({shown_label(encoding)})."
    if len(encodings) > MAX_CODINGS:
        return f"The body is encoded {len(encodings)} times over (at most {MAX_CODINGS})."
    return None


def ignored_codings_notes(labels: list[str]) -> tuple[Issue, ...]:
    """What the feed's row says of Content-Encoding labels read as identity."""
    if not labels:
        return ()
    shown = ", ".join(f'"{shown_label(label)}"' for label in labels[:MAX_CODINGS])
    message = f"The Content-Encoding {shown} names no content coding: the body was read as sent."
    return (Issue("encoding_mismatch", message),)


def _decoder(encoding: str) -> _Decoder:
    if encoding == "br":
        return _BrotliDecoder(BROTLI)
    return _ZlibDecoder("deflate" if encoding == "deflate" else "gzip")


class CappedBody:
    """A body fed in pieces as they arrive, decoded, and capped on the decoded size.

    Stacked content codings (``gzip, gzip``) are undone last applied first, each layer's
    output capped like the body, so a bomb stops at the cap on whichever layer it is in.
    Decoded bytes that start with gzip's signature are gunzipped once more, as one more
    layer (see ``_sniff``). ``feed`` raises ``response_too_large`` past the cap (raw or
    decoded) and ``bad_response`` for bytes that do not decode; ``finish`` returns the body.
    Each layer is decoded as its input arrives, so the work of one ``feed`` is bounded by
    the layers (at most MAX_CODINGS) times the cap, and that of a whole body too.
    """

    def __init__(self, encodings: list[str], max_bytes: int) -> None:
        # For messages: known codings only; None is the gzip no Content-Encoding declared.
        self._names: list[str | None] = list(reversed(encodings))
        self._decoders = [_decoder(encoding) for encoding in reversed(encodings)]
        self._max_bytes = max_bytes
        self._data = bytearray()  # one buffer: a body in tiny pieces costs its size
        self._total = 0  # decoded bytes (of the last layer)
        self._raw_total = 0
        self._layer_totals = [0] * len(self._decoders)  # what each layer gave
        # Whether the decoded body's start is still to be looked at (for undeclared gzip).
        self._sniffing = len(self._decoders) < MAX_CODINGS

    def feed(self, raw: bytes) -> None:
        max_bytes = self._max_bytes
        self._raw_total += len(raw)
        if self._raw_total > max_bytes:
            raise _too_large(max_bytes)
        if not self._decoders:
            self._total += len(raw)
            if self._total > max_bytes:
                raise _too_large(max_bytes)
            self._data += raw
            if self._sniffing:
                self._sniff()
            return
        self._undo(0, raw)

    def _undo(self, layer: int, data: bytes) -> None:
        """Decode ``data`` through ``layer`` and the layers under it."""
        decoder = self._decoders[layer]
        max_bytes = self._max_bytes
        totals = self._layer_totals
        while True:
            # (Asked every time: an undeclared gzip found in this layer's output puts a
            # layer under it.)
            last = layer == len(self._decoders) - 1
            room = max_bytes - totals[layer] + 1
            # The last layer's output is kept whole; a layer above it hands its output
            # on in pieces, so that memory stays bounded by the cap and a piece.
            limit = room if last else min(room, CHUNK_BYTES)
            out = _decoded(decoder, data, limit, self._names[layer])
            data = b""
            totals[layer] += len(out)
            if totals[layer] > max_bytes:
                raise _too_large(max_bytes)
            if last:
                self._total = totals[layer]
                self._data += out
                if self._sniffing:
                    self._sniff()
            elif out:
                self._undo(layer + 1, out)
            if not decoder.has_pending:
                return

    def _sniff(self) -> None:
        """Gunzip the body once more when, decoded as declared, it starts with gzip's
        signature: a .xml.gz stored without its Content-Encoding, a cache keeping
        compressed pages, a second gzip of an app's own. No feed starts with these bytes:
        1f is a control character, which neither XML nor JSON may start with. That gzip is
        one more layer, decoded as the body comes like the declared ones and counted with
        them; it is looked for once, so a gzip inside it is not undone."""
        if len(self._data) < len(_GZIP_START):
            return
        self._sniffing = False
        if not self._data.startswith(_GZIP_START):
            return
        held, self._data = bytes(self._data), bytearray()
        self._names.append(None)
        self._decoders.append(_decoder("gzip"))
        self._layer_totals.append(0)
        self._total = 0
        self._undo(len(self._decoders) - 1, held)

    @property
    def decoded_bytes(self) -> int:
        """Decoded bytes fed so far (past the cap, those of the piece that passed it)."""
        return self._total

    def finish(self) -> bytes:
        given = self._raw_total
        for layer, decoder in enumerate(self._decoders):
            if given:  # an empty body, or an empty layer, decodes to nothing
                _finish(decoder, self._names[layer])
            given = self._layer_totals[layer]
        if self._data.startswith(_GZIP_START):
            # Gzip still, with no layer left to undo it: not a feed, say why.
            raise FetchError("bad_response", _still_gzip(len(self._decoders)))
        return bytes(self._data)


def _still_gzip(layers: int) -> str:
    undone = "1 layer of compression was" if layers == 1 else f"{layers} layers of compression were"
    return (
        f"The body is still gzip data after {undone} undone: at most {MAX_CODINGS} are, and"
        " only one that the Content-Encoding does not declare."
    )


_UNDECLARED_GZIP = (
    "The body is gzip data without a Content-Encoding saying so, and it does not decode."
)


def _decoded(decoder: _Decoder, data: bytes, limit: int, name: str | None) -> bytes:
    try:
        return decoder.feed(data, limit)
    except Exception as exc:  # zlib.error, or brotli's own error type
        if name is None:
            raise FetchError("bad_response", _UNDECLARED_GZIP) from exc
        message = f"The body could not be decoded as its Content-Encoding ({name}) says."
        raise FetchError("bad_response", message) from exc


def _finish(decoder: _Decoder, name: str | None) -> None:
    try:
        decoder.finish()
    except Exception as exc:
        if name is None:
            raise FetchError("bad_response", _UNDECLARED_GZIP) from exc
        message = f"The compressed body ({name}) ends early."
        raise FetchError("bad_response", message) from exc


def _too_large(max_bytes: int) -> FetchError:
    return FetchError(
        "response_too_large", f"The body is larger than max_feed_bytes ({max_bytes} bytes)."
    )
