"""The state tool refuses what would silently lose a baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tap_feeddelta.respellings import respelled_feeds
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.shownurl import as_fetched, final_url_hash
from tap_feeddelta.state import index_partitions
from tap_feeddelta.statetool import main, merge_states, split_state


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


OLD = "https://example.org/private.xml?token=OLD-SECRET"
NEW = "https://example.org/private.xml?token=NEW-SECRET"


def _partition(url: str, monitor_id: str = "default", **fields: Any) -> dict[str, Any]:
    return {"context": {"monitor_id": monitor_id, "feed_url": url}, "v": 1, "items": "", **fields}


def _read_from(url: str) -> dict[str, Any]:
    """A partition's fields after a document read from ``url`` itself, as the tap keeps
    them (the URL as the fetcher asked for it)."""
    return {
        "etag": '"e1"',
        "last_modified": "Mon, 01 Jan 2024 10:00:00 GMT",
        "final_url": as_fetched(url),
        "final_url_hash": final_url_hash(as_fetched(url), url),
        "success_at": "2024-01-01T10:00:00Z",
    }


def _state(*partitions: dict[str, Any]) -> dict[str, Any]:
    return {"bookmarks": {"feed_items": {"partitions": list(partitions)}}}


def _rename(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], state: Any, *args: str
) -> tuple[int, Any, str]:
    """(exit status, the state written, stderr) of `rename`, the URLs from a file (with
    a byte order mark, blank lines and CRLF, as an editor may save it)."""
    (tmp_path / "state.json").write_text(json.dumps(state))
    (tmp_path / "urls.txt").write_text(f"\ufeff  {OLD}\r\n\n{NEW}\n")
    urls = ["--urls-file", str(tmp_path / "urls.txt")]
    status = main(["rename", *urls, *args, str(tmp_path / "state.json")])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else None, err


def test_rename_moves_the_partition_with_what_it_read_from_the_old_url_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = _partition("https://example.org/o.xml", **_read_from("https://example.org/o.xml"))
    state = {**_state(other, _partition(OLD, **_read_from(OLD)), _partition(OLD, "b")), "x": 1}
    status, out, err = _rename(tmp_path, capsys, {"singer_state": state}, "--monitor-id", "default")
    assert (status, err) == (0, "")
    assert set(out) == {"singer_state"}  # the form read
    [kept, moved, of_b] = out["singer_state"]["bookmarks"]["feed_items"]["partitions"]
    assert (kept, of_b, out["singer_state"]["x"]) == (other, _partition(OLD, "b"), 1)
    # The new URL is read in the old one's place: a 304 on the same validators is trusted.
    assert moved == _partition(NEW, **_read_from(NEW))


@pytest.mark.parametrize(
    "read",
    [
        # A redirect that kept the token (a query like the configured one's is shown whole).
        {
            "final_url": OLD.replace("/private", "/feeds/private"),
            "final_url_hash": "v1:" + "a" * 16,
        },
        # A web page's feed (discovery), with the page's validators.
        {
            "final_url": "https://example.org/feed",
            "advertised_url_hash": "v1:" + "b" * 16,
            "page_etag": '"p1"',
            "page_last_modified": "Mon, 01 Jan 2024 10:00:00 GMT",
            "page_url_hash": "v1:" + "c" * 16,
        },
        # Before final_url_hash was kept.
        {"final_url": "https://example.org/private.xml"},
    ],
    ids=["redirect", "discovered", "no-hash"],
)
def test_rename_drops_what_a_partition_read_elsewhere_knows_of_that_url(
    read: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the new URL leads is not known: the next run reads the document once in full
    and compares its items with the remembered ones."""
    items = "A" * 16
    partition = _partition(OLD, etag='"e1"', success_at="2024-01-01T10:00:00Z", **read)
    partition["items"] = items
    status, out, _ = _rename(tmp_path, capsys, _state(partition))
    assert status == 0
    [moved] = out["bookmarks"]["feed_items"]["partitions"]
    assert moved == {**_partition(NEW), "success_at": "2024-01-01T10:00:00Z", "items": items}


def test_rename_finds_the_old_url_in_another_spelling_of_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spelled = OLD.replace("example.org", "EXAMPLE.org:443")
    status, out, _ = _rename(tmp_path, capsys, _state(_partition(spelled, **_read_from(spelled))))
    assert status == 0
    [moved] = out["bookmarks"]["feed_items"]["partitions"]
    assert moved == _partition(NEW, **_read_from(NEW))


@pytest.mark.parametrize(
    ("partitions", "args", "message"),
    [
        ([_partition("https://example.org/f")], (), "the old URL has no partition in this state"),
        (
            [_partition(OLD)],
            ("--monitor-id", "b"),
            "the old URL has no partition for monitor_id 'b' in this state",
        ),
        (
            [_partition(OLD), _partition(OLD, "b")],
            (),
            "the old URL has a partition in each of the monitors ['b', 'default']: choose "
            "one with --monitor-id",
        ),
        (
            [_partition(OLD), _partition(NEW.replace("example.org", "Example.ORG"))],
            (),
            "the new URL already has a partition for monitor_id 'default' (a run with it "
            "took a baseline of its own): nothing was changed",
        ),
    ],
    ids=["no-old", "no-old-of-monitor", "two-monitors", "new-has-one"],
)
def test_rename_refuses_in_one_line_never_quoting_a_url(
    partitions: list[dict[str, Any]],
    args: tuple[str, ...],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _rename(tmp_path, capsys, _state(*partitions), *args)
    assert (status, out, err) == (2, None, f"tap-feeddelta-state: {message}\n")


@pytest.mark.parametrize(
    ("urls", "message"),
    [
        (f"{OLD}\n", "must hold two lines, the old URL then the new one (it holds 1)"),
        (
            f"{OLD}\n{NEW}\n{NEW}\n",
            "must hold two lines, the old URL then the new one (it holds 3)",
        ),
        (
            f"{OLD}\nftp://example.org/f?token=NEW-SECRET\n",
            "the new URL: only http:// and https://",
        ),
        (f"https://u:OLD-SECRET@example.org/\n{NEW}\n", "the old URL: the URL holds credentials"),
        (f"{OLD}\n{OLD.replace('example.org', 'EXAMPLE.ORG')}\n", "are one feed to the tap"),
    ],
    ids=["one-line", "three-lines", "not-http", "userinfo", "same-feed"],
)
def test_rename_refuses_urls_the_tap_would_not_take_never_quoting_them(
    urls: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "urls.txt").write_text(urls)
    (tmp_path / "state.json").write_text(json.dumps(_state(_partition(OLD))))
    status = main(
        ["rename", "--urls-file", str(tmp_path / "urls.txt"), str(tmp_path / "state.json")]
    )
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.startswith("tap-feeddelta-state: ") and err.count("\n") == 1
    assert message in err
    assert "SECRET" not in err


def test_rename_takes_the_urls_as_arguments_too_and_refuses_half_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps(_state(_partition(OLD))))
    assert main(["rename", "--old", OLD, "--new", NEW, str(state)]) == 0
    [moved] = json.loads(capsys.readouterr().out)["bookmarks"]["feed_items"]["partitions"]
    assert moved["context"]["feed_url"] == NEW
    for args in (["--old", OLD], [], ["--urls-file", "-", "--new", NEW], ["--urls-file", "-"]):
        with pytest.raises(SystemExit) as exited:
            main(["rename", *args, "-"])
        assert exited.value.code == 2
    assert "SECRET" not in capsys.readouterr().err


def test_merge_keeps_the_older_baseline_of_a_feed_found_twice_when_told() -> None:
    """Re-sharding: the second partition of a feed comes from a run that did not find the
    first, and is newer: keeping it would lose what was published before that run."""
    old = _partition(NEW, checked_at="2024-01-01T10:00:00Z", success_at="2024-01-01T10:00:00Z")
    newer = _partition(NEW, checked_at="2024-02-01T10:00:00Z", success_at="2024-02-01T10:00:00Z")
    newer["items"] = "A" * 16
    never_read = _partition(NEW, failed_at="2023-01-01T10:00:00Z", failures=1)
    for order in ([old, newer], [newer, old], [never_read, newer, old]):
        merged = merge_states([_state(p) for p in order], keep="older")
        assert merged["bookmarks"]["feed_items"]["partitions"] == [old]
        merged = merge_states([_state(p) for p in order], keep="newer")
        assert merged["bookmarks"]["feed_items"]["partitions"] == [newer]


def test_merge_asks_which_partition_to_keep_of_a_feed_found_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backup merged with the current state holds every feed twice, and wants the newer
    one; a re-shard after a shard ran without a feed's state wants the older one. The
    two cannot be told apart by the partitions, so merge refuses to guess."""
    backup = _partition(NEW, checked_at="2024-01-01T10:00:00Z", success_at="2024-01-01T10:00:00Z")
    current = {**backup, "checked_at": "2024-02-01T10:00:00Z", "items": "A" * 16}
    never_read = _partition(OLD, failed_at="2024-01-01T10:00:00Z", failures=1)
    read = _partition(OLD, checked_at="2023-01-01T10:00:00Z", success_at="2023-01-01T10:00:00Z")
    paths = []
    for n, state in enumerate([_state(backup, never_read), _state(current, read), _state(backup)]):
        paths.append(tmp_path / f"s{n}.json")
        paths[-1].write_text(json.dumps(state))
    assert main(["merge", *map(str, paths)]) == 2
    err = capsys.readouterr().err
    assert "1 feeds" in err and "--keep older" in err and "--keep newer" in err
    assert "SECRET" not in err
    assert main(["merge", "--keep", "newer", *map(str, paths)]) == 0
    merged = json.loads(capsys.readouterr().out)
    # one that never read a document holds no baseline: never a choice to make
    assert merged["bookmarks"]["feed_items"]["partitions"] == [current, read]


def _placed(state: dict[str, Any], urls: list[str]) -> dict[str, int]:
    """feed_url -> shard of 7 of every partition split_state writes with ``urls``."""
    shards = split_state(state, 7, urls)
    return {
        p["context"]["feed_url"]: n
        for n, shard in enumerate(shards)
        for p in shard["bookmarks"]["feed_items"]["partitions"]
    }


def test_split_with_the_configured_urls_renames_a_respelled_feed_into_its_shard() -> None:
    configured = [f"https://example.org/f{n}.xml" for n in range(20)]
    respelled = [
        url.replace("https://example.org", "HTTPS://Example.ORG:443") for url in configured
    ]
    state = _state(*(_partition(url, **_read_from(url)) for url in respelled))
    assert _placed(state, configured) == {url: shard_of("default", url, 7) for url in configured}
    moved = [
        p
        for s in split_state(state, 7, configured)
        for p in s["bookmarks"]["feed_items"]["partitions"]
    ]
    assert all(p["etag"] == '"e1"' for p in moved)  # the same resource: validators kept
    # Without the list, each stays in its own spelling's shard (some of them another one).
    assert _placed(state, respelled) == {url: shard_of("default", url, 7) for url in respelled}
    assert any(
        shard_of("default", a, 7) != shard_of("default", b, 7)
        for a, b in zip(configured, respelled, strict=True)
    )


def test_split_renames_a_feed_replaced_by_its_redirect_target_with_what_it_read() -> None:
    source, target = "https://example.org/old.xml", "https://example.org/new.xml"
    partition = _partition(source, **_read_from(target))
    [moved] = [
        p
        for shard in split_state(_state(partition), 7, [target])
        for p in shard["bookmarks"]["feed_items"]["partitions"]
    ]
    assert moved == _partition(target, **_read_from(target))
    assert _placed(_state(partition), [target]) == {target: shard_of("default", target, 7)}
    # Two former feeds read from it: neither is surely it; both go beside it, as they were.
    other = _partition("https://example.org/other.xml", **_read_from(target))
    assert _placed(_state(partition, other), [target]) == {
        source: shard_of("default", target, 7),
        "https://example.org/other.xml": shard_of("default", target, 7),
    }


def test_split_keeps_a_configured_urls_own_partition_and_puts_a_removed_duplicate_beside_it() -> (
    None
):
    """X redirected to Y and both were configured, each with its partition: removing X
    must not hand Y's own (newer) state to X's. As the run does (respelled_feeds takes a
    partition over only for a URL without one), Y keeps its own; X's goes to Y's shard
    under its own URL, where Y's runs find nothing to take over and drop it in time."""
    source, target = "https://a.example/x.xml", "https://b.example/y.xml"
    removed = _partition(source, **_read_from(target), checked_at="2024-01-01T10:00:00Z")
    own = _partition(target, **_read_from(target), checked_at="2024-03-01T10:00:00Z")
    own["success_at"] = "2024-03-01T10:00:00Z"
    merged = merge_states([_state(removed), _state(own)])
    assert (
        respelled_feeds(index_partitions(merged["bookmarks"]["feed_items"]), "default", [target])
        == {}
    )
    shards = split_state(merged, 7, [target])
    owner = shard_of("default", target, 7)
    assert shards[owner]["bookmarks"]["feed_items"]["partitions"] in (
        [own, removed],
        [removed, own],
    )
    assert all(
        not s["bookmarks"]["feed_items"]["partitions"] for n, s in enumerate(shards) if n != owner
    )


def test_split_keeps_the_older_baseline_when_the_new_spelling_took_one_of_its_own() -> None:
    old_spelling, configured = "HTTPS://example.org/f.xml", "https://example.org/f.xml"
    old = _partition(old_spelling, **_read_from(old_spelling), checked_at="2024-01-01T10:00:00Z")
    fresh = _partition(configured, checked_at="2024-03-01T10:00:00Z", items="A" * 16)
    fresh["success_at"] = "2024-03-01T10:00:00Z"
    shards = split_state(_state(fresh, old), 7, [configured])
    [kept] = [p for s in shards for p in s["bookmarks"]["feed_items"]["partitions"]]
    assert kept["context"]["feed_url"] == configured and kept["items"] == ""


def test_split_reads_the_urls_from_the_taps_config_and_refuses_a_bad_one_unquoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "state.json"
    source.write_text(json.dumps(_state(_partition("HTTPS://example.org/f.xml"))))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"feed_urls": ["https://example.org/f.xml"], "x": 1}))
    out = tmp_path / "out"
    args = ["split", "--shard-count", "3", "--out-dir", str(out), str(source)]
    assert main([*args, "--feed-urls-file", str(config)]) == 0
    owner = shard_of("default", "https://example.org/f.xml", 3)
    written = json.loads((out / f"shard-{owner}.json").read_text())
    assert written["bookmarks"]["feed_items"]["partitions"][0]["context"]["feed_url"] == (
        "https://example.org/f.xml"
    )
    (tmp_path / "urls.txt").write_text("https://example.org/f.xml\nftp://x.example/?t=SECRET1\n")
    assert main([*args, "--feed-urls-file", str(tmp_path / "urls.txt")]) == 2
    err = capsys.readouterr().err
    assert "feed URL 2" in err and "SECRET1" not in err


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"feed_urls": [], "x": ' + "9" * 5000 + "}", "holds an integer of over 4,300 digits"),
        ('{"feed_urls": ' + "[" * 200_000 + "]" * 200_000 + "}", "is nested too deeply to read"),
    ],
    ids=["integer-of-5000-digits", "nested-200000-deep"],
)
@pytest.mark.parametrize("read_as", ["state", "feed-urls"])
def test_json_the_reader_cannot_take_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, why: str, read_as: str
) -> None:
    """Every file the tool reads as JSON: the state, and the tap's config given as the
    feed URLs file. A RecursionError or ValueError out of main is a traceback."""
    unreadable, state = tmp_path / "unreadable.json", tmp_path / "state.json"
    unreadable.write_text(text)
    state.write_text(_state_text())
    split = ["split", "--shard-count", "2", "--out-dir", str(tmp_path / "new")]
    if read_as == "state":
        args = [[*split, str(unreadable)], ["merge", str(unreadable)]]
    else:
        args = [[*split, "--feed-urls-file", str(unreadable), str(state)]]
    for arguments in args:
        assert main(arguments) == 2
        out, err = capsys.readouterr()
        [line] = err.splitlines()
        assert line.startswith(f"tap-feeddelta-state: {unreadable}: the ") and why in line
        assert "9999" not in line and out == ""
    assert not (tmp_path / "new").exists()


def test_a_file_that_cannot_be_read_is_told_as_the_tap_tells_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It was "[Errno 2] No such file or directory: 'nope.json'".
    missing = str(tmp_path / "nope.json")
    state = tmp_path / "state.json"
    state.write_text(_state_text())
    split = ["split", "--shard-count", "2", "--out-dir", str(tmp_path / "new")]
    for arguments in (
        ["merge", missing],
        [*split, missing],
        [*split, "--feed-urls-file", missing, str(state)],
        ["rename", "--urls-file", missing, str(state)],
    ):
        assert main(arguments) == 2
        [line] = capsys.readouterr().err.splitlines()
        assert line == f"tap-feeddelta-state: {missing}: cannot be read (No such file or directory)"


def test_an_out_dir_that_cannot_be_written_is_told_in_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, taken = tmp_path / "state.json", tmp_path / "taken"
    state.write_text(_state_text())
    taken.write_text("a file where the directory belongs")
    assert main(["split", "--shard-count", "2", "--out-dir", str(taken), str(state)]) == 2
    err = capsys.readouterr().err
    assert err == f"tap-feeddelta-state: {taken}: cannot be written (File exists)\n"


def test_split_has_a_description_and_every_option_a_help_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["split", "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert "Split one state into shard states" in usage  # the description
    assert "--shard-count SHARD_COUNT how many shards" in usage
