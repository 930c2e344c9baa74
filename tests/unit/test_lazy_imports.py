"""The pure rooms' walls (the parse layer's are in parse/test_lazy_imports.py).

delta, state and fingerprints load no SDK, no HTTP library, no fetch package, no parser
and no config (which reads URLs with the fetch package). records and checkfacts name URLs
as the fetcher does (shownurl, fetch.urls, fetch.headers, which use urllib3's URL parser),
but load neither the SDK, nor the client, its connections and resolver, nor the parser.
None of them, nor the tap, loads parse.text until an item is read (fingerprints).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

PARSER = ("lxml", "tap_feeddelta.parse.feed")
# Item text as read (fingerprints): its HTML expressions cost ~12 ms to compile, and a run
# whose feeds all answer 304 reads no item.
TEXT = ("tap_feeddelta.parse.text",)
HTTP = ("singer_sdk", "requests", "urllib3", "http.client", "socket", "ssl", "asyncio",
        "tap_feeddelta.fetch", "tap_feeddelta.config", *PARSER)  # fmt: skip
CLIENT = ("singer_sdk", "requests", "asyncio", "tap_feeddelta.fetch.client",
          "tap_feeddelta.fetch.connection", "tap_feeddelta.fetch.resolve",
          *PARSER, *TEXT)  # fmt: skip

# The tap itself loads the SDK, but the client only when a run starts (TapFeedDelta.feed_run).
STARTING = ("tap_feeddelta.fetch.client", "tap_feeddelta.fetch.connection",
            "tap_feeddelta.fetch.resolve", *PARSER, *TEXT)  # fmt: skip

WALLS = [
    pytest.param(("delta", "state", "fingerprints"), (*HTTP, *TEXT), id="pure"),
    pytest.param(("records", "checkfacts"), CLIENT, id="urls-as-fetched"),
    pytest.param(("tap",), STARTING, id="tap"),
]


@pytest.mark.parametrize(("modules", "forbidden"), WALLS)
def test_importing_loads_nothing_past_the_wall(
    modules: tuple[str, ...], forbidden: tuple[str, ...]
) -> None:
    script = "\n".join(
        [
            "import sys",
            *(f"import tap_feeddelta.{module}" for module in modules),
            f"print(','.join(name for name in {forbidden!r} if name in sys.modules))",
        ]
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "", f"{modules} loaded: {result.stdout.strip()}"


@pytest.mark.parametrize("first", ["as_read", "as_read_spaces_left"])
def test_fingerprints_reads_text_as_parse_text_does_from_its_first_call(first: str) -> None:
    calls = {
        "as_read": "fingerprints.as_read('Cafe\\u0301 \\u200b bar')",
        "as_read_spaces_left": "fingerprints.as_read_spaces_left('a \\u200b b')",
    }
    expected = {"as_read": "'Caf\\u00e9 bar'", "as_read_spaces_left": "('a  b', 1)"}
    script = "\n".join(
        [
            "from tap_feeddelta import fingerprints",
            f"assert {calls[first]} == {expected[first]}",
            "from tap_feeddelta.parse import text",
            "assert fingerprints.as_read is text.as_read",
            "assert fingerprints.as_read_spaces_left is text.as_read_spaces_left",
            *(f"assert {calls[name]} == {expected[name]}" for name in calls),
        ]
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
