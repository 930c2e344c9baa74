"""Every string a parsed feed carries, for checks that must hold of all of them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields, is_dataclass

from tap_feeddelta.models import ParsedFeed


def record_strings(value: object) -> Iterator[str]:
    """The strings in a parsed feed: its fields, its items', their authors', enclosures'
    and issues' (recursively through tuples, named tuples and dataclasses)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple | list):
        for part in value:
            yield from record_strings(part)
    elif is_dataclass(value) and not isinstance(value, type):
        for field in fields(value):
            yield from record_strings(getattr(value, field.name))


def feed_strings(feed: ParsedFeed) -> list[str]:
    return list(record_strings(feed))
