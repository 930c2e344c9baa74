"""The repairs before recovery: what makes a malformed document readable by libxml2's
recovery without losing what it says.

Stray ``&`` and ``<`` are escaped, HTML named entities become characters, control
characters are removed, raw HTML in text elements is escaped as the text it is, and
HTML void tags left open are closed. Every reference the repairs leave or write is
numeric (``&#38;``, not ``&amp;``): once recovery has met an error it drops named ones.
Every repair is linear in the size of the document.
"""

from __future__ import annotations

import re
from html.entities import html5
from typing import Final

from lxml import etree

from tap_feeddelta.parse.tagsyntax import (
    ADDRESS_IN_ANGLE_BRACKETS,
    ANY_PREFIX,
    CDATA_SECTION,
    COMMENT,
    LOCAL_NAME,
    NAME,
    NO_TAG_AFTER_LT,
    PROCESSING_INSTRUCTION,
)

# XML's own named references, as the numeric references the repairs write instead: once
# libxml2's recovery has met one error, it drops every later named reference, even
# these ("AT&amp;T" read "ATT"), but keeps numeric ones.
_XML_ENTITY_REFS: Final = {
    b"amp": b"&#38;",
    b"lt": b"&#60;",
    b"gt": b"&#62;",
    b"quot": b"&#34;",
    b"apos": b"&#39;",
}
_XML_ENTITIES: Final = frozenset(_XML_ENTITY_REFS)
# Characters an HTML named entity may stand for that are markup in XML.
_MARKUP_CHARACTERS: Final = frozenset("&<>\"'")
# What the repair before recovery reads: an entity name, a numeric reference, a "<"
# that starts no markup, a control character XML refuses. (References as XML writes
# them, in bytes: a name may hold "_", "." and "-". ``text.CHARACTER_REFERENCE`` reads
# HTML's in field text.)
_ENTITY_NAME: Final = rb"[A-Za-z_][A-Za-z0-9._-]{0,31}"
_NUMERIC_REF: Final = rb"#[0-9]{1,7};|#[xX][0-9A-Fa-f]{1,6};"
# A numeric reference (of the lengths above) to a surrogate, U+D800 to U+DFFF (55296 to
# 57343): no XML character, and libxml2's recovery writes it as bytes that are no UTF-8,
# which lxml then refuses to read. It is made U+FFFD, as recovery makes any other
# reference to no character (&#x110000;). So is one to U+0000: in an attribute value,
# recovery ends the start tag there, and the element's end tag then closed its parent
# (the root, in the end: every later item was dropped).
_SURROGATE_REF_PATTERN: Final = (
    rb"#[xX]0{0,2}[dD][89a-fA-F][0-9a-fA-F]{2};"
    rb"|#0{0,2}(?:5529[6-9]|55[3-9][0-9]{2}|56[0-9]{3}|57[0-2][0-9]{2}|573[0-3][0-9]|5734[0-3]);"
    rb"|#0{1,7};|#[xX]0{1,6};"
)
# A reference to a high surrogate directly followed by one to a low surrogate: the two
# UTF-16 halves of one character (an emoji escaped by a UTF-16 escaper), read as it.
_SURROGATE_PAIR_PATTERN: Final = (
    rb"#(?:[xX]0{0,2}(?P<hex_high>[dD][89abAB][0-9a-fA-F]{2})"
    rb"|0{0,2}(?P<high>5529[6-9]|55[3-9][0-9]{2}|56[0-2][0-9]{2}|563[01][0-9]));"
    rb"&#(?:[xX]0{0,2}(?P<hex_low>[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|0{0,2}(?P<low>5632[0-9]|563[3-9][0-9]|56[4-9][0-9]{2}|57[0-2][0-9]{2}|573[0-3][0-9]"
    rb"|5734[0-3]));"
)
_REPLACEMENT_CHARACTER: Final = "\ufffd".encode()
# A "<" that starts no tag, comment, CDATA section or processing instruction. Unlike the
# name grammar of the tag finders (``tagsyntax.NAME``), a "<" before a byte past ASCII
# counts as stray, on purpose: in feed text "<«" or "<€5" is far more common than an
# element named in another script, and recovery would drop the "<" of the one and make
# an element of the other. (Only a document that needs recovery is read so.)
_STRAY_LT_PATTERN: Final = rb"<(?![A-Za-z_/!?])"
_CONTROL_PATTERN: Final = rb"[\x00-\x08\x0b\x0c\x0e-\x1f]"
# CDATA sections, comments and processing instructions are kept as written (but for
# their control characters): no markup, and no reference, stands in them.
_REPAIR: Final = re.compile(
    rb"(?P<keep><(?:" + NO_TAG_AFTER_LT + rb"))"
    rb"|&(?P<name>" + _ENTITY_NAME + rb");"
    rb"|&(?P<pair>" + _SURROGATE_PAIR_PATTERN + rb")"
    rb"|&(?P<surrogate>" + _SURROGATE_REF_PATTERN + rb")"
    rb"|&(?P<ref>" + _NUMERIC_REF + rb")"
    rb"|(?P<amp>&)"
    rb"|(?P<lt>" + _STRAY_LT_PATTERN + rb")"
    rb"|(?P<ctl>" + _CONTROL_PATTERN + rb")",
    re.S,
)

# One piece of a prolog: whitespace, a processing instruction or a comment, each up to
# its first end. Read one match at a time: a repeated group of lazy tokens
# ("(?:\s|<\?.*?\?>|<!--.*?-->)*") lets each token run past its end into the next one
# when what follows fails, which is exponential in the number of tokens. No tag finder:
# a piece left open is none, and the prolog ends before it.
_PROLOG_PIECE: Final = re.compile(rb"\s+|<\?.*?\?>|<!--.*?-->", re.S)
# The first element of the document, after the prolog (the DOCTYPE is already gone).
_ROOT_START: Final = re.compile(rb"<" + ANY_PREFIX + rb"(" + LOCAL_NAME + rb")")
_RSS_ROOTS: Final = frozenset({b"rss", b"rdf", b"channel"})
# RSS elements whose content is HTML source, escaped or not: the RSS ones, and any
# module's summary, subtitle, description and encoded content (itunes:summary,
# googleplay:description: podcast show notes are often raw HTML).
_RSS_TEXT_NAME: Final = (
    rb"description|title|" + NAME + rb":(?:encoded|summary|subtitle|description)"
)
_RSS_TEXT: Final = re.compile(_RSS_TEXT_NAME)
# A tag as the repairs read it: whether it ends an element, its name (with any prefix),
# and what follows the name up to its ">". Found by patterns that skip CDATA sections,
# comments and processing instructions whole before it (``tagsyntax``).
_TAG_PATTERN: Final = rb"(?P<end>/)?(?P<name>" + NAME + rb")(?P<rest>(?:[\s/][^<>]*)?)>"
# Any tag.
_TAG: Final = re.compile(rb"<(?:" + NO_TAG_AFTER_LT + rb"|" + _TAG_PATTERN + rb")", re.S)
# HTML elements that have no end tag. Not "link", "meta", "base" nor "source": feeds have
# elements of those names with content.
_VOID: Final = frozenset(b"br img hr wbr input col area embed param track keygen".split())
# Where there is no open void tag, only the RSS text elements need reading: the tags
# the repair stops at then are theirs alone (most documents that need recovery). A
# quick test, not a tag finder: one it finds in a CDATA section only makes the reading
# that skips it (with _TAG) run.
_OPEN_VOID: Final = re.compile(rb"<(?i:" + b"|".join(sorted(_VOID)) + rb")(?:[\s/][^<>]*)?(?<!/)>")
# The start tags of RSS text elements. Unlike _TAG_PATTERN, no "/" may follow the name:
# a self-closed one has no content to read.
_RSS_TEXT_TAG: Final = re.compile(
    rb"<(?:" + NO_TAG_AFTER_LT + rb"|(?P<end>)(?P<name>" + _RSS_TEXT_NAME + rb")"
    rb"(?P<rest>(?:\s[^<>]*)?)>)",
    re.S,
)
# Elements that are HTML only: raw content made of them (and text) is HTML source. Not
# "title", "summary", "link", "source": feeds have elements of those names.
_HTML: Final = _VOID | frozenset(
    b"a abbr acronym address article aside audio b bdi bdo big blockquote body button "
    b"canvas caption center cite code colgroup data dd del details dfn dialog dir div dl "
    b"dt em fieldset figcaption figure font footer form h1 h2 h3 h4 h5 h6 head header "
    b"hgroup html i iframe ins kbd label legend li main map mark menu nav nobr noscript "
    b"object ol optgroup option p picture pre q rp rt ruby s samp script section select "
    b"small span strike strong style sub sup table tbody td template textarea tfoot th "
    b"thead time tr tt u ul var video".split()
)
# A start tag whose content is XHTML markup, not HTML source as text.
_XHTML_START: Final = re.compile(
    rb"""type\s*=\s*["'](?:xhtml|application/xhtml\+xml)["']|mode\s*=\s*["']xml["']"""
    rb"|http://www\.w3\.org/1999/xhtml"
)
_OWN_END: Final = re.compile(rb"\s*</(?P<name>" + NAME + rb")\s*>")

# The same repairs as _REPAIR, in passes of fixed replacements (C-level, no call per
# match) for a document without CDATA sections, comments or processing instructions
# (but those of its prolog, which hold no reference and need their controls removed
# alone), whose text _REPAIR must skip. Order matters: controls go last, as _REPAIR
# removes them after reading what stands around them ("&am\x01p;" is a stray "&", not "&amp;").
_STRAY_LT: Final = re.compile(_STRAY_LT_PATTERN)
_STRAY_AMP: Final = re.compile(rb"&(?!" + _ENTITY_NAME + rb";|" + _NUMERIC_REF + rb")")
_HTML_NAME: Final = re.compile(
    rb"&(?!(?:" + b"|".join(sorted(_XML_ENTITIES)) + rb");)(" + _ENTITY_NAME + rb");"
)
_UPPER_HEX_REF: Final = re.compile(rb"&#X(?=[0-9A-Fa-f]{1,6};)")
_CONTROL_BYTES: Final = re.compile(_CONTROL_PATTERN)
_SURROGATE_REF: Final = re.compile(
    rb"&(?P<pair>" + _SURROGATE_PAIR_PATTERN + rb")|&(?:" + _SURROGATE_REF_PATTERN + rb")"
)


def _surrogate_character(match: re.Match[bytes]) -> bytes:
    """The character a pair of surrogate references encodes; U+FFFD for a lone one."""
    if match.group("pair") is None:
        return _REPLACEMENT_CHARACTER
    high = int(match.group("hex_high"), 16) if match.group("hex_high") else int(match["high"])
    low = int(match.group("hex_low"), 16) if match.group("hex_low") else int(match["low"])
    return chr(0x10000 + (high - 0xD800) * 0x400 + low - 0xDC00).encode("utf-8")


# The "<" of an address in angle brackets, and CDATA sections, comments and processing
# instructions, which keep theirs as written.
_ADDRESS: Final = re.compile(rb"<(?=" + ADDRESS_IN_ANGLE_BRACKETS + rb")")
_ADDRESS_OR_NO_TAG: Final = re.compile(
    rb"<(?:(?P<keep>" + NO_TAG_AFTER_LT + rb")|(?=" + ADDRESS_IN_ANGLE_BRACKETS + rb"))", re.S
)


def with_addresses_as_text(data: bytes) -> bytes:
    """The data with the ``<`` of each address or URL in angle brackets
    (``<jane@example.org>``, ``<https://example.org/>``: ``tagsyntax``) escaped as
    ``&#60;``, outside CDATA sections, comments and processing instructions. The first
    repair: every later one, and every tag finder, then reads it as the text it is, as
    when it was escaped (recovery read a start tag, and kept "@example.org>" as text).
    One search when there is none, the usual case."""
    if _ADDRESS.search(data) is None:
        return data
    return _ADDRESS_OR_NO_TAG.sub(_address_as_text, data)


def _address_as_text(match: re.Match[bytes]) -> bytes:
    return match.group(0) if match.group("keep") is not None else b"&#60;"


def repaired(data: bytes) -> bytes:
    """The data with stray ``&`` and ``<`` escaped, XML's named references made numeric
    ones (outside CDATA sections, comments and processing instructions), HTML named
    entities made characters, references to surrogates made U+FFFD and control
    characters removed (inside CDATA sections, comments and processing instructions
    too: recovery reads one there as garbage). Every reference it writes is numeric
    (``&#38;``), as recovery keeps those."""
    if b"<![CDATA[" in data or b"<!--" in data:
        return _repaired_by_match(data)
    prolog = prolog_end(data)  # whitespace and processing instructions ("<?xml ...?>")
    if data.find(b"<?", prolog) >= 0:
        return _repaired_by_match(data)
    return _CONTROL_BYTES.sub(b"", data[:prolog]) + _repaired_in_passes(data[prolog:])


def _repaired_in_passes(data: bytes) -> bytes:
    """``repaired`` of data without CDATA sections, comments or processing instructions."""
    data = _STRAY_AMP.sub(b"&#38;", _STRAY_LT.sub(b"&#60;", data))
    if b"&" in data:
        # Every "&" now starts a reference: each XML name is replaced whole.
        for name, numeric in _XML_ENTITY_REFS.items():
            data = data.replace(b"&" + name + b";", numeric)
        data = _UPPER_HEX_REF.sub(b"&#x", _HTML_NAME.sub(_html_entity, data))
        if b"&#" in data:
            data = _SURROGATE_REF.sub(_surrogate_character, data)
    return _CONTROL_BYTES.sub(b"", data)


def _html_entity(match: re.Match[bytes]) -> bytes:
    return _html_entity_bytes(match.group(1))


def _html_entity_bytes(name: bytes) -> bytes:
    """An HTML named entity (not one of XML's own) as its character, or escaped as text
    when HTML has no such name. A character that is markup in XML (``&LT;``, ``&QUOT;``)
    is written as its numeric reference."""
    char = html5.get(name.decode("ascii") + ";")
    if char is None:
        return b"&#38;" + name + b";"
    if char in _MARKUP_CHARACTERS:
        return b"&#%d;" % ord(char)
    return char.encode("utf-8")


def _repaired_by_match(data: bytes) -> bytes:
    def fix(match: re.Match[bytes]) -> bytes:
        kind = match.lastgroup
        if kind == "keep":  # read as written, but for the control characters XML refuses
            return _CONTROL_BYTES.sub(b"", match.group(0))
        if kind == "name":
            name = match.group("name")
            numeric = _XML_ENTITY_REFS.get(name)
            return numeric if numeric is not None else _html_entity_bytes(name)
        if kind == "pair" or kind == "surrogate":
            return _surrogate_character(match)
        if kind == "ref":
            return b"&" + match.group("ref").replace(b"X", b"x")
        if kind == "amp":
            return b"&#38;"
        if kind == "lt":
            return b"&#60;"
        return b""

    return _REPAIR.sub(fix, data)


def prolog_end(data: bytes, end: int | None = None) -> int:
    """Where the whitespace, processing instructions and comments at the start of
    ``data`` (before ``end``) end. One pass: each piece ends at its first end."""
    end = len(data) if end is None else end
    at = 0
    while (piece := _PROLOG_PIECE.match(data, at, end)) is not None:
        at = piece.end()
    return at


def is_rss(data: bytes) -> bool:
    """Whether the document's first element is an RSS root (rss, rdf:RDF, channel)."""
    match = _ROOT_START.match(data, prolog_end(data))
    return match is not None and match.group(1).lower() in _RSS_ROOTS


# What the content of an RSS text element is read as, one token at a time: a CDATA
# section, a comment or a processing instruction (each kept whole: no markup, and no
# tag in it ends the element), a tag (its name, whether it ends an element, what follows
# the name) or any other "<". One pattern for every element name.
_TEXT_TOKEN: Final = re.compile(rb"<(?:" + NO_TAG_AFTER_LT + rb"|" + _TAG_PATTERN + rb"|)", re.S)
# The tokens the same reading finds when it skips every "<" that starts no tag.
_TEXT_TAG_TOKEN: Final = _TAG
# Elements of the RSS structure, never part of a text element's HTML: a text element
# left open ends where one of their tags stands.
_RSS_STRUCTURE: Final = frozenset({b"item", b"channel", b"rss", b"rdf:RDF"})
_END, _OWN_START, _STRUCTURE = "end", "own start", "structure"
# The tokens of a text element's content that are no markup: the parser keeps a CDATA
# section's text and removes comments and processing instructions.
_NO_MARKUP: Final = (b"<![CDATA[", b"<!--", b"<?")


class _TextEnds:
    """Where the content of each RSS text element of one document ends.

    The content ends at the element's end tag, at a start tag of its own name (a
    template that writes ``<title>`` for ``</title>``) or at a tag of the RSS structure
    (``item``, ``channel``), whichever comes first, outside CDATA. Whether any such tag
    follows at all is looked up, not searched for: in a table of where each name's
    tags last stand, built in one pass on first need. A search then always finds its
    end, and the repair goes on from there: every part of the document is read at most
    twice, whatever the number of elements left open or of names.
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._last: dict[bytes, int] | None = None
        self._last_structure = -1

    def _last_of(self, name: bytes) -> int:
        if self._last is None:
            self._last = {}
            for token in _TEXT_TAG_TOKEN.finditer(self.data):
                found = token.group("name")
                if found is None:
                    continue
                if found in _RSS_STRUCTURE:
                    self._last_structure = token.start()
                elif _stop_kind(token, found) is not None:
                    self._last[found] = token.start()
        return max(self._last.get(name, -1), self._last_structure)

    def of(self, name: bytes, at: int) -> tuple[re.Match[bytes] | None, str, bool]:
        """The tag that ends the content of ``name`` starting at ``at`` (``None`` when
        none does), what kind of end it is, and whether markup stands before it outside
        CDATA."""
        data = self.data
        first = data.find(b"<", at)
        if first < 0:
            return None, _END, False
        usual = _TEXT_TOKEN.match(data, first)
        if usual is not None and _stop_kind(usual, name) == _END:
            return usual, _END, False  # the usual content, escaped: its first "<" ends it
        if self._last_of(name) < first:
            return None, _END, False
        has_raw = False
        for found in _TEXT_TOKEN.finditer(data, first):
            kind = _stop_kind(found, name)
            if kind is not None:
                return found, kind, has_raw
            has_raw = has_raw or not found.group(0).startswith(_NO_MARKUP)
        return None, _END, has_raw


def _stop_kind(token: re.Match[bytes], name: bytes) -> str | None:
    """Whether a token ends the content of the RSS text element ``name``, and how."""
    found = token.group("name")
    if found is None:
        return None
    if found in _RSS_STRUCTURE:
        return _STRUCTURE
    if found != name:
        return None
    rest = token.group("rest") or b""
    if token.group("end"):
        return _END if not rest.strip() else None
    return None if rest.endswith(b"/") else _OWN_START


def with_raw_html_as_text(
    data: bytes, *, is_rss: bool, is_thorough: bool = False
) -> tuple[bytes, bool, bool]:
    """The data with raw HTML in text elements escaped as the text it is, RSS text
    elements left open closed, and HTML void tags left open (``<br>``) closed; and
    whether raw HTML was found, and whether a text element was left open.

    Unescaped tags would otherwise make recovery nest the following items inside them.
    In RSS ``description``, ``title`` and any module's ``summary``, ``subtitle``,
    ``description`` and ``encoded`` (``itunes:summary``), any raw markup is escaped
    unless the content is well-formed XML (``_FragmentCheck``: then recovery reads it as
    the strict parse does); comments and processing instructions are no raw markup, and
    are dropped from escaped content as the parser drops them. One left open ends at a
    start tag of its own name (written for its end tag) or at the next tag of the RSS
    structure (see ``_TextEnds``). Any other element whose content
    holds only HTML elements and text, with an open void tag or an element left open
    among them, is escaped too (``podcast:person``, Atom ``content``) unless its content
    is XHTML. Void tags anywhere else are closed where they stand. One pass over the tags:
    an element's content is read at most once more, up to the first feed element in it.
    Other elements are read only where an open void tag stands, or when ``is_thorough``
    (a first recovery nested items inside HTML).
    """
    if is_thorough or _OPEN_VOID.search(data) is not None:
        tags = _TAG
    elif is_rss:
        tags = _RSS_TEXT_TAG
    else:
        return data, False, False
    text_ends = _TextEnds(data)
    is_fragment = _FragmentCheck()
    parts: list[bytes] = []
    done = at = 0
    had_raw = was_open = False
    while (tag := tags.search(data, at)) is not None:
        at = tag.end()
        name, rest = tag.group("name"), tag.group("rest")
        if name is None or tag.group("end") or rest.endswith(b"/"):
            continue
        lowered = name.lower()
        if lowered in _VOID:
            own_end = _OWN_END.match(data, at)
            if own_end is None or own_end.group("name").lower() != lowered:
                parts += data[done : at - 1], b"/>"
                done = at
                had_raw = True
            continue
        if rest and _XHTML_START.search(rest):
            continue  # XHTML markup (an atom:summary in RSS), not HTML source
        if tags is _RSS_TEXT_TAG or (is_rss and _RSS_TEXT.fullmatch(name)):
            stop, kind, has_raw = text_ends.of(name, at)
            if stop is None:
                continue
            end = stop.start()
            if has_raw and kind == _END and is_fragment(data[at:end]):
                has_raw = False  # well-formed: recovery reads it as the strict parse does
            elif kind != _END:  # left open: closed where its content stops
                content = _escaped(data[at:end]) if has_raw else data[at:end]
                parts += data[done:at], content, b"</" + name + b">"
                # A start tag of its own name stood for the end tag: it is replaced.
                done = at = stop.end() if kind == _OWN_START else end
                had_raw, was_open = had_raw or has_raw, True
                continue
        elif lowered in _HTML or name.startswith(b"xhtml:"):
            continue
        else:
            end = _html_content_end(data, name, at)
            has_raw = end >= 0
        if end < 0:
            continue
        if has_raw:
            parts += data[done:at], _escaped(data[at:end])
            done = end
            had_raw = True
        at = end
    if not parts:
        return data, False, False
    parts.append(data[done:])
    return b"".join(parts), had_raw, was_open


def _html_content_end(data: bytes, name: bytes, at: int) -> int:
    """Where the content of the element ``name`` that starts at ``at`` ends, when it is
    HTML source that is no XML: an open void tag, an element left open (``<li>`` without
    ``</li>``) or an end tag of none open; -1 when it is not, or never ends. Reading stops
    at the first tag of no HTML element."""
    is_open = False
    opened: list[bytes] = []
    while (tag := _TAG.search(data, at)) is not None:
        at = tag.end()
        found = tag.group("name")
        if found is None:
            continue
        lowered = found.lower()
        if tag.group("end"):
            if found == name:
                return tag.start() if is_open or opened else -1
            if lowered not in _HTML:
                return -1
            if opened and opened[-1] == lowered:
                opened.pop()
            else:
                is_open = True
        elif lowered not in _HTML:
            return -1
        elif not tag.group("rest").endswith(b"/"):
            if lowered in _VOID:
                is_open = True
            elif not is_open:
                opened.append(lowered)
    return -1


# What stays out of the escaping of raw content: a CDATA section (kept as it is), a
# comment or a processing instruction (removed, as the parser removes them anywhere).
# Each to its end, or to the end of the content when it has none (``tagsyntax``).
_UNESCAPED: Final = re.compile(
    rb"(<" + CDATA_SECTION + rb")|<(?:" + COMMENT + rb"|" + PROCESSING_INSTRUCTION + rb")", re.S
)


def _escaped(content: bytes) -> bytes:
    """Element content with its markup made text; CDATA sections stay as they are,
    comments and processing instructions go."""
    pieces = _UNESCAPED.split(content)
    pieces[::2] = [piece.replace(b"<", b"&#60;").replace(b">", b"&#62;") for piece in pieces[::2]]
    return b"".join(piece for piece in pieces if piece)


# How deep the content of a text element may nest, checked below the elements it stands
# in, so that the document's own nesting limit (256) is not reached by recovery either.
_FRAGMENT_DEPTH: Final = 16


class _FragmentCheck:
    """Whether element content is well-formed XML: the strict parse of the document
    would read it, and recovery, left to read it as elements, reads it the same way
    (comments and processing instructions removed, references decoded once in text and
    kept in child elements as ``names.markup_of`` serializes them). Such content is not
    escaped: escaped, its text would be read as source once more than the strict parse
    reads it. One parser for one document, made on first need."""

    def __init__(self) -> None:
        self._parser: etree.XMLParser | None = None

    def __call__(self, content: bytes) -> bool:
        if self._parser is None:
            self._parser = etree.XMLParser(
                resolve_entities=False,
                load_dtd=False,
                no_network=True,
                huge_tree=False,
                remove_comments=True,
                remove_pis=True,
            )
        wrapped = b"<x>" * _FRAGMENT_DEPTH + content + b"</x>" * _FRAGMENT_DEPTH
        try:
            etree.fromstring(wrapped, self._parser)
        except etree.XMLSyntaxError:
            return False
        return True
