"""The state the tap is given: the file's text, its JSON errors, and a state this run cannot
use refused before anything is emitted. Each refusal is a StateError whose message says
that nothing was changed; the Tap logs it and ends the run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO, Any, Final

from tap_feeddelta.config import Settings
from tap_feeddelta.errors import StateError
from tap_feeddelta.sharding import feeds_of_other_shards
from tap_feeddelta.state import not_utf8_text

_UNCHANGED: Final = "the state was not changed and nothing was emitted."
# How much of each end of the text a StateMarker keeps.
_MARKER_CHARS: Final = 256


def state_type_error(state: Any) -> StateError | None:
    """Why a state given to the Tap (a dict, or a file's path) cannot be one, or None.
    The SDK reads a falsy state ([], 0, false) as no state at all: a silent new baseline.
    (A state file holding just null cannot be told from none.)"""
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


@dataclass(frozen=True, slots=True)
class StateMarker:
    """Enough of a state file's text to tell its JSON error from another file's (the
    catalog's, say): not the text itself, which (megabytes at 10,000 feeds) must not live
    through the whole run."""

    length: int
    head: str
    tail: str

    @classmethod
    def of(cls, text: str) -> StateMarker:
        return cls(len(text), text[:_MARKER_CHARS], text[-_MARKER_CHARS:])

    def is_about(self, exc: ValueError) -> bool:
        """Whether ``exc`` is a JSON reader's error on the text this marks."""
        doc = getattr(exc, "doc", None)
        return isinstance(doc, str) and StateMarker.of(doc) == self


def state_json_error(exc: ValueError) -> StateError:
    """A state file that is empty or not JSON, where the JSON reader says."""
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    where = f" (line {line}, column {column})" if line is not None else ""
    return StateError(f"state: the state file is empty or not valid JSON{where} — {_UNCHANGED}")


class ReadOnce:
    """A state file's text for the SDK, which reads it once: the text is not held after
    that (an io.StringIO would keep four bytes a character for the whole run)."""

    def __init__(self, text: str) -> None:
        self._text = text

    def read(self) -> str:
        text, self._text = self._text, ""
        return text


def check_shard(index: dict[tuple[str, str], Any], settings: Settings) -> None:
    """A state that holds feeds another shard owns was written for another sharding:
    running on would start those feeds over silently and leave them stale in their own
    shard's state."""
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
            "state was written for another shard_count or shard_index. Move the "
            "feeds to their shards with tap-feeddelta-state (see Scaling out)",
            "state_other_shard",
        )


def refused_state(exc: StateError) -> StateError:
    """A state read but not usable (another version's, damaged, another shard's), with
    what was left alone and how to start over on purpose."""
    return StateError(
        f"{exc} — {_UNCHANGED} To start over on purpose, clear it (meltano state clear "
        "<state-id>, or run with --full-refresh).",
        exc.code,
    )
