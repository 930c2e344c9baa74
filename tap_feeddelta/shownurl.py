"""The URL a feed was read from, as records show it, as the bookmark names it, and as
the base of its relative links.

A redirect can hand out what the user never gave: credentials, a signed query, a session
id in a path parameter (``/feed;jsessionid=…``). Those are left out of what is shown and
stored; the resource itself is named by a hash of the whole URL (``final_url_hash``),
and the feed a web page advertised by a hash of its link (``advertised_url_hash``).
URLs are compared as the fetcher asks for them (``parse_target``'s normalized form).
"""

from __future__ import annotations

import hashlib
from urllib.parse import SplitResult, urlsplit, urlunsplit

from tap_feeddelta.errors import message_url
from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.urls import parse_target
from tap_feeddelta.signed_urls import unsigned_url, without_signing_values


def shown_url(url: str | None, configured: str, asked_url: str | None = None) -> str | None:
    """``url`` as the records show it. A redirect can hand out credentials, a signed
    query (a token) or a session id in path parameters: a URL that adds a query to the
    configured one, or to ``asked_url`` (the feed URL asked for instead: a web page's
    link, or the feed it led to before), is shown as scheme, host and path only, and one
    that adds ``;parameters`` to their path without them. Those two, the user's own and
    the one a page published (``advertised_feeds`` shows it), are shown whole: feeds
    that differ only in their query (``/?feed=rss2``, ``/?feed=comments-rss2``) stay
    apart. They are compared as the fetcher asked for them (``/?cat=новости`` is sent,
    and read, as ``/?cat=%D0%BD…``)."""
    if url is None or url in (configured, asked_url):
        return url
    asked = _asked(configured, asked_url)
    if url in asked:
        return url
    parts = urlsplit(url)
    path = _path_without_added_params(parts.path, asked)
    if "@" not in parts.netloc and (
        not parts.query or parts.query in {urlsplit(u).query for u in asked}
    ):
        if path == parts.path:
            return url
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))
    return _bare(parts, path)


def redirect_tokens(url: str | None, configured: str) -> frozenset[str]:
    """What a redirect handed out on its way from ``configured`` to ``url`` and
    ``shown_url`` leaves out: the parameters of a query it added (``sid=…``) and the
    ``;parameters`` it added to the path (``;jsessionid=…``)."""
    if url is None:
        return frozenset()
    asked = _asked(configured, None)
    parts = urlsplit(url)
    tokens: set[str] = set()
    if parts.query and parts.query not in {urlsplit(u).query for u in asked}:
        tokens.update(p for p in parts.query.split("&") if p.partition("=")[2] or "=" not in p)
    if _path_without_added_params(parts.path, asked) != parts.path:
        tokens.update(_path_params(parts.path))
    tokens.discard("")
    return frozenset(tokens)


def echoes(url: str, tokens: frozenset[str]) -> bool:
    """Whether ``url`` (a feed a web page advertised) carries one of the ``tokens`` a
    redirect handed the page: a page that echoes a session id into its links."""
    if not tokens:
        return False
    parts = urlsplit(as_fetched(url))
    found = set(parts.query.split("&")) if parts.query else set()
    return bool(tokens & (found | _path_params(parts.path)))


def without_echo(url: str, tokens: frozenset[str]) -> str:
    """``url`` as ``advertised_feeds`` shows it: without query and path parameters when
    it echoes a token a redirect handed the page."""
    if not echoes(url, tokens):
        return url
    parts = urlsplit(url)
    return _bare(parts, "/".join(seg.split(";", 1)[0] for seg in parts.path.split("/")))


def final_url_hash(url: str, configured: str, asked_url: str | None = None) -> str:
    """Which resource was read, for the bookmark: a short hash of the whole URL, query
    included, so that feeds shown alike (a query a redirect added is not shown) stay
    apart without the URL, which may hold a token, being stored. What a redirect adds
    anew on every visit is left out, the resource staying the same: path parameters (a
    session id), and the values of signing parameters in a query it added (a pre-signed
    download: their names stay, so a signed URL is not its bare form)."""
    return final_url_hashes(url, configured, asked_url)[0]


def final_url_hashes(url: str, configured: str, asked_url: str | None = None) -> tuple[str, ...]:
    """``final_url_hash``, then, when it left signing values out, the hash of the whole
    URL, which bookmarks written before they were left out hold."""
    parts = urlsplit(url)
    path, query = parts.path, parts.query
    unsigned = without_signing_values(query)
    # Only then do the URLs asked for matter (normalizing them is slow).
    asked = _asked(configured, asked_url) if ";" in path or unsigned is not query else []
    if ";" in path:
        path = _path_without_added_params(path, asked)
    whole = _hash(urlunsplit((parts.scheme, parts.netloc, path, query, "")))
    if unsigned is query or query in {urlsplit(u).query for u in asked}:
        return (whole,)  # unsigned, or signed in the user's own URL or the page's link
    return (_hash(urlunsplit((parts.scheme, parts.netloc, path, unsigned, ""))), whole)


def remembered_url(final_url: str | None, url_hash: str | None, configured: str) -> str | None:
    """The URL a bookmark's document was read from (its ``final_url`` and
    ``final_url_hash``), to ask for it again: only when ``final_url`` names all of it, not
    when it was shown without a query a redirect added (a token)."""
    if final_url is None or url_hash is None:
        return None
    return (
        final_url
        if final_url_hash(as_fetched(final_url), configured, final_url) == url_hash
        else None
    )


def advertised_url_hash(url: str) -> str:
    """Which feed a web page advertised, for the bookmark: a short hash of its link
    ``url`` as ``advertised_feeds`` shows it (see ``without_echo``), as the fetcher asks
    for it and without signing parameters (``signed_urls``). Unlike the URL a redirect
    leads to, which may carry a new token on every visit (a pre-signed download, a
    session id), the link a page publishes names the feed it offers: when it names
    another one, the page has switched feeds."""
    return _hash(unsigned_url(as_fetched(url)))


def as_fetched(url: str) -> str:
    """``url`` as the fetcher asks for it (its normalized form: non-ASCII and reserved
    characters percent-encoded, upper-case %xx, no fragment); as given if it cannot be
    fetched at all."""
    try:
        return parse_target(url).url
    except FetchError:
        return url


# What a log line shows of a feed URL's path at most: a path can be kilobytes long.
_LOGGED_URL_CHARS = 120


def logged_url(url: str) -> str:
    """A configured feed URL for a log line, which more people read than the records:
    scheme, host, port and path, never userinfo, query or fragment (where a token goes);
    "?…" says a query was left out (feeds that differ only in it stay apart by their
    feed_urls position). Anything that could be read as markup is percent-encoded, and
    the whole cut short."""
    try:
        parts = urlsplit(url)
        shown = message_url(_bare(parts, parts.path))
    except ValueError:  # the config refuses such a URL: not reached
        return "(a URL that cannot be shown)"
    if len(shown) > _LOGGED_URL_CHARS:
        cut = _LOGGED_URL_CHARS
        if "%" in shown[cut - 2 : cut]:  # not inside a %XX escape
            cut = shown.rindex("%", cut - 2, cut)
        shown = shown[:cut] + "..."
    return shown + ("?…" if parts.query else "")


def _hash(url: str) -> str:
    return "v1:" + hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]


def _asked(configured: str, asked_url: str | None) -> list[str]:
    return [as_fetched(u) for u in (configured, asked_url) if u is not None]


def _path_without_added_params(path: str, asked: list[str]) -> str:
    """``path`` without its ``;parameters`` unless it is the path of a URL asked for."""
    if ";" not in path or path in {urlsplit(u).path for u in asked}:
        return path
    return "/".join(segment.split(";", 1)[0] for segment in path.split("/"))


def _path_params(path: str) -> set[str]:
    return {f";{param}" for segment in path.split("/") for param in segment.split(";")[1:]}


def _bare(parts: SplitResult, path: str) -> str:
    """Scheme, host, port and ``path``: no userinfo, query or fragment."""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return urlunsplit((parts.scheme, host + port, path, "", ""))
