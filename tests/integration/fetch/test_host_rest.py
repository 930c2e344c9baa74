"""A host that answers 429, or 503 with a Retry-After, is asked for nothing more in the
run until the time it gave: rate limits are per client, not per URL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tap_feeddelta.fetch import Fetcher

from .conftest import (
    Request,
    Server,
    StubResolver,
    Wire,
    assert_error,
    ok_handler,
    redirect_handler,
)


def _answers(status: int, retry_after: str | None) -> Callable[[Request, Wire], bool | None]:
    headers = [("Retry-After", retry_after)] if retry_after is not None else []

    def handle(request: Request, wire: Wire) -> bool | None:
        wire.respond(status, b"slow down", headers)
        return None

    return handle


@pytest.mark.parametrize(
    ("status", "retry_after", "expected"),
    [
        (429, "3600", "2026-03-01T13:00:00Z"),
        (503, "120", "2026-03-01T12:02:00Z"),
        (429, "Sun, 01 Mar 2026 12:30:00 GMT", "2026-03-01T12:30:00Z"),
    ],
)
def test_the_hosts_other_fetches_of_the_run_are_not_sent(
    status: int,
    retry_after: str,
    expected: str,
    server: Server,
    fetchers: Callable[..., Fetcher],
) -> None:
    server.routes["/limited"] = _answers(status, retry_after)
    server.routes["/other"] = ok_handler()
    fetcher = fetchers(allow_private_networks=True)
    limited = fetcher.fetch(server.url("/limited"))
    assert_error(limited, "rate_limited")
    assert limited.retry_after_at == expected
    other = fetcher.fetch(server.url("/other"), etag='"e"')
    assert_error(other, "retry_later")
    assert other.retry_after_at == expected  # the host's, for the feed's bookmark
    assert other.http_status is None
    assert other.error is not None
    assert "Not sent" in other.error.message
    assert server.paths == ["/limited"]


@pytest.mark.parametrize("retry_after", ["0", "Sat, 01 Jan 2000 00:00:00 GMT"])
def test_a_retry_after_already_passed_rests_nothing(
    retry_after: str, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/limited"] = _answers(429, retry_after)
    server.routes["/other"] = ok_handler()
    fetcher = fetchers(allow_private_networks=True)
    assert_error(fetcher.fetch(server.url("/limited")), "rate_limited")
    assert fetcher.fetch(server.url("/other")).status == "ok"
    assert server.paths == ["/limited", "/other"]


def test_fetches_waiting_for_the_hosts_slot_are_not_sent_after_its_429(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """max_per_host 1: the host's fetches queue for its one slot; the first answer is a
    429, and the others, queued meanwhile, end unsent."""
    for n in range(6):
        server.routes[f"/f{n}"] = _answers(429, "600")
    fetcher = fetchers(allow_private_networks=True, max_per_host=1)

    async def all_at_once() -> list[str]:
        results = await asyncio.gather(
            *(fetcher.fetch_async(server.url(f"/f{n}")) for n in range(6))
        )
        return sorted(r.error.code for r in results if r.error is not None)

    codes = fetcher.submit(all_at_once()).result()
    assert codes == ["rate_limited"] + ["retry_later"] * 5
    assert len(server.paths) == 1


def test_the_wait_belongs_to_the_host_that_answered(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """one.example redirects to two.example, which answers 429: two.example rests, not
    the host the feed was configured on; a later redirect to two.example stops there."""
    resolver = StubResolver({"one.example": ["127.0.0.1"], "two.example": ["127.0.0.1"]})
    server.routes["/a"] = redirect_handler(server.url("/limited", host="two.example"))
    server.routes["/limited"] = _answers(429, "3600")
    server.routes["/ok"] = ok_handler()
    server.routes["/b"] = redirect_handler(server.url("/ok", host="two.example"))
    fetcher = fetchers(resolver=resolver, allow_private_networks=True)
    assert_error(fetcher.fetch(server.url("/a", host="one.example")), "rate_limited")
    assert fetcher.fetch(server.url("/ok", host="one.example")).status == "ok"
    assert_error(fetcher.fetch(server.url("/ok", host="two.example")), "retry_later")
    redirected = fetcher.fetch(server.url("/b", host="one.example"))
    assert_error(redirected, "retry_later")
    assert (redirected.redirects, redirected.retry_after_at) == (1, "2026-03-01T13:00:00Z")
    assert server.paths == ["/a", "/limited", "/ok", "/b"]


def test_a_503_without_retry_after_rests_only_that_feed(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """A 503 without Retry-After is often one backend behind a shared front (a proxy's
    route to a stopped app): the host's other feeds are still asked for."""
    server.routes["/down"] = _answers(503, None)
    server.routes["/other"] = ok_handler()
    fetcher = fetchers(allow_private_networks=True)
    assert_error(fetcher.fetch(server.url("/down")), "rate_limited")
    assert fetcher.fetch(server.url("/other")).status == "ok"


def test_a_429_without_retry_after_rests_the_host_without_a_time(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """A rate limit that does not say for how long still counts the client's requests to
    the host: the run asks it for nothing more (for 5 minutes). The feed refused reports
    no time (its check waits by its failure streak); a feed not asked reports the end of
    the host's rest."""
    server.routes["/limited"] = _answers(429, None)
    server.routes["/other"] = ok_handler()
    fetcher = fetchers(allow_private_networks=True)
    limited = fetcher.fetch(server.url("/limited"))
    assert_error(limited, "rate_limited")
    other = fetcher.fetch(server.url("/other"))
    assert_error(other, "retry_later")
    assert limited.retry_after_at is None
    assert other.retry_after_at is not None
    assert other.retry_after_at == "2026-03-01T12:05:00Z"  # FIXED_NOW + 5 minutes
    assert server.paths == ["/limited"]
