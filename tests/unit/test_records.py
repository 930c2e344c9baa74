"""How record fields show URLs that a redirect chose."""

from __future__ import annotations

import pytest

from tap_feeddelta.records import shown_url

CONFIGURED = "https://example.org/feed.xml?key=mine"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (None, None),
        (CONFIGURED, CONFIGURED),  # the user's own URL, whole
        ("https://www.example.org/feed.xml?key=mine", "https://www.example.org/feed.xml?key=mine"),
        ("https://cdn.example.org/f.xml", "https://cdn.example.org/f.xml"),
        ("https://cdn.example.org/f.xml?sig=abc", "https://cdn.example.org/f.xml"),
        ("https://u:p@cdn.example.org:8443/f.xml", "https://cdn.example.org:8443/f.xml"),
        ("http://[::1]:8080/f?t=1", "http://[::1]:8080/f"),
        ("https://cdn.example.org/f.xml#part", "https://cdn.example.org/f.xml#part"),
    ],
)
def test_a_url_a_redirect_adds_secrets_to_shows_scheme_host_and_path(
    url: str | None, shown: str | None
) -> None:
    assert shown_url(url, CONFIGURED) == shown
