"""How a refused config is told: a misspelt key with the setting it likely meant, a rule in
words, the problems in the config's own order, and an empty config as likely no --config
at all. Never a value: a setting may hold a URL with a token in it."""

from __future__ import annotations

from typing import Any

import pytest

from tap_feeddelta.config import CONFIG_SCHEMA, all_config_problems
from tap_feeddelta.configinput import config_problems, unknown_variables

OK = "http://example.com/ok.xml"


def _problems(config: dict[str, Any]) -> list[str]:
    return all_config_problems(CONFIG_SCHEMA, config)[0]


def test_an_unknown_key_is_told_alone_with_the_setting_it_likely_meant() -> None:
    problems = _problems(
        {"feed_urls": [OK], "allow_private_network": True, "max_concurency": 2, "zzzzzz": 1}
    )
    assert problems == [
        "config['allow_private_network']: not a setting of this tap "
        "(did you mean allow_private_networks?)",
        "config['max_concurency']: not a setting of this tap (did you mean max_concurrency?)",
        "config['zzzzzz']: not a setting of this tap (see tap-feeddelta --about)",
    ]


@pytest.mark.parametrize(
    "key", ["ghp_Xq3bM9kLr2Vt7YpN4sWd8ZcE1uHa5GjF0iKo", "sk-proj-4f9a2b7c1d8e", "token_A1b2C3d4E5"]
)
def test_an_unknown_key_that_looks_like_a_token_is_not_shown(key: str) -> None:
    # A token pasted where a setting's name goes: it has digits, as setting names do not.
    [problem] = _problems({"feed_urls": [OK], key: 1})
    assert key not in problem and key[4:12] not in problem


def test_an_unknown_key_is_shown_bounded_and_in_safe_characters() -> None:
    key = "https://example.org/feed?token=hunter2-SECRET\n" + "x" * 200
    [problem] = _problems({"feed_urls": [OK], key: 1})
    assert "\n" not in problem and "SECRET" not in problem and len(problem) < 160


def test_an_empty_feed_list_asks_for_a_feed_url() -> None:
    assert _problems({"feed_urls": []}) == ["config['feed_urls']: must list at least one feed URL"]


def test_problems_come_in_the_order_of_the_config_keys() -> None:
    config = {
        "allow_private_networks": 3,
        "max_concurency": 2,
        "max_concurrency": "y",
        "feed_urls": [OK],
        "request_timeout_seconds": "x",
    }
    told = [p.split(":")[0] for p in _problems(config)]
    assert told == [f"config[{key!r}]" for key in config if key != "feed_urls"]
    # The file written the other way round: the problems follow it.
    reversed_config = dict(reversed(config.items()))
    told = [p.split(":")[0] for p in _problems(reversed_config)]
    assert told == [f"config[{key!r}]" for key in reversed_config if key != "feed_urls"]


def test_a_missing_feed_list_comes_first() -> None:
    problems = _problems({"max_concurrency": 0})
    assert [p.split(":")[0] for p in problems] == [
        "config['feed_urls']",
        "config['max_concurrency']",
    ]
    assert problems[0] == "config['feed_urls']: is required"


def test_an_empty_config_says_no_config_may_have_been_given() -> None:
    # `tap-feeddelta` with no --config (or --config ENV and no TAP_FEEDDELTA_* variable).
    [problem] = config_problems({}, CONFIG_SCHEMA, [], [])
    assert problem.startswith("config['feed_urls']: is required")
    assert "(no --config given, or --config ENV with no TAP_FEEDDELTA_* variable" in problem


def test_a_misspelt_variable_names_the_variable_it_likely_meant() -> None:
    properties = CONFIG_SCHEMA["properties"]
    environ = ["TAP_FEEDDELTA_MAX_CONCURENCY", "TAP_FEEDDELTA_ZZZZZZ"]
    assert unknown_variables("TAP_FEEDDELTA_", properties, environ) == [
        "environment variable TAP_FEEDDELTA_MAX_CONCURENCY: is not a setting of this tap "
        "(did you mean TAP_FEEDDELTA_MAX_CONCURRENCY?)",
        "environment variable TAP_FEEDDELTA_ZZZZZZ: is not a setting of this tap "
        "(see tap-feeddelta --about)",
    ]
