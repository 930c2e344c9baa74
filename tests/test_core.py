"""singer-sdk's standard tap tests, against feeds served on 127.0.0.1."""

from __future__ import annotations

import atexit

from singer_sdk.testing import SuiteConfig, get_tap_test_class

from tap_feeddelta.tap import TapFeedDelta
from tests.feedserver import FeedServer, rss

# The SDK builds its test class at import time, so the server starts with the module.
_SERVER = FeedServer().start()
atexit.register(_SERVER.stop)
_SERVER.put("/a.xml", rss([(f"a-{n}", f"A {n}", "<p>x</p>") for n in range(3)]))
_SERVER.put(
    "/b.json",
    '{"version": "https://jsonfeed.org/version/1.1", "title": "B", "items": ['
    '{"id": "b-1", "url": "https://example.org/b1", "title": "B 1", '
    '"content_text": "hello", "date_published": "2024-02-01T10:00:00Z", '
    '"authors": [{"name": "Ann"}], "tags": ["t"]}]}',
    content_type="application/feed+json",
)
_SERVER.put("/missing.xml", "nope", status=404, content_type="text/plain")

CONFIG = {
    "feed_urls": [_SERVER.url("/a.xml"), _SERVER.url("/b.json"), _SERVER.url("/missing.xml")],
    "first_run_mode": "emit_all",
    "allow_private_networks": True,
    "request_timeout_seconds": 10,
}

TestTapFeedDelta = get_tap_test_class(
    tap_class=TapFeedDelta,
    config=CONFIG,
    suite_config=SuiteConfig(max_records_limit=50),
)
