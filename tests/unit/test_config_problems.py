"""config_problems: what the JSON schema cannot say about a config, one message per entry,
naming it by index and never quoting it (a feed URL may carry a token)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.config import (
    CONFIG_SCHEMA,
    all_config_problems,
    config_problems,
    feed_key_and_refusal,
    fetcher_key,
)
from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.urls import parse_target

OK = "http://example.com/ok.xml"


def test_a_url_the_credential_check_cannot_split_is_named_not_raised() -> None:
    # urlsplit raised "Invalid IPv6 URL" on the unclosed bracket: a traceback at start-up.
    [problem] = config_problems({"feed_urls": [OK, "http://u@[::1/feed"]})
    assert problem.startswith("config['feed_urls'][1]")
    assert "[::1" not in problem


MALFORMED = [
    "http://",
    "https:///feed.xml",
    "http://exa mple.com/feed",
    "http://[::1/feed",
    "http://host:99999/feed",
    "http://a..b/feed",
    "http://example.com/a\\b",
    "http://user@example.com/feed",
    "https://user:s3cret@example.org/feed",
    "http://example.org:25/feed",  # a port the fetcher never sends to
]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_url_the_fetcher_refuses_is_refused_at_start_up(url: str) -> None:
    # These passed the config check and failed only at run time, as invalid_url rows.
    with pytest.raises(FetchError) as refused:
        parse_target(url)
    [problem] = config_problems({"feed_urls": [OK, url]})
    reason = refused.value.message.rstrip(".")
    assert problem == f"config['feed_urls'][1]: {reason[0].lower()}{reason[1:]}"
    assert url not in problem


def test_every_refused_url_is_named_at_once() -> None:
    problems = config_problems({"feed_urls": [OK, *MALFORMED]})
    assert [p.split(":", 1)[0] for p in problems] == [
        f"config['feed_urls'][{i}]" for i in range(1, len(MALFORMED) + 1)
    ]


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["http", "https"]),
    st.lists(st.text(alphabet="a-z09", min_size=1, max_size=70), min_size=1, max_size=6),
    st.sampled_from(["", "."]),
    st.sampled_from(["", ":0", ":1", ":80", ":080", ":65535", ":65536", ":99999"]),
    st.text(alphabet="/.a_~!$&'()*+,;=:@-", max_size=30),
    st.none() | st.text(alphabet="/?.a=&-", max_size=10),
)
def test_the_quick_key_takes_only_urls_the_fetcher_takes(
    scheme: str, labels: list[str], dot: str, port: str, path: str, query: str | None
) -> None:
    # feed_key reads a plain URL without parse_target; it must never pass one that
    # parse_target refuses, nor refuse one it takes.
    url = f"{scheme}://{'.'.join(labels)}{dot}{port}{path}" + ("" if query is None else f"?{query}")
    try:
        parse_target(url)
    except FetchError:
        accepted = False
    else:
        accepted = True
    assert (feed_key_and_refusal(url)[1] is None) == accepted
    assert feed_key_and_refusal(url)[0] == fetcher_key(url)


def test_a_host_name_longer_than_253_characters_is_refused() -> None:
    url = "http://" + ".".join(["a" * 60] * 5) + "/feed"
    [problem] = config_problems({"feed_urls": [url]})
    assert problem == "config['feed_urls'][0]: the URL's host name is malformed"


def _feeds(count: int) -> list[str]:
    return [f"http://example.com/f{i}.xml" for i in range(count)]


def test_an_exact_repeat_names_both_entries_and_respelled_ones_are_told_too() -> None:
    # The exact repeat was told without indexes, and hid the respelled one until fixed.
    urls = _feeds(300)
    urls[250] = urls[17]
    urls[280] = "HTTP://EXAMPLE.COM/f42.xml"
    problems = config_problems({"feed_urls": urls})
    assert problems[0] == "config['feed_urls'][250] is the same URL as config['feed_urls'][17]"
    assert problems[1].startswith(
        "config['feed_urls'][280] is the same feed as config['feed_urls'][42]: "
    )
    assert len(problems) == 2


def test_problems_are_listed_in_config_order() -> None:
    urls = ["http://a..b/feed", OK, OK, "https://EXAMPLE.com/f", "https://example.com/f"]
    problems = config_problems({"feed_urls": urls})
    assert [p.split(" ", 1)[0].rstrip(":") for p in problems] == [
        "config['feed_urls'][0]",
        "config['feed_urls'][2]",
        "config['feed_urls'][4]",
    ]


def test_a_long_list_of_problems_is_cut_to_its_first_twenty() -> None:
    urls = _feeds(100) + _feeds(50)
    problems = config_problems({"feed_urls": urls})
    assert len(problems) == 21
    assert problems[0] == "config['feed_urls'][100] is the same URL as config['feed_urls'][0]"
    assert problems[19] == "config['feed_urls'][119] is the same URL as config['feed_urls'][19]"
    assert problems[20] == "config['feed_urls']: and 30 more entries like these (not listed)"


# Each value breaks the schema: the checks beyond it must neither raise nor repeat it.
WRONG_TYPES: dict[str, list[Any]] = {
    "feed_urls": ["a string where a list belongs", {"an": "object"}, [1, None], []],
    "shard_count": ["2", True, 0, 2000, -1, 1.5],
    "shard_index": ["0", False, -1, 5000, None],
    "monitor_id": [7, "has space", None],
    "start_date": [20240101, "yesterday", None],
    "ca_bundle_path": [1, [], None],
}


@pytest.mark.parametrize(
    ("key", "value"),
    [(key, value) for key, values in WRONG_TYPES.items() for value in values],
    ids=lambda v: repr(v)[:30],
)
def test_a_value_the_schema_refuses_is_told_once_and_breaks_no_other_check(
    key: str, value: object
) -> None:
    config = {"feed_urls": [OK], "shard_count": 2, "shard_index": 1, key: value}
    problems, _ = all_config_problems(CONFIG_SCHEMA, config)
    # One problem per broken rule ([1, None]: two entries of the wrong type), all the
    # schema's: no second message about the same value from the checks beyond it.
    assert len(problems) == (2 if value == [1, None] else 1), problems
    assert all(p.startswith(f"config[{key!r}]") for p in problems), problems


def test_a_schema_error_hides_no_other_problem() -> None:
    """A misspelt key used to hide every feed URL, shard, date and CA bundle problem until
    it was fixed: the user learnt of them one run at a time."""
    config = {
        "feed_urls": [OK, "http://127.0.0.1:25/a.xml", "ftp://example.org/f", OK],
        "start_date": "0001-01-01T00:00:00+01:00",
        "ca_bundle_path": "/nonexistent/ca.pem",
        "shard_count": 2,
        "shard_index": 5,
        "max_concurency": 4,
    }
    problems, _ = all_config_problems(CONFIG_SCHEMA, config)
    # In the order of the config's keys, each key's schema problem before the others.
    assert [p.split(":")[0].split(" ")[0] for p in problems] == [
        "config['feed_urls'][2]",  # not http(s): the schema's, and only once
        "config['feed_urls'][1]",
        "config['feed_urls'][3]",  # a repeat of [0]
        "config['start_date']",
        "config['ca_bundle_path']",
        "config['shard_index']",
        "config['max_concurency']",  # the unknown key
    ]


def test_the_checks_beyond_the_schema_skip_a_shard_setting_it_refused() -> None:
    """shard_count 0 would divide by zero; 2000 with shard_index 5 is one problem, not two."""
    urls = [f"http://example.org/{n}" for n in range(3)]
    for shard_count in (0, 2000, "2"):
        problems, _ = all_config_problems(
            CONFIG_SCHEMA, {"feed_urls": urls, "shard_count": shard_count, "shard_index": 5}
        )
        assert [p.split(":")[0] for p in problems] == ["config['shard_count']"]


def test_about_says_what_a_long_feed_list_and_max_feed_bytes_do() -> None:
    """--about read as if a long list were split by itself (one with shard_count 1 is
    refused), and called max_feed_bytes a cap on the decoded body alone."""
    feed_urls = CONFIG_SCHEMA["properties"]["feed_urls"]["description"]
    assert "split over shards" not in feed_urls
    assert "needs shard_count" in feed_urls and "refused" in feed_urls
    max_feed_bytes = CONFIG_SCHEMA["properties"]["max_feed_bytes"]["description"]
    assert "as received and as decoded" in max_feed_bytes


def _violations_walked_by_jsonschema(config: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What _schema_violations said when jsonschema walked every URL."""
    from jsonschema.validators import validator_for

    from tap_feeddelta.configwords import violations_told

    validator = validator_for(CONFIG_SCHEMA)(CONFIG_SCHEMA)
    return [told for error in validator.iter_errors(config) for told in violations_told(error)]


URL_ENTRIES = st.one_of(
    st.sampled_from([OK, "https://example.com/a", "HtTpS://x", "ftp://x", "http:/x", "", "x"]),
    st.builds(lambda n: "http://e.com/" + "a" * n, st.sampled_from([2000, 2035, 2036, 3000])),
    st.builds(lambda s: OK + s, st.sampled_from(["\n", "\u00e9", "\ud800"])),
    st.sampled_from([None, 1, 1.5, True, [OK], {"url": OK}]),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(URL_ENTRIES, max_size=6),
    st.sampled_from([{}, {"max_concurrency": 0}, {"monitor_id": "a b"}, {"typo": 1}]),
)
def test_the_schema_check_finds_what_jsonschema_walking_every_url_finds(
    urls: list[Any], others: dict[str, Any]
) -> None:
    from tap_feeddelta.config import _schema_violations

    config = {"feed_urls": urls, **others}
    assert _schema_violations(CONFIG_SCHEMA, config) == _violations_walked_by_jsonschema(config)


def test_plain_feed_urls_are_not_walked_through_jsonschema_one_by_one() -> None:
    # 6.5 µs a URL (65 ms at 10,000 feeds): URLs that plainly meet the items' schema are
    # judged by one loop, and jsonschema checks the rest of the config.
    from tap_feeddelta.config import _schema_to_check

    schema = _schema_to_check(CONFIG_SCHEMA, {"feed_urls": [OK] * 3})
    assert "items" not in schema["properties"]["feed_urls"]
    assert "items" in CONFIG_SCHEMA["properties"]["feed_urls"]
    assert _schema_to_check(CONFIG_SCHEMA, {"feed_urls": [OK, "ftp://x"]}) is CONFIG_SCHEMA
    assert _schema_to_check(CONFIG_SCHEMA, {"feed_urls": [OK, None]}) is CONFIG_SCHEMA
    assert _schema_to_check(CONFIG_SCHEMA, {"feed_urls": "not a list"}) is CONFIG_SCHEMA
