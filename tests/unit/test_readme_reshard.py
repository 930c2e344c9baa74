"""The reshard.sh of docs/scheduling-and-scaling.md, run with a stand-in for Meltano
(tests/e2e runs it against the real one): every `meltano state` call names the state id's
environment, so that Meltano does not warn "Running state operation for environment 'dev'
outside of an environment" at each of them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tap_feeddelta.state import FeedBookmark, encode_bookmark

ROOT = Path(__file__).resolve().parents[2]
STATE_ID = "dev:tap-feeddelta-to-target-postgres"


def _readme_script() -> str:
    """The docs' re-sharding script, extracted as tests/e2e/test_reshard_meltano.py does."""
    readme = (ROOT / "docs" / "scheduling-and-scaling.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.DOTALL)
    [script] = [b for b in blocks if "tap-feeddelta-state split" in b]
    return "".join(line.removeprefix("  ") + "\n" for line in script.splitlines())


def test_readme_reshard_script_names_the_environment_of_each_state_operation(
    tmp_path: Path,
) -> None:
    partitions = [
        {
            "context": {"monitor_id": "default", "feed_url": f"https://example.org/{n}.xml"},
            **encode_bookmark(FeedBookmark(success_at="2026-01-01T00:00:00Z", items=b"x" * 12)),
        }
        for n in range(4)
    ]
    stored = tmp_path / "stored.json"
    stored.write_text(
        json.dumps({"singer_state": {"bookmarks": {"feed_items": {"partitions": partitions}}}})
    )
    calls = tmp_path / "meltano.calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    meltano = bin_dir / "meltano"
    meltano.write_text(
        f'#!/bin/sh\necho "$*" >> "{calls}"\n'
        f'case " $* " in *" state get "*) cat "{stored}" ;; esac\n'
    )
    tool = bin_dir / "tap-feeddelta-state"
    tool.write_text(
        f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m tap_feeddelta.statetool "$@"\n'
    )
    for path in (meltano, tool):
        path.chmod(0o755)
    script = tmp_path / "reshard.sh"
    script.write_text(_readme_script())
    done = subprocess.run(
        ["bash", str(script), "1", "2", STATE_ID],
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    made = calls.read_text().splitlines()
    assert [call.split()[:3] for call in made] == [
        ["--environment=dev", "state", "get"],
        ["--environment=dev", "state", "set"],
        ["--environment=dev", "state", "set"],
        ["--environment=dev", "state", "clear"],
    ]
