"""Server errors and rate limits: stable codes, plain messages, no secrets anywhere."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from tap_feeddelta.errors import CODES
from tap_feeddelta.fetch import Fetcher
from tap_feeddelta.models import FetchResult

from .conftest import Clock, Request, Server, Wire, assert_error

SECRET = "SECRET-7f3a9c"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", "2026-03-01T12:02:00Z"),
        ("0", "2026-03-01T12:00:00Z"),
        ("9999999", "2026-03-02T12:00:00Z"),  # capped at a day
        ("Sun, 01 Mar 2026 13:30:00 GMT", "2026-03-01T13:30:00Z"),
        ("Wed, 01 Apr 2026 00:00:00 GMT", "2026-03-02T12:00:00Z"),  # capped at a day
        ("Sat, 01 Jan 2000 00:00:00 GMT", "2026-03-01T12:00:00Z"),  # past: now
        ("soon", None),
        ("\u00b2", None),  # "²": a digit to str.isdigit(), not to int()
        ("1\u00b2", None),
        (None, None),
    ],
)
@pytest.mark.parametrize("status", [429, 503])
def test_rate_limited_keeps_retry_after(
    status: int,
    value: str | None,
    expected: str | None,
    server: Server,
    fetchers: Callable[..., Fetcher],
    clock: Clock,
) -> None:
    headers = [("Retry-After", value)] if value is not None else []
    server.routes["/feed"] = lambda request, wire: wire.respond(status, b"slow down", headers)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "rate_limited", clock, 2.0)
    assert result.http_status == status
    assert result.retry_after_at == expected
    assert server.paths == ["/feed"]


def test_a_retry_after_that_cannot_be_read_never_changes_the_code(
    server: Server,
    fetchers: Callable[..., Fetcher],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tap_feeddelta.fetch import client

    def broken(value: str | None, now: object) -> str | None:
        raise RuntimeError(value)

    monkeypatch.setattr(client, "retry_after_at", broken)
    headers = [("Retry-After", SECRET)]
    server.routes["/feed"] = lambda request, wire: wire.respond(429, b"slow down", headers)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "rate_limited")
    assert result.retry_after_at is None
    assert SECRET not in caplog.text


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (204, " with no content: there is no document to read."),
        (205, " with no content: there is no document to read."),
        (201, ", a success status that does not carry the document."),
        (202, ", a success status that does not carry the document."),
        (206, ", a success status that does not carry the document."),  # no Range was sent
    ],
)
def test_a_2xx_without_the_document_is_http_error_but_not_called_an_error(
    status: int, words: str, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = lambda request, wire: wire.respond(status, b"<rss/>")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "http_error")
    assert result.http_status == status
    assert result.error is not None
    assert result.error.message == f"127.0.0.1 answered {status}{words}"
    assert "HTTP" not in result.error.message


@pytest.mark.parametrize("status", [400, 401, 403, 404, 418, 500, 502, 504])
def test_other_statuses_are_http_errors(
    status: int, server: Server, fetchers: Callable[..., Fetcher], clock: Clock
) -> None:
    server.routes["/feed"] = lambda request, wire: wire.respond(status, b"no")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "http_error", clock, 2.0)
    assert server.paths == ["/feed"]
    assert result.http_status == status
    assert result.error is not None
    assert str(status) in result.error.message
    assert result.retry_after_at is None


def test_410_is_feed_gone(server: Server, fetchers: Callable[..., Fetcher], clock: Clock) -> None:
    """Gone on purpose (RFC 9110 15.5.11), told apart from an error that passes."""
    server.routes["/feed"] = lambda request, wire: wire.respond(410, b"gone")
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert_error(result, "feed_gone", clock, 2.0)
    assert result.http_status == 410
    assert result.error is not None
    # What to do about it, as the codes table says: the message stopped at the cause.
    assert result.error.message == (
        "127.0.0.1 answered 410 Gone: the feed was removed on purpose (remove it from feed_urls)."
    )
    assert not CODES["feed_gone"].is_retriable


def test_secret_in_a_500_appears_nowhere(
    server: Server,
    fetchers: Callable[..., Fetcher],
    caplog: pytest.LogCaptureFixture,
    clock: Clock,
) -> None:
    def leaky(request: Request, wire: Wire) -> bool:
        wire.respond(
            500,
            f"<html>stack trace: password={SECRET}</html>".encode(),
            [
                ("X-Debug", SECRET),
                ("Set-Cookie", f"session={SECRET}"),
                ("Content-Type", f"text/html; x={SECRET}"),
                ("ETag", f'"{SECRET}"'),
                ("Retry-After", SECRET),
                ("Location", f"http://{SECRET}.example/"),
            ],
        )
        return True

    server.routes["/feed"] = leaky
    caplog.set_level(logging.DEBUG)
    result = fetchers(allow_private_networks=True).fetch(
        server.url("/feed?token=QUERYSECRET"), etag='"old"'
    )
    assert_error(result, "http_error", clock, 2.0)
    assert result.http_status == 500
    assert SECRET not in repr(result)
    assert SECRET not in caplog.text
    assert result.error is not None
    assert "QUERYSECRET" not in result.error.message
    assert "QUERYSECRET" not in caplog.text
    assert all(record.levelno < logging.WARNING for record in caplog.records)
    assert any(": http_error in" in record.getMessage() for record in caplog.records)
    assert server.paths == ["/feed"]


def test_every_failure_carries_a_known_code(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    server.routes["/feed"] = lambda request, wire: wire.respond(404)
    result = fetchers(allow_private_networks=True).fetch(server.url("/feed"))
    assert result.error is not None
    assert result.error.code in CODES
    assert result.error.as_record()["severity"] == "error"


def test_closed_fetcher_refuses_to_fetch(fetchers: Callable[..., Fetcher]) -> None:
    fetcher = fetchers()
    fetcher.close()
    fetcher.close()
    with pytest.raises(RuntimeError):
        fetcher.fetch("http://feed.example/")


def _fetch_held_open(
    server: Server,
    fetchers: Callable[..., Fetcher],
    field: str,
    values: list[str],
    body: bytes,
) -> FetchResult:
    """A 200 with one ``field`` line per value, then ``body``, and the connection left
    open: a reader that waits for the close instead of framing the body hangs."""

    def answer(request: Request, wire: Wire) -> bool:
        head = "".join(f"{field}: {value}\r\n" for value in values)
        wire.send(f"HTTP/1.1 200 OK\r\n{head}\r\n".encode() + body)
        wire.sleep(5)
        return False

    server.routes["/feed"] = answer
    fetcher = fetchers(allow_private_networks=True, request_timeout_seconds=3)
    return fetcher.fetch(server.url("/feed"))


@pytest.mark.parametrize(
    ("lengths", "code"),
    [
        (["6, 6"], None),
        (["6", "6"], None),
        (["6, 7"], "bad_response"),
        (["6", "7"], "bad_response"),
        (["abc"], "bad_response"),  # no number: where the body ends is unknown
        (["-5"], "bad_response"),
        (["0x6"], "bad_response"),
    ],
)
def test_a_repeated_content_length_is_one_length_and_differing_ones_are_refused(
    lengths: list[str], code: str | None, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    result = _fetch_held_open(server, fetchers, "Content-Length", lengths, b"<rss/>")
    if code is None:
        assert (result.status, result.body) == ("ok", b"<rss/>")
    else:
        assert result.error is not None and result.error.code == code


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        (["chunked"], None),
        (["Chunked"], None),
        (["chunked, "], None),  # an empty list member is no coding
        (["gzip, chunked"], "bad_response"),  # a coding not offered (no TE was sent)
        (["gzip", "chunked"], "bad_response"),  # the same in two fields
        (["chunked, gzip"], "bad_response"),  # chunked not last: no framing at all
        (["gzip"], "bad_response"),
        (["chunked", "chunked"], "bad_response"),  # chunked twice
        (["identity, chunked"], None),  # identity changes nothing: chunked is last
        (["chunked", "identity"], None),
        (["identity, gzip"], "bad_response"),
    ],
    ids=[
        "chunked",
        "Chunked",
        "chunked-comma",
        "gzip-chunked",
        "two-fields",
        "chunked-gzip",
        "gzip",
        "chunked-twice",
        "identity-chunked",
        "chunked-identity",
        "identity-gzip",
    ],
)
def test_transfer_codings_are_read_as_a_list_and_only_chunked_is_taken(
    fields: list[str], code: str | None, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    # RFC 9112 6.1, 6.3: the list of every Transfer-Encoding field; chunked must be last.
    body = b"6\r\n<rss/>\r\n0\r\n\r\n"
    result = _fetch_held_open(server, fetchers, "Transfer-Encoding", fields, body)
    if code is None:
        assert (result.status, result.body) == ("ok", b"<rss/>")
    else:
        assert result.error is not None and result.error.code == code
        assert "Transfer-Encoding" in result.error.message


def test_transfer_encoding_identity_is_read_to_the_close(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """No coding but identity, no Content-Length: the body ends with the connection
    (RFC 9112 6.3), as old servers send it."""

    def answer(request: Request, wire: Wire) -> bool:
        wire.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n<rss>whole</rss>")
        return False

    server.routes["/feed"] = answer
    fetcher = fetchers(allow_private_networks=True)
    result = fetcher.fetch(server.url("/feed"))
    assert (result.status, result.body) == ("ok", b"<rss>whole</rss>"), result.error
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    assert server.connections == 2


@pytest.mark.parametrize(
    "answer_bytes",
    [
        # Read by its length, as http.client does.
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 6\r\n\r\n<rss/>",
        # Chunked overrides the length beside it.
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"6\r\n<rss/>\r\n0\r\n\r\n",
    ],
    ids=["identity", "chunked"],
)
def test_a_length_beside_a_transfer_encoding_is_read_and_not_reused(
    server: Server, fetchers: Callable[..., Fetcher], answer_bytes: bytes
) -> None:
    """A length beside a Transfer-Encoding frames nothing for sure (RFC 9112 6.3 (3)):
    such an answer is how request smuggling and response splitting look, and where the
    next answer starts is in doubt. The body is read, but the connection is not used
    again."""

    def answer(request: Request, wire: Wire) -> bool:
        wire.send(answer_bytes)
        return True

    server.routes["/feed"] = answer
    fetcher = fetchers(allow_private_networks=True, request_timeout_seconds=3)
    result = fetcher.fetch(server.url("/feed"))
    assert (result.status, result.body) == ("ok", b"<rss/>"), result.error
    assert fetcher.fetch(server.url("/feed")).status == "ok"
    assert server.connections == 2


def test_a_body_read_to_the_close_is_capped(
    server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    def answer(request: Request, wire: Wire) -> bool:
        wire.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n" + b"x" * 100_000)
        wire.sleep(5)
        return False

    server.routes["/feed"] = answer
    fetcher = fetchers(allow_private_networks=True, max_feed_bytes=65_536)
    assert_error(fetcher.fetch(server.url("/feed")), "response_too_large")


@pytest.mark.parametrize(
    ("field", "values", "body"),
    [
        ("Content-Length ", ["6"], b"<rss/>"),
        ("Content-Length\t", ["6"], b"<rss/>"),
        ("Transfer-Encoding ", ["chunked"], b"6\r\n<rss/>\r\n0\r\n\r\n"),
    ],
    ids=["length-space", "length-tab", "transfer-encoding-space"],
)
def test_a_framing_field_with_whitespace_before_its_colon_is_a_bad_response(
    field: str, values: list[str], body: bytes, server: Server, fetchers: Callable[..., Fetcher]
) -> None:
    """Such a line is no field (RFC 9112 5.1; http.client skips it too): the body had no
    framing and was read to the close, which a keep-alive server never sends, so the
    fetch hung until its time ran out. Where the body ends is unknown: refused at once."""
    clock = Clock()
    result = _fetch_held_open(server, fetchers, field, values, body)
    assert_error(result, "bad_response", clock, 1.0)
    assert result.error is not None
    assert result.error.message == (
        f"The response's {field.strip()} field has whitespace before its colon."
    )
    assert result.http_status == 200
