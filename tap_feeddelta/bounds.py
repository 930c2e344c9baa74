"""Bounds the config, the fetcher and the parser share, so that one URL is judged alike."""

from __future__ import annotations

from typing import Final

# A URL, in UTF-8 bytes: a feed URL in the config, a redirect's target, a URL read from a
# document. A cut URL points elsewhere, so a longer one is refused or dropped, never cut.
MAX_URL_BYTES: Final = 2048
