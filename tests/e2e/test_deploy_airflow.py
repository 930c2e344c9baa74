"""The Airflow example loads in a real Airflow (3.x) and runs one Meltano task per shard."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tap_feeddelta.config import CONFIG_SCHEMA
from tests.e2e.harness import ROOT

pytestmark = pytest.mark.e2e

AIRFLOW_PYTHON = ROOT / ".venv-airflow" / "bin" / "python"
# Meltano 4.4's HEARTBEAT_VALID_MINUTES: a run record with an older heartbeat is stale.
MELTANO_STALE_AFTER_SECONDS = 5 * 60

LOAD_DAG = """
import json, sys, warnings
from airflow.dag_processing.dagbag import DagBag
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    bag = DagBag(dag_folder=sys.argv[1])
dag = bag.dags.get("feeddelta_shards")
print(json.dumps({
    "import_errors": {k: str(v) for k, v in bag.import_errors.items()},
    "warnings": [str(w.message) for w in caught if "feeddelta" in str(w.filename)],
    "tasks": [
        {"task_id": t.task_id, "bash_command": t.bash_command, "env": t.env,
         "retries": t.retries, "retry_delay_seconds": t.retry_delay.total_seconds()}
        for t in (dag.tasks if dag else [])
    ],
}))
"""


def test_airflow_dag_loads_and_runs_one_meltano_task_per_shard(tmp_path: Path) -> None:
    if not AIRFLOW_PYTHON.exists():
        if os.environ.get("FEEDDELTA_E2E") == "1":
            pytest.fail("scripts/test installs .venv-airflow; it is missing")
        pytest.skip("no .venv-airflow (scripts/test installs it)")
    done = subprocess.run(
        [str(AIRFLOW_PYTHON), "-c", LOAD_DAG, str(ROOT / "deploy" / "airflow")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "AIRFLOW_HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["import_errors"] == {}
    assert report["warnings"] == []
    tasks = report["tasks"]
    assert [t["task_id"] for t in tasks] == [f"shard_{i}" for i in range(len(tasks))]
    assert len(tasks) >= 2
    for index, task in enumerate(tasks):
        assert f"--state-id-suffix shard-{index} tap-feeddelta" in task["bash_command"]
        # Each shard from its own project directory: one extractor's runs in one directory
        # share Meltano's catalog file and collide.
        assert task["bash_command"].startswith(f"cd /opt/feeddelta/shard-{index} && ")
        # The checkout's Meltano (scripts/setup-pipeline), not one on the worker's PATH.
        assert " && .venv-meltano/bin/meltano run " in task["bash_command"]
        tap_env = {k: v for k, v in task["env"].items() if k.startswith("TAP_FEEDDELTA_")}
        assert tap_env == {
            "TAP_FEEDDELTA_SHARD_COUNT": str(len(tasks)),
            "TAP_FEEDDELTA_SHARD_INDEX": str(index),
            # Shards do not share max_per_host: N x it at once per host
            # (docs/scheduling-and-scaling.md).
            "TAP_FEEDDELTA_MAX_PER_HOST": "1",
        }
        assert "MELTANO_DATABASE_URI" in task["env"]  # one state store for every shard
        # After a hard kill Meltano refuses the shard's state id until the run's heartbeat
        # is 5 minutes old: a retry inside that window would only be refused too.
        assert task["retries"] >= 1
        assert task["retry_delay_seconds"] > MELTANO_STALE_AFTER_SECONDS
        for name in tap_env:
            assert name.removeprefix("TAP_FEEDDELTA_").lower() in CONFIG_SCHEMA["properties"]
