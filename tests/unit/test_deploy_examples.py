"""The deployment examples are valid and wire shards the way the tap expects."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
