"""Every tap setting in meltano.yml can come from its TAP_FEEDDELTA_<SETTING> variable.

Meltano reads a variable's text by the setting's kind and writes the tap's config file as
JSON. A kind whose value JSON cannot hold (Meltano 4.4.1 reads `decimal` into a Python
Decimal: "Object of type Decimal is not JSON serializable") makes the variable unusable;
the run stops with a traceback before the tap starts.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tap_feeddelta.config import CONFIG_SCHEMA

ROOT = Path(__file__).resolve().parents[2]


def _tap_settings() -> list[dict[str, Any]]:
    project = yaml.safe_load((ROOT / "meltano.yml").read_text())
    [tap] = [p for p in project["plugins"]["extractors"] if p["name"] == "tap-feeddelta"]
    return [s for s in tap["settings"] if s["name"] in CONFIG_SCHEMA["properties"]]


def _variable_text(value: Any) -> str:
    """How a user writes the value in an environment variable (arrays as JSON)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def meltano_cast(kind: str, text: str) -> Any:
    """What Meltano 4.4.1 makes of a variable's text (SettingDefinition.cast_value)."""
    if kind == "boolean":
        return text.lower() in ("true", "1", "yes", "on")
    if kind == "integer":
        return int(text)
    if kind == "decimal":
        return Decimal(text)
    if kind in ("array", "object"):
        return json.loads(text)
    return text


@pytest.mark.parametrize(
    "setting",
    [s for s in _tap_settings() if "value" in s],
    ids=lambda s: str(s["name"]),
)
def test_a_setting_given_as_a_variable_reaches_the_tap(setting: dict[str, Any]) -> None:
    name, kind = setting["name"], setting.get("kind", "string")
    cast = meltano_cast(kind, _variable_text(setting["value"]))
    passed = json.loads(json.dumps({name: cast}))  # Meltano's config file for the tap
    jsonschema.validate(passed[name], CONFIG_SCHEMA["properties"][name])
