"""How the recovery path reads tags in raw bytes: one rule for what a "<" that starts no
tag runs to, one grammar for element names. Every pattern that finds tags before or
after libxml2's recovery (``endtags``, ``repair``, ``xmldoc``) is built from these, so
that none of them finds a tag another one skips (``tests/unit/parse/test_tag_finders.py``
runs them all on the same inputs).

The data is UTF-8: a byte past ASCII is part of a name, as libxml2 reads a name of
letters of any script (``<café>``).
"""

from __future__ import annotations

from typing import Final

# An element name with its prefix, if any ("dc:creator"): what recovery reads as one. A
# name of no namespace may hold more than one ":" (recovery keeps them in the name).
NAME: Final = rb"[A-Za-z_\x80-\xff][\w.:\x80-\xff-]*"
# A local name: a name without its prefix.
LOCAL_NAME: Final = rb"[A-Za-z_\x80-\xff][\w.\x80-\xff-]*"
# Any prefix before a local name, or none: the prefix is what stands before the last ":".
ANY_PREFIX: Final = rb"(?:" + NAME + rb":)?"

# What recovery reads as no tag after a "<": a CDATA section, a comment or a processing
# instruction, each to its end (to the end of the data when it has none, as recovery
# reads no more after one left open). Each is the text after the "<".
CDATA_SECTION: Final = rb"!\[CDATA\[.*?(?:\]\]>|\Z)"
COMMENT: Final = rb"!--.*?(?:-->|\Z)"
PROCESSING_INSTRUCTION: Final = rb"\?.*?(?:\?>|\Z)"
# An address or a URL in angle brackets, written unescaped in text ("Jane Doe
# <jane@example.org>", "<https://example.org/>"): the text after the "<" up to its ">",
# with an "@" or a "://" and no whitespace, "<" or ">" in it. No element starts so: a
# name holds no "@", and a name's ":" is never followed by "//". (Nor any "/", "!" or "?"
# before the "@" or "://": an end tag, a declaration or an instruction.) Its "<" is
# escaped before any pattern here reads the data (``repair.with_addresses_as_text``).
# Possessive, and read up to the first "@" or "://" once: a run of "@" that reaches no
# ">" is read once, not once from each "@" (quadratic).
ADDRESS_IN_ANGLE_BRACKETS: Final = rb"[^\s<>/!?@:]*+(?::(?!//)[^\s<>/!?@:]*+)*+(?:@|://)[^\s<>]*+>"
# The patterns that find tags skip these whole with it, in an alternative before the
# tag's: ``rb"<(?:" + NO_TAG_AFTER_LT + rb"|...tag...)"``, compiled with ``re.S``. (The
# "<" stands before the alternatives: a search then skips to each "<" at C speed.)
NO_TAG_AFTER_LT: Final = CDATA_SECTION + rb"|" + COMMENT + rb"|" + PROCESSING_INSTRUCTION
