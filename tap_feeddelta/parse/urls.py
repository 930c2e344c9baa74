"""Safe absolute URLs: resolved against the base, http(s) only, no credentials, bounded."""

from __future__ import annotations

import re
from typing import Final, Literal
from urllib.parse import parse_qsl, urljoin, urlsplit, urlunsplit

from tap_feeddelta.parse.limits import MAX_URL_BYTES

UrlProblem = Literal["url_too_long", "unsafe_url"]

# Controls (tabs, newlines, with the indentation around a line break): browsers drop them
# from a URL as written, and so do we, with the C1 controls, lone surrogates and the
# non-characters U+FFFE and U+FFFF, as from text; an inner space is percent-encoded.
_STRIPPED: Final = re.compile(r" *[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]+ *")
_SIMPLE: Final = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,4})?(?:[/?#][!-~]*)?")


def safe_url(raw: str, base: str | None) -> tuple[str | None, UrlProblem | None]:
    """The absolute http(s) URL that ``raw`` names relative to ``base``, and the problem
    when there is none (``None`` for both when ``raw`` is empty)."""
    text = raw.strip()
    if not text:
        return None, None
    if len(text) > MAX_URL_BYTES:
        return None, "url_too_long"
    if _SIMPLE.fullmatch(text) is not None:
        return text, None  # absolute, printable ASCII, no userinfo: nothing to do
    text = _STRIPPED.sub("", text).replace(" ", "%20")
    if not text:
        return None, None
    try:
        absolute = urljoin(base, text) if base else text
        parts = urlsplit(absolute)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return None, "unsafe_url"
        netloc = parts.netloc
        if "@" in netloc:
            netloc = netloc.rpartition("@")[2]
        parts.port  # noqa: B018 -- raises ValueError for a port that is no number
        cleaned = urlunsplit(
            (parts.scheme.lower(), netloc, parts.path, parts.query, parts.fragment)
        )
    except ValueError:
        return None, "unsafe_url"
    if len(cleaned.encode("utf-8", "replace")) > MAX_URL_BYTES:
        return None, "url_too_long"
    return cleaned, None


def safe_base(raw: str | None, base: str | None) -> str | None:
    """A base URL for resolution (``xml:base``): the resolved URL, or the outer base."""
    if not raw:
        return base
    url, _ = safe_url(raw, base)
    return url or base


_GOOGLE_REDIRECTS: Final = ("https://www.google.com/url?", "http://www.google.com/url?")


def unwrapped_url(url: str) -> str:
    """The page a redirect link leads to, for an item's URL: Google's
    ``www.google.com/url?...&url=<page>`` (Google Alerts; ``q=`` in older links) gives its
    ``url`` (else ``q``) parameter when that is an http(s) URL that passes ``safe_url``.
    Any other URL, or a redirect without such a target, is returned as it is."""
    if not url[:27].lower().startswith(_GOOGLE_REDIRECTS):
        return url
    params = dict(parse_qsl(url.partition("?")[2].partition("#")[0]))
    target = params.get("url") or params.get("q")
    if not target or not target.lstrip()[:8].lower().startswith(("http://", "https://")):
        return url
    page, _ = safe_url(target, None)
    return page or url
