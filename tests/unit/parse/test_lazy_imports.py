"""The parse layer's walls: importing it loads neither the SDK nor any HTTP library."""

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


def test_importing_parse_loads_no_sdk_and_no_http() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "", f"loaded: {result.stdout.strip()}"
