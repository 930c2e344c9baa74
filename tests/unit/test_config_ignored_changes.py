"""The ignored_changes setting: the fingerprint's fields only, each once, told in words."""

from __future__ import annotations

import pytest

from tap_feeddelta.config import CONFIG_SCHEMA, schema_problems, settings_from_config
from tap_feeddelta.models import FINGERPRINT_FIELDS

FEEDS = {"feed_urls": ["https://example.org/feed"]}


def test_it_takes_exactly_the_fingerprint_s_fields_and_defaults_to_none() -> None:
    prop = CONFIG_SCHEMA["properties"]["ignored_changes"]
    assert prop["items"]["enum"] == list(FINGERPRINT_FIELDS)
    assert prop["default"] == []
    assert settings_from_config(FEEDS).ignored_changes == ()
    config = {**FEEDS, "ignored_changes": ["updated_at", "summary"]}
    assert schema_problems(CONFIG_SCHEMA, config) == []
    assert settings_from_config(config).ignored_changes == ("updated_at", "summary")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            ["updated_at", "views"],
            "config['ignored_changes'][1]: must be one of ['url', 'title', 'summary', "
            "'content_text', 'authors', 'tags', 'published_at', 'updated_at', 'enclosures']",
        ),
        (["summary", "summary"], "config['ignored_changes']: has repeated items"),
        ("updated_at", "config['ignored_changes']: must be of type ['array']"),
    ],
    ids=["unknown", "repeated", "not-a-list"],
)
def test_a_bad_list_is_refused_in_plain_words(value: object, problem: str) -> None:
    assert schema_problems(CONFIG_SCHEMA, {**FEEDS, "ignored_changes": value}) == [problem]
