"""The state tool refuses what would silently lose a baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tap_feeddelta.statetool import main


@pytest.mark.parametrize("text", ["{}", '{"singer_state": {}}'])
def test_an_empty_state_is_refused_as_a_likely_wrong_state_id(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "old-0.json"
    empty.write_text(text)
    assert main(["merge", str(empty)]) == 2
    out_dir = str(tmp_path / "new")
    assert main(["split", "--shard-count", "2", "--out-dir", out_dir, str(empty)]) == 2
    assert "the state is empty; is its state id right?" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_a_shard_state_without_feeds_is_no_empty_state(tmp_path: Path) -> None:
    state = tmp_path / "shard.json"
    state.write_text('{"bookmarks": {"feed_items": {"partitions": []}}}')
    assert main(["merge", str(state)]) == 0


def _state_text() -> str:
    state: dict[str, Any] = {"bookmarks": {"feed_items": {"partitions": []}}}
    return json.dumps({"singer_state": state}) + "\r\n"


def test_a_state_file_with_a_utf8_bom_is_read_as_the_tap_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_bom = tmp_path / "old-0.json"
    with_bom.write_bytes(b"\xef\xbb\xbf" + _state_text().encode())
    assert main(["merge", str(with_bom)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "singer_state": {"bookmarks": {"feed_items": {"partitions": []}}}
    }
    out_dir = tmp_path / "new"
    assert main(["split", "--shard-count", "2", "--out-dir", str(out_dir), str(with_bom)]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["shard-0.json", "shard-1.json"]


@pytest.mark.parametrize(
    ("encoding", "named"),
    [("utf-16", "is UTF-16 text"), ("latin-1", "is not UTF-8 text")],
    ids=["utf-16-powershell", "latin-1"],
)
def test_a_state_file_not_in_utf8_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str, named: str
) -> None:
    """Windows PowerShell 5.1 saves `meltano state get ID > old-0.json` as UTF-16."""
    other = tmp_path / "old-0.json"
    other.write_bytes(_state_text().replace("[]", '[], "x": "\u00e9"', 1).encode(encoding))
    assert main(["merge", str(other)]) == 2
    out_dir = str(tmp_path / "new")
    assert main(["split", "--shard-count", "2", "--out-dir", out_dir, str(other)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert all(line.startswith(f"tap-feeddelta-state: {other}: ") for line in err)
    assert all(named in line for line in err)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("count", ["0", "1025", "5000"])
def test_split_refuses_a_shard_count_the_tap_refuses(
    count: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It wrote 5,000 shard files for a shard_count the tap refuses (1 to 1,024)."""
    from tap_feeddelta.config import CONFIG_SCHEMA

    state = tmp_path / "all.json"
    state.write_text('{"bookmarks": {"feed_items": {"partitions": []}}}')
    out_dir = tmp_path / "new"
    with pytest.raises(SystemExit) as exited:
        main(["split", "--shard-count", count, "--out-dir", str(out_dir), str(state)])
    assert exited.value.code == 2
    maximum = CONFIG_SCHEMA["properties"]["shard_count"]["maximum"]
    assert f"--shard-count must be 1 to {maximum:,}" in capsys.readouterr().err
    assert not out_dir.exists()
    assert (
        main(["split", "--shard-count", str(maximum), "--out-dir", str(out_dir), str(state)]) == 0
    )
    assert len(list(out_dir.iterdir())) == maximum
