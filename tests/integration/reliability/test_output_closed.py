"""A target that ends mid-run: the tap stops with one line saying so, and no feed still
queued at that moment is taken for a fault of the tap's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.feedserver import FeedServer, rss
from tests.tapharness import TAP

FEEDS = 40


def test_a_target_that_stops_reading_ends_the_run_with_one_clear_line(
    server: FeedServer, tmp_path: Path
) -> None:
    server.delay_seconds = 0.05  # feeds still queued when the output closes
    for n in range(FEEDS):
        server.put(f"/f{n}.xml", rss([(f"{n}-{k}", f"Title {k}", "text " * 50) for k in range(20)]))
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "feed_urls": [server.url(f"/f{n}.xml") for n in range(FEEDS)],
                "allow_private_networks": True,
                "first_run_mode": "emit_all",
                "max_concurrency": 2,
            }
        )
    )
    read_end, write_end = os.pipe()
    tap = subprocess.Popen(
        [*TAP, "--config", str(config)], stdout=write_end, stderr=subprocess.PIPE
    )
    os.close(write_end)
    try:
        os.read(read_end, 4096)  # the target reads a little, then ends
    finally:
        os.close(read_end)
    _, err = tap.communicate(timeout=120)
    log = err.decode()
    assert tap.returncode == 1, log
    assert "output_closed: the target stopped reading" in log
    assert [line for line in log.splitlines() if "| ERROR" in line] == [
        line for line in log.splitlines() if "output_closed:" in line
    ]  # one line says it all
    assert "Please report this as a bug" not in log
    assert "internal_error" not in log
    assert "Traceback" not in log and "Exception ignored" not in log
