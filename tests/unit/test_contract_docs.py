"""The README, the code table and the schemas say the same thing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tap_feeddelta.config import CONFIG_SCHEMA
from tap_feeddelta.errors import CODES, RUN_CODES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_lists_every_code_with_its_severity() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| (error|warning|info) \| (yes|no) \|", README, re.M)
    documented = {code: (severity, retriable == "yes") for code, severity, retriable in rows}
    actual = {code: (info.severity, info.is_retriable) for code, info in CODES.items()}
    assert documented == actual


def test_the_changelog_contract_lists_every_code_in_order() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    contract = changelog.split("### Output contract", 1)[1].split("\n### ", 1)[0]
    listed = re.findall(r"`([a-z_]+)`", contract.split("- State:", 1)[0])
    assert [code for code in listed if code in CODES] == list(CODES)


def test_readme_lists_every_code_that_stops_a_run() -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \| run \|", README, re.M)
    assert rows == list(RUN_CODES)


def test_readme_documents_every_setting() -> None:
    for name in CONFIG_SCHEMA["properties"]:
        assert f"| `{name}` |" in README, name


def test_discover_matches_the_schema_files() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tap_feeddelta", "--discover"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    catalog = json.loads(done.stdout)
    for entry in catalog["streams"]:
        on_disk = json.loads((ROOT / "schemas" / f"{entry['stream']}.json").read_text())
        assert entry["schema"]["properties"] == on_disk["properties"]
        assert (
            entry["key_properties"]
            == {
                "feed_items": ["delivery_id"],
                "feed_health": ["monitor_id", "feed_url", "checked_at"],
            }[entry["stream"]]
        )


def test_about_documents_every_setting() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tap_feeddelta", "--about", "--format=markdown"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for name in CONFIG_SCHEMA["properties"]:
        assert name in done.stdout, name
