"""The summary scripts/run prints after a run: table sizes, how this run's feeds did, and
what to do next. Run by the dbt virtualenv's Python, which has duckdb:

    run_summary.py DB SINCE [--next]

SINCE: the run's start (UTC); --next adds the next step (the run of meltano.yml's feeds).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

TABLES = (
    "raw_feeds.feed_items",
    "raw_feeds.feed_health",
    "analytics.feed_item_versions",
    "analytics.feed_items_current",
    "analytics.feed_health_daily",
    "analytics.feed_errors_daily",
)


def table_size(count: int | None) -> str:
    if count is None:
        return "(not built)"
    return f"{count} row" if count == 1 else f"{count} rows"


def next_step(by_status: dict[str, int]) -> str:
    """What to do after a run whose checks ended so (status -> feeds)."""
    if by_status.get("ok", 0) + by_status.get("not_modified", 0) == 0:
        # Every feed failed: the usual cause is no network; a second run would not help.
        return "No feed answered (no network?): try ./scripts/run --demo (offline sample feeds)."
    return "Run it again to get the delta (only new and changed items)."


def _count(con: Any, table: str) -> int | None:
    schema, name = table.split(".")
    found = con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()[0]
    if not found:
        return None
    count: int = con.execute(f"select count(*) from {table}").fetchone()[0]  # noqa: S608 (TABLES)
    return count


def main(path: str, since: str, show_next: bool) -> None:
    import duckdb  # in the dbt virtualenv only

    con = duckdb.connect(path, read_only=True)
    print(f"\nData: {Path(path).resolve()}")
    for table in TABLES:
        print(f"  {table:<31} {table_size(_count(con, table))}")

    if _count(con, "raw_feeds.feed_health") is None:
        return
    rows = con.execute(
        "select status, error_code, count(*) from raw_feeds.feed_health "
        "where checked_at >= cast(? as timestamp) group by 1, 2 order by 1, 2",
        [since],
    ).fetchall()
    by_status: dict[str, int] = {}
    codes: list[str] = []
    for status, code, n in rows:
        by_status[status] = by_status.get(status, 0) + n
        if code:
            codes.append(f"{code}={n}")
    feeds = sum(by_status.values())
    failed = by_status.get("error", 0) + by_status.get("skipped", 0)
    print(
        f"This run: {feeds} feeds checked: {by_status.get('ok', 0)} ok, "
        f"{by_status.get('not_modified', 0)} not modified, {failed} failed"
        + (f" ({', '.join(codes)})" if codes else "")
    )
    items: dict[str, int] = {}
    if _count(con, "raw_feeds.feed_items") is not None:
        items = dict(
            con.execute(
                "select change_type, count(*) from raw_feeds.feed_items "
                "where checked_at >= cast(? as timestamp) group by 1",
                [since],
            ).fetchall()
        )
    new, updated = items.get("new", 0), items.get("updated", 0)
    print(f"          {new} new and {updated} updated items delivered")
    if show_next:
        print(f"\n{next_step(by_status)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--next" in sys.argv[3:])
