"""FetchPolicy: the knobs of one run's fetching, validated once."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    """How the Fetcher behaves; one value per run.

    ``request_timeout_seconds`` is one budget per feed over resolution, connecting, TLS,
    every redirect, the headers and every body chunk. ``max_feed_bytes`` counts decoded
    body bytes. ``allow_private_networks`` lets loopback and private (RFC 1918, ULA)
    addresses through; every other rule still applies. ``ca_bundle_path`` names a PEM
    file of certificates trusted in addition to the default roots.
    """

    user_agent: str
    max_feed_bytes: int = 4_194_304
    max_redirects: int = 3
    request_timeout_seconds: float = 30.0
    allow_private_networks: bool = False
    max_per_host: int = 2
    ca_bundle_path: str | None = None

    def __post_init__(self) -> None:
        agent = self.user_agent
        if not agent or not agent.isascii() or any(ord(c) < 0x20 or ord(c) == 0x7F for c in agent):
            raise ValueError("user_agent must be non-empty printable ASCII")
        if self.max_feed_bytes < 1:
            raise ValueError("max_feed_bytes must be at least 1")
        if self.max_redirects < 0:
            raise ValueError("max_redirects must not be negative")
        if not self.request_timeout_seconds > 0:
            raise ValueError("request_timeout_seconds must be positive")
        if self.max_per_host < 1:
            raise ValueError("max_per_host must be at least 1")
