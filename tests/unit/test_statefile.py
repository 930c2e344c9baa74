"""The state file the tap is given: its JSON error told as the state's, and only then."""

from __future__ import annotations

import json

import pytest

from tap_feeddelta.statefile import ReadOnce, StateMarker, state_json_error


def _json_error(text: str) -> ValueError:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return caught.value


def test_a_json_error_is_told_as_the_state_files_only_when_it_is_about_its_text() -> None:
    state = '{"bookmarks": {}}' + " " * 1000 + "\n,"  # extra data on line 2
    marker = StateMarker.of(state)
    assert marker.is_about(_json_error(state))
    # The catalog's error is not the state's, even where the two texts begin alike.
    assert not marker.is_about(_json_error('{"streams": ['))
    assert not marker.is_about(_json_error(state + " "))
    assert not marker.is_about(ValueError("not from a JSON reader"))
    assert str(state_json_error(_json_error(state))) == (
        "state: the state file is empty or not valid JSON (line 2, column 1) — the state "
        "was not changed and nothing was emitted."
    )


def test_the_state_text_is_handed_over_once_and_not_kept() -> None:
    source = ReadOnce('{"bookmarks": {}}')
    assert source.read() == '{"bookmarks": {}}'
    assert source.read() == ""
