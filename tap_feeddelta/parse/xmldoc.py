"""The one hardened XML parser, and the leniency that real feeds need.

Hardening: no DTD is loaded, no entity is resolved, no network is used, libxml2's own
limits stay on (nesting depth 256, 10 MB per text node) and the number of tags is
bounded before parsing. A DOCTYPE is removed before the parser sees it, so that no
entity it declares is ever expanded (billion laughs, quadratic blowup); declared
entities are reported with ``doctype_ignored`` and their references stay literal text.

Leniency: text or HTML before the XML (a server's warning) is skipped. A document is
first parsed strictly. When that fails it is repaired (stray ``&`` and ``<`` escaped,
HTML named entities made character references, control characters removed, raw HTML in
RSS text elements escaped) and parsed again in recovery mode — reported as
``xml_recovered``. A document that breaks off keeps the items that were complete before
the break.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.entities import html5
from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue
from tap_feeddelta.parse.urls import safe_base

MAX_MARKUP_TAGS: Final = 1_000_000  # "<" characters in one document
_XML_ENTITIES: Final = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})
_PROLOG_TO_DOCTYPE: Final = re.compile(rb"(?:\s|<\?.*?\?>|<!--.*?-->)*", re.S)
_DOCTYPE: Final = re.compile(rb"<!DOCTYPE[^\[>]*(?:\[.*?\]\s*)?>", re.S)
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
_LEADING_JUNK: Final = re.compile(rb"<\?xml|<rss|<feed|<rdf:RDF|<RDF|<channel")
# An XML declaration after other markup: "<?xml-stylesheet" and the like are no declaration.
_LATE_DECLARATION: Final = re.compile(rb"<\?xml\s")
# How far past leading whitespace the start of the XML is looked for (sniff agrees).
JUNK_SEARCH_BYTES: Final = 4096
_TRUNCATED_ERRORS: Final = frozenset({77})  # XML_ERR_TAG_NOT_FINISHED: EOF inside an element
_TRAILING_MISC_REVERSED: Final = re.compile(rb"(?:\s|>--.*?--!<|>\?.*?\?<)*", re.S)
_EXTRA_CONTENT_ERROR: Final = 5  # XML_ERR_DOCUMENT_END: the root was closed, text followed
# The root's end tag at the end of the data; without its ">" it still closes all content.
_END_TAG_AT_END: Final = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?(?P<name>[A-Za-z_][\w.-]*)\s*>?\Z")
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
_XML_BASE: Final = "{http://www.w3.org/XML/1998/namespace}base"
_LIMIT_ERRORS: Final = frozenset({114, 1})  # XML_ERR_RESOURCE_LIMIT, XML_ERR_INTERNAL_ERROR


class XmlUnreadable(Exception):  # noqa: N818 -- internal signal, mapped to ParseError
    """The bytes hold no XML element at all."""


@dataclass(slots=True)
class XmlDocument:
    root: etree._Element
    issues: list[Issue]
    is_recovered: bool
    is_truncated: bool  # the document broke off or a limit cut it
    is_limited: bool  # a libxml2 limit stopped reading: the last item read is incomplete
    has_xml_base: bool
    data: bytes


def _parser(*, recover: bool) -> etree.XMLParser:
    return etree.XMLParser(
        encoding="utf-8",
        recover=recover,
        resolve_entities=False,
        load_dtd=False,
        dtd_validation=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        strip_cdata=True,
        collect_ids=False,
    )


def _without_doctype(data: bytes, issues: list[Issue]) -> bytes:
    at = data.find(b"<!DOCTYPE")
    if at < 0 or not _PROLOG_TO_DOCTYPE.fullmatch(data, 0, at):
        return data
    match = _DOCTYPE.match(data, at)
    if match is None:
        return data  # unterminated: the parser fails on it and recovery takes over
    if b"<!ENTITY" in match.group(0):
        issues.append(Issue("doctype_ignored", "Entities declared in a DOCTYPE are not expanded."))
    return data[:at] + data[match.end() :]


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


def _repaired(data: bytes) -> bytes:
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


def _is_rss(data: bytes) -> bool:
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


def _with_rss_markup_as_text(data: bytes) -> tuple[bytes, bool]:
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


def _content_end(data: bytes) -> int:
    """Where the data ends without the whitespace, comments and PIs that may follow the
    root. Read backwards (one pass over the reversed data): a comment reversed is
    ``>-- ... --!<``."""
    trailing = _TRAILING_MISC_REVERSED.match(data[::-1])
    return len(data) - (trailing.end() if trailing else 0)


def _breaks_off(data: bytes, root: etree._Element, error_types: set[int]) -> bool:
    """Whether a recovered document ended before its root element was closed.

    libxml2 names only some of the ways a document can break off (inside a tag, an
    attribute or a CDATA section it reports other errors), so the end of the data is
    checked too. Text after a closed root is reported as extra content: no break.
    """
    if error_types & _TRUNCATED_ERRORS:
        return True
    if _EXTRA_CONTENT_ERROR in error_types:
        return False
    content_end = _content_end(data)
    end = _END_TAG_AT_END.search(data, max(0, content_end - 512), content_end)
    return end is None or end.group("name").decode("utf-8", "replace") != _local_name(root)


def _local_name(element: etree._Element) -> str:
    tag = element.tag
    return tag.rpartition("}")[2].rpartition(":")[2] if isinstance(tag, str) else ""


def _bounded(data: bytes, issues: list[Issue]) -> tuple[bytes, bool]:
    # A document no longer than the bound cannot exceed it: no need to count.
    if len(data) <= MAX_MARKUP_TAGS or data.count(b"<") <= MAX_MARKUP_TAGS:
        return data, False
    at = -1
    for _ in range(MAX_MARKUP_TAGS):
        at = data.find(b"<", at + 1)
    issues.append(Issue("limit_exceeded", "The document has too many tags; the rest was not read."))
    return data[:at], True


def _without_leading_junk(data: bytes, issues: list[Issue]) -> bytes:
    """The data from where the XML starts: text or HTML (a server's warning) that comes
    before it is skipped and reported. Raises ``XmlUnreadable`` when no XML starts."""
    if data.startswith(b"<?xml"):
        return data  # the usual start
    if data.startswith(b"<"):
        declaration = _LATE_DECLARATION.search(data, 1, JUNK_SEARCH_BYTES)
        if declaration is None or not _is_junk(data[: declaration.start()]):
            return data
        start = declaration.start()
    else:
        junk = _LEADING_JUNK.search(data, 0, JUNK_SEARCH_BYTES)
        if junk is None:
            raise XmlUnreadable("no markup")
        start = junk.start()
    issues.append(Issue("xml_recovered", "Text before the XML was skipped."))
    return data[start:]


def _is_junk(before_declaration: bytes) -> bool:
    """Whether markup before a late XML declaration is no part of the document: it opens
    no feed root, comment or CDATA section that the declaration could be inside."""
    return (
        _LEADING_JUNK.search(before_declaration) is None
        and b"<![CDATA[" not in before_declaration
        and before_declaration.count(b"<!--") <= before_declaration.count(b"-->")
    )


def xml_document(data: bytes) -> XmlDocument:
    """The parsed document (``data`` is UTF-8). Raises ``XmlUnreadable``."""
    issues: list[Issue] = []
    data = _without_leading_junk(data.lstrip(), issues)
    if b"<!DOCTYPE" in data:
        data = _without_doctype(data, issues)
    data, is_cut = _bounded(data, issues)
    root = None
    if not is_cut:
        try:
            root = etree.fromstring(data, _parser(recover=False))
        except etree.XMLSyntaxError:
            root = None
    is_truncated = is_limited = is_recovered = False
    if root is None:
        parser = _parser(recover=True)
        repaired = data
        if _is_rss(data):
            repaired, had_markup = _with_rss_markup_as_text(data)
            if had_markup:
                issues.append(Issue("xml_recovered", "Unescaped HTML in RSS text was read."))
        repaired = _repaired(repaired)
        try:
            root = etree.fromstring(repaired, parser)
        except etree.XMLSyntaxError as exc:
            raise XmlUnreadable("unreadable XML") from exc
        if root is None:
            raise XmlUnreadable("no element")
        is_recovered = True
        error_types = {error.type for error in parser.error_log}
        is_limited = bool(error_types & _LIMIT_ERRORS)
        is_truncated = is_cut or is_limited or _breaks_off(repaired, root, error_types)
        issues.append(Issue("xml_recovered", "Malformed XML was read by recovery."))
        if is_limited and not is_cut:
            issues.append(Issue("limit_exceeded", "A parser limit cut the document."))
        elif is_truncated and not is_cut:
            issues.append(Issue("document_truncated", "The document breaks off."))
        data = repaired
    if root.getroottree().docinfo.internalDTD is not None:
        # A DOCTYPE the removal did not catch: never let its entities be serialized.
        raise XmlUnreadable("unexpected DOCTYPE")
    return XmlDocument(
        root=root,
        issues=issues,
        is_recovered=is_recovered,
        is_truncated=is_truncated,
        is_limited=is_limited,
        has_xml_base=b"xml:base" in data,
        data=data,
    )


_CLOSING: dict[str, re.Pattern[bytes]] = {}


def complete_count(data: bytes, local_name: str) -> int:
    """How many elements named ``local_name`` (any prefix) are closed in ``data``."""
    pattern = _CLOSING.get(local_name)
    if pattern is None:
        pattern = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?" + local_name.encode() + rb"\s*>")
        _CLOSING[local_name] = pattern
    return sum(1 for _ in pattern.finditer(data))


def base_of(element: etree._Element, document_url: str | None) -> str | None:
    """The base URL in effect at ``element``: its whole ``xml:base`` chain (lxml joins
    the ancestors' bases) resolved against the document URL. For the feed and its items."""
    base = element.base
    return safe_base(base, document_url) if base else document_url


def child_base(element: etree._Element, parent_base: str | None) -> str | None:
    """The base URL in effect at ``element`` inside an item whose base is already
    resolved: only the element's own ``xml:base`` applies on top of it."""
    own = element.get(_XML_BASE)
    return safe_base(own, parent_base) if own else parent_base


def kept_items(
    doc: XmlDocument, items: list[etree._Element], local_name: str
) -> list[etree._Element]:
    """The items read in full from a document that broke off or was cut by a limit."""
    if doc.is_limited:
        return items[:-1]
    if doc.is_truncated:
        return items[: complete_count(doc.data, local_name)]
    return items
