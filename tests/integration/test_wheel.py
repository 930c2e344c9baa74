"""The wheel users install: every module and both schemas in it, and the tap run from it
(not from the checkout, whose schemas/ the tap would read first) discovers the streams
of the schema files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _built_wheel(into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(into)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (wheel,) = into.glob("tap_feeddelta-*.whl")
    return wheel


def test_the_wheel_holds_every_module_the_schemas_and_the_licence(tmp_path: Path) -> None:
    names = set(zipfile.ZipFile(_built_wheel(tmp_path / "dist")).namelist())
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "tap_feeddelta").rglob("*.py")}
    assert modules <= names
    assert {
        "tap_feeddelta/schemas/feed_items.json",
        "tap_feeddelta/schemas/feed_health.json",
    } <= names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert not any("__pycache__" in name for name in names)


def test_the_tap_run_from_the_wheel_discovers_the_schema_files(tmp_path: Path) -> None:
    installed = tmp_path / "site"
    zipfile.ZipFile(_built_wheel(tmp_path / "dist")).extractall(installed)
    env = {**os.environ, "PYTHONPATH": str(installed)}
    where = subprocess.run(
        [sys.executable, "-c", "import tap_feeddelta; print(tap_feeddelta.__file__)"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(installed))
    done = subprocess.run(
        [sys.executable, "-m", "tap_feeddelta", "--discover"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    for entry in json.loads(done.stdout)["streams"]:
        on_disk = json.loads((ROOT / "schemas" / f"{entry['stream']}.json").read_text())
        assert entry["schema"]["properties"] == on_disk["properties"]
