"""Feeds take turns per host before they take a concurrency slot; the host is the one the
fetcher keys its own slots by, so that spellings of one host share the turns."""

from __future__ import annotations

import pytest

from tap_feeddelta.check import FeedTask
from tap_feeddelta.fetch.urls import parse_target
from tap_feeddelta.run import _host_of


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://bücher.example/feed", "https://xn--bcher-kva.example/other"),
        ("https://BÜCHER.example/feed", "https://xn--bcher-kva.example/feed"),
        ("https://News.Example.COM/rss", "https://news.example.com/atom"),
    ],
)
def test_spellings_of_one_host_share_its_turns(one: str, other: str) -> None:
    assert _host_of(FeedTask(0, one, None)) == _host_of(FeedTask(1, other, None))
    assert _host_of(FeedTask(0, one, None)) == parse_target(other).host


def test_hosts_that_differ_take_turns_apart() -> None:
    assert _host_of(FeedTask(0, "https://a.example/f", None)) != _host_of(
        FeedTask(1, "https://b.example/f", None)
    )


@pytest.mark.parametrize("bad", ["http://[::1/feed", "https://bü cher.example/feed"])
def test_a_url_that_cannot_be_read_is_a_group_of_its_own(bad: str) -> None:
    assert _host_of(FeedTask(0, bad, None)) == bad
