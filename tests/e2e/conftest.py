"""Fixtures for the end-to-end tests: Meltano, the demo feeds, PostgreSQL, DuckDB.

The tests run Meltano in an isolated copy of the project (meltano.yml + transform/) in a
temp dir, with its own system database (state, runs) and output/, so they never touch the
developer's .meltano state or warehouse. The plugin virtualenvs are not reinstalled: the
copy's .meltano/{extractors,loaders,utilities} link to the repository's, which
scripts/setup-pipeline fills (idempotent, seconds when already installed).

Skips (with the reason) when FEEDDELTA_E2E is "0", before any fixture sets anything up, and
when the Meltano venv is absent and FEEDDELTA_E2E is not "1"; with FEEDDELTA_E2E=1 (CI)
anything missing is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.harness import (
    MELTANO,
    PLUGIN_DIRS,
    ROOT,
    DemoServer,
    MeltanoProject,
    Postgres,
    clean_env,
)

IS_REQUIRED = os.environ.get("FEEDDELTA_E2E") == "1"
_PROJECTS: list[MeltanoProject] = []  # for the timing report


def pytest_runtest_setup(item: pytest.Item) -> None:
    """FEEDDELTA_E2E=0 skips an e2e test here, before its session fixtures would install
    Meltano's plugins and start a PostgreSQL (this hook runs ahead of fixture set-up)."""
    if os.environ.get("FEEDDELTA_E2E") == "0" and item.get_closest_marker("e2e"):
        pytest.skip("FEEDDELTA_E2E=0")


def _missing(reason: str) -> None:
    if IS_REQUIRED:
        pytest.fail(f"FEEDDELTA_E2E=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> MeltanoProject:
    if not MELTANO.exists() and not IS_REQUIRED:
        pytest.skip(
            f"{MELTANO.relative_to(ROOT)} is absent (run scripts/setup-pipeline, "
            "or set FEEDDELTA_E2E=1 to require these tests)"
        )
    started = time.monotonic()
    setup = subprocess.run(
        [str(ROOT / "scripts" / "setup-pipeline"), "--quiet"],
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
        check=False,
    )
    if setup.returncode != 0:
        _missing(f"scripts/setup-pipeline failed:\n{setup.stdout[-4000:]}")
    for sub in PLUGIN_DIRS:
        if not (ROOT / ".meltano" / sub).is_dir():
            _missing(f".meltano/{sub} is missing after scripts/setup-pipeline")

    root = tmp_path_factory.mktemp("meltano-project")
    shutil.copy2(ROOT / "meltano.yml", root / "meltano.yml")
    shutil.copytree(
        ROOT / "transform", root / "transform", ignore=shutil.ignore_patterns("target", "logs")
    )
    (root / ".meltano").mkdir()
    for sub in PLUGIN_DIRS:
        (root / ".meltano" / sub).symlink_to(ROOT / ".meltano" / sub, target_is_directory=True)
    (root / "output").mkdir()
    project = MeltanoProject(root=root, env=clean_env())
    project.timings["scripts/setup-pipeline"] = time.monotonic() - started
    _PROJECTS.append(project)
    return project


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    work = tmp_path_factory.mktemp("demo-server")
    port_file, phase_file = work / "port", work / "phase"
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "demo" / "serve.py"),
            "--port",
            "0",
            "--port-file",
            str(port_file),
            "--phase-file",
            str(phase_file),
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("demo/serve.py did not start")
            time.sleep(0.05)
        port = int(port_file.read_text())
        yield DemoServer(f"http://127.0.0.1:{port}", phase_file, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Postgres]:
    """A PostgreSQL on loopback with a fresh database for the tests.

    Reuses the throwaway server that `eval "$(scripts/postgres start)"` announced in the
    environment (scripts/test does that), else starts one of its own on a free port and
    stops it (by its postmaster PID, through scripts/postgres stop) at the end.
    """
    script = str(ROOT / "scripts" / "postgres")
    env = clean_env()
    cluster_dir = ""
    settings = {
        name: os.environ[name]
        for name in (
            "TARGET_POSTGRES_HOST",
            "TARGET_POSTGRES_PORT",
            "TARGET_POSTGRES_USER",
            "TARGET_POSTGRES_PASSWORD",
        )
        if name in os.environ
    }
    if not (os.environ.get("FEEDDELTA_PG_DIR") and len(settings) == 4):
        work = tmp_path_factory.mktemp("postgres")
        env["FEEDDELTA_PG_STATE"] = str(work / "cluster.dir")
        proc = subprocess.run(
            [script, "start", "0"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if proc.returncode != 0:
            _missing(f"scripts/postgres start failed:\n{proc.stderr[-3000:]}")
        settings = {}
        for line in proc.stdout.splitlines():
            if line.startswith("export "):
                name, _, value = line.removeprefix("export ").partition("=")
                settings[name] = value.strip("'")
        cluster_dir = settings.pop("FEEDDELTA_PG_DIR")
    settings["TARGET_POSTGRES_DATABASE"] = "postgres"
    psql = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"
    admin = Postgres(settings, psql)
    try:
        admin.query("drop database if exists feeddelta_e2e")
        admin.query("create database feeddelta_e2e")
        # A server outside UTC (as many are): the loaded timestamps must still be UTC.
        admin.query("alter database feeddelta_e2e set timezone to 'America/New_York'")
        yield Postgres({**settings, "TARGET_POSTGRES_DATABASE": "feeddelta_e2e"}, psql)
        admin.query("drop database if exists feeddelta_e2e")
    finally:
        if cluster_dir:
            subprocess.run([script, "stop", cluster_dir], env=env, timeout=120, check=False)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How long each Meltano command took (to keep CI within its budget)."""
    for project in _PROJECTS:
        terminalreporter.write_sep("-", "e2e timings")
        for name, seconds in project.timings.items():
            terminalreporter.write_line(f"{seconds:6.1f} s  {name}")
