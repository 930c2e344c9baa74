"""Safe HTTP fetching: public-only, pinned, bounded, conditional.

Knows nothing of parsing, deltas, state or singer-sdk.

The names below are loaded on first use: importing one light module of the package (the
headers, the URL helpers) does not load the client, its sockets and TLS.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

__all__ = ["FetchPolicy", "Fetcher", "Resolver", "display_url"]

if TYPE_CHECKING:
    from tap_feeddelta.fetch.client import Fetcher
    from tap_feeddelta.fetch.policy import FetchPolicy
    from tap_feeddelta.fetch.resolve import Resolver
    from tap_feeddelta.fetch.urls import display_url
else:
    # Hidden from mypy, which would otherwise type every unknown attribute of the package.
    _HOMES = {
        "Fetcher": "tap_feeddelta.fetch.client",
        "FetchPolicy": "tap_feeddelta.fetch.policy",
        "Resolver": "tap_feeddelta.fetch.resolve",
        "display_url": "tap_feeddelta.fetch.urls",
    }

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        globals()[name] = value  # later look-ups skip this function
        return value
