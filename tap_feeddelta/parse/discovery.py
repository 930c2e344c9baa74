"""The feeds a web page advertises: ``<link rel="alternate">`` with a feed media type."""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qsl, unquote, urlsplit

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
        "text/xml",  # RSS 0.9x pages
    }
)
# JSON Feed's first registered type, still used; WordPress also advertises its REST API
# with it on every page, so such links come after every other feed the page advertises,
# and those to an API (below) are none.
WEAK_FEED_TYPES: Final = frozenset({"application/json"})
# Where a link as plain JSON leads to an API, not a feed: WordPress's REST API
# (/wp-json/…, or ?rest_route=… with plain permalinks) and oEmbed endpoints.
_API_SEGMENTS: Final = frozenset({"wp-json", "oembed"})
_API_QUERY_KEYS: Final = frozenset({"rest_route"})
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
    """Absolute http(s) URLs of the advertised feeds, in document order, those advertised
    as plain JSON last (``data`` is UTF-8)."""
    try:
        root = etree.fromstring(data, _html_parser())
    except (etree.LxmlError, ValueError):
        return ()
    if root is None:
        return ()
    base = _document_base(root, url)
    found: dict[str, None] = {}
    weak: dict[str, None] = {}
    for element in root.iter("link"):
        rels = (element.get("rel") or "").lower().split()
        media_type = (element.get("type") or "").split(";")[0].strip().lower()
        href = element.get("href")
        if "alternate" not in rels or not href:
            continue
        if media_type in FEED_TYPES:
            kept = found
        elif media_type in WEAK_FEED_TYPES and len(weak) < MAX_ADVERTISED:
            kept = weak
        else:
            continue
        absolute, _ = safe_url(_without_feed_scheme(href), base)
        if absolute is not None and not (kept is weak and _api_endpoint(absolute)):
            kept.setdefault(absolute, None)
            if len(found) == MAX_ADVERTISED:
                break
    found.update(weak)  # a URL advertised both ways keeps its first place
    return tuple(found)[:MAX_ADVERTISED]


def chosen_feed(advertised: tuple[str, ...], page_url: str) -> str:
    """The feed a web page at ``page_url`` leads to, of those it advertises (at least one):
    the first that belongs to the page, else the first.

    A feed belongs to the page when it is on the page's host under the page's path
    (``/category/news/`` → ``/category/news/feed/``), or at that path with a query
    (``/blog`` → ``/blog?format=rss``): WordPress prints the site's feed and its comments
    feed before those of a category, tag or author page. A page at ``/`` has every feed of
    its host under it: the first is read.
    """
    page = urlsplit(page_url)
    path = unquote(page.path)
    if path.strip("/") == "" or page.hostname is None:
        return advertised[0]
    under = path if path.endswith("/") else path + "/"
    for url in advertised:
        feed = urlsplit(url)
        if feed.hostname != page.hostname:
            continue
        feed_path = unquote(feed.path)
        if (feed_path.startswith(under) and feed_path != under) or (
            feed_path == path and feed.query
        ):
            return url
    return advertised[0]


def _api_endpoint(url: str) -> bool:
    """Whether ``url`` is that of an API known to answer plain JSON that is no feed."""
    parts = urlsplit(url)
    if not _API_SEGMENTS.isdisjoint(unquote(parts.path).lower().split("/")):
        return True
    keys = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    return not _API_QUERY_KEYS.isdisjoint(keys)


def _document_base(root: etree._Element, url: str) -> str | None:
    """The base URL of the page's links: its first ``<base href>``, wherever it stands
    (HTML applies it to links before it too), else the page's own URL."""
    for element in root.iter("base"):
        if element.get("href"):
            return safe_base(element.get("href"), url)
    return url


def _without_feed_scheme(href: str) -> str:
    """An href in the old ``feed:`` scheme as the URL it names: ``feed://host/x`` is
    ``http://host/x``, ``feed:https://host/x`` is ``https://host/x``."""
    text = href.strip()
    if text[:5].lower() != "feed:":
        return href
    rest = text[5:]
    return "http:" + rest if rest.startswith("//") else rest
