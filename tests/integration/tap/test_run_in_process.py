"""FeedRun in this process (the same code the tap runs) against a real feed server."""

from __future__ import annotations

import gc
import logging
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tap_feeddelta.config import Settings, settings_from_config
from tap_feeddelta.fetch import Fetcher, FetchPolicy
from tap_feeddelta.run import RUN_GC_THRESHOLDS, FeedRun
from tests.feedserver import FeedServer, rss


def _two_feeds(server: FeedServer) -> Settings:
    """Settings for two one-item feeds on the server, read in full on the first run."""
    server.put("/a.xml", rss([("id-1", "One", "first")]))
    server.put("/b.xml", rss([("id-2", "Two", "second")]))
    return settings_from_config(
        {
            "feed_urls": [server.url("/a.xml"), server.url("/b.xml")],
            "first_run_mode": "emit_all",
            "allow_private_networks": True,
        }
    )


def test_the_run_raises_gc_thresholds_while_it_runs_and_restores_them(
    server: FeedServer,
) -> None:
    settings = _two_feeds(server)
    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True))
    run = FeedRun(settings, fetcher, logging.getLogger("test"))
    before = gc.get_threshold()
    state: dict[str, Any] = {}
    seen = []
    try:
        for outcome in run.outcomes(state, commit=True):
            assert gc.get_threshold() == RUN_GC_THRESHOLDS
            seen.append([r["item_id"] for r in outcome.item_records])
    finally:
        fetcher.close()
    assert gc.get_threshold() == before
    assert seen == [["id-1"], ["id-2"]]
    assert len(state["partitions"]) == 2


def test_the_run_closes_its_fetcher_when_the_pass_ends(server: FeedServer) -> None:
    settings = _two_feeds(server)
    for stop_early in (False, True):
        fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True))
        run = FeedRun(settings, fetcher, logging.getLogger("test"))
        outcomes = run.outcomes({}, commit=True)
        next(outcomes)
        loop_threads = [t for t in threading.enumerate() if t.name == "feeddelta-fetch"]
        assert len(loop_threads) == 1
        if stop_early:
            outcomes.close()  # the consumer gave up (a broken pipe, an exception)
        else:
            assert len(list(outcomes)) == 1
        assert not loop_threads[0].is_alive()
        with pytest.raises(RuntimeError):
            fetcher.fetch(server.url("/a.xml"))


def test_a_slow_parse_does_not_eat_the_time_budget_of_feeds_in_flight(
    server: FeedServer,
) -> None:
    """A hostile body takes seconds to read by recovery. Feeds whose answers arrive
    meanwhile must not time out: the fetch loop goes on while it is parsed.

    The request timeout is short (0.75 s) so that the parse (about 2 s here) outlasts it
    with a wide margin: on a machine or parser three times faster the test still means
    what it says."""
    timeout = 0.75
    stray = b"a < b & c " * 1_200_000  # 12 MB of stray markup after a CDATA section
    server.put(
        "/hostile.xml",
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>h</title>'
        b"<item><title>a</title><description><![CDATA[x]]>"
        + stray
        + b"</description></item></channel></rss>",
    )
    urls = [server.url("/hostile.xml")]
    for n in range(4):
        path = f"/slow-{n}.xml"
        # answers while the hostile body is being parsed
        server.put(path, rss([(f"id-{n}", "T", "d")]), delay_seconds=0.25)
        urls.append(server.url(path))
    settings = settings_from_config(
        {
            "feed_urls": urls,
            "first_run_mode": "emit_all",
            "allow_private_networks": True,
            "request_timeout_seconds": timeout,
            "max_per_host": 8,
            "max_feed_bytes": 16 * 2**20,
        }
    )
    fetcher = Fetcher(
        FetchPolicy(
            user_agent="test",
            allow_private_networks=True,
            request_timeout_seconds=timeout,
            max_per_host=8,
            max_feed_bytes=16 * 2**20,
        )
    )
    run = FeedRun(settings, fetcher, logging.getLogger("test"))
    outcomes = list(run.outcomes({}, commit=True))
    # The parse outlasted the slow feeds' budget (else a stalled loop would go unseen).
    assert outcomes[0].health_record["parse_ms"] > timeout * 1000
    assert [o.status for o in outcomes[1:]] == ["ok"] * 4


def test_a_run_stopped_early_reports_the_health_of_finished_feeds_only(
    server: FeedServer,
) -> None:
    """What SIGTERM writes: the rows of feeds whose records are out and state committed,
    never one of a feed still being written, and no row twice."""
    settings = _two_feeds(server)
    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True))
    run = FeedRun(settings, fetcher, logging.getLogger("test"))
    try:
        outcomes = run.outcomes({}, commit=True)
        next(outcomes)  # the first feed's records are being written
        assert list(run.finished_health_unsent()) == []
        next(outcomes)  # the first is committed, the second is being written
        assert [r["feed_url"] for r in run.finished_health_unsent()] == [settings.feed_urls[0]]
        assert list(run.finished_health_unsent()) == []
        for _ in outcomes:
            pass
        # feed_health then hands out only what was not written yet
        assert [r["feed_url"] for r in run.health_records({})] == [settings.feed_urls[1]]
    finally:
        fetcher.close()


def test_after_commit_comes_once_a_feed_is_committed_and_not_after_the_last(
    server: FeedServer,
) -> None:
    """Where feed_items writes its STATEs during the run: the feed just finished is in
    the state, and its health row is among those to write ahead of the STATE."""
    settings = _two_feeds(server)
    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True))
    run = FeedRun(settings, fetcher, logging.getLogger("test"))
    state: dict[str, Any] = {}
    seen: list[tuple[list[str], list[str]]] = []

    def after_commit() -> None:
        in_state = [p["context"]["feed_url"] for p in state["partitions"]]
        seen.append((in_state, [r["feed_url"] for r in run.finished_health_unsent()]))

    try:
        assert len(list(run.outcomes(state, commit=True, after_commit=after_commit))) == 2
    finally:
        fetcher.close()
    first = settings.feed_urls[0]
    assert seen == [([first], [first])]  # the run's end writes the last STATE itself


def _run_at(
    settings: Settings, state: dict[str, Any], clock: datetime, logger: logging.Logger
) -> list[Any]:
    """One committing run whose clock reads ``clock``."""
    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=True))
    run = FeedRun(settings, fetcher, logger, now=lambda: clock)
    try:
        return list(run.outcomes(state, commit=True))
    finally:
        fetcher.close()


def test_a_feeds_checked_at_never_goes_back_when_the_clock_does(
    server: FeedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Run 1's clock was a day ahead, then set right: the later checks of the feed must
    still come after it, or warehouses take run 1's version of an item as the current
    one, and an error row would say the feed last answered after the row's own check."""
    server.put("/f.xml", rss([("id-1", "v1 title", "d")]))
    settings = settings_from_config(
        {
            "feed_urls": [server.url("/f.xml")],
            "first_run_mode": "emit_all",
            "allow_private_networks": True,
            "stale_after_days": 40,
        }
    )
    right = datetime(2024, 2, 10, 12, 0, tzinfo=UTC)  # the feed's item: 2 January 2024
    logger = logging.getLogger("test.clock")
    state: dict[str, Any] = {}
    (first,) = _run_at(settings, state, right + timedelta(days=1), logger)
    assert first.item_records[0]["checked_at"] == "2024-02-11T12:00:00.000000Z"

    del server.documents["/f.xml"]  # the feed is down while the clock is set right
    with caplog.at_level(logging.WARNING, logger="test.clock"):
        (second,) = _run_at(settings, state, right, logger)
    row = second.health_record
    assert row["status"] == "error"
    assert row["checked_at"] == "2024-02-11T12:00:00.000001Z"
    assert row["last_success_at"] == "2024-02-11T12:00:00.000000Z" < row["checked_at"]
    # Staleness is judged against the clock: the item (2 January) is 39 days old, not 40.
    assert first.health_record["is_stale"] is True
    assert row["is_stale"] is False
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # the clock's, once, and the failed feed's line after the run summary
    assert len(warnings) == 2 and "behind" in warnings[0], warnings
    assert warnings[1].startswith("Feed failed: feed_urls[0] ")

    server.put("/f.xml", rss([("id-1", "v2 title", "d")]))
    (third,) = _run_at(settings, state, right + timedelta(seconds=1), logger)
    (record,) = third.item_records
    assert (record["change_type"], record["title"]) == ("updated", "v2 title")
    assert record["checked_at"] == "2024-02-11T12:00:00.000002Z"
    assert third.health_record["checked_at"] == record["checked_at"]

    # Once the clock passes the state, checks are timed by it again.
    (fourth,) = _run_at(settings, state, right + timedelta(days=2), logger)
    assert fourth.health_record["checked_at"] == "2024-02-12T12:00:00.000000Z"


HINT = "allow_private_networks"


@pytest.mark.parametrize(
    "how", ["advertised", "redirected"], ids=["page-advertises", "page-redirects"]
)
def test_a_private_destination_the_publisher_chose_never_names_the_setting(
    how: str, server: FeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A public web page that advertises (or redirects to) a feed on an intranet address
    chose that destination: the refusal must not invite the user to let such addresses
    through, as it does for a configured URL of their own."""
    from tap_feeddelta.fetch import guard, resolve

    real = guard.address_denial

    def loopback_is_public(address: str, *, allow_private: bool) -> str | None:
        # The test server plays a public host; every other address is judged as shipped.
        return None if address == "127.0.0.1" else real(address, allow_private=allow_private)

    monkeypatch.setattr(resolve, "address_denial", loopback_is_public)
    intranet = f"http://10.0.0.7:{server.port}/internal-admin/feed"
    if how == "advertised":
        page = f'<html><head><link rel="alternate" type="application/rss+xml" href="{intranet}">'
        server.put("/blog", page + "</head><body>hi</body></html>", content_type="text/html")
    else:
        server.put("/blog", b"moved", status=302, headers={"Location": intranet})
    settings = settings_from_config(
        {"feed_urls": [server.url("/blog")], "discover_from_websites": True}
    )
    fetcher = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=False))
    run = FeedRun(settings, fetcher, logging.getLogger("test"))
    [outcome] = run.outcomes({}, commit=True)
    row = outcome.health_record
    # The advertised link is a destination (as its bad port is invalid_url, not a
    # redirect's redirect_denied); only the message differs from a configured URL's.
    code = "destination_denied" if how == "advertised" else "redirect_denied"
    assert row["error_code"] == code, row
    assert "10.0.0.7" in row["error_message"]
    assert HINT not in row["error_message"], row["error_message"]
    # A configured URL of the user's own on such an address still names the setting.
    direct = Fetcher(FetchPolicy(user_agent="test", allow_private_networks=False))
    try:
        result = direct.fetch(intranet)
    finally:
        direct.close()
    assert result.error is not None and HINT in result.error.message
