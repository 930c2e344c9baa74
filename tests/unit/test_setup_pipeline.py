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


def _checkout(tmp_path: Path) -> Path:
    """A checkout holding only the script, its tap already installed (a stub)."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "setup-pipeline", checkout / "scripts" / "setup-pipeline")
    _stub(checkout / ".venv" / "bin" / "tap-feeddelta", "exit 0")
    return checkout


def _set_up(checkout: Path) -> subprocess.CompletedProcess[str]:
    """scripts/setup-pipeline run from outside the checkout, as a user may run it."""
    return subprocess.run(
        [str(checkout / "scripts" / "setup-pipeline"), "--quiet"],
        cwd=checkout.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_setup_creates_the_folders_the_readme_commands_write_into(tmp_path: Path) -> None:
    """`meltano run tap-feeddelta target-duckdb` writes output/warehouse.duckdb, target-jsonl
    writes into output/ and the cron example appends to output/logs/cron.log: none of them
    creates the folder (target-duckdb stops with 'Cannot open file', the shell refuses the
    redirect). A fresh clone has no output/ (.gitignore)."""
    checkout = _checkout(tmp_path)
    # Installed already: the script only runs `meltano install`, which has nothing to do.
    _stub(checkout / ".venv-meltano" / "bin" / "python", "echo 4.4.1")
    _stub(checkout / ".venv-meltano" / "bin" / "meltano", "exit 0")
    done = _set_up(checkout)
    assert done.returncode == 0, done.stderr
    assert (checkout / "output" / "logs").is_dir()


def test_setup_installs_meltano_with_its_postgres_driver(tmp_path: Path) -> None:
    """A shared system database (MELTANO_DATABASE_URI=postgresql+psycopg://…, as sharding
    needs) takes Meltano's `postgres` extra; without it Meltano stops with "No module named
    'psycopg'". A .venv-meltano of the right version but without the driver is completed."""
    checkout = _checkout(tmp_path)
    pip_log = tmp_path / "pip.log"
    # Meltano 4.4.1 is there, psycopg is not; `-m pip` records what it was asked to install.
    _stub(
        checkout / ".venv-meltano" / "bin" / "python",
        f'case "$*" in *"import psycopg"*) exit 1 ;; "-m pip"*) echo "$*" >> "{pip_log}" ;; '
        "*) echo 4.4.1 ;; esac",
    )
    _stub(checkout / ".venv-meltano" / "bin" / "meltano", "exit 0")
    done = _set_up(checkout)
    assert done.returncode == 0, done.stderr
    assert pip_log.read_text().splitlines() == ["-m pip install meltano[postgres]==4.4.1"]
