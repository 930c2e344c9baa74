"""Feed reading: bytes + content type + URL → ``ParsedFeed``, or a ``ParseError``.

A pure layer: no network, no clock, no singer-sdk. ``parse_feed`` is the one entry point;
it raises only ``tap_feeddelta.errors.ParseError`` (``invalid_feed`` or ``not_a_feed``,
the latter with the feeds an HTML page advertises).

``parse_feed`` lives in ``parse.feed`` and is loaded on first use: importing this package,
or a light module of it (fingerprints reads items with ``parse.text``), loads neither lxml
nor the format readers, so a run where every feed answers 304 never loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["parse_feed"]

if TYPE_CHECKING:
    from tap_feeddelta.parse.feed import parse_feed
else:
    # Hidden from mypy, which would otherwise type every unknown attribute of the package.

    def __getattr__(name: str) -> object:
        if name != "parse_feed":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from tap_feeddelta.parse.feed import parse_feed

        # Kept as the package's own attribute: later look-ups skip this function, and a
        # test that swaps the attribute swaps what every caller gets.
        globals()["parse_feed"] = parse_feed
        return parse_feed
