"""Atom 1.0 and 0.3: text constructs (text, html, xhtml; 0.3 ``mode``), links, persons."""

from __future__ import annotations

import base64
import binascii
from typing import cast

from lxml import etree

from tap_feeddelta.errors import Issue, ParseError
from tap_feeddelta.models import Author, Enclosure, FeedFormat, ParsedFeed, ParsedItem
from tap_feeddelta.parse import fields, itemurls
from tap_feeddelta.parse.aliases import with_reading_without_aliases
from tap_feeddelta.parse.budget import within_url_budget
from tap_feeddelta.parse.limits import MAX_ITEMS_READ, MAX_RAW_TEXT_CHARS
from tap_feeddelta.parse.markup import TextKind
from tap_feeddelta.parse.media import fallback_title, media_enclosures, media_tags, media_text
from tap_feeddelta.parse.names import (
    ATOM_HOME,
    XML_LANG,
    TagKey,
    link_relation,
    markup_of,
    tag_keys,
    text_of,
)
from tap_feeddelta.parse.persons import person
from tap_feeddelta.parse.urls import safe_url_before
from tap_feeddelta.parse.xmldoc import (
    Bases,
    XmlDocument,
    bases_of,
    child_base,
    child_bases,
    cut_short,
    kept_items,
)

ATOM_03 = "http://purl.org/atom/ns#"

_HTML_TYPES = frozenset({"html", "text/html"})
_XHTML_TYPES = frozenset({"xhtml", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"", "text", "text/plain"})
_KNOWN_TYPES = _TEXT_TYPES | _HTML_TYPES | _XHTML_TYPES
_PAGE_TYPES = frozenset({"", "text/html", "application/xhtml+xml"})


def _is_page_type(media_type: str | None) -> bool:
    """Whether an alternate link of this type is a web page (an untyped one is), which
    readers prefer to other representations (a JSON or Atom version of the entry)."""
    if media_type is None:
        return True
    return media_type.partition(";")[0].strip().lower() in _PAGE_TYPES


def atom_format(root: etree._Element) -> FeedFormat:
    if root.tag == f"{{{ATOM_03}}}feed" or (root.get("version") or "").strip() == "0.3":
        return "atom-0.3"
    return "atom-1.0"


def _construct(element: etree._Element) -> tuple[str | None, TextKind]:
    """The source text of an Atom text construct (or content) and how to read it."""
    attributes = element.items()
    if not attributes:  # the usual title: plain text
        return (text_of(element), "text") if not len(element) else _construct_of(element, "", "")
    if len(attributes) == 1 and attributes[0][0] == "type":
        kind = cast("str", attributes[0][1]).strip().lower()  # lxml gives str values
        if kind in _HTML_TYPES and not len(element):  # the usual summary: escaped HTML
            return markup_of(element, is_text_markup=True), "html"
        return _construct_of(element, kind, "")
    raw_kind = element.get("type")
    raw_mode = element.get("mode")
    return _construct_of(
        element,
        raw_kind.strip().lower() if raw_kind else "",
        raw_mode.strip().lower() if raw_mode else "",
    )


def _construct_of(element: etree._Element, kind: str, mode: str) -> tuple[str | None, TextKind]:
    """``_construct`` given the construct's ``type`` and ``mode`` (lowercase, stripped)."""
    if element.get("src") is not None and not len(element) and not element.text:
        return None, "text"
    if mode == "base64" or (
        kind
        and kind not in _KNOWN_TYPES
        and not kind.startswith("text/")
        and not kind.endswith("+xml")
        and not kind.endswith("/xml")
    ):
        if kind == "multipart/alternative" and mode != "base64":
            return _alternative(element)
        if mode != "base64":
            return None, "text"  # binary content (an image): no words
        try:
            decoded = base64.b64decode(text_of(element)[:MAX_RAW_TEXT_CHARS], validate=False)
            return decoded.decode("utf-8", "replace"), "html" if kind in _HTML_TYPES else "text"
        except (binascii.Error, ValueError):
            return None, "text"
    if kind in _XHTML_TYPES or mode == "xml":
        holder = element
        if len(element) == 1 and not (element.text or "").strip():
            only = element[0]
            if isinstance(only.tag, str) and only.tag.rpartition("}")[2] == "div":
                holder = only
        return markup_of(holder, is_text_markup=False), "html"
    if kind in _HTML_TYPES or mode == "escaped" or len(element):
        return markup_of(element, is_text_markup=True), "html"
    return text_of(element), "text"


def _is_blank(construct: tuple[str | None, TextKind] | None) -> bool:
    """Whether a text construct read so far is none, or empty: a later one may replace it."""
    return construct is None or not (construct[0] or "").strip()


def _alternative(element: etree._Element) -> tuple[str | None, TextKind]:
    """Atom 0.3 ``multipart/alternative`` content: its first HTML or XHTML ``content``
    part, else its first text part; other parts (an image) have no words."""
    text_part = None
    for part in element:
        if not isinstance(part.tag, str) or part.tag.rpartition("}")[2] != "content":
            continue
        kind = (part.get("type") or "").strip().lower()
        if kind in _HTML_TYPES or kind in _XHTML_TYPES:
            return _construct(part)
        if text_part is None and kind in _TEXT_TYPES:
            text_part = part
    return (None, "text") if text_part is None else _construct(text_part)


def atom_feed(
    doc: XmlDocument, feed_format: FeedFormat, url: str, *, url_budget_bytes: int | None
) -> ParsedFeed:
    root = doc.root
    namespace = root.tag[1:].partition("}")[0] if root.tag.startswith("{") else ""
    key = tag_keys(ATOM_HOME | {namespace}, root)
    issues = list(doc.issues)
    # The bases of the elements an xml:base applies on: None when the document has none.
    known_bases: dict[etree._Element, Bases] | None = {} if doc.has_xml_base else None
    bases = (url, url) if known_bases is None else bases_of(root, url, issues, known_bases)
    base = bases[0]
    entries: list[etree._Element] = []
    has_more = False
    values: dict[str, tuple[str | None, TextKind]] = {}
    link: str | None = None
    link_is_page = False  # an alternate link to a web page, which no later one replaces
    authors: list[Author] = []
    authors_before: list[Author] = []  # as versions before read them (their URLs)
    for child in root:
        name = key[child.tag]
        if name == "entry":
            if len(entries) == MAX_ITEMS_READ:
                has_more = True
            else:
                entries.append(child)
        elif name == "title" and _is_blank(values.get("title")):  # an empty one hides none
            values["title"] = _construct(child)
        elif name in ("subtitle", "tagline") and _is_blank(values.get("subtitle")):
            values["subtitle"] = _construct(child)
        elif name in ("updated", "modified") and "updated" not in values:
            values["updated"] = (text_of(child), "text")
        elif name == "link" and not link_is_page:
            if link_relation(child.get("rel")) == "alternate" and child.get("href"):
                is_page = _is_page_type(child.get("type"))
                if link is None or is_page:
                    link_base = child_base(child, base, issues) if doc.has_xml_base else base
                    resolved = fields.url(child.get("href"), link_base, "feed", issues)
                    if resolved is not None:
                        link, link_is_page = resolved, is_page
        elif name == "author":
            found, found_before = person(key, child, bases, doc.has_xml_base, issues)
            authors.extend([found] if found else [])
            authors_before.extend([found_before] if found_before else [])
    entries, is_truncated = kept_items(doc, entries, key, "entry", (root,), issues)
    if is_truncated and not entries:
        raise ParseError("invalid_feed", cut_short(issues, "entry"))
    if has_more:
        issues.append(Issue("too_many_items", f"Only the first {MAX_ITEMS_READ} entries are read."))
    feed_authors = fields.first_authors(authors, issues)
    feed_authors_before = (
        feed_authors if authors_before == authors else fields.first_authors(authors_before, [])
    )
    root_name = root.tag.rpartition("}")[2]
    items, is_over_budget = within_url_budget(
        (
            _entry(
                key,
                element,
                f"/{root_name}/entry[{index}]",
                url,
                known_bases,
                (feed_authors, feed_authors_before),
            )
            for index, element in enumerate(entries, 1)
        ),
        url_budget_bytes,
        (feed_authors, feed_authors_before),
        "entries",
        issues,
    )
    if key.reads_alias:  # versions before read the alias's elements as nothing
        then_key = tag_keys(ATOM_HOME | {namespace}, root, with_aliases=False)
        items = tuple(
            [
                with_reading_without_aliases(
                    item,
                    _entry(
                        then_key,
                        element,
                        item.source_pointer,
                        url,
                        known_bases,
                        (feed_authors, feed_authors_before),
                    ),
                )
                for item, element in zip(items, entries, strict=False)
            ]
        )
    title_raw, title_kind = values.get("title", (None, "text"))
    subtitle_raw, subtitle_kind = values.get("subtitle", (None, "text"))
    return ParsedFeed(
        format=feed_format,
        title=fields.title(title_raw, title_kind, issues, unescape_twice=False),
        link=link,
        description=fields.summary(subtitle_raw, subtitle_kind, issues),
        language=fields.language(root.get(XML_LANG)),
        updated_at=fields.date(values.get("updated", (None, "text"))[0], "feed updated", issues),
        items=items,
        is_truncated=is_truncated or has_more or is_over_budget,
        issues=tuple(issues),
    )


# An entry's authors, and its authors as versions before read them (their URLs).
_Authors = tuple[tuple[Author, ...], tuple[Author, ...]]


def _source_authors(
    key: TagKey, source: etree._Element, bases: Bases, has_xml_base: bool, issues: list[Issue]
) -> _Authors:
    """The authors of the feed an entry was copied from (``atom:source``)."""
    found = [
        person(key, child, bases, has_xml_base, issues)
        for child in source
        if key[child.tag] == "author"
    ]
    now = fields.first_authors([author for author, _ in found if author is not None], issues)
    before = [author for _, author in found if author is not None]
    return now, now if before == list(now) else fields.first_authors(before, [])


def _entry(
    key: TagKey,
    element: etree._Element,
    pointer: str,
    document_url: str,
    known_bases: dict[etree._Element, Bases] | None,
    feed_authors: _Authors,
) -> ParsedItem:
    issues: list[Issue] = []
    cuts: fields.Cuts = []
    has_xml_base = known_bases is not None
    if known_bases is None:
        bases: Bases = (document_url, document_url)
    else:
        bases = bases_of(element, document_url, issues, known_bases)
    base = bases[0]
    entry_id = link = published = issued = updated = created = original_link = None
    itunes_title = None
    link_is_page = False
    # The alternate link as versions before read it (their reading of URLs), which may
    # be another one than now's where a URL reads otherwise.
    link_before: str | None = None
    before_is_page = False
    title: tuple[str | None, TextKind] = (None, "text")
    summary: tuple[str | None, TextKind] = (None, "text")
    content: tuple[str | None, TextKind] = (None, "text")
    authors: list[Author] = []
    authors_before: list[Author] = []  # as versions before read them (their URLs)
    source_authors: _Authors = ((), ())
    tags: list[str] = []
    enclosures: list[Enclosure] = []
    media: list[Enclosure] = []  # Media RSS media:content, for an entry with no enclosure
    enclosures_before: list[Enclosure] = []  # both as versions before read them
    media_before: list[Enclosure] = []
    media_elements: list[etree._Element] = []  # read for a missing title or summary
    original_enclosures: list[itemurls.Original] = []  # FeedBurner's, by enclosure index
    for child in element:
        name = key[child.tag]
        if name == "title":
            if title[0] is None or not title[0].strip():  # an empty one hides no later one
                title = _construct(child)
        elif name == "link":
            rel = link_relation(child.get("rel"))
            href = child.get("href")
            if not href:
                continue
            link_bases = child_bases(child, *bases, issues) if has_xml_base else bases
            if rel == "alternate":
                if link_is_page and before_is_page:
                    continue
                is_page = _is_page_type(child.get("type"))
                is_taken_before = not before_is_page and (link_before is None or is_page)
                if not link_is_page and (link is None or is_page):
                    resolved, then = fields.url_readings(href, *link_bases, "item", issues)
                    if resolved is not None:
                        link, link_is_page = resolved, is_page
                elif is_taken_before:  # only where the readings went apart
                    then = safe_url_before(href, link_bases[1])[0]
                if is_taken_before and then is not None:
                    link_before, before_is_page = then, is_page
            elif rel == "enclosure" and not itemurls.are_full(enclosures, enclosures_before):
                itemurls.add_enclosure(
                    enclosures,
                    enclosures_before,
                    href,
                    child.get("type"),
                    child.get("length"),
                    link_bases,
                    issues,
                )
        elif name == "id":
            if entry_id is None or not entry_id.strip():  # an empty <id/> hides no later one
                entry_id = text_of(child)
        elif name == "summary":
            if summary[0] is None or not summary[0].strip():
                summary = _construct(child)
        elif name == "content":
            if content[0] is None or not content[0].strip():
                content = _construct(child)
        elif name == "published":
            published = text_of(child)
        elif name == "issued":
            issued = text_of(child)
        elif name == "updated" or name == "modified":
            updated = text_of(child)  # the last one wins, as in other readers
        elif name == "created":
            if created is None:
                created = text_of(child)
        elif name == "author":
            found, found_before = person(key, child, bases, has_xml_base, issues)
            if found is not None:
                authors.append(found)
            if found_before is not None:
                authors_before.append(found_before)
        elif name == "category":
            value = fields.tag(child.get("term") or child.get("label") or text_of(child), issues)
            if value:
                tags.append(value)
        elif name == "dc:subject":
            value = fields.tag(text_of(child), issues)
            if value:
                tags.append(value)
        elif name == "dc:creator":
            found = fields.author(text_of(child), None, None, base, issues)
            if found is not None:
                authors.append(found)
                authors_before.append(found)
        elif name == "source":
            source_bases = child_bases(child, *bases, issues) if has_xml_base else bases
            source_authors = _source_authors(key, child, source_bases, has_xml_base, issues)
        elif name.startswith("media:"):
            if name == "media:content" or name == "media:group":
                media_enclosures(key, child, bases, has_xml_base, media, media_before, issues)
            media_elements.append(child)
        elif name == "feedburner:origlink":
            if original_link is None:
                original_link = text_of(child)
        elif name == "feedburner:origenclosurelink":  # follows the enclosure it stands for
            if not itemurls.are_full(enclosures, enclosures_before):
                original_enclosures.append(
                    itemurls.original_of_last(enclosures, enclosures_before, text_of(child))
                )
        elif name == "itunes:title" and not (itunes_title and itunes_title.strip()):
            itunes_title = markup_of(child, is_text_markup=True)
    if original_link:  # FeedBurner's alternate link is its redirect
        original, original_before = itemurls.original_url(original_link, *bases)
        link, link_before = original or link, original_before or link_before
    if original_enclosures:
        itemurls.with_original_urls(enclosures, enclosures_before, original_enclosures, bases)
    # Atom text constructs say how they are escaped: read as typed, not unescaped twice.
    before: fields.ReadBefore = {}
    item_title = fields.title(
        title[0], title[1], issues, unescape_twice=False, cuts=cuts, before=before
    )
    if item_title is None:  # no title, or one without words
        has_title = any(key[child.tag] == "title" for child in element)
        item_title = fallback_title(
            key,
            itunes_title,
            media_elements,
            issues,
            unescape_twice=False,
            has_title=has_title,
            cuts=cuts,
            before=before,
        )
    if summary[0] is None and media_elements:
        summary = media_text(key, media_elements, "media:description")
    if not tags and media_elements:
        tags = media_tags(key, media_elements, issues)
    native_id = fields.native_id(entry_id, issues)
    url: itemurls.Readings = (link, link_before)
    if None in url and native_id and native_id.startswith(("http://", "https://")):
        url = itemurls.next_url(url, native_id, None, None, "item", issues)  # the permalink
    url = itemurls.item_url(url)
    offered, offered_before = enclosures or media, enclosures_before or media_before
    # Read in the order of the fields, which is the order of their issues.
    item_summary = fields.summary(summary[0], summary[1], issues, cuts)
    content_text = fields.content(content[0], content[1], issues, cuts)
    # RFC 4287 4.2.1: the entry's authors, else its source's, else the feed's.
    item_authors = fields.first_authors(authors, issues) or source_authors[0] or feed_authors[0]
    item_tags = fields.tags_without_markup(fields.item_tags(tags, issues), before)
    published_at = fields.date(published or issued or created, "published", issues)
    updated_at = fields.date(updated, "updated", issues)
    item_enclosures = itemurls.first_enclosures(offered, issues)
    if url[1] is not url[0] or offered_before != offered:
        itemurls.record_before(before, url, offered, offered_before, item_enclosures)
    if (
        authors_before != authors
        or source_authors[1] is not source_authors[0]
        or feed_authors[1] is not feed_authors[0]
    ):  # an author's URL read otherwise before, or a placeholder address as an email
        authors_then = (
            fields.first_authors(authors_before, []) or source_authors[1] or feed_authors[1]
        )
        if authors_then != item_authors:
            before["authors"] = authors_then
    # Positional (faster than keywords), read_before given rather than replaced after;
    # the order is checked by test_fields.py.
    return ParsedItem(
        native_id,  # native_id
        "atom_id" if native_id is not None else None,  # native_id_source
        url[0],  # url (Google Alerts: the page, not the redirect)
        item_title,  # title
        item_summary,  # summary
        content_text,  # content_text
        item_authors,  # authors
        item_tags,  # tags
        published_at,  # published_at
        updated_at,  # updated_at
        item_enclosures,  # enclosures
        pointer,  # source_pointer
        tuple(issues) if len(issues) < 2 else fields.distinct_issues(issues),  # issues
        tuple(cuts) if cuts else (),  # cut_digests
        tuple(before.items()) if before else (),  # read_before
    )
