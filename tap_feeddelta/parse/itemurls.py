"""An item's URLs (its link, its enclosures) as read now and as versions before this one
read them (``urls.safe_url_before``), for ``ParsedItem.read_before``: the readers carry
both readings side by side, which are the same objects in the usual case, where the two
read a URL alike. Its enclosures whole are read here too (their media type and length,
capped at ``MAX_ENCLOSURES``). Their authors' URLs: ``fields.author_readings``."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import Enclosure, ReadBefore
from tap_feeddelta.parse import fields
from tap_feeddelta.parse.limits import MAX_ENCLOSURES, MAX_MEDIA_TYPE_CHARS
from tap_feeddelta.parse.text import collapsed, without_controls
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


# A media type's type and subtype (its parameters follow a ";").
_MEDIA_TYPE: Final = re.compile(r"[A-Za-z0-9][\w.+-]*/[\w.+-]+")


def enclosure_readings(
    link: str | None,
    media_type: str | None,
    length: str | int | None,
    base: str | None,
    base_before: str | None,
    issues: list[Issue],
) -> tuple[Enclosure | None, Enclosure | None]:
    """An enclosure, and the enclosure as versions before this one read it (its URL;
    ``base_before``: the base as they read it): the same object when they read it alike."""
    href, href_before = fields.url_readings(link, base, base_before, "enclosure", issues)
    if href is None and href_before is None:
        return None, None
    clean_type = None
    if media_type:
        if not media_type.isprintable():  # a tab or line break in its parameters, a control
            media_type = collapsed(without_controls(media_type))
        media_type = media_type.strip()
        clean_type = _media_type(media_type)
    length_bytes = _length(length, issues if href is not None else [])
    found = None if href is None else Enclosure(href, clean_type, length_bytes)
    if href_before is href:
        return found, found
    return found, None if href_before is None else Enclosure(href_before, clean_type, length_bytes)


def _media_type(text: str) -> str | None:
    """A media type, lowercased, with its parameters unless they hold markup or a
    character no parameter holds (``audio/mpeg;<svg …>`` is ``audio/mpeg``); loosely
    written ones (``codecs=avc1.42E01E, mp4a.40.2`` unquoted) are kept as they were.
    ``None`` for text that is no media type."""
    essence = _MEDIA_TYPE.match(text) if len(text) <= MAX_MEDIA_TYPE_CHARS else None
    if essence is None:
        return None
    rest = text[essence.end() :].lstrip()
    if not rest:
        return text.lower()
    if rest[0] != ";":
        return None
    if rest.isascii() and rest.isprintable() and "<" not in rest and ">" not in rest:
        return text.lower()
    return essence.group().lower()


_ENCLOSURES_CUT: Final = Issue(
    "limit_exceeded", f"Only the first {MAX_ENCLOSURES} enclosures are kept."
)


def first_enclosures(found: list[Enclosure], issues: list[Issue]) -> tuple[Enclosure, ...]:
    """The first ``MAX_ENCLOSURES`` of the enclosures found, reporting any dropped. The
    readers stop reading enclosures one past the cap: that one is enough to report."""
    if len(found) <= MAX_ENCLOSURES:
        return tuple(found)
    issues.append(_ENCLOSURES_CUT)
    return tuple(found[:MAX_ENCLOSURES])


_NOT_A_BYTE_COUNT: Final = Issue("invalid_value", "An enclosure length is not a byte count.")


def _length(raw: str | int | None, issues: list[Issue]) -> int | None:
    if raw is None or isinstance(raw, bool):
        return None
    if isinstance(raw, int):  # JSON Feed's size_in_bytes
        if raw < 0 or raw >= 2**63:  # as an RSS "-5" or a 20-digit length; 0 is "unknown"
            issues.append(_NOT_A_BYTE_COUNT)
            return None
        value = raw
    else:
        text = raw.strip()
        if not text:
            return None
        # ASCII digits only: "²" is a digit to isdigit() (not to int()), "١٢٣" to int().
        if not (text.isascii() and text.isdigit()) or len(text) > 18:
            issues.append(_NOT_A_BYTE_COUNT)
            return None
        value = int(text)
    return value if 0 < value < 2**63 else None


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
    now, before = enclosure_readings(link, media_type, length, *bases, issues)
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
        earlier = first_enclosures(found_before, [])
        if earlier != enclosures:
            before["enclosures"] = earlier
