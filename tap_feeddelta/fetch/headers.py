"""Reading the few response headers the fetcher uses, and writing its request headers."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

MAX_VALIDATOR_CHARS = 1024
MAX_CONTENT_TYPE_CHARS = 256
RETRY_AFTER_CAP = timedelta(days=1)
# A 429 or 503 without Retry-After: the first wait (a host's in a run, and a feed's, which
# doubles with its failure streak up to RETRY_AFTER_CAP).
WAIT_WITHOUT_RETRY_AFTER = timedelta(minutes=5)
# A Last-Modified this far past the tap's clock is a server clock or file time gone wrong.
LAST_MODIFIED_LEEWAY = timedelta(minutes=10)
ACCEPT = (
    "application/rss+xml, application/atom+xml, application/feed+json, "
    "application/rdf+xml;q=0.9, application/json;q=0.9, application/xml;q=0.9, "
    "text/xml;q=0.9, text/html;q=0.5, */*;q=0.1"
)
# "Sun, 06 Nov 1994 08:49:37 GMT", the form servers send (RFC 9110 5.6.7).
_IMF_FIXDATE = re.compile(r"[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def clean_value(value: str | None, max_chars: int) -> str | None:
    """A header value fit to store or send again, or None (control characters, too long)."""
    if value is None:
        return None
    value = value.strip(" \t")
    if not value or len(value) > max_chars or _CONTROL.search(value):
        return None
    try:
        value.encode("latin-1")  # what HTTP/1.1 can carry
    except UnicodeEncodeError:
        return None
    return value


def http_date(value: str) -> datetime | None:
    """An HTTP date (any of its three forms) as an aware datetime (UTC when it names no
    zone), or None for anything else. Never raises."""
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def rfc3339_text(moment: datetime) -> str:
    """The moment as RFC 3339 text in UTC (``parse.dates.rfc3339`` reads such text)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def retry_after_at(value: str | None, now: datetime) -> str | None:
    """When a 429/503 says to come back: seconds or an HTTP date, capped at a day;
    None for a value that is neither. Never raises for any header value."""
    value = clean_value(value, 64)
    if value is None:
        return None
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if value.isascii() and value.isdigit():  # "²" is a digit to isdigit(), not to int()
        delay = timedelta(seconds=min(int(value), int(RETRY_AFTER_CAP.total_seconds())))
        moment = now + delay
    else:
        date = http_date(value)
        if date is None:
            return None
        moment = max(now, min(date, now + RETRY_AFTER_CAP))
    return rfc3339_text(moment)


def usable_last_modified(value: str | None, now: datetime) -> str | None:
    """The Last-Modified to send back as If-Modified-Since, or None for one in the future.

    A server compares If-Modified-Since with its document's time: a date ahead of every
    later change (a file stamped months ahead) would get 304 for each of them, until the
    clock catches up (RFC 9110 8.8.2.1 forbids such dates). Not sending it costs at most
    a full read. A value that is no HTTP date is kept: some servers compare it as text.
    """
    if value is None:
        return None
    if _IMF_FIXDATE.match(value) and int(value[12:16]) < now.year:
        return value  # the usual shape, of an earlier year: no need to read it whole
    moment = http_date(value)
    if moment is None:
        return value
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return None if moment > now + LAST_MODIFIED_LEEWAY else value


def content_encodings(value: str | None) -> list[str]:
    """The Content-Encoding tokens in order of application, without identity."""
    if not value:
        return []
    names = (name.strip().lower() for name in value.split(","))
    return [name for name in names if name and name != "identity"]
