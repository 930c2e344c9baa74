"""The parse layer's walls: importing it loads neither the SDK nor any HTTP library, and
starting the tap loads no parser (lxml and the format readers wait for a document)."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("singer_sdk", "requests", "urllib3", "http.client", "socket", "ssl",
             "tap_feeddelta.fetch")  # fmt: skip

SCRIPT = f"""
import sys
import tap_feeddelta.parse
from tap_feeddelta.parse import parse_feed
parse_feed(b'<rss><channel><item><title>x</title></item></channel></rss>', None, 'https://e.x/')
loaded = [name for name in {FORBIDDEN!r} if name in sys.modules]
print(",".join(loaded))
"""

PARSER_MODULES = ("feed", "xmldoc", "rss", "atom", "jsonfeed")
PARSER = ("lxml", *(f"tap_feeddelta.parse.{name}" for name in PARSER_MODULES))

TAP_SCRIPT = f"""
import sys
import tap_feeddelta.tap
loaded = [name for name in {PARSER!r} if name in sys.modules]
print(",".join(loaded))
"""


def _loaded(script: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout.strip()


def test_importing_parse_loads_no_sdk_and_no_http() -> None:
    loaded = _loaded(SCRIPT)
    assert loaded == "", f"loaded: {loaded}"


def test_importing_the_tap_loads_no_parser() -> None:
    loaded = _loaded(TAP_SCRIPT)
    assert loaded == "", f"loaded: {loaded}"
