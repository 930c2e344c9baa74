"""The document's characters: BOM first, then the HTTP charset, then the XML declaration.

A legacy charset label is often a server's default (Apache's AddDefaultCharset,
text/xml's us-ascii) or a template's hard-coded declaration rather than the author's
choice: bytes that are UTF-8 with multi-byte sequences are read as UTF-8 whatever legacy
charset the HTTP header or the declaration names, and over a Latin-1, windows-1252 or
ASCII HTTP charset an XML declaration of another charset that reads the bytes wins (both
reported as ``encoding_mismatch``).

The result is UTF-8 bytes, the one encoding the XML parser is then told to read. Bytes
declared Latin-1 or ASCII are read as windows-1252 (what their authors meant), legacy CJK
charsets as the supersets browsers read them with (cp932, cp949, Big5-HKSCS, GB 18030),
a wrong declaration is ignored when another reading fits, and bytes that fit no reading
are replaced — reported, never a crash.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Final

from tap_feeddelta.errors import Issue
from tap_feeddelta.parse.xmldoc import JUNK_SEARCH_BYTES, is_junk

_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "utf_32_le"),
    (codecs.BOM_UTF32_BE, "utf_32_be"),
    (codecs.BOM_UTF8, "utf_8"),
    (codecs.BOM_UTF16_LE, "utf_16_le"),
    (codecs.BOM_UTF16_BE, "utf_16_be"),
)
# XML's autodetection of "<?" without a BOM (XML 1.0, appendix F).
_BOMLESS: Final = (
    (b"\x00\x00\x00<", "utf_32_be"),
    (b"<\x00\x00\x00", "utf_32_le"),
    (b"\x00<\x00?", "utf_16_be"),
    (b"<\x00?\x00", "utf_16_le"),
)
_XML_DECL: Final = re.compile(
    rb"^\s*<\?xml[^>]{0,200}?encoding\s*=\s*[\"']([A-Za-z0-9._:-]{1,40})[\"']"
)
# The same declaration later in the body, after a server's warning text (see _xml_declared).
_LATE_XML_DECL: Final = re.compile(
    rb"<\?xml[^>]{0,200}?encoding\s*=\s*[\"']([A-Za-z0-9._:-]{1,40})[\"']"
)
_CHARSET: Final = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9._:-]{1,40})", re.I)
# Codecs that are text encodings to Python but no honest charset of a document.
_REFUSED: Final = frozenset(
    {"idna", "punycode", "unicode_escape", "raw_unicode_escape", "utf_7", "undefined"}
)
_WINDOWS_1252_FOR: Final = frozenset({"latin_1", "iso8859_1", "ascii", "cp1252"})
_DECODED_NON_ASCII: Final = re.compile("[^\x00-\x7f\ufffd]")
# Legacy CJK charsets are read with the superset that browsers use for them (WHATWG
# Encoding Standard): servers label Windows code page text with the older names.
_SUPERSET_FOR: Final = {
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
    "gb2312": "gb18030",
    "gbk": "gb18030",
}
# The WHATWG labels of those encodings that Python's codec registry does not know.
_ALIASES: Final = {
    **dict.fromkeys(("windows-31j", "x-sjis"), "cp932"),
    **dict.fromkeys(
        (
            "windows-949", "cseuckr", "csksc56011987", "iso-ir-149", "ks_c_5601-1989",
            "ksc_5601",
        ),
        "cp949",
    ),
    **dict.fromkeys(("cn-big5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(("csgb2312", "gb_2312", "gb_2312-80", "x-gbk"), "gb18030"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Decoded:
    data: bytes  # UTF-8, without a BOM
    issues: tuple[Issue, ...]


def _codec(name: str | None) -> str | None:
    """Python's name for a declared charset, or ``None`` when it is unknown or refused."""
    if not name:
        return None
    name = _ALIASES.get(name.lower(), name)
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    # base64, hex, rot13, zlib and the like are codecs too, but turn bytes into bytes.
    if not getattr(info, "_is_text_encoding", True):
        return None
    found = info.name.replace("-", "_")
    if found in _REFUSED:
        return None
    if found in _WINDOWS_1252_FOR:
        return "cp1252"
    return _SUPERSET_FOR.get(found, found)


def _read_1252(body: bytes) -> tuple[str, bool]:
    """windows-1252, with its five unassigned bytes read as Latin-1 (and reported)."""
    try:
        return body.decode("cp1252"), False
    except UnicodeDecodeError:
        return body.decode("latin-1"), True


def declared_charset(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type header value."""
    if not content_type:
        return None
    match = _CHARSET.search(content_type)
    return match.group(1) if match else None


def utf8_document(body: bytes, content_type: str | None) -> Decoded:
    """The body as UTF-8 bytes, with what had to be ignored or replaced."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return _decoded(body[len(bom) :], [name], [])
    head = body[:4]
    for start, name in _BOMLESS:
        if head == start:
            return _decoded(body, [name], [])
    candidates: list[str] = []
    unknown = False
    for declared in (declared_charset(content_type), _xml_declared(body)):
        if declared is None:
            continue
        codec = _codec(declared)
        if codec is None or codec.startswith(("utf_16", "utf_32")):
            # unknown, or a 16/32-bit encoding that the first bytes already rule out
            unknown = True
        elif codec not in candidates:
            candidates.append(codec)
    issues = []
    if unknown:
        issues.append(Issue("encoding_mismatch", "A declared encoding is unknown; ignored."))
    if _is_legacy_label_over_utf8(body, candidates):
        issues.append(Issue("encoding_mismatch", "The declared charset was ignored: UTF-8 bytes."))
        return Decoded(body, tuple(issues))
    declared_text = _declared_over_default_charset(body, candidates)
    if declared_text is not None:
        issues.append(
            Issue("encoding_mismatch", "The HTTP charset was ignored: the XML declaration fits.")
        )
        return Decoded(_as_utf8(declared_text), tuple(issues))
    return _decoded(body, candidates, issues)


def _is_legacy_label_over_utf8(body: bytes, candidates: list[str]) -> bool:
    """Whether the charset the document would be read with (the HTTP charset, else the XML
    declaration) is a legacy one over bytes that are UTF-8 with non-ASCII text: a server's
    default (AddDefaultCharset, text/xml's us-ascii) or a template's hard-coded declaration
    rather than the author's choice. UTF-8's multi-byte sequences almost never occur in
    text of a legacy charset, where a single non-UTF-8 byte pair rules UTF-8 out."""
    if not candidates or candidates[0].startswith("utf_8") or body.isascii():
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _declared_over_default_charset(body: bytes, candidates: list[str]) -> str | None:
    """The text as the XML declaration reads it, when the HTTP charset is a Latin-1,
    windows-1252 or ASCII label (often the server's default, not the author's choice),
    the declaration names another charset and the bytes are non-ASCII text in it;
    otherwise ``None``. Two candidates with 1252 first: HTTP said 1252, the XML another."""
    if len(candidates) != 2 or candidates[0] != "cp1252" or body.isascii():
        return None
    try:
        return body.decode(candidates[1])
    except UnicodeDecodeError:
        return None


def _xml_declared(body: bytes) -> str | None:
    match = _XML_DECL.match(body, 0, 300)
    if match is None:
        # Text before the declaration (a PHP notice), which the XML reader skips too: the
        # declaration still names the document's charset.
        late = body.find(b"<?xml", 1, JUNK_SEARCH_BYTES)
        if late > 0 and is_junk(body[:late]):
            match = _LATE_XML_DECL.match(body, late, late + 300)
    return match.group(1).decode("ascii") if match else None


def _decoded(body: bytes, candidates: list[str], issues: list[Issue]) -> Decoded:
    first = candidates[0] if candidates else "utf_8"
    if first in ("utf_8", "utf-8") and body.isascii():
        return Decoded(body, tuple(issues))
    for codec in (*candidates, "utf_8"):
        if codec == "cp1252":
            text, replaced = _read_1252(body)
            if replaced:
                issues.append(Issue("encoding_replaced", "Unassigned bytes read as Latin-1."))
        else:
            try:
                text = body.decode(codec)
            except UnicodeDecodeError:
                continue
        if codec != first:
            issues.append(Issue("encoding_mismatch", "The declared encoding did not fit."))
        if codec == "utf_8":
            return Decoded(body, tuple(issues))
        return Decoded(_as_utf8(text), tuple(issues))
    # Nothing declared fits. Mostly-UTF-8 bytes keep their text with the bad bytes
    # replaced; bytes with no UTF-8 sequence at all are a single-byte charset: 1252.
    text = body.decode(first, "replace")
    if first.startswith("utf_8") and _has_no_multibyte(text):
        text, _ = _read_1252(body)
        issues.append(Issue("encoding_mismatch", "Bytes that are not UTF-8 read as windows-1252."))
    else:
        issues.append(Issue("encoding_replaced", "Bytes that fit no encoding were replaced."))
    return Decoded(_as_utf8(text), tuple(issues))


def _has_no_multibyte(text: str) -> bool:
    """True when every non-ASCII character of a replaced UTF-8 reading is a replacement."""
    return _DECODED_NON_ASCII.search(text) is None


def _as_utf8(text: str) -> bytes:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.encode("utf-8", "replace")
