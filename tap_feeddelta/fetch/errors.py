"""The fetch layer's one failure type, and the one place third-party exceptions map to it.

Every message here is plain and safe: it may name a host, an address, a status or an
exception's type, never a body, a header value, userinfo, a query string or a full URL.
"""

from __future__ import annotations

import errno
import http.client
import ssl
import zlib
from typing import Literal

from urllib3.exceptions import HTTPError as Urllib3Error

from tap_feeddelta.errors import Issue
from tap_feeddelta.fetch.wire import MAX_FIELDS, MAX_HEAD_BYTES

Phase = Literal["connect", "exchange", "body"]


class FetchError(Exception):
    """One fetch failed with a stable code; becomes ``FetchResult.error``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def as_issue(self) -> Issue:
        return Issue(self.code, self.message)


class TooManyFields(http.client.HTTPException):
    """More than MAX_FIELDS field lines in a head (``where`` "header") or a chunked
    body's trailer ("trailer")."""

    def __init__(self, where: Literal["header", "trailer"]) -> None:
        super().__init__(f"got more than {MAX_FIELDS} {where} fields")
        self.where = where


class HeadTooLarge(http.client.HTTPException):
    """The heads of one answer (interim ones included) past MAX_HEAD_BYTES."""

    def __init__(self) -> None:
        super().__init__(f"the response head is over {MAX_HEAD_BYTES // 1024} KiB")


class HeadCutShort(http.client.RemoteDisconnected):
    """The connection closed before the blank line that ends a response's head: no
    answer was received (a close before any answer is RemoteDisconnected too, and is
    retried the same way)."""

    def __init__(self) -> None:
        super().__init__("closed in the middle of the response's head")


def timed_out(what: str) -> FetchError:
    return FetchError("timeout", f"The time budget ran out while {what}.")


_PHASE_WORDS: dict[Phase, str] = {
    "connect": "connecting",
    "exchange": "waiting for the response",
    "body": "reading the body",
}


def failure_from_exception(exc: BaseException, *, phase: Phase, host: str) -> FetchError:
    """Map any exception raised by sockets, ssl, http.client, urllib3 or zlib to a failure."""
    if isinstance(exc, FetchError):
        return exc
    doing = _PHASE_WORDS[phase]
    if isinstance(exc, TimeoutError):
        return timed_out(doing)
    if isinstance(exc, ssl.SSLCertVerificationError):
        reason = (exc.verify_message or "certificate verify failed").rstrip(".")
        return FetchError("tls_failed", f"The certificate of {host} was refused: {reason}.")
    if isinstance(exc, ssl.SSLError) and phase == "connect":
        reason = _ssl_reason(exc)
        return FetchError(
            "tls_failed", f"The TLS handshake with {host} failed ({reason}){_meaning(reason)}."
        )
    if isinstance(exc, http.client.IncompleteRead):
        return FetchError("connection_failed", f"The connection to {host} broke mid-body.")
    if isinstance(exc, HeadCutShort):
        return FetchError(
            "connection_failed",
            f"{host} closed the connection in the middle of the response's head.",
        )
    if isinstance(exc, http.client.RemoteDisconnected):
        return FetchError("connection_failed", f"{host} closed the connection without a response.")
    if isinstance(exc, http.client.LineTooLong):
        return FetchError("bad_response", f"{host} sent a header line that is too long.")
    if isinstance(exc, HeadTooLarge):
        return FetchError(
            "bad_response", f"{host} sent a response head over {MAX_HEAD_BYTES // 1024} KiB."
        )
    if isinstance(exc, TooManyFields):
        return FetchError("bad_response", f"{host} sent more than {MAX_FIELDS} {exc.where} fields.")
    if isinstance(exc, http.client.HTTPException):
        return FetchError("bad_response", f"{host} broke the HTTP rules ({type(exc).__name__}).")
    if isinstance(exc, zlib.error):
        return FetchError("bad_response", f"The body from {host} could not be decoded.")
    if isinstance(exc, OSError | Urllib3Error):
        return FetchError(
            "connection_failed",
            f"The connection to {host} failed while {doing} ({_os_reason(exc)}).",
        )
    return FetchError("bad_response", f"Unexpected {type(exc).__name__} from {host} while {doing}.")


def _ssl_reason(exc: ssl.SSLError) -> str:
    reason = getattr(exc, "reason", None)
    return reason if isinstance(reason, str) and reason.isidentifier() else type(exc).__name__


# OpenSSL's reasons that users meet and cannot read, with what they usually mean.
_SSL_MEANINGS = {
    # The first bytes back were no TLS record: most often "HTTP/1.1 400", a plain-HTTP
    # server's answer to the ClientHello.
    "WRONG_VERSION_NUMBER": (
        "the server answered without TLS, as a plain http:// port does"
        " (check the URL's scheme and port)"
    ),
}


def _meaning(reason: str) -> str:
    meaning = _SSL_MEANINGS.get(reason)
    return f": {meaning}" if meaning else ""


def _os_reason(exc: BaseException) -> str:
    number = getattr(exc, "errno", None)
    if isinstance(number, int) and number in errno.errorcode:
        return errno.errorcode[number]
    return type(exc).__name__


def is_transient(exc: BaseException) -> bool:
    """A broken or refused connection worth one more try (not a timeout, not TLS)."""
    if isinstance(exc, TimeoutError | ssl.SSLError):
        return False
    return isinstance(exc, ConnectionError | http.client.RemoteDisconnected) or (
        isinstance(exc, OSError)
        and getattr(exc, "errno", None) in (errno.ENETUNREACH, errno.EHOSTUNREACH)
    )
