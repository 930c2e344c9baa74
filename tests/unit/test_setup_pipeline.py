"""scripts/setup-pipeline leaves a checkout where the README's commands run as written."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _stub(path: Path, script: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def test_setup_creates_the_folders_the_readme_commands_write_into(tmp_path: Path) -> None:
    """`meltano run tap-feeddelta target-duckdb` writes output/warehouse.duckdb, target-jsonl
    writes into output/ and the cron example appends to output/logs/cron.log: none of them
    creates the folder (target-duckdb stops with 'Cannot open file', the shell refuses the
    redirect). A fresh clone has no output/ (.gitignore)."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "setup-pipeline", checkout / "scripts" / "setup-pipeline")
    # Installed already: the script only runs `meltano install`, which has nothing to do.
    _stub(checkout / ".venv" / "bin" / "tap-feeddelta", "exit 0")
    _stub(checkout / ".venv-meltano" / "bin" / "python", "echo 4.4.1")
    _stub(checkout / ".venv-meltano" / "bin" / "meltano", "exit 0")
    done = subprocess.run(
        [str(checkout / "scripts" / "setup-pipeline"), "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (checkout / "output" / "logs").is_dir()
