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
are replaced — reported, never a crash. A web page read for the feeds it advertises names
its charset in a ``<meta>`` element too, read when neither a BOM nor the HTTP header does.
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
_UNICODE: Final = ("utf_8", "utf_16", "utf_32")
_DECODED_NON_ASCII: Final = re.compile("[^\x00-\x7f\ufffd]")
# Every label of the WHATWG Encoding Standard (encodings.json), by the Python codec that reads
# its encoding as browsers do: Latin-1 and ASCII as windows-1252, ISO-8859-9 as windows-1254,
# TIS-620 as windows-874, the legacy CJK charsets as the Windows supersets servers label with
# the older names (cp932, cp949, Big5-HKSCS, GB 18030). Not listed, so left to Python's codec
# registry: the "replacement" labels (ISO-2022-KR and HZ are read with Python's codecs, the
# others are unknown) and x-user-defined (no text encoding).
_WHATWG_LABELS: Final = {
    "utf_8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "cp866": "866 cp866 csibm866 ibm866",
    "iso8859_2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2"
    " iso_8859-2:1987 l2 latin2",
    "iso8859_3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3"
    " iso_8859-3:1988 l3 latin3",
    "iso8859_4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4"
    " iso_8859-4:1988 l4 latin4",
    "iso8859_5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595"
    " iso_8859-5 iso_8859-5:1988",
    "iso8859_6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6"
    " iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    "iso8859_7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126"
    " iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    # ISO-8859-8 and ISO-8859-8-I (visual and logical order) are one character set.
    "iso8859_8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138"
    " iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
    "iso8859_10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso8859_13": "iso-8859-13 iso8859-13 iso885913",
    "iso8859_14": "iso-8859-14 iso8859-14 iso885914",
    "iso8859_15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso8859_16": "iso-8859-16",
    "koi8_r": "cskoi8r koi koi8 koi8-r koi8_r",
    "koi8_u": "koi8-ru koi8-u",
    "mac_roman": "csmacintosh mac macintosh x-mac-roman",
    "cp874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "cp1250": "cp1250 windows-1250 x-cp1250",
    "cp1251": "cp1251 windows-1251 x-cp1251",
    "cp1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100"
    " iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    "cp1253": "cp1253 windows-1253 x-cp1253",
    "cp1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9"
    " iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
    "cp1255": "cp1255 windows-1255 x-cp1255",
    "cp1256": "cp1256 windows-1256 x-cp1256",
    "cp1257": "cp1257 windows-1257 x-cp1257",
    "cp1258": "cp1258 windows-1258 x-cp1258",
    "mac_cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"
    " gb18030",
    "big5hkscs": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso2022_jp": "csiso2022jp iso-2022-jp",
    "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cp949": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989"
    " ksc5601 ksc_5601 windows-949",
    "utf_16_be": "unicodefffe utf-16be",
    "utf_16_le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
}
_CODEC_FOR_LABEL: Final = {
    label: codec for codec, labels in _WHATWG_LABELS.items() for label in labels.split()
}
# Python's own names of those legacy CJK charsets, read with the same supersets.
_SUPERSET_FOR: Final = {
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
    "gb2312": "gb18030",
    "gbk": "gb18030",
}


@dataclass(frozen=True, slots=True)
class Decoded:
    data: bytes  # UTF-8, without a BOM
    issues: tuple[Issue, ...]


def _codec(name: str | None) -> str | None:
    """Python's name for a declared charset, or ``None`` when it is unknown or refused."""
    if not name:
        return None
    known = _CODEC_FOR_LABEL.get(name.lower())
    if known is not None:
        return known
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
    return _utf8(body, declared_charset(content_type))


def utf8_page(body: bytes, content_type: str | None, data: bytes) -> bytes:
    """A web page as UTF-8 bytes, given ``data``, the body as ``utf8_document`` read it:
    with no BOM and no HTTP charset Python knows, the charset a ``<meta>`` element names
    in the first 1,024 bytes reads it (the HTML prescan), under the same rules as an XML
    declaration (UTF-8 bytes stay UTF-8)."""
    http_charset = declared_charset(content_type)
    if body.startswith(_BOM_BYTES) or _codec(http_charset) is not None:
        return data
    charset = meta_charset(body)
    if charset is None:
        return data
    return _utf8(body, charset).data


_BOM_BYTES: Final = tuple(bom for bom, _ in _BOMS)
_PRESCAN_BYTES: Final = 1024
_HTML_COMMENT: Final = re.compile(rb"<!--.*?(?:-->|\Z)", re.S)
_META_TAG: Final = re.compile(rb"<meta[\s/]([^>]*)", re.I)
_ATTRIBUTE: Final = re.compile(rb"""([^\s/>="']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?""")
_CHARSET_IN_CONTENT: Final = re.compile(
    rb"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))""", re.I
)
_LABEL: Final = re.compile(r"[A-Za-z0-9._:-]{1,40}")


def meta_charset(body: bytes) -> str | None:
    """The charset named by the first ``<meta charset>`` or ``<meta http-equiv=
    "Content-Type" content="...; charset=...">`` in the first 1,024 bytes, outside
    comments, as the HTML prescan finds it; ``None`` without one."""
    head = body[:_PRESCAN_BYTES]
    if b"<!--" in head:
        head = _HTML_COMMENT.sub(b" ", head)
    for tag in _META_TAG.finditer(head):
        attributes: dict[bytes, bytes] = {}
        for found in _ATTRIBUTE.finditer(tag.group(1)):
            value = next((group for group in found.groups()[1:] if group is not None), b"")
            attributes.setdefault(found.group(1).lower(), value)
        value = attributes.get(b"charset")
        if value is None and attributes.get(b"http-equiv", b"").lower() == b"content-type":
            content = _CHARSET_IN_CONTENT.search(attributes.get(b"content", b""))
            if content is not None:
                value = next(group for group in content.groups() if group is not None)
        if value is not None:
            label = value.decode("latin-1").strip()
            return label if _LABEL.fullmatch(label) else None
    return None


def _utf8(body: bytes, http_charset: str | None) -> Decoded:
    for bom, name in _BOMS:
        if body.startswith(bom):
            rest = body[len(bom) :]
            return _decoded(rest, [name], _labels_against_bom(rest, name, http_charset))
    head = body[:4]
    for start, name in _BOMLESS:
        if head == start:
            return _decoded(body, [name], [])
    candidates: list[str] = []
    unknown = False
    for declared in (http_charset, _xml_declared(body)):
        if declared is None:
            continue
        codec = _codec(declared)
        if codec is not None and codec.startswith(("utf_16", "utf_32")):
            codec = _wide_codec(codec, body)
        if codec is None:
            # unknown, or a 16/32-bit encoding that the first bytes rule out
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


def _labels_against_bom(rest: bytes, bom_codec: str, http_charset: str | None) -> list[Issue]:
    """An ``encoding_mismatch`` note when the HTTP charset or the XML declaration names
    another encoding than the BOM, which wins (as in browsers and XML readers). The
    declaration of a UTF-16 or UTF-32 document is read in its own width."""
    head = rest if bom_codec == "utf_8" else _as_utf8(rest[:1200].decode(bom_codec, "ignore"))
    for label in (http_charset, _xml_declared(head)):
        codec = _codec(label)
        if codec is not None and _unicode_form(codec) != _unicode_form(bom_codec):
            message = "The declared charset was ignored: the byte order mark names another."
            return [Issue("encoding_mismatch", message)]
    return []


def _unicode_form(codec: str) -> str:
    """UTF-8, -16 or -32 without the byte order: a "UTF-16" label comes with either BOM
    (the WHATWG table reads it as little-endian, which holds only without one)."""
    return codec[:6] if codec.startswith(("utf_16", "utf_32")) else codec.removesuffix("_sig")


def _wide_codec(codec: str, body: bytes) -> str | None:
    """The UTF-16 or UTF-32 codec a label names when the body's first character fits it
    (an ASCII character, such as ``<``, ``{`` or a space, in that width), its byte order
    read from the bytes; ``None`` when it does not fit. With no BOM and no XML declaration
    (which ``_BOMLESS`` reads), only a label says that a document is 16 or 32 bits wide."""
    width = 2 if codec.startswith("utf_16") else 4
    first = body[:width]
    if len(first) < width or first.count(0) != width - 1:
        return None
    if first[0] and first[0] < 0x80:
        return f"utf_{width * 8}_le"
    if first[-1] and first[-1] < 0x80:
        return f"utf_{width * 8}_be"
    return None


# Multi-byte legacy codecs, and the non-ASCII characters of a UTF-8 reading that outweigh
# their label (see _is_legacy_label_over_utf8).
_DOUBLE_BYTE: Final = frozenset(
    {
        "big5", "big5hkscs", "cp932", "cp949", "cp950", "euc_jis_2004", "euc_jisx0213",
        "euc_jp", "euc_kr", "gb18030", "gb2312", "gbk", "hz", "johab", "shift_jis",
        "shift_jis_2004", "shift_jisx0213",
    }
)  # fmt: skip
_DOUBLE_BYTE_EVIDENCE: Final = 3


def _is_legacy_label_over_utf8(body: bytes, candidates: list[str]) -> bool:
    """Whether the charset the document would be read with (the HTTP charset, else the XML
    declaration) is a legacy one over bytes that are UTF-8 with non-ASCII text: a server's
    default (AddDefaultCharset, text/xml's us-ascii) or a template's hard-coded declaration
    rather than the author's choice. UTF-8's multi-byte sequences almost never occur in
    text of a legacy charset, where a single non-UTF-8 byte pair rules UTF-8 out."""
    if not candidates or candidates[0].startswith(_UNICODE) or body.isascii():
        return False
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if candidates[0] not in _DOUBLE_BYTE:
        return True
    # Two bytes of a Chinese, Japanese or Korean character can be a UTF-8 sequence by
    # chance ("图片" in GBK is): a few such characters that also read in the label are
    # taken as the label says.
    if len(text) - len(text.encode("ascii", "ignore")) >= _DOUBLE_BYTE_EVIDENCE:
        return True
    try:
        body.decode(candidates[0])
    except UnicodeDecodeError:
        return True
    return False


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
