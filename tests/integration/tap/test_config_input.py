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
    run = _run(
        tmp_path,
        "--config",
        "ENV",
        TAP_FEEDDELTA_FEED_URLS='["https://example.invalid/feed.xml"]',
        **{f"TAP_FEEDDELTA_{name}": value},
    )
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
        run = _run(
            tmp_path,
            "--config",
            "ENV",
            TAP_FEEDDELTA_FEED_URLS='["https://example.invalid/feed.xml"]',
            TAP_FEEDDELTA_REQUEST_TIMEOUT_SECONDS=value,
        )
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


@pytest.mark.parametrize("spelling", ["true", "TRUE", "1", "yes", "on"])
def test_the_true_spellings_of_a_boolean_still_read_as_true(
    server: FeedServer, tmp_path: Path, spelling: str
) -> None:
    server.put("/feed.xml", rss([("id-1", "One", "first")]))
    run = _run(
        tmp_path,
        "--config",
        "ENV",
        TAP_FEEDDELTA_FEED_URLS=json.dumps([server.url("/feed.xml")]),
        TAP_FEEDDELTA_ALLOW_PRIVATE_NETWORKS=spelling,
        TAP_FEEDDELTA_MAX_CONCURRENCY="3",
    )
    assert run.returncode == 0, run.stderr
    health = [json.loads(line) for line in run.stdout.splitlines() if "feed_health" in line]
    assert [m["record"]["status"] for m in health if m["type"] == "RECORD"] == ["ok"]


@pytest.mark.parametrize("spelling", ["false", "FALSE", "0", "no", "off", ""])
def test_the_false_spellings_of_a_boolean_read_as_false(
    server: FeedServer, tmp_path: Path, spelling: str
) -> None:
    server.put("/feed.xml", rss([("id-1", "One", "first")]))
    run = _run(
        tmp_path,
        "--config",
        "ENV",
        TAP_FEEDDELTA_FEED_URLS=json.dumps([server.url("/feed.xml")]),
        TAP_FEEDDELTA_ALLOW_PRIVATE_NETWORKS=spelling,
    )
    assert run.returncode == 0, run.stderr
    assert '"error_code":"destination_denied"' in run.stdout.replace(" ", "")


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
        assert f"config file {str(path)!r} {why}" in run.stderr
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
