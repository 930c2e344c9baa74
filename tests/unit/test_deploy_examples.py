"""The deployment examples are valid and wire shards the way the tap expects."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import yaml

from tap_feeddelta.config import CONFIG_SCHEMA

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _setting(env_name: str) -> str:
    assert env_name.startswith("TAP_FEEDDELTA_")
    return env_name.removeprefix("TAP_FEEDDELTA_").lower()


def test_kubernetes_indexed_job_is_valid_and_wires_shards() -> None:
    path = DEPLOY / "kubernetes" / "feeddelta-shards.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", "-k", "1.33.0", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    job = yaml.safe_load(path.read_text())
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    [container] = spec["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    for name in env:
        if name.startswith("TAP_FEEDDELTA_"):
            assert _setting(name) in CONFIG_SCHEMA["properties"], name
    assert int(env["TAP_FEEDDELTA_SHARD_COUNT"]["value"]) == spec["completions"]
    assert spec["parallelism"] == spec["completions"]
    index_source = env["TAP_FEEDDELTA_SHARD_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert "job-completion-index" in index_source
    command = " ".join(container["args"])
    assert '--state-id-suffix "shard-${JOB_COMPLETION_INDEX}"' in command


class _Recorder:
    """Just enough of Airflow's DAG and BashOperator to load the DAG file."""

    tasks: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class _Bash:
    def __init__(self, **kwargs: Any) -> None:
        _Recorder.tasks.append(kwargs)


def test_airflow_dag_runs_one_meltano_task_per_shard(monkeypatch: Any) -> None:
    # Airflow itself is too heavy to install for CI; the DAG file is loaded against
    # stand-ins of the two names it uses, and its tasks are checked.
    airflow = types.ModuleType("airflow")
    airflow.DAG = _Recorder  # type: ignore[attr-defined]
    operators = types.ModuleType("airflow.operators")
    bash = types.ModuleType("airflow.operators.bash")
    bash.BashOperator = _Bash  # type: ignore[attr-defined]
    for name, module in [
        ("airflow", airflow),
        ("airflow.operators", operators),
        ("airflow.operators.bash", bash),
    ]:
        monkeypatch.setitem(sys.modules, name, module)
    _Recorder.tasks = []
    spec = importlib.util.spec_from_file_location(
        "feeddelta_shards", DEPLOY / "airflow" / "feeddelta_shards.py"
    )
    assert spec and spec.loader
    dag_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dag_module)

    count = dag_module.SHARD_COUNT
    assert len(_Recorder.tasks) == count
    for index, task in enumerate(_Recorder.tasks):
        assert f"--state-id-suffix shard-{index} tap-feeddelta" in task["bash_command"]
        assert task["env"] == {
            "TAP_FEEDDELTA_SHARD_COUNT": str(count),
            "TAP_FEEDDELTA_SHARD_INDEX": str(index),
        }
        assert all(_setting(name) in CONFIG_SCHEMA["properties"] for name in task["env"])
