"""Fixtures shared by the integration tests (fetch/ has servers of its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.feedserver import FeedServer


@pytest.fixture
def server() -> Iterator[FeedServer]:
    """A feed server on 127.0.0.1 for one test."""
    srv = FeedServer().start()
    yield srv
    srv.stop()
