"""Meltano end to end: the demo feeds into DuckDB and PostgreSQL, baseline then delta, then dbt.

The demo server (demo/serve.py) has two phases. Phase 1 holds 7 items (RSS 3, Atom 2,
JSON Feed 2) and a feed that answers 404; phase 2 adds an RSS item and an Atom entry and
edits the title of one RSS item; the JSON Feed answers 304. Row counts are exact: a lost row
(target-duckdb 0.8.0 with duckdb >= 1.3 drops the first row of every batch) fails the test.
"""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import PLUGIN_DIRS, ROOT, DemoServer, MeltanoProject, Postgres, duckdb_query
from tests.feedserver import FeedServer

pytestmark = pytest.mark.e2e

BASELINE_ITEMS = {
    "demo-rss-1",
    "demo-rss-2",
    "demo-rss-3",
    "urn:demo:atom:1",
    "urn:demo:atom:2",
    "demo-json-1",
    "demo-json-2",
}
DELTA_ITEMS = {("demo-rss-4", "new"), ("urn:demo:atom:3", "new"), ("demo-rss-2", "updated")}
RUN1_STATUS = {"rss.xml": "ok", "atom.xml": "ok", "feed.json": "ok", "gone.xml": "error"}
RUN2_STATUS = {"rss.xml": "ok", "atom.xml": "ok", "feed.json": "not_modified", "gone.xml": "error"}
# dbt tests that check what the models promise (transform/tests, source tests); each must run
# in every `dbt build` on both warehouses.
RULE_TESTS = {
    "source_unique_raw_feeds_feed_items_delivery_id",
    "feeddelta_source_unique_combination_raw_feeds_feed_health_monitor_id__feed_url__checked_at",
    "feed_items_current_version_number_is_version_count",
    "feed_item_versions_one_first_version_per_item",
    "feed_health_daily_counts_match_versions",
    "stg_feed_items_item_key_per_item",
    "stg_feed_items_item_key_separates_parts_holding_the_separator",
}


def tap_env(demo: DemoServer, monitor_id: str, first_run_mode: str = "emit_all") -> dict[str, str]:
    return {
        "TAP_FEEDDELTA_FEED_URLS": json.dumps(demo.feed_urls),
        "TAP_FEEDDELTA_MONITOR_ID": monitor_id,
        "TAP_FEEDDELTA_FIRST_RUN_MODE": first_run_mode,
        "TAP_FEEDDELTA_ALLOW_PRIVATE_NETWORKS": "true",
    }


def feed_name(url: str) -> str:
    return url.rsplit("/", 1)[1]


def dbt_test_results(project: MeltanoProject) -> dict[str, str]:
    """Status of each test of the project's last dbt build, by name (run_results.json)."""
    results = json.loads((project.root / "transform" / "target" / "run_results.json").read_text())
    statuses: dict[str, str] = {}
    for result in results["results"]:
        # test.<project>.<name>[.<hash>], unit_test.<project>.<model>.<name>
        kind, _, *names = result["unique_id"].split(".")
        if kind in ("test", "unit_test"):
            statuses[names[0] if kind == "test" else names[1]] = result["status"]
    return statuses


def assert_bookmarks(
    project: MeltanoProject, state_id: str, demo: DemoServer, monitor: str
) -> None:
    """Meltano's state store holds one bookmark per healthy feed, with its validators."""
    state = project.state(state_id)
    partitions = state["singer_state"]["bookmarks"]["feed_items"]["partitions"]
    by_url = {p["context"]["feed_url"]: p for p in partitions}
    assert set(demo.healthy_urls) <= set(by_url), sorted(by_url)
    for url in demo.healthy_urls:
        assert by_url[url]["context"]["monitor_id"] == monitor
        assert by_url[url].get("etag"), f"no ETag remembered for {url}"


# -- DuckDB --------------------------------------------------------------------------------


@dataclass
class DuckDBRuns:
    """What the warehouse held after the baseline run and after the delta run + dbt."""

    db: Path
    run1_items: list[tuple[Any, ...]]
    run1_health: list[tuple[Any, ...]]
    run2_items: list[tuple[Any, ...]]  # (item_id, change_type, delivery_id, is_from_run_2)
    run2_health: list[tuple[Any, ...]]  # (feed_url, status, is_from_run_2)
    run1_last: str  # the baseline's last checked_at, UTC without an offset
    dbt_tests: dict[str, str]  # status of each test of dbt-duckdb:build, by name


@pytest.fixture(scope="module")
def duckdb_runs(project: MeltanoProject, demo_server: DemoServer) -> DuckDBRuns:
    """Baseline (phase 1) then delta (phase 2) with dbt, into the project's DuckDB."""
    db = project.root / "output" / "warehouse.duckdb"
    env = tap_env(demo_server, "e2e_duckdb")

    demo_server.set_phase(1)
    project.run("run", "tap-feeddelta", "target-duckdb", env=env).check()
    run1_items = duckdb_query(
        db, "select item_id, change_type, delivery_id from raw_feeds.feed_items"
    )
    run1_health = duckdb_query(db, "select feed_url, status, error_code from raw_feeds.feed_health")
    (run1_last,) = duckdb_query(
        db, "select cast(max(checked_at) as varchar) from raw_feeds.feed_health"
    )[0]

    demo_server.set_phase(2)
    project.run("run", "tap-feeddelta", "target-duckdb", "dbt-duckdb:build", env=env).check()
    run2_items = duckdb_query(
        db,
        "select item_id, change_type, delivery_id, checked_at > cast(? as timestamp) "
        "from raw_feeds.feed_items",
        run1_last,
    )
    run2_health = duckdb_query(
        db,
        "select feed_url, status, checked_at > cast(? as timestamp) from raw_feeds.feed_health",
        run1_last,
    )
    return DuckDBRuns(
        db, run1_items, run1_health, run2_items, run2_health, run1_last, dbt_test_results(project)
    )


def test_duckdb_baseline_delta_and_dbt(
    project: MeltanoProject, demo_server: DemoServer, duckdb_runs: DuckDBRuns
) -> None:
    # run one: the baseline, every row (a lost row fails here)
    items, health = duckdb_runs.run1_items, duckdb_runs.run1_health
    assert len(items) == 7, items
    assert {i[0] for i in items} == BASELINE_ITEMS
    assert {i[1] for i in items} == {"new"}
    assert len({i[2] for i in items}) == 7
    assert len(health) == 4, health
    assert {feed_name(h[0]): h[1] for h in health} == RUN1_STATUS
    assert {h[2] for h in health if h[1] == "error"} == {"http_error"}

    # run two: exactly the changed items
    items, health = duckdb_runs.run2_items, duckdb_runs.run2_health
    assert len(items) == 10, items
    assert len({i[2] for i in items}) == 10, "a delivery_id appears twice"
    assert {(i[0], i[1]) for i in items if i[3]} == DELTA_ITEMS
    assert sum(1 for i in items if i[3]) == 3
    # the baseline rows were not re-sent (a re-send would carry a later checked_at)
    assert {i[0] for i in items if not i[3]} == BASELINE_ITEMS
    assert len(health) == 8, health
    assert {feed_name(h[0]): h[1] for h in health if h[2]} == RUN2_STATUS

    assert_bookmarks(project, "dev:tap-feeddelta-to-target-duckdb", demo_server, "e2e_duckdb")

    # the dbt models built by dbt-duckdb:build, with every test run and passed
    assert set(duckdb_runs.dbt_tests) >= RULE_TESTS, sorted(duckdb_runs.dbt_tests)
    assert set(duckdb_runs.dbt_tests.values()) == {"pass"}, duckdb_runs.dbt_tests
    db = duckdb_runs.db
    assert duckdb_query(db, "select count(*) from analytics.feed_item_versions") == [(10,)]
    assert duckdb_query(db, "select count(*) from analytics.feed_items_current") == [(9,)]
    assert duckdb_query(
        db,
        "select item_id, version_number, changed_fields from analytics.feed_item_versions "
        "where version_number > 1",
    ) == [("demo-rss-2", 2, "title")]
    # The models' timestamps are absolute instants (TIMESTAMPTZ): a session in any time
    # zone compares them with another instant the same way.
    assert duckdb_query(
        db,
        "select distinct data_type from information_schema.columns "
        "where table_schema = 'analytics' and data_type like 'TIMESTAMP%'",
    ) == [("TIMESTAMP WITH TIME ZONE",)]
    for zone in ("UTC", "Asia/Tokyo", "America/New_York"):
        assert duckdb_query(
            db,
            "select count(*) from analytics.feed_item_versions "
            "where checked_at > cast(? as timestamptz)",
            duckdb_runs.run1_last + "+00",
            time_zone=zone,
        ) == [(3,)], zone
    # The nested fields are JSON, not text.
    assert duckdb_query(
        db,
        "select distinct table_name, data_type from information_schema.columns "
        "where table_schema = 'analytics' and column_name like '%\\_json' escape '\\' "
        "order by 1",
    ) == [
        (name, "JSON")
        for name in (
            "feed_item_versions",
            "feed_items_current",
            "stg_feed_health",
            "stg_feed_items",
        )
    ]
    assert duckdb_query(
        db,
        "select tags_json -> 0, tags_json ->> 0 from analytics.feed_items_current "
        "where item_id = 'demo-rss-1'",
    ) == [('"demo"', "demo")]
    daily = duckdb_query(
        db,
        "select feed_url, checks, ok_checks, not_modified_checks, error_checks, error_codes, "
        "new_items, updated_items, is_stale, consecutive_failures, last_success_at is null "
        "from analytics.feed_health_daily",
    )
    by_feed = {feed_name(row[0]): row[1:] for row in daily}
    if len(daily) == 4:  # both runs on one UTC day (not across midnight)
        assert by_feed["rss.xml"] == (2, 2, 0, 0, None, 4, 1, False, 0, False)
        assert by_feed["atom.xml"] == (2, 2, 0, 0, None, 3, 0, False, 0, False)
        assert by_feed["feed.json"] == (2, 1, 1, 0, None, 2, 0, True, 0, False)
        # Never read: staleness unknown, never answered, failing since its first check.
        assert by_feed["gone.xml"] == (2, 0, 0, 2, "http_error=2", 0, 0, None, 2, True)


def test_dbt_docs_generate_documents_every_column(
    project: MeltanoProject, duckdb_runs: DuckDBRuns
) -> None:
    """`dbt docs generate` works and every model and column has a description."""
    project.run("invoke", "dbt-duckdb:docs-generate").check()
    target = project.root / "transform" / "target"
    assert (target / "index.html").exists()
    catalog = json.loads((target / "catalog.json").read_text())
    manifest = json.loads((target / "manifest.json").read_text())
    models = {k: n for k, n in manifest["nodes"].items() if n["resource_type"] == "model"}
    assert len(models) == 6
    for key, node in models.items():
        assert node["description"], f"model {node['name']} has no description"
        built = catalog["nodes"][key]["columns"]
        undocumented = [
            c for c in built if not node["columns"].get(c.lower(), {}).get("description")
        ]
        assert not undocumented, f"{node['name']}: no description for {undocumented}"


def test_baseline_only_emits_health_but_no_items(
    project: MeltanoProject, demo_server: DemoServer, tmp_path: Path
) -> None:
    demo_server.set_phase(1)
    out = tmp_path / "jsonl"
    out.mkdir()
    env = {
        **tap_env(demo_server, "e2e_baseline", first_run_mode="baseline_only"),
        "TARGET_JSONL_DESTINATION_PATH": str(out),
    }
    project.run(
        "run", "--state-id-suffix=baseline", "tap-feeddelta", "target-jsonl", env=env
    ).check()
    items_file = out / "feed_items.jsonl"
    items = items_file.read_text().splitlines() if items_file.exists() else []
    assert items == []
    health = [json.loads(line) for line in (out / "feed_health.jsonl").read_text().splitlines()]
    assert {feed_name(h["feed_url"]): h["status"] for h in health} == RUN1_STATUS
    assert sum(h["item_counts"]["remembered"] for h in health) == 7
    assert_bookmarks(
        project, "dev:tap-feeddelta-to-target-jsonl:baseline", demo_server, "e2e_baseline"
    )


def test_second_run_of_a_running_pipeline_is_refused(
    project: MeltanoProject, demo_server: DemoServer, tmp_path: Path
) -> None:
    """Meltano refuses a second `meltano run` of the same state id while one is running."""
    slow = f"{demo_server.base_url}/rss.xml?delay=20"
    env = {
        **tap_env(demo_server, "e2e_lock"),
        "TAP_FEEDDELTA_FEED_URLS": json.dumps([slow]),
        "TARGET_JSONL_DESTINATION_PATH": str(tmp_path),
    }
    args = ("run", "--state-id-suffix=lock", "tap-feeddelta", "target-jsonl")
    first = project.popen(*args, env=env)
    try:
        # wait until the first run's job is registered as running in the system database
        deadline = time.monotonic() + 60
        db = project.root / ".meltano" / "meltano.db"
        while True:
            assert first.poll() is None, first.communicate()[0]
            if db.exists():
                with sqlite3.connect(db) as con:
                    running = con.execute(
                        "select count(*) from runs where job_name = ? and state = 'RUNNING'",
                        ["dev:tap-feeddelta-to-target-jsonl:lock"],
                    ).fetchone()[0]
                if running:
                    break
            assert time.monotonic() < deadline, "the first run never showed as running"
            time.sleep(0.2)
        second = project.run(*args, env=env)
        assert second.returncode != 0, second.output
        assert "already running" in second.output, second.output[-3000:]
    finally:
        output, _ = first.communicate(timeout=180)
    assert first.returncode == 0, output[-3000:]


# -- PostgreSQL ------------------------------------------------------------------------------


def test_postgres_baseline_delta_and_dbt(
    project: MeltanoProject, demo_server: DemoServer, postgres: Postgres
) -> None:
    env = {**tap_env(demo_server, "e2e_postgres"), **postgres.env}

    demo_server.set_phase(1)
    project.run("run", "tap-feeddelta", "target-postgres", env=env).check()
    rows = postgres.query("select item_id, change_type, delivery_id from raw_feeds.feed_items")
    assert len(rows) == 7, rows
    assert {r[0] for r in rows} == BASELINE_ITEMS
    health = postgres.query("select feed_url, status, error_code from raw_feeds.feed_health")
    assert {feed_name(h[0]): h[1] for h in health} == RUN1_STATUS
    assert len(health) == 4
    # The demo's items are dated on whole UTC days; the database's own zone is New York.
    assert postgres.query(
        "select to_char(published_at, 'HH24:MI') from raw_feeds.feed_items "
        "where item_id = 'demo-rss-2'"
    ) == [["00:00"]]
    (run1_last,) = postgres.query("select max(checked_at) from raw_feeds.feed_health")[0]

    demo_server.set_phase(2)
    project.run("run", "tap-feeddelta", "target-postgres", env=env).check()
    rows = postgres.query(
        "select item_id, change_type, delivery_id, checked_at > cast(:'run1' as timestamp) "
        "from raw_feeds.feed_items",
        run1=run1_last,
    )
    assert len(rows) == 10, rows
    assert len({r[2] for r in rows}) == 10
    assert {(r[0], r[1]) for r in rows if r[3] == "t"} == DELTA_ITEMS
    assert sum(1 for r in rows if r[3] == "t") == 3
    # the baseline rows were not re-sent (a re-send would have moved their checked_at)
    assert sorted(r[0] for r in rows if r[3] == "f") == sorted(BASELINE_ITEMS)
    health = postgres.query(
        "select feed_url, status from raw_feeds.feed_health "
        "where checked_at > cast(:'run1' as timestamp)",
        run1=run1_last,
    )
    assert {feed_name(h[0]): h[1] for h in health} == RUN2_STATUS

    assert_bookmarks(project, "dev:tap-feeddelta-to-target-postgres", demo_server, "e2e_postgres")

    project.run("invoke", "dbt-postgres:build", env=postgres.env).check()
    tests = dbt_test_results(project)
    assert set(tests) >= RULE_TESTS, sorted(tests)
    assert set(tests.values()) == {"pass"}, tests
    assert postgres.query("select count(*) from analytics.feed_item_versions") == [["10"]]
    assert postgres.query("select count(*) from analytics.feed_items_current") == [["9"]]
    assert postgres.query(
        "select item_id, version_number, changed_fields from analytics.feed_item_versions "
        "where version_number > 1"
    ) == [["demo-rss-2", "2", "title"]]
    assert postgres.query(
        "select sum(checks), sum(error_checks), sum(not_modified_checks) "
        "from analytics.feed_health_daily"
    ) == [["8", "2", "1"]]
    # The models' timestamps are timestamptz: a session in any time zone (the database's
    # own is New York) compares them with an instant the same way.
    assert postgres.query(
        "select distinct data_type from information_schema.columns "
        "where table_schema = 'analytics' and data_type like 'timestamp%'"
    ) == [["timestamp with time zone"]]
    for zone in ("UTC", "Asia/Tokyo", "America/New_York"):
        assert postgres.query(
            "select count(*) from analytics.feed_item_versions "
            "where checked_at > cast(:'run1' as timestamptz)",
            time_zone=zone,
            run1=run1_last + "+00",
        ) == [["3"]], zone
    # The nested fields are jsonb: JSON operators work on them without a cast.
    assert postgres.query(
        "select distinct table_name, data_type from information_schema.columns "
        "where table_schema = 'analytics' and column_name like '%\\_json' order by 1"
    ) == [
        [name, "jsonb"]
        for name in (
            "feed_item_versions",
            "feed_items_current",
            "stg_feed_health",
            "stg_feed_items",
        )
    ]
    assert postgres.query(
        "select tags_json -> 0, tags_json ->> 0, jsonb_typeof(issues_json) "
        "from analytics.feed_items_current where item_id = 'demo-rss-1'"
    ) == [['"demo"', "demo", "array"]]

    # A --full-refresh re-baseline (emit_all) delivers every item of phase 2 again as new.
    # The target upserts on delivery_id, so the rows of items unchanged since they came as
    # new move to the refresh; demo-rss-2's edit keeps its `updated` row (an update's
    # delivery_id covers the version it replaced too) and its current content gets a `new`
    # row of its own. The daily counts still show what each check delivered.
    project.run("run", "--full-refresh", "tap-feeddelta", "target-postgres", env=env).check()
    assert postgres.query(
        "select count(*), sum(case when change_type = 'updated' then 1 else 0 end) "
        "from raw_feeds.feed_items"
    ) == [["11", "1"]]
    project.run("invoke", "dbt-postgres:build", env=postgres.env).check()
    # The daily counts no longer match the versions left in feed_item_versions: the
    # warn-level test says so, and nothing else fails.
    tests = dbt_test_results(project)
    assert tests.pop("feed_health_daily_counts_match_versions") == "warn"
    assert set(tests.values()) == {"pass"}, tests
    # new: 7 (baseline) + 2 (delta) + 9 (refresh: RSS 4, Atom 3, JSON Feed 2); updated: 1
    assert postgres.query(
        "select sum(new_items), sum(updated_items) from analytics.feed_health_daily"
    ) == [["18", "1"]]


def test_postgres_errors_daily_shows_the_last_checks_status(
    project: MeltanoProject, postgres: Postgres
) -> None:
    """feed_errors_daily.last_http_status is the status of the day's last such check, not
    the highest: a feed that answers 500, then 404 (both http_error)."""
    admin = Postgres({**postgres.env, "TARGET_POSTGRES_DATABASE": "postgres"}, postgres.psql)
    admin.query("drop database if exists feeddelta_e2e_errors")
    admin.query("create database feeddelta_e2e_errors")
    warehouse = Postgres(
        {**postgres.env, "TARGET_POSTGRES_DATABASE": "feeddelta_e2e_errors"}, postgres.psql
    )
    server = FeedServer().start()
    try:
        env = {
            **warehouse.env,
            "TAP_FEEDDELTA_FEED_URLS": json.dumps([server.url("/flaky.xml")]),
            "TAP_FEEDDELTA_MONITOR_ID": "e2e_errors",
            "TAP_FEEDDELTA_ALLOW_PRIVATE_NETWORKS": "true",
        }
        for status in (500, 404):
            server.put("/flaky.xml", b"", status=status)
            project.run(
                "run", "--state-id-suffix=errors", "tap-feeddelta", "target-postgres", env=env
            ).check()
    finally:
        server.stop()
    project.run("invoke", "dbt-postgres:build", env=warehouse.env).check()
    rows = warehouse.query(
        "select error_code, checks, last_http_status from analytics.feed_errors_daily "
        "order by checked_on"
    )
    # One row, or one per UTC day if the two runs straddle midnight: the last is the 404.
    assert sum(int(r[1]) for r in rows) == 2, rows
    assert rows[-1][0::2] == ["http_error", "404"], rows
    admin.query("drop database feeddelta_e2e_errors")


# -- README command 1, the demo ----------------------------------------------------------------


def test_scripts_run_demo(project: MeltanoProject, tmp_path: Path) -> None:
    """`scripts/run --demo` (baseline -> change -> delta -> dbt) in a copy of the project."""
    copy = tmp_path / "project"
    copy.mkdir()
    for name in ("meltano.yml", "scripts", "demo", "transform"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("target", "logs"))
        else:
            shutil.copy2(source, copy / name)
    (copy / ".venv-meltano").symlink_to(ROOT / ".venv-meltano", target_is_directory=True)
    (copy / ".meltano").mkdir()
    for sub in PLUGIN_DIRS:
        (copy / ".meltano" / sub).symlink_to(ROOT / ".meltano" / sub, target_is_directory=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.run(
        [str(copy / "scripts" / "run"), "--demo", "--no-install"],
        cwd=copy,
        env={**project.env, "FEEDDELTA_DEMO_PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-5000:]
    assert "This run: 4 feeds checked: 3 ok, 0 not modified, 1 failed (http_error=1)" in output
    assert "This run: 4 feeds checked: 2 ok, 1 not modified, 1 failed (http_error=1)" in output
    assert "2 new and 1 updated items delivered" in output
    assert "raw_feeds.feed_items            10 rows" in output
    assert (copy / "output" / "demo.duckdb").exists()
