"""The state tool refuses what would silently lose a baseline."""

from __future__ import annotations

from pathlib import Path

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
