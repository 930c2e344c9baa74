"""An item's URLs (its link, its enclosures) as read now and as versions before this one
read them (``urls.safe_url_before``), for ``ParsedItem.read_before``: the readers carry
both readings side by side, which are the same objects in the usual case, where the two
read a URL alike. Their authors' URLs: ``fields.author_readings``."""

from __future__ import annotations

from dataclasses import replace

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import Enclosure, ReadBefore
from tap_feeddelta.parse import fields
from tap_feeddelta.parse.limits import MAX_ENCLOSURES
from tap_feeddelta.parse.urls import (
    is_redirect,
    safe_url_before,
    safe_url_readings,
    unwrapped_url,
    unwrapped_url_before,
)

# A URL as read now, and as versions before read it.
Readings = tuple[str | None, str | None]
NONE_READ: Readings = (None, None)


def next_url(
    found: Readings,
    raw: str | None,
    base: str | None,
    base_before: str | None,
    what: str,
    issues: list[Issue],
) -> Readings:
    """The item's URL of ``found`` (now, before), with ``raw`` (on ``base``; on
    ``base_before`` as read before) read for a reading that has none yet: the next
    candidate of a reader's order (link, alternate link, permalink id)."""
    now, before = found
    if now is None:
        if before is None:
            return fields.url_readings(raw, base, base_before, what, issues)
        return fields.url(raw, base, what, issues), before
    if before is None and raw:
        return now, safe_url_before(raw, base_before)[0]
    return found


def original_url(raw: str | None, base: str | None, base_before: str | None) -> Readings:
    """A URL that stands in for one the item already gives (FeedBurner's original link
    for its redirect): ``None`` when unusable, without an issue, as the other URL stays."""
    if not raw:
        return NONE_READ
    now, _, before = safe_url_readings(raw, base, base_before)
    return now, before


def item_url(found: Readings) -> Readings:
    """An item's URL without the redirect it may go through (``unwrapped_url``), as read
    now and before."""
    now, before = found
    if before is now and (now is None or not is_redirect(now)):
        return found  # the usual case: read alike, no redirect
    return (
        unwrapped_url(now) if now else now,
        unwrapped_url_before(before) if before else before,
    )


def add_enclosure(
    found: list[Enclosure],
    found_before: list[Enclosure],
    link: str | None,
    media_type: str | None,
    length: str | int | None,
    bases: tuple[str | None, str | None],
    issues: list[Issue],
) -> None:
    """Add the enclosure to ``found`` (read now) and to ``found_before`` (as read
    before), each while it holds no more than ``MAX_ENCLOSURES`` (one past the cap is
    read, to be reported)."""
    now, before = fields.enclosure_readings(link, media_type, length, *bases, issues)
    if now is not None and len(found) <= MAX_ENCLOSURES:
        found.append(now)
    if before is not None and len(found_before) <= MAX_ENCLOSURES:
        found_before.append(before)


def are_full(found: list[Enclosure], found_before: list[Enclosure]) -> bool:
    """Whether both readings hold one enclosure past the cap: no more is read."""
    return len(found) > MAX_ENCLOSURES and len(found_before) > MAX_ENCLOSURES


# FeedBurner's original enclosure URL: (its enclosure's index now, before; the URL).
Original = tuple[int, int, str]


def original_of_last(found: list[Enclosure], found_before: list[Enclosure], raw: str) -> Original:
    """FeedBurner's original URL for the enclosure read last (it follows it)."""
    return max(len(found) - 1, 0), max(len(found_before) - 1, 0), raw


def with_original_urls(
    found: list[Enclosure],
    found_before: list[Enclosure],
    originals: list[Original],
    bases: tuple[str | None, str | None],
) -> None:
    """The enclosures (``found``, ``found_before``) with the URLs of ``originals`` in
    place of theirs: FeedBurner follows each enclosure with its original URL."""
    for index, index_before, raw in originals:
        now, before = original_url(raw, *bases)
        if now is not None and index < len(found):
            found[index] = replace(found[index], url=now)
        if before is not None and index_before < len(found_before):
            found_before[index_before] = replace(found_before[index_before], url=before)


def record_before(
    before: ReadBefore,
    url: Readings,
    found: list[Enclosure],
    found_before: list[Enclosure],
    enclosures: tuple[Enclosure, ...],
) -> None:
    """Put in ``before`` the item's URL and enclosures as read before where they differ
    from their reading now: ``enclosures``, kept of ``found`` (read now) to the cap;
    ``found_before``, as read before."""
    if url[1] != url[0]:
        before["url"] = url[1]
    if found_before != found:
        earlier = fields.first_enclosures(found_before, [])
        if earlier != enclosures:
            before["enclosures"] = earlier
