"""Tracking prefixes: the measurement redirects podcast hosts put in front of enclosure URLs.

A podcaster who signs up for a download-measurement service (Podtrac, Chartable, OP3, ...)
has every enclosure URL rewritten to pass through it first:
``https://dts.podtrac.com/redirect.mp3/cdn.example/ep1.mp3`` redirects to
``https://cdn.example/ep1.mp3``. Services come and go (Chartable closed in 2024) and
prefixes stack, so a feed adds or drops one now and then for every episode at once: the
file is the same. Change detection compares enclosures without them (see fingerprints.py);
records keep the URL as the feed gives it.

Only the services listed here are recognized, each by its host and the exact shape of its
prefix's path, and only when what follows is a host name and a path: a file the service
itself serves (``op3.dev/e`` alone, ``media.blubrry.com/show/ep.mp3``) is left as it is.
"""

from __future__ import annotations

import re
from typing import Final

# host → the path of its prefix, after "host/"; each ends where the wrapped URL begins.
_PREFIX_PATHS: Final = {
    host: re.compile(path, re.IGNORECASE)
    for host, path in {
        # Podtrac
        "dts.podtrac.com": r"(?:pts/)?redirect\.[0-9a-z]{2,4}/",
        "www.podtrac.com": r"pts/redirect\.[0-9a-z]{2,4}/",
        "podtrac.com": r"pts/redirect\.[0-9a-z]{2,4}/",
        "play.podtrac.com": r"[^/?#]+/",
        # Chartable (closed in 2024: its prefixes are being dropped everywhere)
        "chtbl.com": r"track/[^/?#]+/",
        "chrt.fm": r"track/[^/?#]+/",
        # OP3 (e/ or e,pg=<podcast guid>/)
        "op3.dev": r"e(?:,[^/?#]*)?/",
        # Podsights, Spotify Ad Analytics
        "pdst.fm": r"e/",
        "prfx.byspotify.com": r"e/",
        # Podscribe
        "verifi.podscribe.com": r"rss/p/",
        "pscrb.fm": r"rss/p/",
        # Magellan AI
        "mgln.ai": r"e/[^/?#]+/",
        # Claritas
        "clrtpod.com": r"m/",
        # Veritone (Pixel)
        "pfx.vpixl.com": r"[^/?#]+/",
        # Artsai
        "arttrk.com": r"p/[^/?#]+/",
        # Blubrry statistics (its files are served from content.blubrry.com)
        "media.blubrry.com": r"[^/?#]+/(?:p/)?",
        # Swap.fm
        "tracking.swap.fm": r"track/[^/?#]+/",
        # Podcorn
        "pdcn.co": r"e/",
    }.items()
}
# What follows a prefix: the wrapped URL, with or without its scheme, starting with a host
# name that has a dot (so the rest of a service's own path is never taken for a host).
_WRAPPED: Final = re.compile(
    r"(https?://)?[0-9a-z-]+(?:\.[0-9a-z-]+)*\.[a-z][0-9a-z-]*\.?(?::[0-9]{1,5})?/",
    re.IGNORECASE,
)
# Prefixes stack (OP3 before Podtrac before Chartable...); a bound keeps a crafted URL cheap.
MAX_STACKED_PREFIXES: Final = 8


def without_tracking_prefixes(url: str) -> str:
    """``url`` without the tracking prefixes in front of it, under its own scheme (the
    outermost one). A URL that has none is returned as it is, the same object."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return url
    start = rest = scheme_end + 3
    for _ in range(MAX_STACKED_PREFIXES):
        slash = url.find("/", rest)
        if slash < 0:
            break
        prefix_path = _PREFIX_PATHS.get(url[rest:slash].lower())
        if prefix_path is None:
            break
        prefix = prefix_path.match(url, slash + 1)
        if prefix is None:
            break
        wrapped = _WRAPPED.match(url, prefix.end())
        if wrapped is None:
            break
        rest = prefix.end() + len(wrapped.group(1) or "")
    if rest == start:
        return url
    return url[:start] + url[rest:]
