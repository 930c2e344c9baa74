"""The one table of error and issue codes, and the project's exception types.

Codes are part of the output contract: users filter and test on them. The table only
grows; a code is never renamed, removed or reused. The README's table is checked
against this one by a test.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Final, Literal

Severity = Literal["error", "warning", "info"]

# What a message shows of a value a file or a server chose, as the body of a regular
# expression's character class: a label's token characters and "/" (media types:
# "text/xml"); a state key's printable ASCII (another tool's keys hold "_", " ", anything);
# a URL's printable ASCII but for what could be read as markup or close a quote
# ('"<>&`{}\\).
LABEL_CHARACTERS: Final = "A-Za-z0-9._+/-"
PRINTABLE_ASCII: Final = " -~"
_NOT_IN_SHOWN_URL: Final = re.compile(r"[^!#-%(-;=?-\[\]-_a-z|~]")


def shown_label(
    label: str, max_chars: int = 32, allowed: str = LABEL_CHARACTERS, cut: str = "..."
) -> str:
    """A label a server or a file chose (a header's, a state's key), fit for a message: the
    characters of ``allowed`` (a character class's body; by default letters, digits and
    ``._+/-``), any other shown as ``?``; at most ``max_chars``, then ``cut``."""
    shown = re.sub(f"[^{allowed}]", "?", label[:max_chars])
    return shown + cut if len(label) > max_chars else shown


# What a JSON reader (json's; simplejson's, with decimals, as the SDK reads a file) raises
# for a file: a decode error (a ValueError with the position), or for valid JSON it cannot
# take a ValueError (an integer past Python's digit limit), decimal's InvalidOperation (an
# exponent past Decimal's) or a RecursionError (nesting past the recursion limit).
JSON_READ_ERRORS: Final = (ValueError, ArithmeticError, RecursionError)


def unread_json_text(exc: BaseException) -> str:
    """Why a JSON reader took no document from a file, when it names no position in it
    (a decode error's position is its caller's to word), for a message that names the
    file: "is nested too deeply to read". Never quotes the file."""
    if isinstance(exc, RecursionError):
        return "is nested too deeply to read"
    if isinstance(exc, ArithmeticError):
        return "holds a number too large to read"
    if "integer string conversion" in str(exc):  # Python's words for its digit limit
        return f"holds an integer of over {sys.get_int_max_str_digits():,} digits"
    return f"cannot be read as JSON ({type(exc).__name__})"


def json_file_error_text(exc: BaseException, not_json: str) -> str:
    """Why a JSON reader (of JSON_READ_ERRORS) took no document from a file, for a
    message that names the file: ``not_json`` ("is not valid JSON") with the line and
    column the reader names, else unread_json_text. Never quotes the file."""
    if getattr(exc, "doc", None) is None:
        return unread_json_text(exc)
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    return not_json + (f" (line {line}, column {column})" if line is not None else "")


def message_url(url: str) -> str:
    """A URL a server gave (where a redirect leads), fit for a message: what could be read
    as markup or close a quote, and anything but printable ASCII, percent-encoded."""
    return _NOT_IN_SHOWN_URL.sub(_percent_encoded, url)


def _percent_encoded(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode("utf-8", "replace"))


@dataclass(frozen=True, slots=True)
class CodeInfo:
    severity: Severity
    is_retriable: bool
    meaning: str


CODES: Final[dict[str, CodeInfo]] = {
    # -- fetching: a feed_health row with status "error" (or "skipped") --------------
    "invalid_url": CodeInfo("error", False, "The URL is not an http(s) URL this tap may fetch."),
    "destination_denied": CodeInfo(
        "error", False, "The host resolves to an address that is not public."
    ),
    "dns_failed": CodeInfo(
        "error", True, "The host name could not be resolved (e.g. it does not exist)."
    ),
    "dns_unavailable": CodeInfo(
        "error",
        True,
        "The host name could not be looked up for now: the resolver, or the domain's "
        "name servers, did not answer.",
    ),
    "connection_failed": CodeInfo("error", True, "No connection could be made, or it broke."),
    "tls_failed": CodeInfo("error", True, "The TLS handshake or certificate check failed."),
    "timeout": CodeInfo(
        "error", True, "The feed's time budget ran out, or its host stopped answering."
    ),
    "redirect_limit": CodeInfo(
        "error", False, "More redirects than max_redirects (the message says when they loop)."
    ),
    "redirect_denied": CodeInfo(
        "error",
        False,
        "A redirect pointed somewhere not allowed (also from https to plain http).",
    ),
    "http_error": CodeInfo(
        "error", True, "The server answered with an HTTP error status, or with no document."
    ),
    "rate_limited": CodeInfo("error", True, "The server asked to retry later (429/503)."),
    "feed_gone": CodeInfo(
        "error",
        False,
        "The server answered 410 Gone: the feed was removed on purpose. Checked again "
        "once a day, in case it comes back.",
    ),
    "response_too_large": CodeInfo(
        "error", False, "The body, as received or decoded, exceeds max_feed_bytes."
    ),
    "bad_response": CodeInfo("error", True, "The response broke the HTTP rules."),
    # -- reading: a feed_health row with status "error" --------------------------------
    "invalid_feed": CodeInfo("error", False, "The document could not be read as a feed."),
    "not_a_feed": CodeInfo("error", False, "The document is not a feed (e.g. a web page)."),
    "internal_error": CodeInfo(
        "error", False, "The tap itself failed on this feed (a bug); its state was kept."
    ),
    # -- per-run states reported on feed_health -------------------------------------------
    "retry_later": CodeInfo(
        "info",
        True,
        "Skipped: the feed's retry_after_at has not passed (the server's Retry-After, the "
        "feed's own or its host's given to another feed's fetch in the same run; or the "
        "wait after a 429/503 without one, or a 410).",
    ),
    "stale_feed": CodeInfo("warning", False, "The newest item is older than stale_after_days."),
    "items_deferred": CodeInfo(
        "info", False, "More changes than max_items_per_run; the rest come on a later run."
    ),
    "feed_discovered": CodeInfo("info", False, "A web page was read for its advertised feed."),
    "state_trimmed": CodeInfo(
        "warning",
        False,
        "Items past the newest max_state_items of a document (by date, else document order) "
        "are not tracked.",
    ),
    "no_items": CodeInfo("info", False, "The feed has no items."),
    "possible_gap": CodeInfo(
        "warning", False, "None of the document's items was seen before: some may have been missed."
    ),
    "feed_moved": CodeInfo(
        "info",
        False,
        "The feed moved: its URL redirects permanently (301/308), or its "
        "itunes:new-feed-url names another URL.",
    ),
    # -- document-level recovery (feed or item issues) ----------------------------------
    "xml_recovered": CodeInfo("warning", False, "Malformed XML was read by recovery."),
    "encoding_replaced": CodeInfo(
        "warning",
        False,
        "Undecodable bytes, or a character reference to no character, were replaced.",
    ),
    "encoding_mismatch": CodeInfo("info", False, "The declared encoding was wrong and ignored."),
    "doctype_ignored": CodeInfo(
        "warning", False, "A DOCTYPE with entity declarations was ignored."
    ),
    "document_truncated": CodeInfo(
        "warning",
        False,
        "The document breaks off, or recovery nested items inside a malformed element or "
        "read fewer items than the document opens; the items before the break are kept.",
    ),
    "too_many_items": CodeInfo("warning", False, "Items past the reading limit were dropped."),
    "limit_exceeded": CodeInfo(
        "warning", False, "A text, nesting, element or resolved-URL limit cut part of the document."
    ),
    "invalid_value": CodeInfo("warning", False, "A field had the wrong type and was ignored."),
    # -- item-level issues ---------------------------------------------------------------
    "invalid_date": CodeInfo("warning", False, "A date could not be read; it is null."),
    "derived_id": CodeInfo(
        "info",
        False,
        "The item has no id or URL; its identity is its enclosure's URL or a hash of its content.",
    ),
    "duplicate_id": CodeInfo(
        "warning", False, "A later item repeats an earlier one exactly; it is dropped."
    ),
    "shared_id": CodeInfo(
        "warning",
        False,
        "Another item has the same id; this one is known by its own link or enclosure, else "
        "by an id derived from the shared one, its title and date (or its content).",
    ),
    "id_too_long": CodeInfo("warning", False, "An id over 1 KiB was dropped."),
    "url_too_long": CodeInfo("warning", False, "A URL over 2 KiB was dropped."),
    "unsafe_url": CodeInfo(
        "warning", False, "A URL that is not http(s), or names no valid host, was dropped."
    ),
    "title_truncated": CodeInfo("info", False, "The title was cut to 1 KiB."),
    "summary_truncated": CodeInfo("info", False, "The summary was cut to 4 KiB."),
    "content_truncated": CodeInfo("info", False, "content_text was cut to 64 KiB."),
    "author_truncated": CodeInfo("info", False, "An author's name was cut to 256 bytes."),
    "items_ignored": CodeInfo(
        "warning",
        False,
        "RSS items or channels in another format's namespace (an Atom default namespace "
        "declared on them) were not read.",
    ),
    "discovery_failed": CodeInfo(
        "warning",
        False,
        "The web page could not be read, or advertised no feed: the feed it led to before "
        "was read.",
    ),
    "stale_copy": CodeInfo(
        "info",
        False,
        "The document is an older copy than the one read before (a CDN or replica serving "
        "an earlier version): its edits were not sent as updates and the state kept.",
    ),
}


@dataclass(frozen=True, slots=True)
class Issue:
    """A problem found in a feed or an item: a stable code and a plain message."""

    code: str
    message: str

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown issue code {self.code!r}")

    @property
    def severity(self) -> Severity:
        return CODES[self.code].severity

    def as_record(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "message": self.message}


class FeedDeltaError(Exception):
    """Base of the project's own exceptions."""


class FeedError(FeedDeltaError):
    """One feed failed; it becomes a feed_health row, the run goes on."""

    def __init__(self, code: str, message: str) -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# Codes of what stops a whole run (logged as "code: message", exit 1).
RUN_CODES: Final = {
    "config_invalid": "The configuration breaks a rule of its settings.",
    "state_invalid": "The input state is no state this tap wrote, or it is damaged.",
    "state_unsupported": "The input state was written by another version of the tap.",
    "state_other_shard": "The input state holds feeds another shard owns.",
    "output_closed": "The target stopped reading the tap's output before the run ended.",
}


class OutputClosed(BaseException):
    """The target stopped reading the tap's output: the run stops. A BaseException, so
    that no ``except Exception`` on the way (the SDK's stream sync logs any error and
    raises it again) reports it as an error of its own."""


class StateError(FeedDeltaError):
    """The input state cannot be used: the run stops before anything is emitted.
    ``code`` (one of RUN_CODES) says why."""

    def __init__(self, message: str, code: str = "state_invalid") -> None:
        if code not in RUN_CODES:
            raise ValueError(f"unknown run code {code!r}")
        super().__init__(message)
        self.code = code


class ParseError(FeedError):
    """A body that is no readable feed: ``invalid_feed`` or ``not_a_feed``.

    ``advertised_feeds`` holds, for a web page, the absolute URLs of the feeds it
    advertises, in document order (what discovery follows).
    """

    def __init__(self, code: str, message: str, advertised_feeds: tuple[str, ...] = ()) -> None:
        super().__init__(code, message)
        self.advertised_feeds = advertised_feeds
