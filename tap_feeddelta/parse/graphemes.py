"""Where a text may be cut without splitting what a reader sees as one character.

A cap cuts at a code point; that can leave an accent without its letter's other marks, half
a flag, an emoji family without its last member, a Hangul syllable without its final
consonant, a conjunct without its second consonant. This approximates Unicode's extended
grapheme clusters (UAX #29) for cutting only: marks, joiners, variation selectors, emoji
modifiers and tags, Hangul vowel and final jamo, viramas and flag pairs.
"""

from __future__ import annotations

import unicodedata
from typing import Final

# A cut moves back at most this far: a text of thousands of stacked marks is still cut.
_MAX_BACK: Final = 32
_ZWJ: Final = "\u200d"
_VIRAMA: Final = 9  # the canonical combining class of viramas (halants)


def cluster_boundary(text: str, end: int) -> int:
    """The largest index at most ``end`` where ``text[:index]`` splits no cluster."""
    if end <= 0 or end >= len(text) or (text[end].isascii() and text[end - 1].isascii()):
        return max(0, min(end, len(text)))
    cut = end
    while cut > 0 and end - cut < _MAX_BACK and (_extends(text[cut]) or _joins(text[cut - 1])):
        cut -= 1
    if end - cut >= _MAX_BACK:
        return end
    if cut > 0 and _is_flag_half(text[cut]) and _is_flag_half(text[cut - 1]):
        halves = 0
        while cut - halves > 0 and _is_flag_half(text[cut - halves - 1]):
            halves += 1
        if halves % 2:  # the cut falls between the two halves of a flag
            cut -= 1
    return cut


def _extends(char: str) -> bool:
    """Whether ``char`` belongs to the cluster before it."""
    if char.isascii():
        return False
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or char == _ZWJ
        or "\ufe00" <= char <= "\ufe0f"  # variation selectors
        or "\U000e0100" <= char <= "\U000e01ef"
        or "\U0001f3fb" <= char <= "\U0001f3ff"  # skin tones
        or "\U000e0020" <= char <= "\U000e007f"  # tag letters (subdivision flags)
        or "\u1160" <= char <= "\u11ff"  # Hangul vowels and final consonants
    )


def _joins(char: str) -> bool:
    """Whether ``char`` joins the next character to its cluster."""
    return char == _ZWJ or (not char.isascii() and unicodedata.combining(char) == _VIRAMA)


def _is_flag_half(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"  # regional indicators
