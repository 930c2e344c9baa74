"""Header values read by the fetcher: whatever a server sends, only our own outcomes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.headers import (
    http_date,
    retry_after_at,
    rfc3339_text,
    usable_last_modified,
)
from tap_feeddelta.fetch.urls import parse_target, redirect_target, upgraded_to_https

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
# A head is read as Latin-1, so a header value is any text of these characters.
LATIN_1 = st.characters(min_codepoint=0, max_codepoint=255)
_PIECES = st.sampled_from(
    ["1", "\u00b2", "\u00b9", " ", ",", ":", "GMT", "Mon, 01 Jan 2030 ", "[", "::1", "//", "http:"]
)
HEADER_VALUES = st.lists(st.one_of(st.text(LATIN_1, max_size=20), _PIECES), max_size=6).map("".join)


@pytest.mark.parametrize("value", ["\u00b2", "1\u00b2", "\u00b9\u00b2", "\u0661\u0662", "1e3"])
def test_retry_after_that_is_not_ascii_seconds_nor_a_date_gives_no_time(value: str) -> None:
    assert retry_after_at(value, NOW) is None


@settings(max_examples=2000, deadline=None)
@given(HEADER_VALUES)
def test_retry_after_never_raises_and_stays_within_a_day(value: str) -> None:
    moment = retry_after_at(value, NOW)
    if moment is not None:
        at = datetime.strptime(moment, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert NOW <= at <= NOW + timedelta(days=1)


@settings(max_examples=2000, deadline=None)
@given(HEADER_VALUES)
def test_a_location_is_a_target_or_redirect_denied(value: str) -> None:
    current = parse_target("https://feed.example/a/b")
    try:
        redirect_target(current, value)
    except FetchError as exc:
        assert exc.code == "redirect_denied"


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)))
def test_a_last_modified_is_usable_only_when_it_is_not_ahead_of_the_clock(moment: datetime) -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    moment = moment.replace(tzinfo=UTC, microsecond=0)  # what an HTTP date can say
    value = moment.strftime("%a, %d %b %Y %H:%M:%S GMT")  # the form servers send
    expected = None if moment > now + timedelta(minutes=10) else value
    assert usable_last_modified(value, now) == expected
    assert http_date(value) == moment


def test_a_last_modified_that_is_no_date_is_kept_as_it_is() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert usable_last_modified("yesterday-ish", now) == "yesterday-ish"
    assert usable_last_modified("Tue, 01 Dec 2026 12:30:00 GMT", now) is None


@pytest.mark.parametrize(
    ("advertised", "asked"),
    [
        ("http://example.org/feed.xml", "https://example.org/feed.xml"),
        ("HTTP://example.org:80/f?x=1#top", "https://example.org/f?x=1#top"),
        ("http://example.org:8080/feed", "https://example.org:8080/feed"),
        ("http://[2001:db8::80]/feed", "https://[2001:db8::80]/feed"),
        ("http://[2001:db8::1]:80/feed", "https://[2001:db8::1]/feed"),
        ("https://example.org/feed", "https://example.org/feed"),
    ],
)
def test_a_plain_http_link_is_asked_for_over_https(advertised: str, asked: str) -> None:
    assert upgraded_to_https(advertised) == asked


def test_rfc3339_text_writes_a_moment_as_utc_text() -> None:
    # Named apart from parse.dates.rfc3339, which reads text.
    moment = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    assert rfc3339_text(moment) == "2024-01-02T01:04:05Z"


def test_a_url_is_bounded_in_bytes_as_the_config_bounds_it() -> None:
    # 1,220 characters of which most take two bytes: refused in the config (2 KiB), and
    # now by the fetcher too, which a redirect reaches without the config's check.
    url = "https://example.org/" + "é" * 1200
    assert len(url) <= 2048 < len(url.encode("utf-8"))
    with pytest.raises(FetchError) as caught:
        parse_target(url)
    assert "2,048 bytes" in caught.value.message
    parse_target("https://example.org/" + "é" * 1010)  # 2,040 bytes
