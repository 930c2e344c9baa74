"""What one fetch has learned, hop by hop, and the final answer it read: the pieces a
FetchResult is made of, success or not."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import FetchResult, FetchStatus


@dataclass(slots=True)
class Progress:
    """What one fetch has learned so far; becomes the FetchResult, success or not."""

    requested_url: str
    final_url: str | None = None
    http_status: int | None = None
    etag_sent: bool = False
    last_modified_sent: bool = False
    redirects: int = 0
    # Where the first hops led, while all were permanent: a target told once it answered
    # (passed its checks, was reached); never one the chain came through before (a loop).
    moved_to: str | None = None
    moving_to: str | None = None  # the next hop's target, should it answer
    redirected_from: list[str] = field(default_factory=list)  # the URLs that redirected
    hops_all_permanent: bool = True
    retry_after_at: str | None = None
    doing: str = "starting"  # what the fetch is waiting for, should the deadline pass
    queued_seconds: float = 0.0  # waiting for a host's connection slot, outside the budget
    heads_read: int = 0  # response heads read, over all hops: the hosts answered
    bytes_received: int = 0  # decoded body bytes read, also of a body that failed midway

    def result(self, status: FetchStatus, fetch_ms: int, **answer: Any) -> FetchResult:
        """The FetchResult of what was learned, plus the answer's own fields."""
        return FetchResult(
            status=status,
            requested_url=self.requested_url,
            final_url=self.final_url,
            http_status=self.http_status,
            etag_sent=self.etag_sent,
            last_modified_sent=self.last_modified_sent,
            redirects=self.redirects,
            moved_to=self.moved_to,
            redirected_from=tuple(self.redirected_from),
            retry_after_at=self.retry_after_at,
            fetch_ms=fetch_ms,
            **answer,
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """A final (non-redirect) answer read from the server."""

    status: FetchStatus
    body: bytes | None = None
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    notes: tuple[Issue, ...] = ()  # what was read past (see FetchResult)
