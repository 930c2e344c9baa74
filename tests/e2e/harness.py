"""Helpers of the end-to-end tests: the Meltano project copy, the demo server, PostgreSQL,
DuckDB queries. The fixtures that make them are in conftest.py."""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MELTANO = ROOT / ".venv-meltano" / "bin" / "meltano"
PLUGIN_DIRS = ("extractors", "loaders", "utilities")
DBT_PYTHON = ROOT / ".meltano" / "utilities" / "dbt-duckdb" / "venv" / "bin" / "python"

# A Meltano run of the demo feeds takes 5-15 s here; generous caps for a loaded CI machine.
RUN_TIMEOUT_SECONDS = 300


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


def clean_env() -> dict[str, str]:
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


@dataclass
class Postgres:
    env: dict[str, str]
    psql: str

    def query(self, sql: str, time_zone: str | None = None, **variables: str) -> list[list[str]]:
        """Rows of a query as text; psql substitutes :'name' with the quoted variable.
        ``time_zone``: the session's TimeZone (else the database's own)."""
        settings = [f"--set={name}={value}" for name, value in variables.items()]
        env = {**os.environ, "PGTZ": time_zone} if time_zone else None
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
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        return [line.split("\t") for line in proc.stdout.splitlines() if line]


def duckdb_query(
    path: Path, sql: str, *params: str, time_zone: str | None = None
) -> list[tuple[Any, ...]]:
    """Rows of a query on a DuckDB file, run with the duckdb of the dbt venv (JSON-safe).
    ``time_zone``: the session's TimeZone (else DuckDB's default, the machine's)."""
    code = (
        "import duckdb, json, sys\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "if sys.argv[4]:\n"
        "    con.execute('set TimeZone = ?', [sys.argv[4]])\n"
        "rows = con.execute(sys.argv[2], json.loads(sys.argv[3])).fetchall()\n"
        "print(json.dumps(rows, default=str))\n"
    )
    proc = subprocess.run(
        [str(DBT_PYTHON), "-c", code, str(path), sql, json.dumps(list(params)), time_zone or ""],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [tuple(row) for row in json.loads(proc.stdout)]
