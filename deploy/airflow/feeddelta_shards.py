"""Airflow DAG: tap-feeddelta sharded over parallel `meltano run` tasks, one per shard.

Each task runs the same Meltano project with its own shard index and its own Meltano state
id (`--state-id-suffix shard-<i>`). Airflow schedules and retries; the tap brings no
scheduler of its own. Keep SHARD_COUNT in step with the state (README, "Scaling out").

Each shard runs from its own copy of the project (MELTANO_PROJECTS): Meltano 4.4 writes an
extractor's catalog to one file in the project (.meltano/run/<extractor>/, meltano#8763),
so two runs of one extractor from the same directory at once collide. The copies share
one Meltano system database (MELTANO_DATABASE_URI, from an Airflow variable), so every
shard's state id lives in one place for `meltano state` and re-sharding.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG

SHARD_COUNT = 4
# Shards do not share max_per_host: 4 shards at the default 2 would fetch 8 at once from a
# host whose feeds hash to every shard. 1 each keeps it at 4 (README, "Scaling out").
MAX_PER_HOST = 1
# One checkout of this project per shard on the workers, each set up with
# scripts/setup-pipeline (README, "Pipelines").
MELTANO_PROJECTS = "/opt/feeddelta/shard-{index}"
# The checkout's own Meltano, relative to it: scripts/setup-pipeline installs it into
# .venv-meltano, which is not on a worker's PATH (a bare `meltano` would exit 127). The
# README's cron line runs the same one. Set it to "meltano" if yours is on the PATH.
MELTANO = ".venv-meltano/bin/meltano"
MELTANO_DATABASE_URI = "{{ var.value.feeddelta_meltano_database_uri }}"  # shared state store
LOADER = "target-postgres"
# Longer than Meltano's stale-run window. A task stopped by Airflow (execution_timeout, a
# cleared or failed task) gets SIGTERM, and Meltano closes its run record as it stops. A
# worker killed hard (OOM, lost machine) leaves the record "running" until its heartbeat is
# 5 minutes old, and Meltano refuses the shard's state id until then ("Another … pipeline
# is already running", exit 1): a retry inside that window would fail too.
RETRY_DELAY = timedelta(minutes=6)


def shard_command(index: int) -> str:
    return (
        f"cd {MELTANO_PROJECTS.format(index=index)} && "
        f"{MELTANO} run --state-id-suffix shard-{index} tap-feeddelta {LOADER}"
    )


def shard_env(index: int, count: int = SHARD_COUNT) -> dict[str, str]:
    return {
        "TAP_FEEDDELTA_SHARD_COUNT": str(count),
        "TAP_FEEDDELTA_SHARD_INDEX": str(index),
        "TAP_FEEDDELTA_MAX_PER_HOST": str(MAX_PER_HOST),
        "MELTANO_DATABASE_URI": MELTANO_DATABASE_URI,
    }


with DAG(
    dag_id="feeddelta_shards",
    schedule=timedelta(minutes=30),
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,  # overlapping runs of one shard would be refused by Meltano anyway
    default_args={"retries": 2, "retry_delay": RETRY_DELAY},
    tags=["tap-feeddelta"],
) as dag:
    for shard in range(SHARD_COUNT):
        BashOperator(
            task_id=f"shard_{shard}",
            bash_command=shard_command(shard),
            env=shard_env(shard),
            append_env=True,
            # On timeout Airflow sends SIGTERM, which Meltano passes to the tap and the
            # loader at once: the run keeps the last STATE the loader confirmed (on a
            # flush; target-postgres flushes every 5 minutes), not the tap's final one.
            # Size the shards so that runs finish well inside it (README, "Runs stopped
            # part-way").
            execution_timeout=timedelta(minutes=25),
        )
