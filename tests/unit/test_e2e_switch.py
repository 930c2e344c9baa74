"""FEEDDELTA_E2E=0 skips the end-to-end tests before their fixtures set anything up (no
Meltano install, no PostgreSQL), also where the Meltano venv exists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_feeddelta_e2e_0_skips_an_e2e_test_before_its_fixtures() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "pytest_timeout",  # pyproject's `timeout` setting needs it under --strict-config
            "-q",
            "-rs",
            "-x",
            "tests/e2e/test_shared_system_database.py",
        ],
        cwd=ROOT,
        # Without the other plugins (Hypothesis, singer-sdk's) the run takes a third as long.
        env={**os.environ, "FEEDDELTA_E2E": "0", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert "SKIPPED [1] " in done.stdout
    assert ": FEEDDELTA_E2E=0" in done.stdout, done.stdout
