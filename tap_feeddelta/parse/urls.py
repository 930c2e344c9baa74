"""Safe absolute URLs: resolved against the base, http(s) only, no credentials, bounded,
with nothing in them that could be read as markup or hides from a reader, and naming
the host browsers read in them."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Final, Literal
from urllib.parse import parse_qsl, urljoin, urlsplit, urlunsplit

from tap_feeddelta.parse.limits import MAX_URL_BYTES

UrlProblem = Literal["url_too_long", "unsafe_url"]

# Controls (tabs, newlines, with the indentation around a line break): browsers drop them
# from a URL as written, and so do we, with the C1 controls, lone surrogates and the
# non-characters U+FFFE and U+FFFF, as from text.
_STRIPPED: Final = re.compile(r" *[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]+ *")
# Printable ASCII but for what is percent-encoded (_ENCODED_ASCII) and the backslash.
_SIMPLE: Final = re.compile(
    r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,4})?(?:[/?#][!#-;=?-\[\]-_a-z|~]*)?"
)
# What browsers percent-encode in a path (WHATWG's path percent-encode set, printable
# ASCII), here in the query and fragment too: no URL closes an attribute or opens a tag.
_ENCODED_ASCII: Final = re.compile(r'[ "<>`{}]')
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]+")
# What no host holds: the characters a path has encoded, and (non-ASCII) any invisible
# or spacing one (_hidden) but those IDNA ignores, which browsers drop from a host. A
# URL of ASCII without any of them is kept as it is.
_NOT_IN_HOST: Final = re.compile(r'[ "<>`{}\\^|]')
# The part of a URL before its query or fragment; slashes before a host, past two.
_HEAD: Final = re.compile(r"[^?#]*")
_EXTRA_SLASHES: Final = re.compile(r"((?:https?:)?//)/+", re.IGNORECASE)
_IGNORED_IN_HOST: Final = re.compile(
    "[\u00ad\u180e\u200b\u2060-\u2064\u206a-\u206f\ufeff\U0001bca0-\U0001bca3\U0001d173-\U0001d17a]"
)


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
    text = _STRIPPED.sub("", text)
    if not text:
        return None, None
    url, problem, _ = _resolved(_slashes_as_browsers_read(text), base)
    return url, problem


def safe_url_readings(
    raw: str, base: str | None, base_before: str | None
) -> tuple[str | None, UrlProblem | None, str | None]:
    """``safe_url`` of ``raw``, with what versions before this one read of it
    (``safe_url_before`` on ``base_before``, the base as they read it): the reading now
    itself when they read it alike, as they do most URLs, which costs nothing more."""
    text = raw.strip()
    if not text:
        return None, None, None
    if len(text) <= MAX_URL_BYTES and _SIMPLE.fullmatch(text) is not None:
        return text, None, text  # absolute printable ASCII: alike (_SIMPLE_BEFORE holds it)
    stripped = _STRIPPED.sub("", text) if len(text) <= MAX_URL_BYTES else ""
    if not stripped:
        url: str | None = None
        problem: UrlProblem | None = "url_too_long" if len(text) > MAX_URL_BYTES else None
    else:
        as_browsers = _slashes_as_browsers_read(stripped)
        url, problem, is_plain = _resolved(as_browsers, base)
        if url is not None and is_plain and as_browsers is stripped and base_before == base:
            return url, problem, url  # printable ASCII with nothing to encode: read alike
    return url, problem, safe_url_before(raw, base_before)[0]


def _slashes_as_browsers_read(text: str) -> str:
    """``text`` with its slashes as browsers read them in an http(s) URL (WHATWG's
    special URLs), so that RFC 3986's reading (urljoin, urlsplit) agrees: a backslash
    before the query or fragment is a slash, and slashes past two before a host are
    none (``/\\host/p``, ``https:\\\\host`` and ``///host`` name the host). The same
    object when there is nothing to change (most URLs)."""
    if "\\" in text:
        head = _HEAD.match(text)
        if head is not None and "\\" in head.group():
            text = head.group().replace("\\", "/") + text[head.end() :]
    if "///" in text:
        extra = _EXTRA_SLASHES.match(text)
        if extra is not None:
            text = extra.group(1) + text[extra.end() :]
    return text


def _resolved(text: str, base: str | None) -> tuple[str | None, UrlProblem | None, bool]:
    """``safe_url`` of ``text`` (controls stripped), and whether it is plain: printable
    ASCII with nothing to encode (then versions before this one read it alike)."""
    is_plain = True
    try:
        absolute = urljoin(base, text) if base else text
        parts = urlsplit(absolute)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return None, "unsafe_url", is_plain
        netloc, path, query, fragment = parts.netloc, parts.path, parts.query, parts.fragment
        if "@" in netloc:
            netloc = netloc.rpartition("@")[2]  # without credentials
        if not absolute.isascii() or _NOT_IN_HOST.search(absolute):  # else nothing to encode
            is_plain = False
            host = _host(netloc)
            if host is None:
                return None, "unsafe_url", is_plain
            netloc, path, query, fragment = (
                host,
                _encoded(path),
                _encoded(query),
                _encoded(fragment),
            )
        parts.port  # noqa: B018 -- raises ValueError for a port that is no number
        cleaned = urlunsplit((parts.scheme.lower(), netloc, path, query, fragment))
    except ValueError:
        return None, "unsafe_url", is_plain
    if len(cleaned.encode("utf-8", "replace")) > MAX_URL_BYTES:
        return None, "url_too_long", is_plain
    return cleaned, None, is_plain


def _host(netloc: str) -> str | None:
    """``netloc`` (host and port) as browsers read it, without the invisible characters
    IDNA ignores; None when it holds another (a bidi control) or what no host holds."""
    if not netloc.isascii():
        netloc = _IGNORED_IN_HOST.sub("", netloc)
        if _hidden(netloc) or not urlsplit(f"//{netloc}").hostname:
            return None
    return None if _NOT_IN_HOST.search(netloc) else netloc


def _encoded(part: str) -> str:
    """``part`` of a URL (path, query, fragment) with _ENCODED_ASCII and the invisible or
    spacing characters percent-encoded; a letter of any script stays as it is."""
    if not part.isascii():
        part = _NON_ASCII.sub(_hidden_encoded, part)
    return _ENCODED_ASCII.sub(_percent, part) if _ENCODED_ASCII.search(part) else part


def _hidden(text: str) -> bool:
    """Whether ``text`` holds a non-ASCII format or other invisible character (Unicode
    category C: U+202E, U+200B) or a separator (Z: U+00A0, U+2028)."""
    return any(not char.isascii() and unicodedata.category(char)[0] in "CZ" for char in text)


def _hidden_encoded(match: re.Match[str]) -> str:
    run = match.group()
    if not _hidden(run):
        return run
    return "".join(_percent_utf8(char) if _hidden(char) else char for char in run)


def _percent(match: re.Match[str]) -> str:
    return f"%{ord(match.group()):02X}"


def _percent_utf8(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "replace"))


# safe_url_before: safe_url as versions up to a2d3b36 read URLs, word for word, constants
# included. The ids and fingerprints in their states were made of its readings, so it
# must never change (tests/unit/golden_upgrade checks it against that version's code).
_STRIPPED_BEFORE: Final = re.compile(r" *[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]+ *")
_SIMPLE_BEFORE: Final = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,4})?(?:[/?#][!-~]*)?")
_MAX_URL_BYTES_BEFORE: Final = 2048


def safe_url_before(raw: str, base: str | None) -> tuple[str | None, UrlProblem | None]:
    """``safe_url`` of versions before this one (a2d3b36), word for word: markup and
    invisible characters kept, only spaces encoded, a backslash no slash, an empty ``?``
    or ``#`` kept in a URL it took as written (``_SIMPLE_BEFORE``). Never change it."""
    text = raw.strip()
    if not text:
        return None, None
    if len(text) > _MAX_URL_BYTES_BEFORE:
        return None, "url_too_long"
    if _SIMPLE_BEFORE.fullmatch(text) is not None:
        return text, None  # absolute, printable ASCII, no userinfo: nothing to do
    text = _STRIPPED_BEFORE.sub("", text).replace(" ", "%20")
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
    if len(cleaned.encode("utf-8", "replace")) > _MAX_URL_BYTES_BEFORE:
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
    return _unwrapped(url, safe_url) if is_redirect(url) else url


def unwrapped_url_before(url: str) -> str:
    """``unwrapped_url`` as versions before this one read it: its target read by
    ``safe_url_before``."""
    return _unwrapped(url, safe_url_before) if is_redirect(url) else url


def is_redirect(url: str) -> bool:
    """Whether ``url`` is a redirect link ``unwrapped_url`` reads the page of."""
    return url[:27].lower().startswith(_GOOGLE_REDIRECTS)


def _unwrapped(
    url: str, read: Callable[[str, str | None], tuple[str | None, UrlProblem | None]]
) -> str:
    params = dict(parse_qsl(url.partition("?")[2].partition("#")[0]))
    target = params.get("url") or params.get("q")
    if not target or not target.lstrip()[:8].lower().startswith(("http://", "https://")):
        return url
    page, _ = read(target, None)
    return page or url
