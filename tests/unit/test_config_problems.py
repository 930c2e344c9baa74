"""config_problems: what the JSON schema cannot say about a config, one message per entry,
naming it by index and never quoting it (a feed URL may carry a token)."""

from __future__ import annotations

from tap_feeddelta.config import config_problems

OK = "http://example.com/ok.xml"


def test_a_url_the_credential_check_cannot_split_is_named_not_raised() -> None:
    # urlsplit raised "Invalid IPv6 URL" on the unclosed bracket: a traceback at start-up.
    [problem] = config_problems({"feed_urls": [OK, "http://u@[::1/feed"]})
    assert problem.startswith("config['feed_urls'][1]")
    assert "[::1" not in problem
