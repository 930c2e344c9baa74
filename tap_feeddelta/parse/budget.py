"""The bound on the URL text a document's items hold once resolved (``limits``)."""

from __future__ import annotations

from collections.abc import Iterable

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


def within_url_budget(
    items: Iterable[ParsedItem],
    budget_bytes: int | None,
    shared_authors: tuple[Author, ...],
    noun: str,
    issues: list[Issue],
) -> tuple[tuple[ParsedItem, ...], bool]:
    """The first ``items``, in order, whose URLs (item, enclosures, and authors unless they
    are ``shared_authors``, the feed's) take at most ``budget_bytes`` in all (all of them
    for ``None``), and whether one was left out (reported in ``issues``). Items past it
    are never built: ``items`` is read lazily, up to the first that does not fit."""
    if budget_bytes is None:
        return tuple(items), False
    kept: list[ParsedItem] = []
    spent = 0
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
        kept.append(item)
    return tuple(kept), False
