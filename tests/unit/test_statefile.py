"""The state file the tap is given: read as a JSON object or null, anything else refused."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tap_feeddelta.config import settings_from_config
from tap_feeddelta.errors import StateError
from tap_feeddelta.statefile import check_shard, state_json_error, state_of_file
from tests.unreadable_json import UNREADABLE_JSON


def test_a_state_file_holds_an_object_or_null() -> None:
    assert state_of_file('{"bookmarks": {}, "x": 1.5}') == {"bookmarks": {}, "x": Decimal("1.5")}
    assert state_of_file("null") is None


def test_a_json_error_is_told_with_where_it_is() -> None:
    state = '{"bookmarks": {}}' + " " * 1000 + "\n,"  # extra data on line 2
    with pytest.raises(StateError) as caught:
        state_of_file(state)
    assert str(caught.value) == (
        "state: the state file is empty or not valid JSON (line 2, column 1) — the state "
        "was not changed and nothing was emitted."
    )


@pytest.mark.parametrize(
    "text",
    ['""', '"x"', '"/var/lib/state/token-SECRET1.json"', "[]", "0", "false", "1.5"],
    ids=["empty-string", "string", "path", "list", "zero", "false", "number"],
)
def test_anything_but_an_object_is_refused_without_quoting_it(text: str) -> None:
    with pytest.raises(StateError) as caught:
        state_of_file(text)
    assert str(caught.value).startswith("state: the state must be a JSON object — ")
    assert caught.value.code == "state_invalid"
    assert "SECRET1" not in str(caught.value)


@pytest.mark.parametrize(("text", "why"), UNREADABLE_JSON)
def test_json_the_reader_cannot_take_is_refused_as_a_damaged_state(text: str, why: str) -> None:
    with pytest.raises(StateError) as caught:
        state_of_file(text)
    assert str(caught.value).startswith(f"state: the state file {why} — ")
    assert caught.value.code == "state_invalid"


def test_another_reader_error_without_a_position_is_not_called_a_long_number() -> None:
    refusal = state_json_error(ValueError("the reader's own words"))
    assert str(refusal).startswith("state: the state file cannot be read as JSON (ValueError) — ")
    assert refusal.code == "state_invalid"


def test_a_refusal_names_few_keys_cut_short_in_printable_ascii() -> None:
    from tap_feeddelta.state import shown_keys

    keys = ["k" * 500, "a\u202e<svg>", *[f"x{n}" for n in range(20)]]
    shown = shown_keys(keys)
    assert len(shown) < 300
    assert "\u202e" not in shown and "k" * 41 not in shown
    assert shown.startswith("['a?<svg>', 'kkk") and shown.endswith(", …]")
    assert shown_keys(["b", "a"]) == "['a', 'b']"


def test_another_shards_feeds_name_a_shard_run_without_its_own_state_id() -> None:
    """The likeliest cause: a sharded run on the unsharded pipeline's state id (meltano
    run without --state-id-suffix) finds the feeds of every shard in its state."""
    urls = [f"https://e.org/{n}.xml" for n in range(40)]
    settings = settings_from_config({"feed_urls": urls, "shard_count": 2, "shard_index": 1})
    index: dict[tuple[str, str], Any] = {("default", url): {} for url in urls}
    with pytest.raises(StateError) as refused:
        check_shard(index, settings)
    assert refused.value.code == "state_other_shard"
    assert (
        "or this shard runs without its own state id (meltano run --state-id-suffix shard-1)"
        in str(refused.value)
    )
