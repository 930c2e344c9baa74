"""The repairs before recovery: what makes a malformed document readable by libxml2's
recovery without losing what it says.

Stray ``&`` and ``<`` are escaped, HTML named entities become characters, control
characters are removed, and raw HTML in RSS text elements is escaped as the text it is.
Every repair is linear in the size of the document.
"""

from __future__ import annotations

import re
from html.entities import html5
from typing import Final

_XML_ENTITIES: Final = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})
# What the repair before recovery reads: an entity name, a numeric reference, a "<"
# that starts no markup, a control character XML refuses.
_ENTITY_NAME: Final = rb"[A-Za-z_][A-Za-z0-9._-]{0,31}"
_NUMERIC_REF: Final = rb"#[0-9]{1,7};|#[xX][0-9A-Fa-f]{1,6};"
_STRAY_LT_PATTERN: Final = rb"<(?![A-Za-z_/!?])"
_CONTROL_PATTERN: Final = rb"[\x00-\x08\x0b\x0c\x0e-\x1f]"
_REPAIR: Final = re.compile(
    rb"(?P<keep><!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z))"
    rb"|&(?P<name>" + _ENTITY_NAME + rb");"
    rb"|&(?P<ref>" + _NUMERIC_REF + rb")"
    rb"|(?P<amp>&)"
    rb"|(?P<lt>" + _STRAY_LT_PATTERN + rb")"
    rb"|(?P<ctl>" + _CONTROL_PATTERN + rb")",
    re.S,
)

# The first element of the document, after the prolog (the DOCTYPE is already gone).
_ROOT_START: Final = re.compile(
    rb"(?:\s|<\?.*?\?>|<!--.*?-->)*<(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)", re.S
)
_RSS_ROOTS: Final = frozenset({b"rss", b"rdf", b"channel"})
# RSS elements whose content is HTML source, and what must be skipped to find them.
_RSS_TEXT_START: Final = re.compile(
    rb"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)"
    rb"|<(?P<name>description|title|[A-Za-z_][\w.-]*:encoded)(?:\s[^<>]*)?>",
    re.S,
)

# The same repairs as _REPAIR, in passes of fixed replacements (C-level, no call per
# match) for a document without CDATA sections or comments, whose text _REPAIR must
# skip. Order matters: controls go last, as _REPAIR removes them after reading what
# stands around them ("&am\x01p;" is a stray "&", not "&amp;").
_STRAY_LT: Final = re.compile(_STRAY_LT_PATTERN)
_STRAY_AMP: Final = re.compile(rb"&(?!" + _ENTITY_NAME + rb";|" + _NUMERIC_REF + rb")")
_HTML_NAME: Final = re.compile(
    rb"&(?!(?:" + b"|".join(sorted(_XML_ENTITIES)) + rb");)(" + _ENTITY_NAME + rb");"
)
_UPPER_HEX_REF: Final = re.compile(rb"&#X(?=[0-9A-Fa-f]{1,6};)")
_CONTROL_BYTES: Final = re.compile(_CONTROL_PATTERN)


def repaired(data: bytes) -> bytes:
    """The data with stray ``&`` and ``<`` escaped, HTML named entities made characters
    and control characters removed."""
    if b"<![CDATA[" in data or b"<!--" in data:
        return _repaired_by_match(data)
    data = _STRAY_AMP.sub(b"&amp;", _STRAY_LT.sub(b"&lt;", data))
    if b"&" in data:
        data = _UPPER_HEX_REF.sub(b"&#x", _HTML_NAME.sub(_html_entity, data))
    return _CONTROL_BYTES.sub(b"", data)


def _html_entity(match: re.Match[bytes]) -> bytes:
    return _html_entity_bytes(match.group(1))


def _html_entity_bytes(name: bytes) -> bytes:
    """An HTML named entity (not one of XML's own) as its character, or escaped as text
    when HTML has no such name."""
    char = html5.get(name.decode("ascii") + ";")
    return b"&amp;" + name + b";" if char is None else char.encode("utf-8")


def _repaired_by_match(data: bytes) -> bytes:
    def fix(match: re.Match[bytes]) -> bytes:
        kind = match.lastgroup
        if kind == "keep":
            return match.group(0)
        if kind == "name":
            name = match.group("name")
            return match.group(0) if name in _XML_ENTITIES else _html_entity_bytes(name)
        if kind == "ref":
            return b"&" + match.group("ref").replace(b"X", b"x")
        if kind == "amp":
            return b"&amp;"
        if kind == "lt":
            return b"&lt;"
        return b""

    return _REPAIR.sub(fix, data)


def is_rss(data: bytes) -> bool:
    """Whether the document's first element is an RSS root (rss, rdf:RDF, channel)."""
    match = _ROOT_START.match(data)
    return match is not None and match.group(1).lower() in _RSS_ROOTS


_TEXT_END: dict[bytes, re.Pattern[bytes]] = {}


def _text_end(name: bytes) -> re.Pattern[bytes]:
    """What ends the content of an RSS text element: its end tag, outside CDATA."""
    pattern = _TEXT_END.get(name)
    if pattern is None:
        pattern = re.compile(
            rb"<!\[CDATA\[.*?(?:\]\]>|\Z)|(?P<end></" + re.escape(name) + rb"\s*>)|(?P<raw><)",
            re.S,
        )
        _TEXT_END[name] = pattern
    return pattern


def with_rss_markup_as_text(data: bytes) -> tuple[bytes, bool]:
    """RSS data whose text elements (``description``, ``title``, ``*:encoded``) hold
    their raw HTML as escaped text, and whether any did.

    Unescaped tags there (``<br>``, ``<img>``, an unclosed ``<p>``) would otherwise make
    recovery nest the following items inside them. Escaping keeps what the XML says: the
    element's text is the HTML source.
    """
    parts: list[bytes] = []
    done = 0
    start = _RSS_TEXT_START.search(data)
    while start is not None:
        name = start.group("name")
        resume = start.end()
        if name is not None:
            end, has_raw = _text_end_of(data, name, resume)
            if end < 0:
                break  # no end tag: the document breaks off here
            if has_raw:
                parts += data[done:resume], _escaped(data[resume:end])
                done = end
            resume = end
        start = _RSS_TEXT_START.search(data, resume)
    if not parts:
        return data, False
    parts.append(data[done:])
    return b"".join(parts), True


def _text_end_of(data: bytes, name: bytes, at: int) -> tuple[int, bool]:
    """Where the content of the text element ``name`` that starts at ``at`` ends (-1 when
    it never does), and whether it holds markup outside CDATA."""
    pattern = _text_end(name)
    first = data.find(b"<", at)
    if first < 0:
        return -1, False
    usual = pattern.match(data, first)
    if usual is not None and usual.lastgroup == "end":
        return first, False  # the usual content, escaped: its first "<" ends it
    has_raw = False
    for found in pattern.finditer(data, first):
        if found.lastgroup == "end":
            return found.start(), has_raw
        if found.lastgroup == "raw":
            has_raw = True
    return -1, has_raw


def _escaped(content: bytes) -> bytes:
    """Element content with its markup made text; CDATA sections stay as they are."""
    pieces = re.split(rb"(<!\[CDATA\[.*?\]\]>)", content, flags=re.S)
    pieces[::2] = [piece.replace(b"<", b"&lt;").replace(b">", b"&gt;") for piece in pieces[::2]]
    return b"".join(pieces)
