"""Which texts show markup, and reading it away: how to read a title, a description or a
summary whose kind is not declared (HTML or plain text holding "<"), and the text of a
title, tag or name read as HTML until no markup shows. Pure functions of text."""

from __future__ import annotations

import re
from typing import Final, Literal

from tap_feeddelta.parse.text import CHARACTER_REFERENCE, html_text, plain_text, shows_markup

TextKind = Literal["html", "text"]

# Whether text shows HTML: an end tag, a character or entity reference, or a void tag.
# "Optional<T>" and "The <details> element" are plain text. Author names and podcast show
# notes are read so; titles, which often name a tag, by the stricter _rss_title_is_html.
_SHOWS_HTML: Final = re.compile(
    r"</[A-Za-z][\w:.-]*\s*>|"
    + CHARACTER_REFERENCE.pattern
    + r"|<(?:br|hr|img|wbr)(?:\s[^<>]*)?/?>",
    re.I,
)
# A start or end tag: "/" for an end tag, the name, then what follows the name.
_TITLE_TAG: Final = re.compile(r"<(/?)([A-Za-z][\w:.-]*)(\s[^<>]*|/)?>")
_VOID_NAMES: Final = frozenset({"br", "hr", "img", "wbr"})
# A script or style start tag in any shape, with any prefix: what follows it is code.
_RUNNING_START: Final = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?(?:script|style)(?![\w.:-])", re.I)
# A start tag's name as HTML reads it: a letter, then anything to a space, "/" or ">"
# ("<a;b onclick=…>" is an element of its own, and any element runs a handler). Followed
# by a space or "/", attributes may come. Matched one after another, never overlapping:
# each "<" inside a name ("<a<a<a…") would start a scan to the name's end again.
_START_TAG_NAME: Final = re.compile(r"<[A-Za-z][^\s/>]*")
# An attribute whose value runs script or loads something (an event handler, a URL, a
# style, a meta refresh, SVG's animation of another attribute), spaces around its "="
# and any prefix (xlink:href) allowed. Other attributes hold nothing active: "x<y means
# x = y - 1" is no tag to read away.
_ACTIVE_ATTRIBUTE: Final = re.compile(
    r"[\s/](?:[\w-]+:)?(?:on\w+|href|src|srcset|action|formaction|data|srcdoc|style"
    r"|background|poster|content|http-equiv|codebase|archive|lowsrc|dynsrc|ping"
    r"|attributename|values|to|from|by)\s*=",
    re.I,
)


def rss_title_kind(raw: str | None) -> TextKind:
    """How to read an RSS title, whose text may be HTML or plain text holding "<"."""
    if not raw or ("<" not in raw and "&" not in raw):
        return "text"
    return "html" if _rss_title_is_html(raw) else "text"


# How most HTML descriptions begin, each markup by text.shows_markup's rules: told at once.
_HTML_STARTS: Final = (
    "<p>", "<p ", "<br>", "<br/", "<br ", "<img ", "<a href=", "<div>", "<li>", "<ul>", "<ol>",
    "<b>", "<i>", "<em>", "<strong>", "<span>", "<table>", "<blockquote>", "<h1>", "<h2>",
    "<h3>", "<h4>", "<!--", "<iframe ",
)  # fmt: skip


def rss_description_kind(raw: str | None) -> TextKind:
    """How to read an RSS description: HTML by the spec, but bridges of plain-text posts
    (Bluesky's profile RSS) put a post's raw text there, where "Vec<String>" or
    "a<b and c>d" read as HTML would lose words. Text holding "<" that shows no markup
    (``text.shows_markup``) is plain text, when its plain reading shows none either
    (removing a control character can join "<scr" and "ipt>")."""
    start = raw.find("<") if raw else -1
    if raw is None or start < 0 or raw.startswith(_HTML_STARTS, start):
        return "html"  # nothing a reading could lose, or the usual HTML
    if shows_markup(raw) or shows_markup(plain_text(raw)):
        return "html"
    return "text"


def json_summary_kind(raw: str | None) -> TextKind:
    """How to read a JSON Feed summary: plain text by the spec, but Hugo's ``.Summary``
    and Jekyll's ``post.excerpt`` put HTML there. HTML when it begins as most HTML does
    (``<p>``, ``<div>``…) or shows a tag by a title's rules (``shows_tags``: an element
    closed after it opened, a void tag written as markup, a tag active as written).
    Plain text that holds "<" is common there ("Ærø a<b", "n<p then q", "x = y",
    "Tom &amp; Jerry <3") and reads as it always has: an "=" of no active attribute, a
    reference or a tag cut at the end is no sign of HTML."""
    if not raw or "<" not in raw:
        return "text"
    return "html" if raw.lstrip().startswith(_HTML_STARTS) or shows_tags(raw) else "text"


def showed_html_before(raw: str) -> bool:
    """Whether versions before read the text of a field of no declared kind as HTML
    (``text_shows_html`` without the tags active as written)."""
    return _SHOWS_HTML.search(raw) is not None


def json_summary_read_as_text_before(raw: str) -> bool:
    """Whether versions before read this JSON Feed summary, HTML now, as plain text: it
    shows only a tag active as written."""
    return not (raw.lstrip().startswith(_HTML_STARTS) or _shows_element_tags(raw))


def text_shows_html(raw: str) -> bool:
    """Whether the text of a field of no declared kind (podcast show notes) shows HTML:
    ``_SHOWS_HTML``, or a tag active as written (``_shows_active_tag``).
    (``sniff.looks_like_html`` tells whether a whole document is an HTML page.)"""
    return _SHOWS_HTML.search(raw) is not None or ("<" in raw and _shows_active_tag(raw))


def _rss_title_is_html(raw: str) -> bool:
    """Whether an RSS title is HTML. Titles often name a tag ("Lazy-loading <img> and
    <iframe>", "Why the </script> tag breaks"), which read as HTML would lose its words:
    only markup counts. That is a character or entity reference (the title is escaped
    HTML), an end tag closing an element opened before it ("<b>New</b>", "<a href=...>"),
    or a void tag written as markup: with attributes or a "/" ("<img src=...>", PHP's
    "<br />"), or glued to a word ("Line<br>two"). A bare void tag standing as a word
    ("When to use <hr> vs. borders") or an end tag alone is the subject of the title."""
    if "&" in raw and CHARACTER_REFERENCE.search(raw):
        return True
    return shows_tags(raw)


def rss_title_read_as_text_before(raw: str) -> bool:
    """Whether versions before read this RSS title, which shows markup, as plain text:
    it shows only a tag active as written (``_shows_active_tag``), which they did not
    count."""
    if "&" in raw and CHARACTER_REFERENCE.search(raw):
        return False
    return not _shows_element_tags(raw)


def shows_tags(raw: str) -> bool:
    """Whether text shows a tag as markup (``_rss_title_is_html``'s rules but references):
    an element closed after it opened, a void tag written as markup, or a tag active as
    written (``_shows_active_tag``)."""
    return _shows_element_tags(raw) or _shows_active_tag(raw)


def _shows_active_tag(raw: str) -> bool:
    """Whether text holds a tag that is active as written, closed or not: a script or
    style start tag (``<script>alert(1)``), or a start tag with an active attribute
    (``_ACTIVE_ATTRIBUTE``: ``<svg onload=…>``, ``<img/src/onerror=…>``, ``<a href="…">``
    cut at the end). HTML lets attribute names hold "<", so a tag is scanned to its ">";
    the text is split there, so each character is scanned once. "a<b and c>d",
    "x<y means x = y - 1" show none."""
    if _RUNNING_START.search(raw) is not None:
        return True
    if "=" not in raw:
        return False
    return any("=" in part and _opens_active_attribute(part) for part in raw.split(">"))


def _opens_active_attribute(part: str) -> bool:
    """Whether ``part`` (text up to a ">") holds a start tag whose attributes, from its
    first one to the part's end, include an active one."""
    for match in _START_TAG_NAME.finditer(part):
        end = match.end()
        if end < len(part) and (part[end] == "/" or part[end].isspace()):
            return _ACTIVE_ATTRIBUTE.search(part, end) is not None
    return False


def _shows_element_tags(raw: str) -> bool:
    """Whether text shows an element closed after it opened or a void tag written as
    markup (with attributes or a "/", or glued to a word)."""
    opened: set[str] = set()
    for match in _TITLE_TAG.finditer(raw):
        is_end, name, rest = match.groups()
        name = name.lower()
        if is_end:
            if name in opened:
                return True
        elif name in _VOID_NAMES:
            if rest is not None and rest.strip():
                return True
            start, end = match.span()
            if (start and raw[start - 1].isalnum()) or (end < len(raw) and raw[end].isalnum()):
                return True
        else:
            opened.add(name)
    return False


# Readings of a text as HTML, at most, before one that still shows markup is given up:
# each takes one level of escaping off, and real text is escaped twice at most.
MAX_MARKUP_READINGS: Final = 4


def without_markup(text: str) -> str:
    """``text``, which shows markup, read as HTML until it shows none: each reading takes
    one level of escaping off (``&amp;lt;b&amp;gt;`` escaped twice more than read). A
    reading that changes nothing ends it; a text that still shows markup after
    ``MAX_MARKUP_READINGS`` (escaped level upon level, a few characters each: hundreds
    of readings of a long text) is none, so that no reading costs more than a few."""
    read = html_text(text)
    for _ in range(MAX_MARKUP_READINGS - 1):
        if read == text or "<" not in read or not shows_tags(read):
            return read
        text, read = read, html_text(read)
    return "" if "<" in read and shows_tags(read) else read
