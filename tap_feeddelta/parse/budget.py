"""The bound on the URL text a document's items hold once resolved (``limits``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import Author, ParsedItem
from tap_feeddelta.parse.limits import MAX_UNCOUNTED_BASE_BYTES, MIN_URL_BUDGET_BYTES


def url_budget_bytes(document_bytes: int, document_url: str, *, has_xml_base: bool) -> int | None:
    """The URL bytes the items of a document of ``document_bytes`` (UTF-8) may hold, or
    ``None`` when they need no count: the document has no ``xml:base`` and its URL, the
    only base its relative URLs resolve on, is short."""
    if not has_xml_base and len(document_url.encode("utf-8", "replace")) <= (
        MAX_UNCOUNTED_BASE_BYTES
    ):
        return None
    return 2 * document_bytes + MIN_URL_BUDGET_BYTES


def _size(url: str) -> int:
    return len(url) if url.isascii() else len(url.encode("utf-8", "replace"))


# The fields of ``ParsedItem.read_before`` that hold URLs.
_URL_FIELDS: Final = frozenset({"url", "enclosures", "authors"})


def within_url_budget(
    items: Iterable[ParsedItem],
    budget_bytes: int | None,
    feed_authors: tuple[tuple[Author, ...], tuple[Author, ...]],
    noun: str,
    issues: list[Issue],
) -> tuple[tuple[ParsedItem, ...], bool]:
    """The first ``items``, in order, whose URLs (item, enclosures, and authors unless they
    are the feed's, ``feed_authors`` as read now and before) take at most ``budget_bytes``
    in all (all of them for ``None``), and whether one was left out (reported in
    ``issues``). Items past it are never built: ``items`` is read lazily, up to the first
    that does not fit.

    Their URLs as versions before read them (``read_before``) are held too and count in
    the same sum, but never cost an item: an item whose URLs as read before would pass
    the budget is kept without them, and the items that hold some give them up, last
    first, where the URLs read now need their part. Upgrade safety is best effort for
    such a document: its items may read as ``updated`` once after an upgrade."""
    if budget_bytes is None:
        return tuple(items), False
    kept: list[ParsedItem] = []
    spent = 0
    spent_before = 0  # on URLs as read before, while they fit
    # The items of ``kept`` that hold URLs as read before (their index, those URLs' bytes).
    holding: list[tuple[int, int]] = []
    shared_authors = feed_authors[0]
    for item in items:
        url = item.url
        if url is not None:
            spent += _size(url)
        for enclosure in item.enclosures:
            spent += _size(enclosure.url)
        authors = item.authors
        if authors and authors is not shared_authors:
            for author in authors:
                if author.url is not None:
                    spent += _size(author.url)
        if spent > budget_bytes:
            issues.append(
                Issue(
                    "limit_exceeded",
                    f"Only the first {len(kept):,} {noun} are read: with the next, the URLs "
                    f"they hold once resolved would pass {budget_bytes:,} bytes (twice the "
                    "document plus 1 MiB).",
                )
            )
            return tuple(kept), True
        while spent + spent_before > budget_bytes:  # URLs as read before give way, last first
            index, size = holding.pop()
            kept[index] = _without_urls_before(kept[index])
            spent_before -= size
        if item.read_before:  # rare: a field read otherwise before
            extra = _url_bytes_before(item, feed_authors)
            if extra and spent + spent_before + extra <= budget_bytes:
                holding.append((len(kept), extra))
                spent_before += extra
            elif extra:
                item = _without_urls_before(item)
        kept.append(item)
    return tuple(kept), False


def _url_bytes_before(
    item: ParsedItem, feed_authors: tuple[tuple[Author, ...], tuple[Author, ...]]
) -> int:
    """The bytes of the URLs of ``item.read_before`` that are not those read now (the
    same objects, held once) nor the feed's authors'."""
    spent = 0
    for field, value in item.read_before:
        if field == "url":
            if value is not None and value is not item.url:
                spent += _size(value)
        elif field == "enclosures":
            held = {id(enclosure.url) for enclosure in item.enclosures}
            for enclosure in value:
                if id(enclosure.url) not in held:
                    spent += _size(enclosure.url)
        elif field == "authors" and value is not feed_authors[0] and value is not feed_authors[1]:
            held = {id(author.url) for author in item.authors}
            for author in value:
                if author.url is not None and id(author.url) not in held:
                    spent += _size(author.url)
    return spent


def _without_urls_before(item: ParsedItem) -> ParsedItem:
    """``item`` without the fields of ``read_before`` that hold URLs."""
    kept = tuple(pair for pair in item.read_before if pair[0] not in _URL_FIELDS)
    return item._replace(read_before=kept)
