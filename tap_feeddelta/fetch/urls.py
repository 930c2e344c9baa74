"""URLs: parsed once, with the parser the connection uses (urllib3's), then validated.

A ``Target`` is everything the client needs from a URL; nothing downstream re-parses the
string, so no second parser can disagree with the check (a classic bypass).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from tap_feeddelta.bounds import MAX_URL_BYTES
from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.ports import BAD_PORTS

_DEFAULT_PORTS = {"http": 80, "https": 443}
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")  # controls, space, backslash
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
# "//" (after an optional scheme) opens an authority; one that is empty names no host.
_EMPTY_AUTHORITY = re.compile(r"(?:[a-z][a-z0-9+.-]*:)?//(?:[/?#]|$)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Target:
    """One checked http(s) URL, split the way the connection will use it."""

    url: str  # normalized, absolute, no fragment: what final_url and redirects use
    scheme: str  # "http" or "https"
    host: str  # lower case; IDNA-encoded; an IPv6 literal without brackets
    port: int
    request_target: str  # path and query, as sent on the request line
    authority: str  # host[:port] as the Host header carries it (port only if not default)
    ip_literal: str | None  # the host, when it is an IP address


def parse_target(url: str, *, code: str = "invalid_url") -> Target:
    """Parse and validate ``url``; raise ``FetchError(code)`` if it may not be fetched."""
    if not isinstance(url, str) or not url:
        raise FetchError(code, "The URL is empty.")
    if len(url) > MAX_URL_BYTES // 4 and len(url.encode("utf-8", "replace")) > MAX_URL_BYTES:
        raise FetchError(code, f"The URL is longer than {MAX_URL_BYTES:,} bytes.")
    if _FORBIDDEN_CHARS.search(url):
        raise FetchError(code, "The URL holds a control character, space or backslash.")
    lowered = url[:8].lower()
    if not (lowered.startswith("http://") or lowered.startswith("https://")):
        raise FetchError(code, "Only http:// and https:// URLs are fetched.")
    authority = re.split(r"[/?#]", url.split("//", 1)[1], maxsplit=1)[0]
    if "@" in authority:
        raise FetchError(code, "The URL holds credentials (userinfo), which are refused.")
    try:
        parsed = parse_url(url)
    except (LocationParseError, ValueError, UnicodeError):
        raise FetchError(code, "The URL cannot be parsed.") from None
    scheme = parsed.scheme
    raw_host = parsed.host
    if scheme not in _DEFAULT_PORTS or not raw_host or parsed.auth is not None:
        raise FetchError(code, "The URL has no usable scheme and host.")
    port = parsed.port if parsed.port is not None else _DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        raise FetchError(code, "The URL's port is out of range.")
    if port in BAD_PORTS:
        raise FetchError(code, f"Port {port} belongs to a service that is not the web's.")
    host, ip_literal = _checked_host(raw_host, code)
    path = parsed.path or "/"
    query = parsed.query
    request_target = path if query is None else f"{path}?{query}"
    shown_host = f"[{host}]" if ":" in host else host
    authority_out = shown_host if port == _DEFAULT_PORTS[scheme] else f"{shown_host}:{port}"
    return Target(
        url=f"{scheme}://{authority_out}{request_target}",
        scheme=scheme,
        host=host,
        port=port,
        request_target=request_target,
        authority=authority_out,
        ip_literal=ip_literal,
    )


def _checked_host(raw_host: str, code: str) -> tuple[str, str | None]:
    if raw_host.startswith("["):
        inner = raw_host[1:-1]  # a scope id ("%eth0") is kept: the guard refuses it
        try:
            return inner, str(ipaddress.IPv6Address(inner))
        except ValueError:
            raise FetchError(code, "The URL's IPv6 address is malformed.") from None
    host = raw_host.lower()
    if len(host) > 253 or not _HOST_NAME.fullmatch(host):
        raise FetchError(code, "The URL's host name is malformed.")
    try:
        return host, str(ipaddress.IPv4Address(host))
    except ValueError:
        return host, None


def redirect_target(current: Target, location: str) -> Target:
    """The checked target of a ``Location`` header, resolved against ``current``; never
    from https down to plain http."""
    location = location.strip(" \t")
    if not location:
        raise FetchError("redirect_denied", "A redirect had an empty Location.")
    # As browsers do: a space inside is percent-encoded, and the bytes of the header
    # (read as Latin-1, as every HTTP head is) are UTF-8 where they can be, so that
    # "/café" sent raw is asked for as /caf%C3%A9, not as its mojibake.
    location = _utf8_where_it_is(location).replace(" ", "%20")
    if _FORBIDDEN_CHARS.search(location):
        raise FetchError(
            "redirect_denied", "A redirect's Location holds a control character or backslash."
        )
    if _EMPTY_AUTHORITY.match(location):
        # urljoin would keep this host ("///g" -> /g), browsers take "g" for the host:
        # no guess is safe, so none is made.
        raise FetchError("redirect_denied", "A redirect's Location names an empty host.")
    try:
        url = urljoin(current.url, location)
    except ValueError:  # e.g. "http://[::1": urljoin refuses an unclosed IPv6 bracket
        raise FetchError("redirect_denied", "A redirect's Location cannot be parsed.") from None
    target = parse_target(url, code="redirect_denied")
    if current.scheme == "https" and target.scheme != "https":
        # The request (its query, maybe a token) would go out in clear text, and an
        # answer forged on the way would be read as the https feed's.
        raise FetchError("redirect_denied", "A redirect from https to plain http was refused.")
    return target


def upgraded_to_https(url: str) -> str:
    """``url`` asked for over https if it names plain http: what a web page read over
    https advertises is fetched no less safely than the page (as browsers upgrade
    mixed content). The default port goes with the scheme; another port is kept."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "http":
        return url
    netloc = parts.netloc
    host, colon, port = netloc.rpartition(":")
    if colon and port == "80":
        netloc = host
    return urlunsplit(("https", netloc, parts.path, parts.query, parts.fragment))


def _utf8_where_it_is(text: str) -> str:
    if text.isascii():
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return text


def display_url(url: str) -> str:
    """``scheme://host[:port]/path`` of ``url``: no userinfo, query or fragment.

    This is the only form of a URL that messages and logs may show.
    """
    try:
        parsed = parse_url(url)
    except (LocationParseError, ValueError, UnicodeError):
        return "(unparseable URL)"
    scheme = parsed.scheme or "?"
    host = parsed.host or ""
    port = f":{parsed.port}" if parsed.port is not None else ""
    path = _FORBIDDEN_CHARS.sub("", parsed.path or "/")
    return f"{scheme}://{host}{port}{path}"
