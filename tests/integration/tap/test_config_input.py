"""Config given outside a well-formed config file (TAP_FEEDDELTA_* variables with
--config ENV, a file that is not JSON) and damaged state: one clear error line naming
the setting or the file, a non-zero exit, no traceback, no value echoed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.feedserver import FeedServer, rss
from tests.tapharness import TAP

SECRET = "hunter2-SECRET"


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TAP_FEEDDELTA_")}
    return subprocess.run(
        [*TAP, *args],
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _run_with_one_variable(
    tmp_path: Path, name: str, value: str
) -> subprocess.CompletedProcess[str]:
    """A run configured from the environment: a feed, and TAP_FEEDDELTA_<name>=value."""
    return _run(
        tmp_path,
        "--config",
        "ENV",
        TAP_FEEDDELTA_FEED_URLS='["https://example.invalid/feed.xml"]',
        **{f"TAP_FEEDDELTA_{name}": value},
    )


def _run_on_one_feed(
    server: FeedServer, tmp_path: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """A run configured from the environment on one served feed, plus ``env``."""
    server.put("/feed.xml", rss([("id-1", "One", "first")]))
    feeds = json.dumps([server.url("/feed.xml")])
    return _run(tmp_path, "--config", "ENV", TAP_FEEDDELTA_FEED_URLS=feeds, **env)


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "| ERROR" in line]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MAX_CONCURRENCY", "four"),
        ("MAX_CONCURRENCY", f"4{SECRET}"),
        ("ALLOW_PRIVATE_NETWORKS", "ture"),
        ("DISCOVER_FROM_WEBSITES", f"yes{SECRET}"),
        ("STREAM_MAPS", '{"feed_health": '),
        ("REQUEST_TIMEOUT_SECONDS", "soon"),
    ],
    ids=["integer", "integer-secret", "boolean-typo", "boolean-secret", "object", "number"],
)
def test_a_bad_environment_value_is_refused_naming_the_setting(
    tmp_path: Path, name: str, value: str
) -> None:
    run = _run_with_one_variable(tmp_path, name, value)
    assert run.returncode == 1
    assert f"config['{name.lower()}']: must be of type" in run.stderr
    assert "Traceback" not in run.stderr
    assert SECRET not in run.stderr and value not in run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("env", "nan"),
        ("env", "inf"),
        ("env", "-Infinity"),
        ("file", '"nan"'),
        ("file", '"inf"'),
    ],  # (NaN and Infinity literals: the file is not valid JSON, as the SDK reads it)
    ids=["env-nan", "env-inf", "env-minus-infinity", "file-nan-text", "file-inf-text"],
)
def test_a_number_setting_that_is_not_finite_is_refused(
    tmp_path: Path, source: str, value: str
) -> None:
    """NaN passes both minimum and maximum: it must be refused before anything runs."""
    if source == "env":
        run = _run_with_one_variable(tmp_path, "REQUEST_TIMEOUT_SECONDS", value)
    else:
        path = tmp_path / "config.json"
        path.write_text(
            '{"feed_urls": ["https://example.invalid/feed.xml"], '
            f'"request_timeout_seconds": {value}}}',
            encoding="utf-8",
        )
        run = _run(tmp_path, "--config", str(path))
    assert run.returncode == 1
    assert [line for line in _errors(run.stderr) if "config[" in line] == [_errors(run.stderr)[0]]
    assert "config['request_timeout_seconds']: must be a finite number" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("MAX_CONCURENCY", "32-quoted-nowhere", "is not a setting of this tap"),
        ("FIRST_RUN_MOD", f"emit_all{SECRET}", "is not a setting of this tap"),
        (
            "BATCH_CONFIG",
            '{"encoding": {"format": "jsonl"}, "storage": {"root": "file:///' + SECRET + '"}}',
            "batch mode is not supported",
        ),
    ],
    ids=["typo", "typo-secret", "batch-config"],
)
def test_an_unknown_environment_variable_is_refused_naming_it(
    tmp_path: Path, name: str, value: str, why: str
) -> None:
    """As an unknown key in a config file: a misspelt variable must not leave its
    setting at the default without a word."""
    run = _run_with_one_variable(tmp_path, name, value)
    assert run.returncode == 1
    [error] = [line for line in _errors(run.stderr) if "TAP_FEEDDELTA_" in line]
    assert f"TAP_FEEDDELTA_{name}" in error and why in error
    assert "Traceback" not in run.stderr
    assert SECRET not in run.stderr and value not in run.stderr
    assert run.stdout == ""


# What `meltano invoke tap-feeddelta` put in the tap's environment (Meltano 4.4.1), for a
# project whose tap-feeddelta config has stream_maps, stream_map_config, faker_config and
# flattening, with select and metadata extras, and a plugin tap-feeddelta--shard1 that
# inherits from it; plus the SDK's own TAP_FEEDDELTA_LOGLEVEL and Meltano's alias
# TAP_FEEDDELTA_METADATA of the _metadata extra. (Meltano itself passes --config FILE.)
MELTANO_VARIABLES = {
    "TAP_FEEDDELTA_FLATTENING_ENABLED": "true",
    "TAP_FEEDDELTA_FLATTENING_MAX_DEPTH": "2",
    "TAP_FEEDDELTA_FAKER_CONFIG_SEED": "1",
    "TAP_FEEDDELTA_STREAM_MAPS_FEED_ITEMS_TITLE": "title.upper()",
    "TAP_FEEDDELTA_STREAM_MAP_CONFIG_K": "v",
    "TAP_FEEDDELTA__LOAD_SCHEMA": "tap_feeddelta",
    "TAP_FEEDDELTA__LOG_PARSER": "singer-sdk",
    "TAP_FEEDDELTA__METADATA": '{"feed_items": {"replication-method": "INCREMENTAL"}}',
    "TAP_FEEDDELTA__METADATA_FEED_ITEMS_REPLICATION_METHOD": "INCREMENTAL",
    "TAP_FEEDDELTA__SCHEMA": "{}",
    "TAP_FEEDDELTA__SELECT": '["feed_items.*", "feed_health.*"]',
    "TAP_FEEDDELTA__SELECT_FILTER": "[]",
    "TAP_FEEDDELTA__USE_CACHED_CATALOG": "true",
    "TAP_FEEDDELTA__SHARD1_SHARD_INDEX": "1",
    "TAP_FEEDDELTA__SHARD1_FEED_URLS": '["https://example.invalid/feed.xml"]',
    "TAP_FEEDDELTA_METADATA": "{}",
    "TAP_FEEDDELTA_LOGLEVEL": "info",
}


def test_the_variables_meltano_and_the_sdk_set_are_not_refused(
    server: FeedServer, tmp_path: Path
) -> None:
    run = _run_on_one_feed(
        server,
        tmp_path,
        TAP_FEEDDELTA_ALLOW_PRIVATE_NETWORKS="true",
        TAP_FEEDDELTA_FIRST_RUN_MODE="emit_all",
        **MELTANO_VARIABLES,
    )
    assert run.returncode == 0, run.stderr
    messages = [json.loads(line) for line in run.stdout.splitlines()]
    items = [m["record"] for m in messages if m["type"] == "RECORD" and m["stream"] == "feed_items"]
    assert [item["title"] for item in items] == ["One"]


def test_every_setting_in_meltano_yml_is_read_from_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Meltano exports each setting of meltano.yml as TAP_FEEDDELTA_<SETTING>."""
    import yaml

    from tap_feeddelta.tap import TapFeedDelta

    project = yaml.safe_load((Path(__file__).parents[3] / "meltano.yml").read_text())
    [tap] = [p for p in project["plugins"]["extractors"] if p["name"] == "tap-feeddelta"]
    names = [setting["name"] for setting in tap["settings"]]
    builtin = ["stream_maps", "stream_map_config", "faker_config", "flattening_enabled"]
    for name in [*names, *builtin, "flattening_max_depth"]:
        monkeypatch.setenv(f"TAP_FEEDDELTA_{name.upper()}", "1")
    read = TapFeedDelta._env_var_config
    assert set(read) == {*names, *builtin, "flattening_max_depth"}


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ('["https://e.example/f?tags=a,b"]', ["https://e.example/f?tags=a,b"]),
        ("https://e.example/f", ["https://e.example/f"]),
        ("https://e.example/a,https://e.example/b", ["https://e.example/a", "https://e.example/b"]),
        ("https://e.example/f?tags=a,b", ["https://e.example/f?tags=a", "b"]),
        ('["https://e.example/f",]', ['["https://e.example/f"', "]"]),
    ],
    ids=["json", "bare-url", "comma-separated", "comma-in-query", "json-typo"],
)
def test_an_array_variable_is_json_or_else_split_on_commas(
    monkeypatch: pytest.MonkeyPatch, text: str, urls: list[str]
) -> None:
    """As docs/configuration.md says: singer-sdk's reading of a list of strings is
    kept; a URL with a comma in its query must be given as JSON (the pieces of a wrong
    split are then refused by the config check, by index)."""
    from tap_feeddelta.tap import TapFeedDelta

    for name in os.environ:
        if name.startswith("TAP_FEEDDELTA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TAP_FEEDDELTA_FEED_URLS", text)
    assert TapFeedDelta._env_var_config == {"feed_urls": urls}


BOOLEAN_SPELLINGS = [(text, True) for text in ("true", "TRUE", "1", "yes", "on")] + [
    (text, False) for text in ("false", "FALSE", "0", "no", "off", "")
]


@pytest.mark.parametrize(("spelling", "meaning"), BOOLEAN_SPELLINGS)
def test_the_spellings_of_a_boolean_read_as_what_they_say(
    server: FeedServer, tmp_path: Path, spelling: str, meaning: bool
) -> None:
    """allow_private_networks from its variable: true reaches the loopback server."""
    run = _run_on_one_feed(server, tmp_path, TAP_FEEDDELTA_ALLOW_PRIVATE_NETWORKS=spelling)
    assert run.returncode == 0, run.stderr
    health = [json.loads(line) for line in run.stdout.splitlines() if "feed_health" in line]
    [row] = [m["record"] for m in health if m["type"] == "RECORD"]
    assert (row["status"], row["error_code"]) == (
        ("ok", None) if meaning else ("error", "destination_denied")
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"feed_urls": ["https://u:' + SECRET + '@x.example/f"', "is not valid JSON (line 1"),
        ("", "is not valid JSON"),
        ('["https://x.example/f"]', "does not hold a JSON object"),
        (None, "cannot be read"),
    ],
    ids=["truncated", "empty", "list", "missing"],
)
def test_a_config_file_that_cannot_be_read_is_named_in_one_line(
    tmp_path: Path, text: str | None, why: str
) -> None:
    path = tmp_path / "config.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    for extra in ((), ("--discover",)):
        run = _run(tmp_path, "--config", str(path), *extra)
        assert run.returncode == 1, extra
        assert _errors(run.stderr) == [_errors(run.stderr)[0]]  # one line
        assert f"config_invalid: config file {str(path)!r} {why}" in run.stderr
        assert "Traceback" not in run.stderr and SECRET not in run.stderr
        assert run.stdout == ""


def test_damaged_state_gives_its_message_without_a_traceback(tmp_path: Path) -> None:
    config: dict[str, Any] = {"feed_urls": ["https://example.invalid/feed.xml"]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "state.json").write_text('{"bookmarks": []}')
    run = _run(
        tmp_path, "--config", str(tmp_path / "config.json"), "--state", str(tmp_path / "state.json")
    )
    assert run.returncode == 1
    errors = _errors(run.stderr)
    assert len(errors) == 1 and "state: 'bookmarks' must be an object" in errors[0]
    assert "Traceback" not in run.stderr


def test_the_sdks_config_source_notice_is_debug_not_info(tmp_path: Path) -> None:
    """singer-sdk says at INFO where it read settings from ("Skipping parse of env var
    settings..." with a config file): once per start, twice per meltano run (discovery
    and the run), in a log where INFO is meant for what the run did."""
    (tmp_path / "config.json").write_text(json.dumps({"feed_urls": ["https://e.org/f.xml"]}))
    args = ("--config", str(tmp_path / "config.json"), "--discover")
    quiet = _run(tmp_path, *args)
    assert quiet.returncode == 0, quiet.stderr
    assert "env var" not in quiet.stderr
    debug = _run(tmp_path, *args, TAP_FEEDDELTA_LOGLEVEL="DEBUG")
    assert (
        [line for line in debug.stderr.splitlines() if "env var" in line]
        == [line for line in debug.stderr.splitlines() if "| DEBUG" in line and "env var" in line]
        != []
    )
