"""The whole-tap contract fuzzer (fuzz/contract_fuzz.py) for a few fixed seeds.

Each case is a short fuzzing session: five feeds on 127.0.0.1, edited and misserved at
random between 15 tap runs that carry the state forward, every run checked against the
fuzzer's model. The fuzzer runs as a subprocess (its site stops with it); a violation fails
the test with the fuzzer's report. Longer sessions: see docs/reliability.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FUZZER = Path(__file__).resolve().parents[2] / "fuzz" / "contract_fuzz.py"
RUNS = 15
HANG_GUARD_SECONDS = 600  # a session takes well under a minute; this only stops a hang


@pytest.mark.parametrize(
    ("seed", "max_items_per_run"),
    [(1, 500), (2, 500), (4, 2)],
    ids=["seed-1", "seed-2", "seed-4-cap-2"],
)
def test_contract_holds_over_runs(seed: int, max_items_per_run: int, tmp_path: Path) -> None:
    args = ["--seed", str(seed), "--runs", str(RUNS), "--max-items-per-run", str(max_items_per_run)]
    done = subprocess.run(
        [sys.executable, str(FUZZER), *args, "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )
    if done.returncode != 0:
        report = done.stdout[done.stdout.find("done:") :] if "done:" in done.stdout else done.stdout
        pytest.fail(
            f"contract fuzzer exit {done.returncode}:\n{report[-6000:]}\n{done.stderr[-3000:]}",
            pytrace=False,
        )
