"""The feeds a web page advertises: ``<link rel="alternate">`` with a feed media type."""

from __future__ import annotations

from typing import Final

from lxml import etree

from tap_feeddelta.parse.urls import safe_base, safe_url

FEED_TYPES: Final = frozenset(
    {
        "application/rss+xml",
        "application/atom+xml",
        "application/rdf+xml",
        "application/feed+json",
        "application/x.atom+xml",
        "application/x-atom+xml",
        "application/x-rss+xml",
    }
)
MAX_ADVERTISED: Final = 32


def _html_parser() -> etree.HTMLParser:
    return etree.HTMLParser(
        encoding="utf-8",
        recover=True,
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        remove_blank_text=True,
        compact=True,
        collect_ids=False,
        huge_tree=False,
    )


def advertised_feeds(data: bytes, url: str) -> tuple[str, ...]:
    """Absolute http(s) URLs of the advertised feeds, in document order (``data`` is UTF-8)."""
    try:
        root = etree.fromstring(data, _html_parser())
    except (etree.LxmlError, ValueError):
        return ()
    if root is None:
        return ()
    base: str | None = url
    found: dict[str, None] = {}
    for element in root.iter("base", "link"):
        if element.tag == "base":
            if base == url and element.get("href"):
                base = safe_base(element.get("href"), url)
            continue
        rels = (element.get("rel") or "").lower().split()
        media_type = (element.get("type") or "").split(";")[0].strip().lower()
        href = element.get("href")
        if "alternate" not in rels or media_type not in FEED_TYPES or not href:
            continue
        absolute, _ = safe_url(href, base)
        if absolute is not None:
            found.setdefault(absolute, None)
            if len(found) == MAX_ADVERTISED:
                break
    return tuple(found)
