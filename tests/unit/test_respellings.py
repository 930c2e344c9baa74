"""Which partition a configured URL's feed had under another URL: found for every
spelling the fetcher sends as one request, and at start-up without keying every
configured URL (a sharded config may list a million)."""

from __future__ import annotations

from typing import Any

import pytest

from tap_feeddelta import respellings
from tap_feeddelta.config import feed_key
from tap_feeddelta.respellings import respelled_feeds
from tap_feeddelta.shownurl import as_fetched, final_url_hash

OTHERS = [f"https://host{n % 50}.example.org/feeds/{n}.xml" for n in range(2_000)]


def _index(*urls: str, read_from: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for url in urls:
        partition: dict[str, Any] = {"context": {"monitor_id": "m", "feed_url": url}}
        if read_from is not None:
            partition["final_url"] = as_fetched(read_from)
            partition["final_url_hash"] = final_url_hash(as_fetched(read_from), read_from)
        index["m", url] = partition
    return index


@pytest.mark.parametrize(
    ("stored", "configured"),
    [
        ("http://example.org/f.xml", "HTTP://Example.ORG:80/./f.xml#top"),
        ("http://example.org./a/b", "http://EXAMPLE.org/a/c/../b"),
        ("http://xn--bcher-kva.example/f", "http://Bücher.example/f"),
        ("http://bücher.example/f", "http://xn--bcher-kva.example/f"),
        ("http://example.org/f", "http://ex%61mple.org/f"),
        ("http://[::1]:8080/f", "http://[::1]:8080/./f"),
        ("http://example.org/%7efeed", "http://example.org/%7Efeed"),
    ],
    ids=[
        "case-port-dot-fragment",
        "trailing-dot-dotdot",
        "idn",
        "idn-back",
        "escaped-host",
        "ipv6",
        "escape-case",
    ],
)
def test_every_spelling_of_a_configured_url_is_found_among_many(
    stored: str, configured: str
) -> None:
    assert feed_key(stored) == feed_key(configured)
    urls = [*OTHERS[:1000], configured, *OTHERS[1000:]]
    index = {**_index(*OTHERS[:10]), **_index(stored)}
    assert respelled_feeds(index, "m", urls) == {configured: ("m", stored)}


def test_a_redirect_target_is_found_among_many() -> None:
    target = "https://Feeds.Example.net/new.xml"
    index = {**_index(*OTHERS[:10]), **_index("https://a.example/old", read_from=target)}
    assert respelled_feeds(index, "m", [*OTHERS, target]) == {
        target: ("m", "https://a.example/old")
    }


def test_a_removed_feed_costs_no_key_per_configured_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """A feed removed within its 30 days (routine) left every start-up keying every
    configured URL: 0.65 s at 200,000. Only URLs that can match are keyed now."""
    keyed: list[str] = []

    def counted(url: str) -> str:
        keyed.append(url)
        return feed_key(url)

    monkeypatch.setattr(respellings, "feed_key", counted)
    index = {**_index(*OTHERS[:10]), **_index("https://gone.example.com/feed")}
    assert respelled_feeds(index, "m", OTHERS) == {}
    assert len(keyed) <= 4
