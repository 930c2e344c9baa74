"""Lists that live in two places stay the same (fast; no Meltano or database needed).

- dbt's accepted error codes (transform/dbt_project.yml var feed_codes) == CODES in errors.py
- meltano.yml's tap settings == the tap's config schema (Meltano passes unknown keys
  through and the tap refuses them, so a drift breaks runs)
- the dbt staging models read every field of the stream schemas (schemas/*.json)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from tap_feeddelta.errors import CODES

ROOT = Path(__file__).resolve().parents[2]

# settings singer-sdk adds to every tap; meltano.yml need not declare them
SDK_BUILTIN_SETTINGS = {
    "stream_maps",
    "stream_map_config",
    "faker_config",
    "flattening_enabled",
    "flattening_max_depth",
    "flattening_max_key_length",
    "flattening_separator",
    "batch_config",
}
# the expected Meltano kind for each JSON Schema type of the tap's config
MELTANO_KINDS = {
    "object": {"object"},
    "array": {"array"},
    "boolean": {"boolean"},
    "integer": {"integer"},
    # Not decimal: Meltano 4.4.1 cannot pass a decimal from a variable (Decimal is not JSON
    # serializable); an integer kind still passes a YAML number like 2.5 as it is.
    "number": {"integer"},
    "string": {"string", "options", "date_iso8601", "password"},
}


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def tap_extractor() -> dict[str, Any]:
    meltano = load_yaml(ROOT / "meltano.yml")
    (tap,) = [p for p in meltano["plugins"]["extractors"] if p["name"] == "tap-feeddelta"]
    return dict(tap)


def test_dbt_error_codes_match_errors_table() -> None:
    project = load_yaml(ROOT / "transform" / "dbt_project.yml")
    assert project["vars"]["feed_codes"] == list(CODES), (
        "update vars.feed_codes in transform/dbt_project.yml to the keys of CODES "
        "in tap_feeddelta/errors.py (same order)"
    )


def test_meltano_settings_match_tap_config_schema() -> None:
    from tap_feeddelta.tap import TapFeedDelta

    schema = TapFeedDelta.config_jsonschema["properties"]
    tap_settings = set(schema) - SDK_BUILTIN_SETTINGS
    declared = {s["name"]: s for s in tap_extractor()["settings"]}
    # The SDK's settings are declared too (so that Meltano types them), but batch_config,
    # which the tap refuses.
    assert set(declared) == tap_settings | (SDK_BUILTIN_SETTINGS - {"batch_config"})
    TapFeedDelta.append_builtin_config(TapFeedDelta.config_jsonschema)
    schema = TapFeedDelta.config_jsonschema["properties"]
    for name, setting in declared.items():
        prop = schema[name]
        raw_types = prop.get("type", [])
        types = [
            t for t in ([raw_types] if isinstance(raw_types, str) else raw_types) if t != "null"
        ]
        assert setting.get("kind", "string") in MELTANO_KINDS[types[0]], name
        assert setting.get("description"), f"{name} has no description in meltano.yml"
        for option in setting.get("options", []):
            assert set(option) == {"label", "value"}, f"{name}: malformed option {option}"
        if "enum" in prop:
            assert [o["value"] for o in setting["options"]] == [
                v for v in prop["enum"] if v is not None
            ], name
        if "value" in setting:
            assert setting["value"] == prop.get("default"), name
        elif name != "user_agent":  # its default carries the version; the tap fills it in
            assert prop.get("default") is None, f"{name}: declare value: {prop['default']!r}"


def test_meltano_capabilities() -> None:
    tap = tap_extractor()
    assert set(tap["capabilities"]) == {
        "catalog",
        "discover",
        "state",
        "about",
        "stream-maps",
        "schema-flattening",
        # Meltano then shows the tap's log lines at their own level ([error] for a
        # run-stopping code), not all as [info].
        "structured-logging",
    }
    assert tap["pip_url"] == "-e ."


def _schema_fields(name: str) -> set[str]:
    schema = json.loads((ROOT / "schemas" / f"{name}.json").read_text())
    return set(schema["properties"])


def test_staging_models_read_every_stream_field() -> None:
    renamed = {  # staging name -> stream field
        "authors_json": "authors",
        "tags_json": "tags",
        "enclosures_json": "enclosures",
        "issues_json": "issues",
        "advertised_feeds_json": "advertised_feeds",
    }
    for stream in ("feed_items", "feed_health"):
        sql = (ROOT / "transform" / "models" / "staging" / f"stg_{stream}.sql").read_text()
        read = set(re.findall(r"\b(\w+)\b", sql))
        read |= {renamed[k] for k in renamed if k in read}
        missing = _schema_fields(stream) - read
        assert not missing, f"stg_{stream} does not read {sorted(missing)}"


def _bigquery_problems(schema: dict[str, Any], path: str) -> list[str]:
    """Where a JSON schema has something a denormalized BigQuery table cannot hold."""
    problems = [f"{path}: {k}" for k in ("anyOf", "oneOf", "allOf", "$ref") if k in schema]
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    concrete = [t for t in types if t != "null"]
    if len(concrete) != 1:
        return [*problems, f"{path}: needs exactly one non-null type, has {types}"]
    kind = concrete[0]
    if kind == "array":
        if "null" in types:
            problems.append(f"{path}: a REPEATED column cannot be null")
        problems += _bigquery_problems(schema.get("items", {}), f"{path}[]")
    elif kind == "object":
        properties = schema.get("properties")
        if not properties:
            problems.append(f"{path}: an object needs fixed properties (RECORD)")
        for name, sub in (properties or {}).items():
            problems += _bigquery_problems(sub, f"{path}.{name}")
    elif kind not in ("string", "integer", "number", "boolean"):
        problems.append(f"{path}: type {kind}")
    return problems


def test_stream_schemas_load_into_bigquery() -> None:
    """Only types BigQuery loads (z3-target-bigquery, denormalized: true)."""
    for stream in ("feed_items", "feed_health"):
        schema = json.loads((ROOT / "schemas" / f"{stream}.json").read_text())
        assert _bigquery_problems(schema, stream) == []
