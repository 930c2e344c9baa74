"""The one hardened XML parser, and the leniency that real feeds need.

Hardening: no DTD is loaded, no entity is resolved, no network is used, libxml2's own
limits stay on (nesting depth 256, 10 MB per text node) and the number of tags is
bounded before parsing. A DOCTYPE is removed before the parser sees it, so that no
entity it declares is ever expanded (billion laughs, quadratic blowup); declared
entities are reported with ``doctype_ignored`` and their references stay literal text.

Leniency: text or HTML before the XML (a server's warning) is skipped. A document is
first parsed strictly. When that fails it is repaired (stray ``&`` and ``<`` escaped,
as is the ``<`` of an address in angle brackets, ``<jane@example.org>``; HTML named
entities made character references, control characters removed, raw HTML in text
elements escaped, open HTML void tags closed) and parsed again in recovery mode — reported as
``xml_recovered``; when recovery meets an end tag of another name than the element open
there, the end tags are balanced (``endtags``) and the data read again. A document that
breaks off keeps the items that were complete before the break; one of which recovery
read fewer items than it opens is reported as read in part, never silently.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue
from tap_feeddelta.parse.endtags import (
    element_count,
    root_end,
    with_depth_bounded,
    with_end_tags_balanced,
)
from tap_feeddelta.parse.limits import MAX_ITEMS_READ, MAX_XML_DEPTH
from tap_feeddelta.parse.names import TagKey
from tap_feeddelta.parse.repair import (
    is_rss,
    prolog_end,
    repaired,
    with_addresses_as_text,
    with_raw_html_as_text,
)
from tap_feeddelta.parse.tagsyntax import ANY_PREFIX, LOCAL_NAME, NO_TAG_AFTER_LT
from tap_feeddelta.parse.urls import safe_url, safe_url_before

MAX_MARKUP_TAGS: Final = 1_000_000  # "<" characters in one document
_TOO_MANY_TAGS: Final = Issue(
    "limit_exceeded", "The document has too many tags; the rest was not read."
)
_DOCTYPE: Final = re.compile(rb"<!DOCTYPE[^\[>]*(?:\[.*?\]\s*)?>", re.S)
_LEADING_JUNK: Final = re.compile(rb"<\?xml|<rss|<feed|<rdf:RDF|<RDF|<channel")
# An XML declaration after other markup: "<?xml-stylesheet" and the like are no declaration.
_LATE_DECLARATION: Final = re.compile(rb"<\?xml\s")
# How far past leading whitespace the start of the XML is looked for (sniff agrees).
JUNK_SEARCH_BYTES: Final = 4096
_TRUNCATED_ERRORS: Final = frozenset({77})  # XML_ERR_TAG_NOT_FINISHED: EOF inside an element
# Possessive: each piece ends at its first end, and a piece once read is never read
# again (a repeated group of lazy pieces may otherwise backtrack into them).
_TRAILING_MISC_REVERSED: Final = re.compile(rb"(?:\s|>--.*?--!<|>\?.*?\?<)*+", re.S)
_EXTRA_CONTENT_ERROR: Final = 5  # XML_ERR_DOCUMENT_END: the root was closed, text followed
# The root's end tag at the end of the data; without its ">" it still closes all content.
_END_TAG_AT_END: Final = re.compile(rb"</" + ANY_PREFIX + rb"(?P<name>" + LOCAL_NAME + rb")\s*>?\Z")
_XML_BASE: Final = "{http://www.w3.org/XML/1998/namespace}base"
_LIMIT_ERRORS: Final = frozenset({114, 1})  # XML_ERR_RESOURCE_LIMIT, XML_ERR_INTERNAL_ERROR
_TAG_NAME_MISMATCH: Final = 76  # XML_ERR_TAG_NAME_MISMATCH: recovery closed some element there


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


# Each thread's parsers, strict and recovering. lxml's parsers may read one document
# after another, but in one thread at a time; making one costs a tenth of a small
# document's whole parse.
_THREAD_PARSERS: Final = threading.local()


def _parser(*, recover: bool) -> etree.XMLParser:
    """This thread's parser; its ``error_log`` is the last document's."""
    parsers: dict[bool, etree.XMLParser] | None = getattr(_THREAD_PARSERS, "parsers", None)
    if parsers is None:
        parsers = _THREAD_PARSERS.parsers = {}
    parser = parsers.get(recover)
    if parser is None:
        parser = parsers[recover] = _new_parser(recover=recover)
    return parser


def _new_parser(*, recover: bool) -> etree.XMLParser:
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
    if at < 0 or prolog_end(data, at) != at:
        return data
    match = _DOCTYPE.match(data, at)
    if match is None:
        return data  # unterminated: the parser fails on it and recovery takes over
    if b"<!ENTITY" in match.group(0):
        issues.append(Issue("doctype_ignored", "Entities declared in a DOCTYPE are not expanded."))
    return data[:at] + data[match.end() :]


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
    issues.append(_TOO_MANY_TAGS)
    return data[:at], True


def cut_short(issues: list[Issue], first: str) -> str:
    """Why a document read in part holds not even its ``first`` item (or entry)."""
    if _TOO_MANY_TAGS in issues:
        return f"The document has more than {MAX_MARKUP_TAGS:,} tags before its first {first}."
    if _NESTED_AWAY in issues:
        return f"Recovery nested the first {first} inside a malformed element."
    if _LEFT_OUT in issues:
        return f"Recovery read the document only up to its first {first}."
    return f"The document breaks off before its first {first}."


def _without_leading_junk(data: bytes, issues: list[Issue]) -> bytes:
    """The data from where the XML starts: text or HTML (a server's warning) that comes
    before it is skipped and reported. Raises ``XmlUnreadable`` when no XML starts."""
    if data.startswith(b"<?xml"):
        return data  # the usual start
    if data.startswith(b"<"):
        declaration = _LATE_DECLARATION.search(data, 1, JUNK_SEARCH_BYTES)
        if declaration is None or not is_junk(data[: declaration.start()]):
            return data
        start = declaration.start()
    else:
        junk = _LEADING_JUNK.search(data, 0, JUNK_SEARCH_BYTES)
        if junk is None:
            raise XmlUnreadable("no markup")
        start = junk.start()
    issues.append(Issue("xml_recovered", "Text before the XML was skipped."))
    return data[start:]


def is_junk(before_declaration: bytes) -> bool:
    """Whether markup before a late XML declaration is no part of the document: it opens
    no feed root, comment or CDATA section that the declaration could be inside."""
    return (
        _LEADING_JUNK.search(before_declaration) is None
        and b"<![CDATA[" not in before_declaration
        and before_declaration.count(b"<!--") <= before_declaration.count(b"-->")
    )


def _recovered(data: bytes, issues: list[Issue]) -> tuple[etree._Element, bytes, set[int]]:
    """The root read by recovery after the repairs, the repaired data and the types of
    the errors recovery met. Raises ``XmlUnreadable``.

    The repairs read only the elements HTML is usually written in; when recovery still
    nested an item (or entry) inside another element (raw HTML left open in an element
    of some other name), the data is repaired once more reading every element, and read
    again. When recovery met an end tag of another name than the element open there, the
    end tags are balanced (``with_end_tags_balanced``) and the data read once more."""
    rss = is_rss(data)
    data = with_addresses_as_text(data)  # before any tag finder reads the data
    found = _repaired_and_read(data, rss, is_thorough=False)
    if found is None:
        raise XmlUnreadable("unreadable XML")
    if _has_nested_item(found[0]):
        found = _repaired_and_read(data, rss, is_thorough=True) or found
    root, fixed, errors, had_markup, was_open = found
    if _TAG_NAME_MISMATCH in errors and (balanced := with_end_tags_balanced(fixed)) is not fixed:
        read = _read(balanced)
        if read is not None:
            (root, errors), fixed = read, balanced
    if had_markup:
        issues.append(Issue("xml_recovered", "Unescaped HTML in feed text was read."))
    if was_open:
        issues.append(Issue("xml_recovered", "A text element left open was closed."))
    return root, fixed, errors


def _repaired_and_read(
    data: bytes, rss: bool, *, is_thorough: bool
) -> tuple[etree._Element, bytes, set[int], bool, bool] | None:
    """The repaired data read by recovery: its root, the data, the error types, and
    whether raw HTML was escaped and a text element closed; ``None`` when no element."""
    fixed, had_markup, was_open = with_raw_html_as_text(data, is_rss=rss, is_thorough=is_thorough)
    fixed = repaired(fixed)
    read = _read(fixed)
    if read is None:
        return None
    return read[0], fixed, read[1], had_markup, was_open


def _read(fixed: bytes) -> tuple[etree._Element, set[int]] | None:
    """The root recovery reads in repaired data and the types of the errors it met;
    ``None`` when no element."""
    parser = _parser(recover=True)
    try:
        root = etree.fromstring(fixed, parser)
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    return root, {error.type for error in parser.error_log}


def _has_nested_item(root: etree._Element) -> bool:
    """Whether an item or entry stands inside an element other than the root or a
    channel: in one that recovery left open."""
    for element in root.iter("{*}item", "{*}entry"):
        parent = element.getparent()
        if parent is not None and parent is not root and _local_name(parent) != "channel":
            return True
    return False


_FLATTENED: Final = Issue(
    "limit_exceeded",
    f"Markup nested more than {MAX_XML_DEPTH} elements deep was read without its inner tags.",
)


def _strict(data: bytes) -> etree._Element | None:
    try:
        return etree.fromstring(data, _parser(recover=False))
    except etree.XMLSyntaxError:
        return None


def xml_document(data: bytes) -> XmlDocument:
    """The parsed document (``data`` is UTF-8). Raises ``XmlUnreadable``."""
    issues: list[Issue] = []
    data = _without_leading_junk(data.lstrip(), issues)
    if b"<!DOCTYPE" in data:
        data = _without_doctype(data, issues)
    data, is_cut = _bounded(data, issues)
    root = None
    is_flattened = False
    if not is_cut:
        parser = _parser(recover=False)
        try:
            root = etree.fromstring(data, parser)
        except etree.XMLSyntaxError:
            is_limit = any(error.type in _LIMIT_ERRORS for error in parser.error_log)
            if is_limit and (flat := with_depth_bounded(data, MAX_XML_DEPTH)):
                data, is_flattened = flat, True
                issues.append(_FLATTENED)
                root = _strict(data)
    is_truncated = is_limited = is_recovered = False
    if root is None:
        root, fixed, error_types = _recovered(data, issues)
        if error_types & _LIMIT_ERRORS and not is_flattened:
            flat = with_depth_bounded(fixed, MAX_XML_DEPTH)
            read = None if flat is None else _read(flat)
            if flat is not None and read is not None:
                (root, error_types), fixed = read, flat
                issues.append(_FLATTENED)
        is_recovered = True
        is_limited = bool(error_types & _LIMIT_ERRORS)
        is_truncated = is_cut or is_limited or _breaks_off(fixed, root, error_types)
        issues.append(Issue("xml_recovered", "Malformed XML was read by recovery."))
        if is_limited and not is_cut:
            issues.append(Issue("limit_exceeded", "A parser limit cut the document."))
        elif is_truncated and not is_cut:
            issues.append(Issue("document_truncated", "The document breaks off."))
        data = fixed
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


_TAGS_OF: dict[tuple[str, bool], re.Pattern[bytes]] = {}


def complete_count(data: bytes, local_name: str) -> int:
    """How many elements named ``local_name`` (any prefix) are closed in ``data``."""
    return _tag_count(data, local_name, is_end=True)


def _tag_count(data: bytes, local_name: str, *, is_end: bool) -> int:
    """How many end (or start) tags named ``local_name`` (any prefix) ``data`` holds
    outside CDATA sections, comments and processing instructions."""
    pattern = _tags_of(local_name, is_end=is_end)
    return sum(1 for found in pattern.finditer(data) if found.lastgroup == "tag")


def _tags_of(local_name: str, *, is_end: bool) -> re.Pattern[bytes]:
    """Finds the end (or start) tags named ``local_name`` (any prefix) in its "tag"
    group, and skips CDATA sections, comments and processing instructions whole."""
    pattern = _TAGS_OF.get((local_name, is_end))
    if pattern is None:
        name = ANY_PREFIX + re.escape(local_name.encode())
        tag = rb"/" + name + rb"\s*>" if is_end else name + rb"(?=[\s/>])"
        pattern = re.compile(
            rb"<(?:" + NO_TAG_AFTER_LT + rb"|(?P<tag>" + tag + rb"))",
            re.S,
        )
        _TAGS_OF[(local_name, is_end)] = pattern
    return pattern


# The base URL in effect at an element as read now, and as versions before this one read
# it (see urls.safe_url_readings): one per element an xml:base applies on.
Bases = tuple[str | None, str | None]


def base_of(
    element: etree._Element,
    document_url: str | None,
    issues: list[Issue],
    known: dict[etree._Element, Bases],
) -> str | None:
    """The base URL in effect at ``element`` (``bases_of``, as read now)."""
    return bases_of(element, document_url, issues, known)[0]


def bases_of(
    element: etree._Element,
    document_url: str | None,
    issues: list[Issue],
    known: dict[etree._Element, Bases],
) -> Bases:
    """The base URL in effect at ``element``, as read now and as versions before read
    it: each ``xml:base`` from the root down, resolved on the base above it
    (``child_bases``). For the feed and its items.

    ``known`` keeps the bases found for each element, for one document: the items of one
    parent resolve its chain once. (lxml's ``element.base`` rebuilt the whole chain for
    every item, a join of bases that may each be megabytes long.)"""
    if element in known:
        return known[element]
    parent = element.getparent()
    if parent is None:
        outer: Bases = (document_url, document_url)
    else:
        outer = bases_of(parent, document_url, issues, known)
    found = known[element] = child_bases(element, *outer, issues)
    return found


_BASE_TOO_LONG: Final = Issue("url_too_long", "An xml:base URL is over 2 KiB; ignored.")


def child_base(element: etree._Element, parent_base: str | None, issues: list[Issue]) -> str | None:
    """The base URL in effect at ``element`` inside an element whose base is already
    resolved: only the element's own ``xml:base`` applies on top of it. One longer than
    a URL may be is ignored before any resolution, and reported."""
    own = element.get(_XML_BASE)
    if not own:
        return parent_base
    found, problem = safe_url(own, parent_base)
    if problem == "url_too_long":
        issues.append(_BASE_TOO_LONG)
    return found or parent_base


def child_bases(
    element: etree._Element, parent_base: str | None, parent_before: str | None, issues: list[Issue]
) -> Bases:
    """``child_base``, with the base as versions before read it (``parent_before``: the
    parent's as they read it)."""
    own = element.get(_XML_BASE)
    if not own:
        return parent_base, parent_before
    found, problem = safe_url(own, parent_base)
    if problem == "url_too_long":
        issues.append(_BASE_TOO_LONG)
    before, _ = safe_url_before(own, parent_before)  # once an element: no need to spare it
    return found or parent_base, before or parent_before


_NESTED_AWAY: Final = Issue(
    "document_truncated",
    "Recovery nested the items after a malformed element inside it; they were not read.",
)
_LEFT_OUT: Final = Issue(
    "document_truncated",
    "Recovery read fewer items than the document holds; the last one read may be "
    "incomplete and was left out with them.",
)
_NOT_READ: Final = Issue(
    "document_truncated",
    "Recovery read fewer items than the document holds; those after the last one read "
    "were not read.",
)


def kept_items(
    doc: XmlDocument,
    items: list[etree._Element],
    key: TagKey,
    local_name: str,
    parents: tuple[etree._Element, ...],
    issues: list[Issue],
) -> tuple[list[etree._Element], bool]:
    """The items read in full, and whether the document was read in part: it broke off,
    a limit cut it, recovery nested items (``key`` gives ``local_name``) inside an
    element other than ``parents`` (a malformed element left open swallowed them),
    recovery moved items out of their parent into the root (it ended an RSS channel
    early: more items stand beside the channels than the data writes outside them), or
    fewer items were read than the data opens before the root's end (recovery ended the
    root early). ``items`` are all those of ``parents``, in document order, up to the
    reading limit. The items before the one that holds or precedes the lost ones (before
    the last one read, unless that one is complete) are kept, and the loss reported in
    ``issues``."""
    if doc.is_limited:
        return items[:-1], True
    if doc.is_truncated:
        return items[: complete_count(doc.data, local_name)], True
    if doc.is_recovered:
        in_tree: list[etree._Element] = []  # elements of that local name
        for element in doc.root.iter("{*}" + local_name):
            in_tree.append(element)
            if key[element.tag] == local_name and element.getparent() not in parents:
                issues.append(_NESTED_AWAY)
                return items[: _count_before(items, element, parents)], True
        # Every start tag makes an element (a malformed one an empty element), and below
        # the reading limit every item in place is read: anything less is a loss. Start
        # tags after the root's end (a document output twice, a cache's fragment) are
        # none: recovery reads nothing there.
        moved_from = _first_moved(doc, items, parents, local_name)
        opened = _tag_starts(doc.data, local_name)
        if moved_from is not None or len(in_tree) < len(opened):
            end = root_end(doc.data)
            opened = [at for at in opened if at < end]
            if len(in_tree) < len(opened):
                # Elements of that local name with a prefix no namespace is declared
                # for: recovery keeps the prefix in their name ("x:item").
                in_tree = [el for el in doc.root.iter() if _local_name(el) == local_name]
            if moved_from is not None or len(in_tree) < len(opened):
                if moved_from is not None:
                    items = items[:moved_from]
                if items and _is_complete(doc.data, items[-1], in_tree, opened, end):
                    issues.append(_NOT_READ)
                    return items, True
                issues.append(_LEFT_OUT)
                return items[:-1], True
    return items, False


def _first_moved(
    doc: XmlDocument, items: list[etree._Element], parents: tuple[etree._Element, ...], name: str
) -> int | None:
    """Where in ``items`` the first one stands that recovery may have moved out of its
    parent into the root (it ended an RSS channel early, inside an item): ``None`` unless
    more items stand in the root, beside other parents, than the data writes outside
    those parents. The moved ones follow the items of the parent they left."""
    root = doc.root
    others = [parent for parent in parents if parent is not root]
    if not others or len(items) >= MAX_ITEMS_READ:
        return None
    beside = [at for at, element in enumerate(items) if element.getparent() is root]
    if not beside or len(beside) <= _written_outside(doc.data, name, _local_name(others[0])):
        return None
    return next(
        (at for at in beside if at > 0 and items[at - 1].getparent() is not root), beside[0]
    )


def _written_outside(data: bytes, name: str, parent_name: str) -> int:
    """How many start tags named ``name`` (any prefix) ``data`` writes outside the
    elements named ``parent_name``: before the first of their start tags, between one's
    end tag and the next start tag, after the last end tag."""
    events = sorted(
        [(at, 1) for at in _tag_starts(data, parent_name)]
        + [
            (found.start(), -1)
            for found in _tags_of(parent_name, is_end=True).finditer(data)
            if found.lastgroup == "tag"
        ]
        + [(at, 0) for at in _tag_starts(data, name)]
    )
    depth = count = 0
    for _, step in events:
        if step == 0:
            count += depth == 0
        else:
            depth = max(depth + step, 0)
    return count


def _tag_starts(data: bytes, local_name: str) -> list[int]:
    """Where the start tags named ``local_name`` (any prefix) stand in ``data``."""
    return [
        found.start()
        for found in _tags_of(local_name, is_end=False).finditer(data)
        if found.lastgroup == "tag"
    ]


def _is_complete(
    data: bytes,
    last: etree._Element,
    in_tree: list[etree._Element],
    opened: list[int],
    end: int,
) -> bool:
    """Whether recovery read the item ``last`` whole: every element written from its start
    tag to the next item's start tag (or the root's ``end``) is in it. (An end tag
    recovery took for the item's, a stray one the balancing left in it, sent the rest of
    its content to its parent or further out.) Its start tag is the one of its place among
    ``in_tree`` in ``opened``: recovery made elements of the first start tags, and those it
    made none of follow (it ended the root or left an attribute value open before them);
    were it otherwise, the elements written would not be the ones in it."""
    index = next(at for at, element in enumerate(in_tree) if element is last)
    if index >= len(opened):
        return False
    limit = opened[index + 1] if index + 1 < len(opened) else end
    return element_count(data, opened[index], limit) == sum(1 for _ in last.iter(etree.Element))


def _count_before(
    items: list[etree._Element], nested: etree._Element, parents: tuple[etree._Element, ...]
) -> int:
    """How many of ``items`` (children of ``parents``, in document order) come before the
    child of one of ``parents`` that holds ``nested``; all of them when none does."""
    holder = nested
    while (parent := holder.getparent()) is not None and parent not in parents:
        holder = parent
    if parent is None:
        return len(items)
    read = set(items)
    count = 0
    for element in holder.getroottree().getroot().iter():
        if element is holder:
            break
        count += element in read
    return count
