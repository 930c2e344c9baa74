"""Safe HTTP fetching: public-only, pinned, bounded, conditional.

Knows nothing of parsing, deltas, state or singer-sdk.
"""

from __future__ import annotations

from tap_feeddelta.fetch.client import Fetcher
from tap_feeddelta.fetch.policy import FetchPolicy
from tap_feeddelta.fetch.resolve import Resolver
from tap_feeddelta.fetch.urls import display_url

__all__ = ["FetchPolicy", "Fetcher", "Resolver", "display_url"]
