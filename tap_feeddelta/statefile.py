"""The state the tap is given: the file's text, its JSON errors, and a state this run cannot
use refused before anything is emitted. Each refusal is a StateError whose message says
that nothing was changed; the Tap logs it and ends the run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any, Final

from singer_sdk.helpers._util import load_json

from tap_feeddelta.config import Settings
from tap_feeddelta.errors import JSON_READ_ERRORS, StateError, json_file_error_text
from tap_feeddelta.respellings import is_respelling, respelled_feeds, respelled_in_other_shards
from tap_feeddelta.sharding import feeds_of_other_shards
from tap_feeddelta.state import not_utf8_text

_UNCHANGED: Final = "the state was not changed and nothing was emitted."


def state_type_error(state: Any) -> StateError | None:
    """Why a state given to the Tap's Python API (a dict, or a file's path) cannot be
    one, or None. The SDK reads a falsy state ([], 0, false) as no state at all: a silent
    new baseline. (A state file's own JSON is checked by state_of_file.)"""
    if state is None or isinstance(state, dict | str | os.PathLike):
        return None
    return StateError(f"state: the state must be a JSON object — {_UNCHANGED}")


def state_file_text(state: IO[str]) -> str:
    """The whole text of a state file; a file that is not UTF-8 text is refused."""
    try:
        return state.read()
    except UnicodeDecodeError as exc:
        head = exc.object[:2] if exc.start == 0 else b""
        raise StateError(
            f"state: the state file {not_utf8_text(bytes(head))} — {_UNCHANGED}"
        ) from None


def state_of_file(text: str) -> dict[str, Any] | None:
    """The state a state file holds, read as the SDK reads one (floats as decimals): a
    JSON object, or None for ``null`` (no state). On the command line the file's JSON is
    the state itself: a string in it is no path to follow (the SDK's Python API takes
    one, and would read the file it names), and the SDK reads ``""`` as no state at all,
    a silent new baseline. So anything but an object or null is refused."""
    try:
        state = load_json(text)
    except JSON_READ_ERRORS as exc:
        raise state_json_error(exc) from None
    if state is None or isinstance(state, dict):
        return state
    raise StateError(f"state: the state must be a JSON object — {_UNCHANGED}")


def state_json_error(exc: BaseException) -> StateError:
    """A state file that is empty or not JSON, where the JSON reader says; or JSON it
    cannot take (see unread_json_text), which no state this tap writes holds."""
    why = json_file_error_text(exc, "is empty or not valid JSON")
    return StateError(f"state: the state file {why} — {_UNCHANGED}")


def check_shard(
    index: dict[tuple[str, str], Any],
    settings: Settings,
    respelled: Mapping[str, tuple[str, str]] | None = None,
) -> str | None:
    """A state that holds feeds another shard owns was written for another sharding:
    running on would start those feeds over silently and leave them stale in their own
    shard's state. So does a feed respelled in the config into another shard: that shard
    has started it over, or will. Both are refused (StateError).

    A feed no longer configured whose document was last read from a configured URL that
    another shard owns (its redirect's target) is told, not refused: the URL may have
    replaced it (that shard starts it over) or been configured beside it all along (a
    duplicate removed, nothing lost), and only that shard's state can tell. Refusing
    would stop every feed of this shard, for nothing in the second case, and could not
    keep the first one's baseline anyway once that shard has run. The warning, or None.

    ``respelled``: respelled_feeds of ``index`` over every configured URL, found here if
    not given (the Tap finds it once, for the run too)."""
    foreign = feeds_of_other_shards(
        index,
        settings.monitor_id,
        settings.feed_urls,
        settings.shard_count,
        settings.shard_index,
    )
    if foreign:
        raise StateError(
            f"state: it holds {len(foreign)} configured feeds that another shard owns "
            f"(this is shard {settings.shard_index} of {settings.shard_count}): the "
            "state was written for another shard_count or shard_index, or this shard "
            "runs without its own state id (meltano run --state-id-suffix "
            f"shard-{settings.shard_index}). Move the feeds to their shards with "
            "tap-feeddelta-state (see Scaling out)",
            "state_other_shard",
        )
    if respelled is None and settings.shard_count > 1:
        respelled = respelled_feeds(index, settings.monitor_id, settings.feed_urls)
    moved = respelled_in_other_shards(
        respelled or {}, settings.monitor_id, settings.shard_count, settings.shard_index
    )
    spellings = [pair for pair in moved if is_respelling(*pair)]
    shard = f"this is shard {settings.shard_index} of {settings.shard_count}"
    if spellings:
        raise StateError(
            f"state: it holds the state of {len(spellings)} feeds configured now under "
            f"another spelling of their URL that another shard owns ({shard}): that "
            "shard finds no state for them and starts them over. Move their state with "
            "tap-feeddelta-state merge, then split --feed-urls-file (see Scaling out)",
            "state_other_shard",
        )
    if moved:
        return (
            f"state: it holds {len(moved)} feeds no longer configured whose documents "
            "were last read from a configured URL (their redirect's target) that another "
            f"shard owns ({shard}). If that URL replaced them, its shard has no state for "
            "them: before its next run, move their state with tap-feeddelta-state merge, "
            "then split --feed-urls-file (see Scaling out). If it was configured beside "
            "them (duplicates removed), nothing is lost: they are dropped 30 days after "
            "their last check"
        )
    return None


def refused_state(exc: StateError) -> StateError:
    """A state read but not usable (another version's, damaged, another shard's), with
    what was left alone and how to start over on purpose."""
    return StateError(
        f"{exc} — {_UNCHANGED} To start over on purpose, clear it (meltano state clear "
        "<state-id>, or run with --full-refresh).",
        exc.code,
    )
