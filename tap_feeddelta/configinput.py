"""The config as it reaches the tap, before and around config.py's judgement: a config file
that cannot be used, TAP_FEEDDELTA_* variables that name no setting, numbers given as text,
the SDK's flattening settings, and a start_date that names no zone.

No Tap here: the environment, the config and the schemas are passed in."""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, cast

from singer_sdk.exceptions import ConfigValidationError
from singer_sdk.helpers._util import load_json

from tap_feeddelta.config import REFUSED_SETTINGS, all_config_problems, refused_settings
from tap_feeddelta.configwords import close_name, in_config_order
from tap_feeddelta.errors import JSON_READ_ERRORS, json_file_error_text

# TAP_FEEDDELTA_<X> variables that are no setting and still not a mistake: the SDK's
# log level, and Meltano's alias of its _metadata extra (the other extras, and a plugin
# that inherits from tap-feeddelta, have TAP_FEEDDELTA__ names).
OTHER_VARIABLES: Final = frozenset({"LOGLEVEL", "METADATA"})
# A date with a time ("2024-01-03T05:00", "2024-01-03 05:00").
_HAS_A_TIME: Final = re.compile(r"\d[Tt ]\d")
# The end of a date-time that names its zone: "Z" or an offset ("+02:00", "-0500").
_NAMES_ITS_ZONE: Final = re.compile(r"(?:[Zz]|[+-]\d{2}:?\d{2})\s*$")


def config_file_problem(path: str) -> str | None:
    """Why the config file at ``path`` cannot be used, or None. Never quotes the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    try:
        config = load_json(text)  # as the SDK reads it
    except JSON_READ_ERRORS as exc:
        return json_file_error_text(exc, "is not valid JSON")
    return None if isinstance(config, dict) else "does not hold a JSON object"


def unknown_variables(
    prefix: str, properties: Mapping[str, Any], environ: Iterable[str]
) -> list[str]:
    """One message for each ``<prefix><X>`` variable of ``environ`` that names no setting
    (a typo would leave its setting at the default without a word), never quoting the
    value. Meltano also exports an object setting's keys one by one, as
    ``<prefix><SETTING>_<KEY>``: those are let through."""
    names = {name.upper().replace("-", "_"): name for name in properties}
    objects = tuple(
        f"{upper}_" for upper, name in names.items() if "object" in properties[name].get("type", [])
    )
    refused = {name.upper(): why for name, why in REFUSED_SETTINGS.items()}
    problems = []
    for variable in sorted(environ):
        if not variable.startswith(prefix):
            continue
        rest = variable.removeprefix(prefix)
        if rest in names or rest in OTHER_VARIABLES or rest.startswith(("_", *objects)):
            continue
        why = refused.get(rest) or _not_a_setting(prefix, rest, names)
        problems.append(f"environment variable {variable}: {why}")
    return problems


def _not_a_setting(prefix: str, rest: str, names: Iterable[str]) -> str:
    close = close_name(rest, names)
    hint = f"did you mean {prefix}{close}?" if close else "see tap-feeddelta --about"
    return f"is not a setting of this tap ({hint})"


def numbers_read(
    config: Mapping[str, Any], properties: Mapping[str, Any]
) -> tuple[dict[str, float], list[str]]:
    """The number settings given as text (TAP_FEEDDELTA_* variables, text in a file) read
    as numbers, and the names of the number settings that are not finite. Text that does
    not read as a number is left to the schema check, which names it."""
    read: dict[str, float] = {}
    not_finite = []
    for name, prop in properties.items():
        types = prop.get("type", [])
        if "number" not in ([types] if isinstance(types, str) else types):
            continue
        value = config.get(name)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                read[name] = value = float(value)
        # NaN ("nan" as text) passes both minimum and maximum; infinity is no
        # setting either.
        if isinstance(value, float) and not math.isfinite(value):
            not_finite.append(name)
    return read, not_finite


def config_problems(
    config: dict[str, Any],
    schema: dict[str, Any],
    not_finite: Iterable[str],
    stream_schemas: Iterable[dict[str, Any]],
) -> list[str]:
    """Every problem of ``config`` at once, none quoting a value, in the order of its keys:
    refused settings, numbers that are not finite, config.py's checks, and the flattening
    settings (only once the schema check has judged them)."""
    not_finite = list(not_finite)
    others = {k: v for k, v in config.items() if k not in REFUSED_SETTINGS and k not in not_finite}
    problems = refused_settings(config)
    problems += [f"config[{name!r}]: must be a finite number" for name in not_finite]
    found, unjudged = all_config_problems(schema, others)
    problems += found
    if not any(key.startswith("flattening_") for key in unjudged):
        problems += flattening_problems(others, stream_schemas)
    return in_config_order(problems, config)


def flattening_problems(
    config: dict[str, Any], stream_schemas: Iterable[dict[str, Any]]
) -> list[str]:
    """Flattening settings under which the SDK cannot flatten the streams' schemas (it
    raises a bare ValueError mid-run): a key length so short that two columns get one
    name."""
    from singer_sdk.helpers._flattening import FlatteningOptions, flatten_schema

    try:
        options = FlatteningOptions.from_dict(cast("Any", config))
    except ConfigValidationError:
        return []  # the SDK says what is wrong itself
    if not options.enabled:
        return []
    for schema in stream_schemas:
        try:
            flatten_schema(
                schema, options.max_level, options.separator, max_key_length=options.max_key_length
            )
        except ValueError:
            return [
                f"config['flattening_max_key_length']: {options.max_key_length} is too short: "
                "two flattened columns would get the same name"
            ]
    return []


def start_date_names_no_zone(value: Any) -> bool:
    """Whether a start_date is a date-time that names neither "Z" nor an offset (read as
    UTC: Meltano drops the offset of an unquoted YAML date-time)."""
    return (
        isinstance(value, str)
        and _HAS_A_TIME.search(value) is not None
        and _NAMES_ITS_ZONE.search(value) is None
    )
