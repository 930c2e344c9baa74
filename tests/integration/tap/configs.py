"""The tap config the run tests share: feeds of a loopback server."""

from __future__ import annotations

from typing import Any

from tests.feedserver import FeedServer


def config(server: FeedServer, *paths: str, **extra: Any) -> dict[str, Any]:
    return {
        "feed_urls": [server.url(p) for p in paths],
        "allow_private_networks": True,
        "request_timeout_seconds": 10,
        **extra,
    }
