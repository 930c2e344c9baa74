"""The deployment examples are valid and wire shards the way the tap expects."""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.util
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
import yaml

from tap_feeddelta.config import CONFIG_SCHEMA

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBERNETES = DEPLOY / "kubernetes" / "feeddelta-shards.yaml"
DOCKERFILE = DEPLOY / "kubernetes" / "Dockerfile"
# Where scripts/setup-pipeline puts Meltano, relative to the checkout it sets up.
SETUP_PIPELINE_MELTANO = ".venv-meltano/bin/meltano"
AIRFLOW_DAG = DEPLOY / "airflow" / "feeddelta_shards.py"
# Where meltano.yml's target-postgres settings come from; its defaults (127.0.0.1:5433,
# database warehouse) only fit the throwaway server of scripts/postgres.
POSTGRES_ENV = (
    "TARGET_POSTGRES_HOST",
    "TARGET_POSTGRES_PORT",
    "TARGET_POSTGRES_USER",
    "TARGET_POSTGRES_PASSWORD",
    "TARGET_POSTGRES_DATABASE",
)
# Paths a used checkout may hold that must never reach the image: the build machine's
# virtualenvs, Meltano's run files and system database, outputs, and config, state or .env
# files (feed URLs with tokens) written into the project directory or one of the folders
# the image takes whole (transform/, scripts/).
KEPT_OUT_OF_IMAGE = (
    ".venv/bin/python", ".venv-meltano/bin/meltano", ".meltano/meltano.db",
    "output/warehouse.duckdb", ".git/config", ".env", ".env.local", "config.json",
    "state.json", "out.jsonl", "transform/target/manifest.json",
    "tap_feeddelta/__pycache__/x.pyc", "transform/.env", "scripts/.env.local",
    "transform/.venv/bin/dbt",
)  # fmt: skip
# A stand-in for meltano: records its PID and arguments, and how it was stopped.
FAKE_MELTANO = """#!/bin/sh
trap 'echo TERM >> "$FAKE_MELTANO_OUT"; exit 143' TERM
echo "$$ $*" > "$FAKE_MELTANO_OUT.tmp" && mv "$FAKE_MELTANO_OUT.tmp" "$FAKE_MELTANO_OUT"
while :; do sleep 0.05; done
"""


def _setting(env_name: str) -> str:
    assert env_name.startswith("TAP_FEEDDELTA_")
    return env_name.removeprefix("TAP_FEEDDELTA_").lower()


def _documents() -> dict[str, dict[str, Any]]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all(KUBERNETES.read_text()) if doc}


def _container() -> dict[str, Any]:
    job = _documents()["CronJob"]["spec"]["jobTemplate"]["spec"]
    [container] = job["template"]["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def test_kubernetes_cronjob_is_valid_and_wires_shards() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", "-k", "1.33.0", str(KUBERNETES)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    documents = _documents()
    cron = documents["CronJob"]["spec"]
    # A tick while the last run still goes is skipped: Meltano would refuse its pods anyway
    # (same state ids), and Replace would kill a run in the middle.
    assert cron["concurrencyPolicy"] == "Forbid"
    spec = cron["jobTemplate"]["spec"]
    assert spec["completionMode"] == "Indexed"
    container = _container()
    env = {e["name"]: e for e in container["env"]}
    for name in env:
        if name.startswith("TAP_FEEDDELTA_"):
            assert _setting(name) in CONFIG_SCHEMA["properties"], name
    assert int(env["TAP_FEEDDELTA_SHARD_COUNT"]["value"]) == spec["completions"]
    assert spec["parallelism"] == spec["completions"]
    index_source = env["TAP_FEEDDELTA_SHARD_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert "job-completion-index" in index_source

    # Every connection setting from the cluster, none left to meltano.yml's local defaults;
    # the password and the state store's URI from the Secret.
    config_map = documents["ConfigMap"]["metadata"]["name"]
    for name in POSTGRES_ENV:
        source = env[name]["valueFrom"]
        if name == "TARGET_POSTGRES_PASSWORD":
            assert "secretKeyRef" in source
        else:
            assert source["configMapKeyRef"]["name"] == config_map
            assert source["configMapKeyRef"]["key"] in documents["ConfigMap"]["data"]
    assert "secretKeyRef" in env["MELTANO_DATABASE_URI"]["valueFrom"]


def test_kubernetes_container_command_becomes_meltano_and_gets_sigterm(tmp_path: Path) -> None:
    """The shell execs Meltano: as the container's PID 1 it gets the kubelet's SIGTERM.

    A shell that stays PID 1 has no handler for SIGTERM, so the kernel drops it: Meltano and
    the tap run on to the SIGKILL, and Meltano's run record stays "running" for 5 minutes.
    """
    container = _container()
    # The image's project directory as scripts/setup-pipeline leaves it; no meltano on the
    # PATH (the image puts none there: a bare `meltano` would exit 127).
    workdir = tmp_path / "project"
    meltano = workdir / SETUP_PIPELINE_MELTANO
    meltano.parent.mkdir(parents=True)
    meltano.write_text(FAKE_MELTANO)
    meltano.chmod(0o755)
    out = tmp_path / "meltano.out"
    env = {
        "PATH": "/usr/bin:/bin",
        "JOB_COMPLETION_INDEX": "3",
        "FAKE_MELTANO_OUT": str(out),
    }
    # In a session of its own, so that the finally can stop a meltano the shell left behind.
    proc = subprocess.Popen(
        [*container["command"], *container["args"]],
        cwd=workdir,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        pid, _, argv = out.read_text().strip().partition(" ")
        assert argv == "run --state-id-suffix shard-3 tap-feeddelta target-postgres"
        assert int(pid) == proc.pid, "the shell stayed the parent of meltano (no exec)"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
        assert out.read_text().splitlines()[-1] == "TERM"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (INSTRUCTION, arguments), continuation lines joined."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    pairs = [line.partition(" ")[::2] for line in lines if line and not line.startswith("#")]
    return [(name.upper(), args.strip()) for name, args in pairs]


def test_dockerfile_builds_the_image_the_kubernetes_example_runs() -> None:
    """The image is this project set up by scripts/setup-pipeline (as CI sets up its
    checkout) in the container's working directory, so the manifest's Meltano is there."""
    instructions = _dockerfile()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    workdirs = [args for name, args in instructions if name == "WORKDIR"]
    container = _container()
    assert workdirs == [container["workingDir"]]
    # The whole project copied into it (build context: the repository root), then set up.
    assert ("COPY", f"--chown=10001:10001 . {container['workingDir']}") in instructions
    assert ("RUN", "scripts/setup-pipeline") in instructions
    # Not root: Kubernetes checks a numeric USER against runAsNonRoot.
    [user] = [args for name, args in instructions if name == "USER"]
    assert int(user) > 0
    assert [n for n, _ in instructions].index("USER") < instructions.index(
        ("RUN", "scripts/setup-pipeline")
    )
    assert container["securityContext"]["runAsNonRoot"] is True
    # No download cache stays in the image: pip's (the two .venvs) nor uv's, with which
    # Meltano 4 installs the plugins (~270 MB under the user's home in the dry run).
    env = dict(
        kv.split("=", 1) for name, args in instructions if name == "ENV" for kv in args.split()
    )
    assert env.get("PIP_NO_CACHE_DIR") == "1" and env.get("UV_NO_CACHE") == "1"
    # The manifest runs the Meltano that scripts/setup-pipeline makes, from that directory.
    assert f"exec {SETUP_PIPELINE_MELTANO} run " in container["args"][0]
    assert f"{SETUP_PIPELINE_MELTANO} install" in (ROOT / "scripts" / "setup-pipeline").read_text()
    # Only what the image needs goes in: never the build machine's virtualenvs, outputs,
    # or a config, state or .env written into the project directory (feed tokens).
    sent = _docker_context(ROOT)
    for path in KEPT_OUT_OF_IMAGE:
        assert path not in sent, path
    # What the dry run of the build (2026-12-02) saw read: setup-pipeline's editable install
    # reads the package, schemas/, README.md and LICENSE; the pods' run reads meltano.yml,
    # the package and schemas/. transform/ is for dbt in the image.
    tracked = _tracked_files(ROOT)
    needed = [p for p in tracked if p.startswith(("tap_feeddelta/", "schemas/", "transform/"))]
    needed += ["scripts/setup-pipeline", "meltano.yml", "pyproject.toml", "README.md", "LICENSE"]
    assert "tap_feeddelta/tap.py" in needed and "transform/dbt_project.yml" in needed
    for path in needed:
        assert path in sent, path


def _tracked_files(root: Path) -> list[str]:
    return subprocess.run(
        ["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()


def _docker_context(root: Path) -> set[str]:
    """Which of a few paths, tracked or not, ``docker build`` sends from ``root`` by its
    .dockerignore: its patterns in order, the last that matches a path or one of its
    parents deciding (Docker's rule; "*" and "**/" as Docker reads them, enough for this
    file's patterns)."""
    patterns = [
        line.strip()
        for line in (root / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    paths = [*_tracked_files(root), *KEPT_OUT_OF_IMAGE]

    def excluded(path: str) -> bool:
        verdict = False
        parts = path.split("/")
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        for pattern in patterns:
            negated = pattern.startswith("!")
            glob = pattern.removeprefix("!")
            if any(_docker_match(glob, prefix) for prefix in prefixes):
                verdict = not negated
        return verdict

    return {path for path in paths if not excluded(path)}


def _docker_match(glob: str, path: str) -> bool:
    if glob.startswith("**/"):
        return any(_docker_match(glob[3:], "/".join(path.split("/")[n:]))
                   for n in range(path.count("/") + 1))  # fmt: skip
    return path.count("/") == glob.count("/") and fnmatch.fnmatchcase(path, glob)


class _Dag:
    """Stands in for airflow.sdk.DAG: a context manager that takes any arguments."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def __enter__(self) -> _Dag:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _load_dag_module(monkeypatch: pytest.MonkeyPatch) -> tuple[types.ModuleType, list[Any]]:
    """The Airflow example run with stand-ins for Airflow (tests/e2e loads it in a real
    Airflow): the module and the keyword arguments of each BashOperator it made."""
    operators: list[dict[str, Any]] = []
    bash = types.ModuleType("airflow.providers.standard.operators.bash")
    bash.BashOperator = lambda **kwargs: operators.append(kwargs)  # type: ignore[attr-defined]
    sdk = types.ModuleType("airflow.sdk")
    sdk.DAG = _Dag  # type: ignore[attr-defined]
    packages = ("airflow", "airflow.providers", "airflow.providers.standard")
    for name in (*packages, "airflow.providers.standard.operators"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, bash.__name__, bash)
    monkeypatch.setitem(sys.modules, sdk.__name__, sdk)
    spec = importlib.util.spec_from_file_location("feeddelta_shards", AIRFLOW_DAG)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, operators


def test_airflow_tasks_run_the_meltano_of_a_checkout_set_up_as_the_readme_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scripts/setup-pipeline puts Meltano in the checkout's .venv-meltano/bin, which is
    not on a worker's PATH: a bare `meltano` would exit 127 on every shard."""
    module, operators = _load_dag_module(monkeypatch)
    assert [op["bash_command"] for op in operators] == [
        module.shard_command(i) for i in range(module.SHARD_COUNT)
    ]
    monkeypatch.setattr(module, "MELTANO_PROJECTS", str(tmp_path / "shard-{index}"))
    out = tmp_path / "meltano.out"
    for index in (0, 1):
        meltano = tmp_path / f"shard-{index}" / ".venv-meltano" / "bin" / "meltano"
        meltano.parent.mkdir(parents=True)
        meltano.write_text(f'#!/bin/sh\necho "{index} $*" >> "{out}"\n')
        meltano.chmod(0o755)
        done = subprocess.run(
            ["bash", "-c", module.shard_command(index)],
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},  # no meltano on it
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    assert out.read_text().splitlines() == [
        f"{index} run --state-id-suffix shard-{index} tap-feeddelta target-postgres"
        for index in (0, 1)
    ]


# docs/scheduling-and-scaling.md: N shards side by side may fetch N x max_per_host from one host;
# lower it so that N x it is what one host should take (1 with 4 shards: 4 at once).
FETCHES_PER_HOST_ACROSS_SHARDS = 4


def test_kubernetes_shards_lower_max_per_host_as_the_readme_advises() -> None:
    env = {e["name"]: e for e in _container()["env"]}
    shards = int(env["TAP_FEEDDELTA_SHARD_COUNT"]["value"])
    per_host = int(env["TAP_FEEDDELTA_MAX_PER_HOST"]["value"])
    assert per_host >= 1 and shards * per_host <= FETCHES_PER_HOST_ACROSS_SHARDS


def test_airflow_shards_lower_max_per_host_as_the_readme_advises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, operators = _load_dag_module(monkeypatch)
    assert len(operators) == module.SHARD_COUNT
    for op in operators:
        per_host = int(op["env"]["TAP_FEEDDELTA_MAX_PER_HOST"])
        assert per_host >= 1 and module.SHARD_COUNT * per_host <= FETCHES_PER_HOST_ACROSS_SHARDS
