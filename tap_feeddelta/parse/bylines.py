"""Bylines: several authors written as one plain-text name ("Bo Li, Yifei Shen, Jun Zhang").

arXiv's RSS lists a paper's authors so in one ``dc:creator``. A comma also sits inside one
name written "Family, Given" (as Dublin Core advises: "Smith, John", "Li, B."), so a byline
is split only when it cannot be one such name: three parts or more, or names joined by a
final "and", and every part a full name.
"""

from __future__ import annotations

import re
from typing import Final

# A word of initials: "B", "B.", "J.Q.", "J.-P.", "J.-P".
_INITIALS: Final = re.compile(r"(?:[^\W\d_]\.-?)+[^\W\d_]?|[^\W\d_]")
# Words that name a role or a publisher, not a person ("Jane Doe, Staff Writer, The
# Times"): a byline holding one stays one name.
_NOT_NAMES: Final = frozenset(
    {
        "the",
        "staff",
        "writer",
        "writers",
        "editor",
        "editors",
        "reporter",
        "correspondent",
        "contributor",
        "contributors",
        "columnist",
        "press",
        "news",
        "team",
        "desk",
        "inc",
        "ltd",
        "llc",
        "university",
        "department",
    }
)
_MAX_NAME_WORDS: Final = 6


def byline_names(raw: str) -> list[str] | None:
    """The names of a plain-text byline that lists several people, or ``None`` when it
    is (or may be) one name. Parts are separated by commas, the last two also by "and"
    (", and"). It is a list when it has three parts or more, or two joined by "and", and
    every part is a full name: two to six words, the last one capitalized (or of a
    script without case), not only initials, none of them a role or publisher word. Two
    parts separated by a comma alone stay one name: "García Márquez, Gabriel José"."""
    if "," not in raw and " and " not in raw:
        return None
    parts = [part.strip() for part in raw.split(",")]
    joined_by_and = False
    last = parts[-1]
    if last.startswith("and ") and len(parts) > 2:  # "A, B, and C"
        parts[-1] = last[4:].lstrip()
        joined_by_and = True
    elif " and " in last:
        head, _, tail = last.rpartition(" and ")
        parts[-1:] = [head.strip(), tail.strip()]
        joined_by_and = True
    if len(parts) < 2 or (len(parts) == 2 and not joined_by_and):
        return None
    return parts if all(_is_full_name(part) for part in parts) else None


def _is_full_name(part: str) -> bool:
    words = part.split()
    if not 2 <= len(words) <= _MAX_NAME_WORDS or words[-1][0].islower():
        return False
    if all(_INITIALS.fullmatch(word) for word in words):
        return False
    return not any(word.strip(".").lower() in _NOT_NAMES for word in words)
