"""JSON Feed 1.0 and 1.1 (``author`` and ``authors``, attachments)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, Final

from tap_feeddelta.errors import Issue, ParseError
from tap_feeddelta.models import Author, Enclosure, FeedFormat, ParsedFeed, ParsedItem
from tap_feeddelta.parse import fields, itemurls, markup
from tap_feeddelta.parse.budget import within_url_budget
from tap_feeddelta.parse.limits import (
    MAX_AUTHORS,
    MAX_ITEMS_READ,
    MAX_JSON_CONTAINERS,
    MAX_RAW_TEXT_CHARS,
)
from tap_feeddelta.parse.text import (
    decoded_references,
    references_replaced,
    repaired_text,
    without_controls,
)

_VERSION_PREFIXES: Final = ("https://jsonfeed.org/version/", "http://jsonfeed.org/version/")


def _json_int(digits: str) -> int | float:
    """A JSON integer; one past Python's digit limit for int() (4,300 by default) is
    taken as the infinite float it nearly is, so that it spoils only its own field
    (every number field refuses a non-finite value), not the whole document."""
    try:
        return int(digits)
    except ValueError:
        return float(digits)


def json_document(text: str) -> dict[str, Any]:
    """The JSON object of a JSON Feed. Raises ``ParseError``."""
    # A document no longer than the bound cannot exceed it: no need to count.
    if len(text) > MAX_JSON_CONTAINERS and text.count("[") + text.count("{") > MAX_JSON_CONTAINERS:
        raise ParseError(
            "invalid_feed", f"The JSON has more than {MAX_JSON_CONTAINERS:,} arrays and objects."
        )
    try:
        document = json.loads(text, parse_int=_json_int)
    except (ValueError, RecursionError) as exc:  # json's C reader bounds nesting by recursion
        raise ParseError("invalid_feed", "The JSON could not be read.") from exc
    if not isinstance(document, dict):
        raise ParseError("not_a_feed", "The JSON is not a JSON Feed object.")
    version = document.get("version")
    if not isinstance(version, str) or not version.startswith(_VERSION_PREFIXES):
        raise ParseError("not_a_feed", "The JSON has no JSON Feed version.")
    return document


def json_format(document: dict[str, Any]) -> FeedFormat:
    """JSON Feed 1.0 for ".../version/1", also written "1.0" (a Java library's constant)
    or with a space or a "/" after it; any other version is 1.1."""
    version = str(document.get("version", "")).strip().rstrip("/")
    return "json-feed-1.0" if version.rpartition("/")[2] in ("1", "1.0") else "json-feed-1.1"


def _string(value: object, what: str, issues: list[Issue]) -> str | None:
    """A string value without control characters (a URL, a date, a type)."""
    raw = _bounded_string(value, what, issues)
    return None if raw is None else without_controls(raw)


def _text(value: object, what: str, issues: list[Issue]) -> str | None:
    """A string value that is text for people (a title, a summary, content, a name): its
    C1 controls are windows-1252 punctuation read wrongly (``don\x92t``), as in XML."""
    raw = _bounded_string(value, what, issues)
    return None if raw is None else repaired_text(raw)


def _words(value: object, what: str, issues: list[Issue]) -> str | None:
    """``_text`` of a title or summary, its character references decoded: templates
    escape them (``Don&#8217;t``, ``Tom &amp; Jerry``), as in RSS. A text without a
    well-formed reference keeps its "&" (``AT&T``)."""
    return _decoded(_text(value, what, issues), issues)


def _decoded(raw: str | None, issues: list[Issue]) -> str | None:
    if raw is None or "&" not in raw:
        return raw
    text = decoded_references(raw)
    if references_replaced(raw, text):
        issues.append(fields.REFERENCE_REPLACED)
    return text


def _bounded_string(value: object, what: str, issues: list[Issue]) -> str | None:
    """A string value cut to the raw text bound; anything else but null is reported."""
    if isinstance(value, str):
        return value[:MAX_RAW_TEXT_CHARS] if len(value) > MAX_RAW_TEXT_CHARS else value
    if value is not None:
        issues.append(_not_a_string(what))
    return None


# JavaScript's String() writes an integral Number below this as its digits ("123" for
# 123.0), and above it may not ("1e+21"); Python's str() of a float keeps the ".0".
_EXACT_INTEGERS: Final = 2**53
_TAG_NOT_TEXT: Final = Issue("invalid_value", "A tag is not a string or a whole number; ignored.")


def _whole_number(value: object) -> str | None:
    """The digits of a JSON number that is a whole number, as JavaScript writes them: an
    integer as it is, an integral float below 2**53 as that integer (``123.0`` as
    ``123``); ``None`` for anything else (a fraction, a boolean, a huge float)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT_INTEGERS:
        return str(int(value))
    return None


def _not_a_string(what: str) -> Issue:
    return Issue("invalid_value", f"The {what} is not a string; ignored.")


Authors = tuple[tuple[Author, ...], tuple[Author, ...]]


def _authors(holder: dict[str, Any], base: str | None, issues: list[Issue]) -> Authors:
    """The authors, and the authors as versions before read them (their URLs), the
    same object when they read them alike."""
    raw = holder.get("authors")
    if raw is None or raw == []:
        one = holder.get("author")  # JSON Feed 1.0's one author; a null one is absent
        if one is not None:
            raw = [one]
    if raw is None:
        return _NO_AUTHORS
    if not isinstance(raw, list):
        issues.append(Issue("invalid_value", "The authors are not a list; ignored."))
        return _NO_AUTHORS
    found: list[Author] = []
    found_before: list[Author] = []
    for person in raw:
        if len(found) > MAX_AUTHORS and len(found_before) > MAX_AUTHORS:
            break  # one past the cap is enough to report the rest
        if not isinstance(person, dict):
            issues.append(Issue("invalid_value", "An author is not an object; ignored."))
            continue
        link = _string(person.get("url"), "author url", issues)
        email = None
        if link is not None and link.lstrip()[:7].lower() == "mailto:":
            email, link = link, None  # an address, not a page
        author, author_before = fields.author_readings(
            _text(person.get("name"), "author name", issues), email, link, base, base, issues
        )
        if author is not None and len(found) <= MAX_AUTHORS:
            found.append(author)
        if author_before is not None and len(found_before) <= MAX_AUTHORS:
            found_before.append(author_before)
    authors = fields.first_authors(found, issues)
    if found_before == found:
        return authors, authors
    return authors, fields.first_authors(found_before, [])


_NO_AUTHORS: Final[Authors] = ((), ())


def json_feed(
    document: dict[str, Any], feed_format: FeedFormat, url: str, *, url_budget_bytes: int | None
) -> ParsedFeed:
    issues: list[Issue] = []
    raw_items = document.get("items")
    if raw_items is None:
        raw_items = []
    if not isinstance(raw_items, list):
        raise ParseError("invalid_feed", "The JSON Feed items are not a list.")
    has_more = len(raw_items) > MAX_ITEMS_READ
    if has_more:
        issues.append(Issue("too_many_items", f"Only the first {MAX_ITEMS_READ} items are read."))
    feed_authors = _authors(document, url, issues)
    items, is_over_budget = within_url_budget(
        _items(raw_items[:MAX_ITEMS_READ], url, feed_authors, issues),
        url_budget_bytes,
        feed_authors,
        "items",
        issues,
    )
    return ParsedFeed(
        format=feed_format,
        title=_title(document.get("title"), "feed title", issues),
        link=fields.url(
            _string(document.get("home_page_url"), "home page url", issues), url, "feed", issues
        ),
        description=fields.summary(
            _words(document.get("description"), "feed description", issues), "text", issues
        ),
        language=fields.language(_string(document.get("language"), "language", issues)),
        updated_at=None,
        items=items,
        is_truncated=has_more or is_over_budget,
        issues=tuple(issues),
    )


def _items(
    raw_items: list[Any], url: str, feed_authors: Authors, issues: list[Issue]
) -> Iterator[ParsedItem]:
    """The items, one at a time; one that is no object is reported and skipped."""
    for index, raw in enumerate(raw_items):
        if isinstance(raw, dict):
            yield _item(raw, f"/items/{index}", url, feed_authors)
        else:
            issues.append(Issue("invalid_value", "An item is not an object; ignored."))


def _item(raw: dict[str, Any], pointer: str, base: str | None, feed_authors: Authors) -> ParsedItem:
    issues: list[Issue] = []
    cuts: fields.Cuts = []
    raw_id = raw.get("id")
    if (
        isinstance(raw_id, bool)
        or not isinstance(raw_id, str | int | float | type(None))
        or (isinstance(raw_id, float) and not math.isfinite(raw_id))  # NaN, Infinity
    ):
        issues.append(Issue("invalid_value", "The id is not a string; ignored."))
        raw_id = None
    if isinstance(raw_id, float):  # 123.0 is item "123", as JavaScript's String() gives
        raw_id = _whole_number(raw_id) or str(raw_id)
    native_id = fields.native_id(None if raw_id is None else str(raw_id), issues)
    url = fields.url_readings(_string(raw.get("url"), "url", issues), base, base, "item", issues)
    if url[0] is None or url[1] is None:  # read now only where the item has no URL now
        external = _string(
            raw.get("external_url"), "external url", issues if url[0] is None else []
        )
        url = itemurls.next_url(url, external, base, base, "item", issues)
    html = _text(raw.get("content_html"), "content_html", issues)
    content = fields.content(html, "html", issues, cuts) if html else None
    if content is None:  # no HTML, or HTML without words (a photo post's <img>)
        content = fields.content(
            _text(raw.get("content_text"), "content_text", issues), "text", issues, cuts
        )
    tags: list[str] = []
    raw_tags = raw.get("tags")
    if isinstance(raw_tags, list):
        for value in raw_tags:
            if not isinstance(value, str) and value is not None:
                value = _whole_number(value)  # [2024, "travel"] from YAML front matter
                if value is None:
                    issues.append(_TAG_NOT_TEXT)
            tag = fields.tag(value, issues)
            if tag:
                tags.append(tag)
    elif raw_tags is not None:
        issues.append(Issue("invalid_value", "The tags are not a list; ignored."))
    before: fields.ReadBefore = {}
    raw_title = raw.get("title")
    title = _title(raw_title, "title", issues, cuts, before)
    summary = _summary(raw.get("summary"), issues, cuts, before)
    authors, authors_before = _authors(raw, base, issues)
    authors = authors or feed_authors[0]
    authors_before = authors_before or feed_authors[1]
    if authors_before != authors:
        before["authors"] = authors_before
    item_tags = fields.tags_without_markup(fields.item_tags(tags, issues), before)
    published = _string(raw.get("date_published"), "date_published", issues)
    published_at = fields.date(published, "published", issues)
    updated = _string(raw.get("date_modified"), "date_modified", issues)
    updated_at = fields.date(updated, "updated", issues)
    found, found_before = _attachments(raw, base, issues)
    enclosures = itemurls.first_enclosures(found, issues)
    url = itemurls.item_url(url)
    if url[1] is not url[0] or found_before != found:
        itemurls.record_before(before, url, found, found_before, enclosures)
    # Positional (faster than keywords), read_before given rather than replaced after, as
    # the other readers build theirs; the order is checked by test_fields.py.
    return ParsedItem(
        native_id,  # native_id
        "json_id" if native_id is not None else None,  # native_id_source
        url[0],  # url (Google Alerts: the page, not the redirect)
        title,  # title
        summary,  # summary
        content,  # content_text
        authors,  # authors
        item_tags,  # tags
        published_at,  # published_at
        updated_at,  # updated_at
        enclosures,  # enclosures
        pointer,  # source_pointer
        tuple(issues) if len(issues) < 2 else fields.distinct_issues(issues),  # issues
        tuple(cuts) if cuts else (),  # cut_digests
        tuple(before.items()) if before else (),  # read_before
    )


def _title(
    value: object,
    what: str,
    issues: list[Issue],
    cuts: fields.Cuts | None = None,
    before: fields.ReadBefore | None = None,
) -> str | None:
    """A title, read as an RSS title is (``fields.rss_title_kind``): plain text by the
    spec, but generators put escaped text (``Tom &amp; Jerry``, double-escaped too) and
    markup (``<em>New</em>``) there. Versions before read it as plain text with its
    references decoded once: ``before`` gets that reading where it differs."""
    raw = _text(value, what, issues)
    title = fields.title(raw, markup.rss_title_kind(raw), issues, cuts=cuts)
    if before is not None and raw and ("<" in raw or "&" in raw):  # else read alike
        fields.title_read_before(_decoded(raw, []), title, before)
    return title


def _summary(
    value: object, issues: list[Issue], cuts: fields.Cuts, before: fields.ReadBefore
) -> str | None:
    """An item's summary: plain text, or HTML when it holds a tag (``json_summary_kind``).
    Versions before read one showing only a tag active as written as plain text:
    ``before`` gets that reading where it differs."""
    raw = _text(value, "summary", issues)
    if raw and markup.json_summary_kind(raw) == "html":
        summary = fields.summary(raw, "html", issues, cuts)
        if markup.json_summary_read_as_text_before(raw):
            fields.summary_read_before(_decoded(raw, []), "text", summary, before)
        return summary
    return fields.summary(_decoded(raw, issues), "text", issues, cuts)


def _attachments(
    raw: dict[str, Any], base: str | None, issues: list[Issue]
) -> tuple[list[Enclosure], list[Enclosure]]:
    """The attachments, and the attachments as versions before read them (their URLs)."""
    attachments = raw.get("attachments")
    found: list[Enclosure] = []
    found_before: list[Enclosure] = []
    if attachments is None:
        return found, found_before
    if not isinstance(attachments, list):
        issues.append(Issue("invalid_value", "The attachments are not a list; ignored."))
        return found, found_before
    for attachment in attachments:
        if itemurls.are_full(found, found_before):
            break  # one past the cap is enough to report the rest
        if not isinstance(attachment, dict):
            issues.append(Issue("invalid_value", "An attachment is not an object; ignored."))
            continue
        size = attachment.get("size_in_bytes")
        if isinstance(size, float) and size.is_integer():
            size = int(size)
        # A string is read as an RSS length is: ASCII digits ("{{ post.size }}" in Liquid).
        if size is not None and (isinstance(size, bool) or not isinstance(size, int | str)):
            issues.append(Issue("invalid_value", "An attachment size is not a number; ignored."))
            size = None
        itemurls.add_enclosure(
            found,
            found_before,
            _string(attachment.get("url"), "attachment url", issues),
            _string(attachment.get("mime_type"), "attachment type", issues),
            size,
            (base, base),
            issues,
        )
    return found, found_before
