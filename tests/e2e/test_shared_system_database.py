"""Meltano's system database in PostgreSQL, as shards share it (docs/scheduling-and-scaling.md):
the Meltano that scripts/setup-pipeline installs can use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.harness import MeltanoProject, Postgres

pytestmark = pytest.mark.e2e

SYSTEM_DATABASE = "feeddelta_e2e_meltano"
STATE_ID = "dev:tap-feeddelta-to-target-jsonl:shared-db"


def test_state_is_kept_in_a_postgres_system_database(
    project: MeltanoProject, postgres: Postgres, tmp_path: Path
) -> None:
    postgres.query(f"drop database if exists {SYSTEM_DATABASE}")
    postgres.query(f"create database {SYSTEM_DATABASE}")
    try:
        pg = postgres.env
        uri = (
            f"postgresql+psycopg://{pg['TARGET_POSTGRES_USER']}:{pg['TARGET_POSTGRES_PASSWORD']}"
            f"@{pg['TARGET_POSTGRES_HOST']}:{pg['TARGET_POSTGRES_PORT']}/{SYSTEM_DATABASE}"
        )
        env = {"MELTANO_DATABASE_URI": uri}
        state_file = tmp_path / "state.json"
        state_file.write_text('{"singer_state": {"bookmarks": {"feed_items": {"partitions": []}}}}')
        meltano_state = ("--environment=dev", "state")
        project.run(
            *meltano_state, "set", "--force", "--input-file", str(state_file), STATE_ID, env=env
        ).check()
        listed = project.run(*meltano_state, "list", env=env).check()
        assert STATE_ID in listed.output
        # In PostgreSQL, where every shard's project directory finds it.
        stored = Postgres({**pg, "TARGET_POSTGRES_DATABASE": SYSTEM_DATABASE}, postgres.psql)
        assert [STATE_ID] in stored.query("select state_id from state")
    finally:
        postgres.query(f"drop database if exists {SYSTEM_DATABASE}")
