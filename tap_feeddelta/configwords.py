"""A refused config in words: what each broken JSON-schema rule says, naming the key and
never the value (a setting may hold a URL with a token), the setting a misspelt name
likely meant, and the problems in the order of the config's own keys."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any, Final

_BOUND_WORDS: Final = {
    "minimum": "at least",
    "maximum": "at most",
    "exclusiveMinimum": "more than",
    "exclusiveMaximum": "less than",
    "minLength": "at least this many characters:",
    "maxLength": "at most this many characters:",
    "maxItems": "at most this many items:",
}

# What each setting's "pattern" asks for, in words: the regex itself says little to a user.
_PATTERN_WORDS: Final = {
    "feed_urls": "must start with http:// or https://",
    "monitor_id": "must be 1 to 64 characters, each one of A-Z a-z 0-9 _ -",
    "user_agent": (
        "must be printable ASCII characters only (no tab, line break or other control character)"
    ),
    "start_date": (
        "must be an RFC 3339 date-time such as 2024-01-01T00:00:00Z, or a date such as 2024-01-01"
    ),
}

# What a list setting holds, one and several, for "must list at least one ...".
_ITEM_WORDS: Final = {"feed_urls": ("feed URL", "feed URLs")}

# A key shown as it is written: it looks like a setting's name (letters, "_", ".", "-",
# no digit, as no setting has one). Any other key (a URL or a token pasted where a
# setting's name belongs: tokens hold digits) is not shown.
_SHOWN_KEY: Final = re.compile(r"[A-Za-z_.-]{1,48}")

# The start of a message about one key: config['max_concurrency'] (the key as repr shows it).
_KEY_TOLD: Final = re.compile(r"config\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]")

Violation = tuple[tuple[Any, ...], str]


def close_name(name: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``name`` likely misspells, or None when none is close."""
    matches = difflib.get_close_matches(name, list(names), n=1)
    return matches[0] if matches else None


def violations_told(error: Any) -> list[Violation]:
    """(where in the config, what is wrong there) for one jsonschema ValidationError: one
    for each key an object may not hold (jsonschema names them all in one message), else
    one."""
    path = tuple(error.absolute_path)
    if (
        error.validator == "additionalProperties"
        and error.validator_value is False
        and isinstance(error.instance, dict)
    ):
        names = error.schema.get("properties", {})
        return [
            ((*path, key), _unknown_key(path, key, names))
            for key in error.instance
            if key not in names
        ]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [
            name
            for name in error.validator_value
            if error.message == f"{name!r} is a required property"
        ]
        if missing:
            return [((*path, missing[0]), _missing(path, missing[0], error.instance))]
    return [(path, f"{_where(path)}: {_rule_broken(error)}")]


def _where(path: tuple[Any, ...]) -> str:
    return "config" + "".join(f"[{step!r}]" for step in path)


def _unknown_key(path: tuple[Any, ...], key: Any, names: Iterable[str]) -> str:
    what = "not a setting of this tap" if not path else "not a key this setting takes"
    close = close_name(str(key), names)
    hint = f"did you mean {close}?" if close else "see tap-feeddelta --about"
    if isinstance(key, str) and _SHOWN_KEY.fullmatch(key):
        return f"{_where((*path, key))}: {what} ({hint})"
    return f"{_where(path)}: a key that is {what}, not shown: not like a setting's name ({hint})"


def _missing(path: tuple[Any, ...], name: str, instance: dict[str, Any]) -> str:
    told = f"{_where((*path, name))}: is required"
    if not path and not instance:
        # `tap-feeddelta` run without --config reads as an empty config.
        return (
            f"{told}, and the config is empty (no --config given, or --config ENV "
            "with no TAP_FEEDDELTA_* variable set?)"
        )
    return told


def _rule_broken(error: Any) -> str:
    """What a jsonschema ValidationError says, in words that hold no instance value."""
    rule, expected = error.validator, error.validator_value
    setting = str(error.absolute_path[0]) if error.absolute_path else ""
    if rule == "type":
        return f"must be of type {expected}"
    if rule == "minItems":
        one, several = _ITEM_WORDS.get(setting, ("item", "items"))
        return f"must list at least {f'one {one}' if expected == 1 else f'{expected:,} {several}'}"
    if rule in _BOUND_WORDS:
        return f"must be {_BOUND_WORDS[rule]} {expected}"
    if rule == "enum":
        return f"must be one of {expected}"
    if rule in ("required", "additionalProperties"):
        return str(error.message)  # names keys, never values
    if rule == "format":
        return f"must be a valid {expected}"
    if rule == "pattern":
        return _PATTERN_WORDS.get(setting, f"must match the pattern {expected}")
    if rule == "uniqueItems":
        return "has repeated items"
    return f"fails the schema's {rule!r} rule"


def in_config_order(problems: Iterable[str], keys: Iterable[Any]) -> list[str]:
    """``problems`` in the order of the config's keys (a file's order) that they name,
    each key's in the order given; those naming no key of the config (a setting left
    out, a key not shown) first. The schema's own order read as random to a user."""
    position = {repr(key): i for i, key in enumerate(keys)}

    def told_at(problem: str) -> int:
        match = _KEY_TOLD.match(problem)
        return position.get(match.group(1), -1) if match else -1

    return sorted(problems, key=told_at)
