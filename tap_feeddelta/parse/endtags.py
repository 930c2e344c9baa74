"""End tags that libxml2's recovery would misread, balanced before it reads them.

Recovery takes every end tag for the end of the element open at that point, whatever its
name: a stray ``</p>`` in an item closes the item, the item's own end tag then closes the
channel, and the root ends early. Every item after it was dropped, and recovery reported
no more than a mismatched name. Here each end tag is read against the elements open
where it stands (the start tags that recovery opens too):

- one that ends the element open there is kept;
- one that ends no open element, where the element of its name closed last among the
  open element's children was closed by the last end tag of that name and no start tag
  of that name came since, is that element's real end: the earlier one came too early
  (``<item>…</item><pubDate>…</pubDate></item>``) and is dropped, so what stands between
  is the element's again.
- one that ends an element further out, or no open element, is stray when the element
  it would end (the one open there, for no open element) has an end tag of its own
  later: one of its name before its parent's end tag and before the next start tag of
  its name. A stray end tag is dropped; so is one of no open element where the root is
  open, which never ends the root.
- otherwise, one that ends an element further out closes the elements left open inside
  that one first (their end tags are written before it, ``<x:note>text</item>``); one
  that ends no open element is a misspelt end tag (``<guid>x</link>``, ``</pubdate>``)
  that recovery rightly reads as the end of the element open there.
- ``</`` with no name after it (``</ p>``, ``</3>``) is text: its ``<`` is escaped.

One pass over the tags, and at most one more that finds where each name's tags stand
(only when an end tag is met that ends no element open there): linear in the size of
the data.
CDATA sections, comments and processing instructions are skipped whole; a ``>`` in a
quoted attribute value ends no tag.
"""

from __future__ import annotations

import re
from array import array
from typing import Final

from tap_feeddelta.parse.tagsyntax import NAME, NO_TAG_AFTER_LT

# What recovery opens as an element: a start tag whose attributes are each a name with
# a quoted value or with none, up to its ">" (a start tag it cannot read to its ">", or
# an unquoted value, it ends where it stands). The "close" group says how it ends.
# CDATA sections, comments and processing instructions are skipped (``tagsyntax``). Its
# tags are read as recovery reads them, attributes and all; ``repair._TAG`` reads a tag
# to its first ">" instead, on purpose: the repairs run before recovery, on HTML.
_TOKEN: Final = re.compile(
    rb"<(?:" + NO_TAG_AFTER_LT + rb"|/(?P<end>" + NAME + rb")?(?P<end_close>\s*>)?"
    rb"|(?P<start>" + NAME + rb")"
    rb"(?:\s+" + NAME + rb"(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'))?)*\s*(?P<close>/?>)?)",
    re.S,
)
_NONE: Final = 1 << 62  # no tag of that name follows


class _Tags:
    """Where the start and end tags of each name stand, found in one pass on first need.
    Asked in the order of the data, so that each name's positions are walked through
    once."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at: dict[tuple[bool, bytes], array[int]] | None = None
        self._next: dict[tuple[bool, bytes], int] = {}

    def next_of(self, name: bytes, after: int, *, is_end: bool) -> int:
        """Where the first end (or start) tag named ``name`` after ``after`` starts."""
        if self._at is None:
            self._at = {}
            for token in _TOKEN.finditer(self._data):
                if (end := token.group("end")) is not None:
                    self._at.setdefault((True, end), array("q")).append(token.start())
                elif (start := token.group("start")) is not None:
                    self._at.setdefault((False, start), array("q")).append(token.start())
        key = (is_end, name)
        positions = self._at.get(key)
        if positions is None:
            return _NONE
        index = self._next.get(key, 0)
        while index < len(positions) and positions[index] <= after:
            index += 1
        self._next[key] = index
        return positions[index] if index < len(positions) else _NONE

    def has_own_end(self, stack: list[bytes], depth: int, after: int) -> bool:
        """Whether the element open at ``depth`` in ``stack`` has an end tag after
        ``after``: one of its name before the end tag of its parent and before the next
        start tag of its name (whose end that one would be)."""
        name = stack[depth]
        own_end = self.next_of(name, after, is_end=True)
        return own_end < self.next_of(name, after, is_end=False) and (
            depth == 0 or own_end < self.next_of(stack[depth - 1], after, is_end=True)
        )


def with_end_tags_balanced(data: bytes) -> bytes:
    """The data with every end tag matched to an open element (see the module's text);
    ``data`` itself when none needed to change."""
    stack: list[bytes] = []
    depths: dict[bytes, list[int]] = {}  # where in the stack each name is open
    # For each open element, where the end tags of its children closed last stand, by
    # name: the end tag a later stray one of that name moves (see the module's text).
    closed: list[dict[bytes, tuple[int, int]] | None] = []
    started: dict[bytes, int] = {}  # where the last start tag of each name stands
    ended: dict[bytes, int] = {}  # and the last end tag
    tags = _Tags(data)
    edits: list[tuple[int, int, bytes]] = []  # data[start:end] becomes the bytes
    for token in _TOKEN.finditer(data):
        start = token.group("start")
        if start is not None:
            started[start] = token.start()
            if token.group("close") == b">":
                depths.setdefault(start, []).append(len(stack))
                stack.append(start)
                closed.append(None)
            continue
        if data[token.start() + 1] != 0x2F:  # "/": a CDATA section, a comment, a PI
            continue
        name = token.group("end")
        if name is None:  # "</" and no name: text
            edits.append((token.start(), token.start() + 1, b"&#60;"))
            continue
        at = depths.get(name)
        depth = at[-1] if at else len(stack) - 1
        if depth < 0:
            continue  # after the root: recovery reads no more
        # The last end tag of this name that was kept: a dropped stray one is none.
        ended_last = ended.get(name, -1)
        if (
            not at
            and (children := closed[-1]) is not None
            and (early := children.get(name)) is not None
            and early[0] == ended_last
            and started[name] < ended_last
        ):
            # ``<item>…</item><pubDate>…</pubDate></item>``: the element of this name closed
            # last here ended early (no tag of its name since); its end tag moves to this
            # one, and what stands between is its (so no other end tag here moves any more).
            edits.append((*early, b""))
            closed[-1] = {name: token.span()}
            ended[name] = token.start()
            continue
        is_stray = not at or depth < len(stack) - 1
        if is_stray and ((not at and depth == 0) or tags.has_own_end(stack, depth, token.start())):
            edits.append((*token.span(), b""))  # dropped
            continue
        ended[name] = token.start()
        ends_one = depth == len(stack) - 1
        # A misspelt end tag (of no open element) closes no element of its name.
        closes_its_own = bool(at)
        if at and not ends_one:  # the elements left open inside it end first
            left_open = b"".join(b"</" + name + b">" for name in reversed(stack[depth + 1 :]))
            edits.append((token.start(), token.start(), left_open))
        for open_name in stack[depth:]:
            depths[open_name].pop()
        del stack[depth:]
        del closed[depth:]
        if closed and ends_one and closes_its_own:
            if (children := closed[-1]) is None:
                children = closed[-1] = {}
            children[name] = token.span()
    if not edits:
        return data
    # A moved end tag stands before edits made after it; the sort is stable, so that
    # end tags written before a token stay before it when the token is dropped later.
    edits.sort(key=lambda edit: edit[0])
    parts: list[bytes] = []
    done = 0
    for start, end, replacement in edits:
        parts += data[done:start], replacement
        done = end
    parts.append(data[done:])
    return b"".join(parts)


def root_end(data: bytes) -> int:
    """Where recovery's reading of the root element in ``data`` ends: after the end tag
    that closes it, each end tag closing the element open there whatever its name, with
    the start tags recovery opens (as ``with_end_tags_balanced`` reads them). When end
    tags of the root's name follow there before another start tag of that name (the root
    was closed early, and the rest of the document follows), after the last of them; the
    length of the data when the root is never closed. What follows is no part of the
    document (a copy of it, a cache's fragment): recovery reads nothing there."""
    depth = 0
    root = b""
    tokens = _TOKEN.finditer(data)
    closed_at = len(data)
    for token in tokens:
        if (start := token.group("start")) is not None:
            close = token.group("close")
            if depth == 0:
                root = start
            if close == b">":
                depth += 1
            elif close == b"/>" and depth == 0:
                closed_at = token.end()  # an empty root
                break
        elif token.group("end") is not None and depth > 0:
            depth -= 1
            if depth == 0:
                closed_at = token.end()
                break
    for token in tokens:  # after the root's end
        if token.group("start") == root:
            break
        if token.group("end") == root:
            closed_at = token.end()
    return closed_at


def element_count(data: bytes, start: int, end: int) -> int:
    """How many start tags ``data[start:end]`` holds: the elements recovery makes of it."""
    return sum(1 for token in _TOKEN.finditer(data, start, end) if token.group("start") is not None)


def with_depth_bounded(data: bytes, max_depth: int) -> bytes | None:
    """The data with the tags of the elements nested deeper than ``max_depth`` made spaces
    (their text stays, in the element ``max_depth`` deep that holds them): libxml2 stops
    reading a document at its nesting limit, and every item from the deep one on was
    lost. ``None`` when no element is that deep. One pass over the tags."""
    is_dropped: list[bool] = []  # for each open element, whether its tags are dropped
    edits: list[tuple[int, int]] = []
    for token in _TOKEN.finditer(data):
        if token.group("start") is not None:
            close = token.group("close")
            if close is None:
                continue  # a start tag recovery cannot read to its end opens no element
            is_deep = len(is_dropped) >= max_depth
            if is_deep:
                edits.append(token.span())
            if close == b">":
                is_dropped.append(is_deep)
        elif token.group("end") is not None and is_dropped and is_dropped.pop():
            edits.append(token.span())  # the end of an element whose tags are dropped
    if not edits:
        return None
    parts: list[bytes] = []
    done = 0
    for start, end in edits:
        parts += data[done:start], b" "  # a space: the words either side stay apart
        done = end
    parts.append(data[done:])
    return b"".join(parts)
