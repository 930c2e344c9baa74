"""Fixtures for the end-to-end tests: Meltano, the demo feeds, PostgreSQL, DuckDB.

The tests run Meltano in an isolated copy of the project (meltano.yml + transform/) in a
temp dir, with its own system database (state, runs) and output/, so they never touch the
developer's .meltano state or warehouse. The plugin virtualenvs are not reinstalled: the
copy's .meltano/{extractors,loaders,utilities} link to the repository's, which
scripts/setup-pipeline fills (idempotent, seconds when already installed).

Skips (with the reason) only when the Meltano venv is absent and FEEDDELTA_E2E is not "1";
with FEEDDELTA_E2E=1 (CI) anything missing is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MELTANO = ROOT / ".venv-meltano" / "bin" / "meltano"
PLUGIN_DIRS = ("extractors", "loaders", "utilities")
DBT_PYTHON = ROOT / ".meltano" / "utilities" / "dbt-duckdb" / "venv" / "bin" / "python"
IS_REQUIRED = os.environ.get("FEEDDELTA_E2E") == "1"

_PROJECTS: list[MeltanoProject] = []  # for the timing report

# A Meltano run of the demo feeds takes 5-15 s here; generous caps for a loaded CI machine.
RUN_TIMEOUT_SECONDS = 300


def _missing(reason: str) -> None:
    if IS_REQUIRED:
        pytest.fail(f"FEEDDELTA_E2E=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass
class Result:
    args: list[str]
    returncode: int
    output: str
    seconds: float

    def check(self) -> Result:
        assert self.returncode == 0, (
            f"meltano {' '.join(self.args)} exited {self.returncode} after "
            f"{self.seconds:.0f} s:\n{self.output[-6000:]}"
        )
        return self


@dataclass
class MeltanoProject:
    """An isolated copy of the Meltano project."""

    root: Path
    env: dict[str, str]
    timings: dict[str, float] = field(default_factory=dict)

    def command(self, *args: str) -> list[str]:
        return [str(MELTANO), *args]

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(*args),
            cwd=self.root,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, *args: str, env: dict[str, str] | None = None) -> Result:
        started = time.monotonic()
        proc = subprocess.run(
            self.command(*args),
            cwd=self.root,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=RUN_TIMEOUT_SECONDS,
            check=False,
        )
        seconds = time.monotonic() - started
        self.timings[" ".join(args)] = seconds
        return Result(list(args), proc.returncode, proc.stdout, seconds)

    def state(self, state_id: str) -> dict[str, Any]:
        result = self.run("state", "get", state_id).check()
        start = result.output.index("{")
        value: dict[str, Any] = json.JSONDecoder().raw_decode(result.output[start:])[0]
        return value


def _clean_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MELTANO_", "TAP_FEEDDELTA_", "TARGET_", "DBT_", "FEEDDELTA_"))
        and k not in ("VIRTUAL_ENV", "PYTHONPATH")
    }
    env.update(
        MELTANO_SEND_ANONYMOUS_USAGE_STATS="false",
        MELTANO_CLI_DISABLE_VERSION_CHECK="true",
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        MELTANO_CLI_LOG_LEVEL="info",
        NO_COLOR="1",
    )
    return env


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
        env=_clean_env(),
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
    project = MeltanoProject(root=root, env=_clean_env())
    project.timings["scripts/setup-pipeline"] = time.monotonic() - started
    _PROJECTS.append(project)
    return project


@dataclass
class DemoServer:
    base_url: str
    phase_file: Path
    process: subprocess.Popen[bytes]

    @property
    def feed_urls(self) -> list[str]:
        return [
            f"{self.base_url}/{name}" for name in ("rss.xml", "atom.xml", "feed.json", "gone.xml")
        ]

    @property
    def healthy_urls(self) -> list[str]:
        return self.feed_urls[:3]

    def set_phase(self, phase: int) -> None:
        self.phase_file.write_text(f"{phase}\n")


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


@dataclass
class Postgres:
    env: dict[str, str]
    psql: str

    def query(self, sql: str, **variables: str) -> list[list[str]]:
        """Rows of a query as text; psql substitutes :'name' with the quoted variable."""
        settings = [f"--set={name}={value}" for name, value in variables.items()]
        proc = subprocess.run(
            [
                self.psql,
                "-h",
                self.env["TARGET_POSTGRES_HOST"],
                "-p",
                self.env["TARGET_POSTGRES_PORT"],
                "-U",
                "postgres",
                "-d",
                self.env["TARGET_POSTGRES_DATABASE"],
                "-X",
                "-A",
                "-t",
                "-F",
                "\t",
                "-v",
                "ON_ERROR_STOP=1",
                *settings,
            ],
            input=sql,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return [line.split("\t") for line in proc.stdout.splitlines() if line]


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Postgres]:
    work = tmp_path_factory.mktemp("postgres")
    env = {**_clean_env(), "FEEDDELTA_PG_STATE": str(work / "cluster.dir")}
    script = str(ROOT / "scripts" / "postgres")
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
    settings: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("export "):
            name, _, value = line.removeprefix("export ").partition("=")
            settings[name] = value.strip("'")
    cluster_dir = settings.pop("FEEDDELTA_PG_DIR")
    psql = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"
    try:
        yield Postgres(settings, psql)
    finally:
        # stops the postmaster of this cluster (by its PID file) and removes its data
        subprocess.run([script, "stop", cluster_dir], env=env, timeout=120, check=False)


def duckdb_query(path: Path, sql: str, *params: str) -> list[tuple[Any, ...]]:
    """Rows of a query on a DuckDB file, run with the duckdb of the dbt venv (JSON-safe)."""
    code = (
        "import duckdb, json, sys\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "rows = con.execute(sys.argv[2], json.loads(sys.argv[3])).fetchall()\n"
        "print(json.dumps(rows, default=str))\n"
    )
    proc = subprocess.run(
        [str(DBT_PYTHON), "-c", code, str(path), sql, json.dumps(list(params))],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [tuple(row) for row in json.loads(proc.stdout)]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How long each Meltano command took (to keep CI within its budget)."""
    for project in _PROJECTS:
        terminalreporter.write_sep("-", "e2e timings")
        for name, seconds in project.timings.items():
            terminalreporter.write_line(f"{seconds:6.1f} s  {name}")
