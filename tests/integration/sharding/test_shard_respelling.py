"""A feed whose configured URL is respelled, or replaced by the URL it redirects to, may
move to another shard (shard_of hashes the URL as written): the shard that holds its
state refuses to run, and tap-feeddelta-state split, given the configured URLs, moves
the state where the new spelling's shard looks for it. Before, that shard silently took
a new baseline and the items published in between were never delivered."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tap_feeddelta.sharding import shard_of
from tests.feedserver import FeedServer, rss
from tests.integration.sharding.test_shards import _merge, _state_tool
from tests.tapharness import TapRun, run_tap


def _items(*numbers: int) -> str:
    return rss([(f"g{n}", f"T{n}", "s") for n in sorted(numbers, reverse=True)])


def _config(urls: list[str], shard: int | None = None) -> dict[str, Any]:
    sharding = {} if shard is None else {"shard_count": 2, "shard_index": shard}
    return {"feed_urls": urls, "allow_private_networks": True, **sharding}


def _moving_path(server: FeedServer, respell: Any) -> str:
    """A path whose URL and respelled URL fall in different shards of 2."""
    for n in range(100):
        url = server.url(f"/a{n}.xml")
        if shard_of("default", url, 2) != shard_of("default", respell(url), 2):
            return f"/a{n}.xml"
    raise AssertionError("no path moves")


def _split_by_config(
    states: Sequence[dict[str, Any] | None], urls: list[str], tmp: Path
) -> list[dict[str, Any]]:
    tmp.mkdir(exist_ok=True)
    merged = tmp / "all.json"
    merged.write_text(json.dumps(_merge(list(states), tmp)))
    urls_file = tmp / "urls.txt"
    urls_file.write_text("".join(f"{url}\n" for url in urls))
    out = tmp / "new"
    _state_tool(
        "split",
        "--shard-count",
        "2",
        "--feed-urls-file",
        str(urls_file),
        "--out-dir",
        str(out),
        str(merged),
    )
    return [json.loads((out / f"shard-{i}.json").read_text()) for i in range(2)]


def _refused(run: TapRun) -> None:
    assert run.returncode == 1
    [line] = [line for line in run.stderr.splitlines() if "| ERROR" in line]
    assert "| state_other_shard: state: " in line and "--feed-urls-file" in line
    assert "127.0.0.1" not in line and "Traceback" not in run.stderr
    assert run.stdout == ""


def test_a_respelled_feed_in_another_shard_is_refused_and_split_moves_its_state(
    server: FeedServer, tmp_path: Path
) -> None:
    def respell(url: str) -> str:
        return url.replace("http://", "HTTP://")

    path = _moving_path(server, respell)
    old, new = server.url(path), respell(server.url(path))
    server.put(path, _items(1, 2, 3))
    server.put("/c.xml", _items(1))
    before = [old, server.url("/c.xml")]
    states = [run_tap(_config(before, i)).final_state for i in range(2)]
    server.put(path, _items(1, 2, 3, 4))

    after = [new, server.url("/c.xml")]
    holder, taker = shard_of("default", old, 2), shard_of("default", new, 2)
    # The new spelling's shard has no state for it and cannot know better: it runs first
    # here and takes a baseline, while g5 is published after it.
    early = run_tap(_config(after, taker), states[taker])
    assert early.returncode == 0 and early.items == []
    server.put(path, _items(1, 2, 3, 4, 5))
    _refused(run_tap(_config(after, holder), states[holder]))

    moved = _split_by_config([states[holder], early.final_state], after, tmp_path)
    run = run_tap(_config(after, taker), moved[taker])
    assert run.returncode == 0, run.stderr[-2000:]
    # the older baseline is kept: g4, published before the early run, is not lost
    assert [(r["item_id"], r["feed_url"]) for r in run.items] == [("g5", new), ("g4", new)]
    rest = run_tap(_config(after, holder), moved[holder])
    assert rest.returncode == 0, rest.stderr[-2000:]
    assert rest.items == []


def test_a_feed_replaced_by_its_redirect_target_in_another_shard_keeps_its_baseline(
    server: FeedServer, tmp_path: Path
) -> None:
    path = _moving_path(server, lambda url: url.replace(".xml", "-moved.xml"))
    source, target = server.url(path), server.url(path.replace(".xml", "-moved.xml"))
    server.put(path.replace(".xml", "-moved.xml"), _items(1, 2, 3))
    server.put(path, "", status=301, headers={"Location": target})
    first = run_tap(_config([source]))
    assert first.returncode == 0, first.stderr[-2000:]
    states = _split_by_config([first.final_state], [source], tmp_path / "before")
    server.put(path.replace(".xml", "-moved.xml"), _items(1, 2, 3, 4))

    holder, taker = shard_of("default", source, 2), shard_of("default", target, 2)
    _refused(run_tap(_config([target], holder), states[holder]))
    moved = _split_by_config(states, [target], tmp_path / "after")
    run = run_tap(_config([target], taker), moved[taker])
    assert run.returncode == 0, run.stderr[-2000:]
    assert [(r["item_id"], r["change_type"]) for r in run.items] == [("g4", "new")]
