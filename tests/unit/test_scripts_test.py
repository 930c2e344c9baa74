"""scripts/test sets up the end-to-end tools (Meltano, Airflow, PostgreSQL) only when its
pytest arguments can select an end-to-end test; with none (CI) it sets up everything."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _stub(path: Path, script: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout whose tools are stand-ins that log their calls: the log's path."""
    checkout = tmp_path / "checkout"
    log = tmp_path / "calls.log"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "test", checkout / "scripts" / "test")
    for folder in ("tests/unit", "tests/e2e", "tests/integration/tap"):
        (checkout / folder).mkdir(parents=True)
    (checkout / "tests" / "e2e" / "test_pipelines.py").touch()
    (checkout / "tests" / "unit" / "test_cli.py").touch()
    record = f'echo "$(basename "$0") $*" >> "{log}"'
    _stub(checkout / ".venv" / "bin" / "python", f'case "$*" in "-m pytest"*) {record} ;; esac')
    for tool in ("ruff", "mypy"):
        _stub(checkout / ".venv" / "bin" / tool, "exit 0")
    _stub(checkout / "scripts" / "setup-pipeline", record)
    _stub(
        checkout / "scripts" / "postgres",
        f'{record}\n[ "$1" = start ] && echo "export FEEDDELTA_PG_DIR={tmp_path}/pg"; exit 0',
    )
    _stub(checkout / ".venv-meltano" / "bin" / "uv", record)
    _stub(checkout / ".venv-airflow" / "bin" / "python", "exit 0")
    return checkout, log


def _call_lines(tmp_path: Path, *args: str, **variables: str) -> list[str]:
    """The stand-ins' calls, each as its name and arguments, of one run of scripts/test
    with these environment variables."""
    checkout, log = _checkout(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **variables}
    done = subprocess.run(
        [str(checkout / "scripts" / "test"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return log.read_text().splitlines()


def _calls(tmp_path: Path, *args: str, e2e: str | None = None) -> list[str]:
    variables = {} if e2e is None else {"FEEDDELTA_E2E": e2e}
    return [line.split()[0] for line in _call_lines(tmp_path, *args, **variables)]


SET_UP = ["setup-pipeline", "uv", "postgres"]


@pytest.mark.parametrize(
    ("args", "calls"),
    [
        ((), [*SET_UP, "python", "python", "postgres"]),  # CI: everything, as before
        (("tests/unit",), ["python"]),
        (("tests/unit/test_cli.py::test_x", "-q", "-k", "not slow"), ["python"]),
        (("tests/e2e/test_pipelines.py::test_x",), [*SET_UP, "python", "python", "postgres"]),
        (("tests",), [*SET_UP, "python", "python", "postgres"]),  # holds tests/e2e
        ((".", "-q"), [*SET_UP, "python", "python", "postgres"]),
        (("-m", "e2e"), [*SET_UP, "python", "python", "postgres"]),
        (("-q", "-x"), [*SET_UP, "python", "python", "postgres"]),  # no path: every test
        (("-m", "not e2e"), ["python"]),
        (("-m", "not e2e and not slow", "-q"), ["python"]),
        (("-m", "slow and  not e2e"), ["python"]),
        (("tests/e2e", "-k", "not e2e"), ["python"]),  # -k matches marker names too
        (("-m", "not e2e or slow"), [*SET_UP, "python", "python", "postgres"]),
        (("-m", "not (e2e and slow)"), [*SET_UP, "python", "python", "postgres"]),
        (("-k", "e2e"), [*SET_UP, "python", "python", "postgres"]),
    ],
    ids=[
        "none",
        "unit",
        "unit-node-and-options",
        "e2e-node",
        "tests",
        "root",
        "marker",
        "options",
        "not-e2e",
        "not-e2e-and-more",
        "and-not-e2e",
        "keyword-not-e2e",
        "not-e2e-or",
        "not-grouped",
        "keyword-e2e",
    ],
)
def test_sets_up_end_to_end_tools_only_when_an_e2e_test_can_run(
    tmp_path: Path, args: tuple[str, ...], calls: list[str]
) -> None:
    assert _calls(tmp_path, *args) == calls


def test_feeddelta_e2e_0_skips_the_set_up_and_the_e2e_pass(tmp_path: Path) -> None:
    assert _call_lines(tmp_path, FEEDDELTA_E2E="0") == ["python -m pytest -n 2 -m not e2e"]


@pytest.mark.parametrize(
    "args", [(), ("-m", "e2e"), ("tests/e2e",)], ids=["none", "marker", "path"]
)
def test_feeddelta_e2e_0_runs_no_e2e_test_in_one_process(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    calls = _call_lines(tmp_path, *args, FEEDDELTA_E2E="0", FEEDDELTA_TEST_WORKERS="0")
    assert calls == [" ".join(["python -m pytest -m not e2e", *args])]
