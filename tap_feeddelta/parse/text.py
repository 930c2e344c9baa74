"""Plain text out of feed text: HTML read for its words, whitespace collapsed, caps applied.

Most feed text has no markup at all, so the first check is for ``<`` and ``&``: without
them the text only needs its whitespace collapsed. Markup is removed with a few
precompiled expressions rather than an HTML parser: only the words matter here, and
nothing of the markup may survive.
"""

from __future__ import annotations

import re
import unicodedata
from html import unescape as _html_unescape
from html.entities import html5
from typing import Final

from tap_feeddelta.parse.graphemes import cluster_boundary

_COMMENT: Final = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
# The rest of a tag after its name, through its ">": a ">" inside a quoted value ends
# nothing (alt="Settings > Privacy"). No "<" inside, so a match holds the one "<" it starts
# at and a scan never runs past the next tag; each alternative starts with its own
# character, so a failed match backtracks in linear time. The usual tag, without quotes,
# takes the first ">" branch. With an unbalanced quote this fails: the general passes then
# end the tag at the first ">", and the fast path below leaves the text to them (there,
# removing one tag can close another's quote: each pass must see what the last one left).
_TAG_REST: Final = r"""[^<>"']*(?:>|(?:(?:"[^"<]*"|'[^'<]*')[^<>"']*)+>)"""
# A namespace prefix, as XHTML is serialized ("<xhtml:p>"): a tag is read by its local name.
_PREFIX: Final = r"[A-Za-z_][\w.-]*:"
# Elements whose content is not words: dropped with their content (up to the end when
# the closing tag is missing, so that nothing active leaks into the text). The fallbacks
# for a tag TAG_REST cannot read (an unbalanced quote) end at its first ">" or, without
# one, at the end of the text, as _TAG does: a fallback that could fail after scanning to
# the end would make text full of "<script" or "<p" quadratic (a minute per megabyte). A self-closed
# one ("<iframe .../>", as XHTML is serialized) has no content: it is dropped alone.
_DROPPED_NAMES: Final = (
    "script", "style", "noscript", "template", "iframe", "object", "applet", "svg", "math",
    "head", "select",
)  # fmt: skip
_DROPPED: Final = re.compile(
    r"<((?:" + _PREFIX + r")?)(" + "|".join(_DROPPED_NAMES) + r")\b"
    r"(?:" + _TAG_REST + r"(?:(?<=/>)|.*?(?:</\1\2\s*>|\Z))"
    r"|[^>]*(?:(?<=/)>|>.*?(?:</\1\2\s*>|\Z)|\Z))",
    re.S | re.I,
)
# Tags that separate words (a paragraph break must not glue two words together).
_BLOCK_NAMES: Final = (
    "p", "div", "br", "hr", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5",
    "h6", "tr", "td", "th", "table", "thead", "tbody", "tfoot", "caption", "blockquote", "pre",
    "section", "article", "aside", "header", "footer", "nav", "figure", "figcaption", "main",
    "address", "details", "summary", "center", "img", "video", "audio", "source", "option",
    "embed",  # void in HTML: no content, never closed
)  # fmt: skip
_BLOCK_TAG: Final = re.compile(
    r"</?(?:"
    + _PREFIX
    + r")?(?:"
    + "|".join(_BLOCK_NAMES)
    + r")\b(?:"
    + _TAG_REST
    + r"|[^>]*(?:>|\Z))",
    re.I,
)
# The fast path: markup where every "<" starts a plain tag (an ASCII name ending at a word
# boundary, then no "<" up to the ">" that ends it). There the three passes above come
# down to one: a block tag becomes a space, any other tag nothing (a dropped element goes
# the long way). "<" marks a dropped element's name; no real separator is "<".
_SIMPLE_TAG: Final = re.compile(r"</?(?:" + _PREFIX + r")?([A-Za-z][A-Za-z0-9]*)(?!\w)" + _TAG_REST)
# Common inline names are listed so that lowercase markup is looked up in one C-level pass.
_INLINE_NAMES: Final = (
    "a", "abbr", "b", "big", "cite", "code", "del", "dfn", "em", "font", "i", "ins", "kbd",
    "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt",
    "u", "var", "wbr", "picture",
)  # fmt: skip
_SEPARATOR: Final = {
    **{name: "" for name in _INLINE_NAMES},
    **{name: " " for name in _BLOCK_NAMES},
    **{name: "<" for name in _DROPPED_NAMES},
}
# The name then a space, "/" or ">": a prefixed tag ("<b:p>" is a "p") is left to the
# pattern above.
_USUAL_BLOCK_TAG: Final = re.compile(
    r"</?(?:" + "|".join(_BLOCK_NAMES) + r")(?=[\s/>])" + _TAG_REST
)
_USUAL_INLINE_TAG: Final = re.compile(
    r"</?(?:" + "|".join(_INLINE_NAMES) + r")(?=[\s/>])" + _TAG_REST
)
_TAG: Final = re.compile(r"<(?:/?[A-Za-z](?:" + _TAG_REST + r"|[^>]*(?:>|\Z))|[!?][^>]*(?:>|\Z))")
# What shows that text holding "<" is HTML, not plain text that names a type or a tag (a
# post's "Vec<String>", "a<b and c>d" or "Use <details>", as Bluesky's profile RSS gives
# it): a comment, declaration or processing instruction; an end tag; a tag with an
# attribute value (any "=" in it); in any shape, an element HTML writes without an end tag
# (void, or whose end tag is optional) or one that is active or not words (script, style,
# iframe, svg, form…); a formatting element written bare ("<b>", "<div/>": a fragment cut
# before its end tag). Other names ("<details>", "<T>", "<b and c>") need another sign.
_ALWAYS_MARKUP_NAMES: Final = frozenset({
    *_DROPPED_NAMES,
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image",
    "img", "input", "isindex", "keygen", "link", "meta", "param", "source", "spacer", "track",
    "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option",
    "optgroup", "colgroup", "caption", "rb", "rt", "rtc", "rp", "html", "body", "frameset",
    "form", "button", "textarea", "video", "audio", "canvas", "picture", "title", "xmp",
    "plaintext", "listing", "noembed", "noframes", "marquee", "blink", "portal",
})  # fmt: skip
_BARE_MARKUP_NAMES: Final = frozenset({
    "a", "abbr", "b", "big", "blockquote", "center", "cite", "code", "del", "dfn", "div", "dl",
    "em", "font", "h1", "h2", "h3", "h4", "h5", "h6", "i", "ins", "kbd", "mark", "nobr", "ol",
    "pre", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "table", "tt",
    "u", "ul", "var",
})  # fmt: skip
# A "<" that may start markup: a comment, declaration or processing instruction, an end
# tag, or a start tag: its name (with any prefix, "<svg:script>") and the rest up to the
# next "<" or ">". Each scan stops there and gives nothing back: linear.
_MARKUP_START: Final = re.compile(r"<(?:[!?]|/[A-Za-z]|([A-Za-z_][\w.:-]*+)([^<>]*+))")
# The usual markup of descriptions, found in one search (most HTML shows some at once):
# only what the rules above count as markup, the rest is left to them.
_USUAL_MARKUP: Final = re.compile(
    r"<(?:[!?]|/[A-Za-z]|[A-Za-z][^<>=]*+="
    r"|(?:p|br|img|hr|li|tr|td|th|iframe|script|style|video|audio|source|embed)(?=[\s/>])"
    r"|(?:a|b|i|u|s|em|strong|span|div|h[1-6]|ul|ol|table|blockquote|pre|code|small|sub|sup)"
    r"\s*+/?\s*+>)",
    re.ASCII | re.IGNORECASE,
)
# C0 controls and DEL (those Python counts as whitespace are collapsed instead), the C1
# range, lone surrogates and non-characters that JSON or entity decoding can produce.
_CONTROL: Final = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
_CONTROL_AFTER_LT: Final = re.compile("<(?:" + _CONTROL.pattern + ")+")
_C1_BYTES: Final = bytes(range(0x80, 0xA0))
_SPACE_RUN: Final = re.compile("  +")
# A character or entity reference, ";" and all: what a text still holds after one
# unescape when it was escaped twice, and what shows a title is escaped HTML
# (``fields``). The other reference patterns here read for other ends: _REFERENCE splits
# text for the table of references, _NUMERIC_REFERENCE reads as html.unescape does.
CHARACTER_REFERENCE: Final = re.compile(
    r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
)


# A decimal reference of 8 digits or more: html.unescape raises ValueError from int()
# past 4,300 digits (leading zeros count).
_LONG_DECIMAL_REFERENCE: Final = re.compile(r"&#([0-9]{8,})(;?)")


def unescape(text: str) -> str:
    """``html.unescape``, which never raises: a decimal reference too long for ``int()``
    reads as what its value gives, U+FFFD past U+10FFFF (as ``html.unescape`` makes any
    reference to a number past it). Two references to the UTF-16 halves of a character
    (``&#55357;&#56832;``, as escapers built on UTF-16 code units write an emoji) are
    that character; a lone half is U+FFFD, as any reference to no character."""
    try:
        result = _html_unescape(text)
    except ValueError:
        text = _LONG_DECIMAL_REFERENCE.sub(_short_decimal_reference, text)
        result = _html_unescape(text)
    if "\ufffd" in result and "&#" in text:  # a reference to no character, maybe a half
        paired = _paired_surrogates(text)
        if paired is not text:
            return _html_unescape(paired)
    return result


# A numeric reference, as html.unescape reads one (the ";" may be missing).
_NUMERIC_REFERENCE: Final = re.compile(r"&#(?:[xX]([0-9A-Fa-f]{1,8})|([0-9]{1,10}));?")


def _paired_surrogates(text: str) -> str:
    """The text with each reference to a high surrogate directly followed by one to a low
    surrogate replaced by the character the pair encodes; ``text`` itself without one."""
    parts: list[str] = []
    done = 0
    high: re.Match[str] | None = None
    for match in _NUMERIC_REFERENCE.finditer(text):
        value = int(match.group(1), 16) if match.group(1) else int(match.group(2))
        if high is not None and high.end() == match.start() and 0xDC00 <= value <= 0xDFFF:
            first = int(high.group(1), 16) if high.group(1) else int(high.group(2))
            parts += (
                text[done : high.start()],
                chr(0x10000 + (first - 0xD800) * 0x400 + value - 0xDC00),
            )
            done = match.end()
            high = None
        else:
            high = match if 0xD800 <= value <= 0xDBFF else None
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def references_replaced(raw: str, text: str) -> bool:
    """Whether ``text``, read from ``raw``, has more U+FFFD than it: a character reference
    to no character (a lone UTF-16 surrogate, zero, past U+10FFFF) was replaced."""
    return "\ufffd" in text and text.count("\ufffd") > raw.count("\ufffd")


def shows_markup(text: str) -> bool:
    """Whether text holding ``<`` shows HTML (see ``_ALWAYS_MARKUP_NAMES``) or a character
    or entity reference, which HTML reading would decode (``&amp;``, also ``&amp``). Any
    ``=`` counts: an attribute's value (an event handler, a URL) needs one, and HTML lets
    a tag's attribute names hold ``<`` (``<details a<1 open ontoggle=…>``), so no scan that
    ends a tag at the next ``<`` may decide that a tag has none."""
    if "=" in text or _USUAL_MARKUP.search(text) is not None:
        return True
    match = _MARKUP_START.search(text)
    while match is not None:
        name, rest = match.groups()
        if name is None:
            return True  # a comment, declaration, processing instruction or end tag
        name = name.casefold()
        if ":" in name:  # a prefix or the local name may be one ("<svg:x>", "<x:script>")
            parts = name.split(":")
            if not _ALWAYS_MARKUP_NAMES.isdisjoint(parts):
                return True
            name = parts[-1]
        if name in _ALWAYS_MARKUP_NAMES:  # (an "=" anywhere returned above)
            return True
        if name in _BARE_MARKUP_NAMES and rest.strip() in ("", "/"):
            return True
        match = _MARKUP_START.search(text, match.end())
    return "&" in text and unescape(text) != text


def _short_decimal_reference(match: re.Match[str]) -> str:
    digits = match.group(1).lstrip("0")
    return "\ufffd" if len(digits) > 7 else "&#" + (digits or "0") + match.group(2)


# Entity references read without a Python call per reference: every HTML5 name with its
# ";" and the numeric references feeds use most, each mapped to what ``unescape`` gives
# (any other reference sends the whole text to ``unescape``).
_REFERENCE: Final = re.compile(r"&(#?[A-Za-z0-9]{1,32};)")
_COMMON_NUMBERS: Final = (
    *range(32, 127), *range(160, 256), *range(0x2010, 0x2040), 0x20AC, 0x2122,
    *range(0x2190, 0x2196),
)  # fmt: skip
_REFERENCES: Final = {
    **{name: char for name, char in html5.items() if name.endswith(";")},
    **{
        key: unescape(f"&{key}")
        for number in _COMMON_NUMBERS
        for key in (f"#{number};", f"#{number:03d};", f"#x{number:x};", f"#x{number:X};")
    },
}


def _unescaped(text: str, ampersands: int) -> str:
    """``unescape(text)`` of a text with that many "&": when each one starts a reference
    from the table, by one split (from three references on it costs less than the calls
    ``unescape`` makes)."""
    parts = _REFERENCE.split(text)
    if len(parts) >> 1 == ampersands:
        chars = list(map(_REFERENCES.get, parts[1::2]))
        if None not in chars:
            parts[1::2] = chars
            return "".join(parts)
    return unescape(text)


def _without_c1(text: str) -> str:
    """Text whose C1 controls are mis-decoded bytes: UTF-8 read as Latin-1 (the whole text
    then reads as UTF-8), or windows-1252 punctuation read as Latin-1 (``don\x92t``)."""
    if max(text) <= "\xff":
        try:
            return text.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError:
            pass
    return text.translate(_C1_AS_1252)


_C1_AS_1252: Final = {
    code: bytes([code]).decode("cp1252", "ignore") or None for code in range(0x80, 0xA0)
}


def collapsed(text: str) -> str:
    """The text with runs of whitespace made one space and the ends trimmed."""
    return " ".join(text.split())


def without_controls(text: str) -> str:
    """The text without control characters, lone surrogates or non-characters."""
    if text.isprintable():  # every character _CONTROL removes is unprintable
        return text
    return _CONTROL.sub("", text)


# The controls that Python counts as whitespace, which _CONTROL leaves for collapsing.
_WHITESPACE_CONTROLS: Final = {code: " " for code in (*range(0x09, 0x0E), *range(0x1C, 0x20), 0x85)}


def id_text(text: str) -> str:
    """An id, its ends trimmed, without any control character: those _CONTROL removes
    are removed, and a whitespace control inside (a tab, a line break) becomes a space;
    the rest stays verbatim (runs of spaces included)."""
    text = text.strip()
    if text.isprintable():
        return text
    return _CONTROL.sub("", text).translate(_WHITESPACE_CONTROLS).strip()


def decoded_references(text: str) -> str:
    """The text with its character references decoded when it holds a well-formed one
    (``News &amp; Events``, ``O&#8217;Brien``); with none, a "&" is plain text (``AT&T``)."""
    if "&" in text and CHARACTER_REFERENCE.search(text):
        return unescape(text)
    return text


def repaired_text(text: str) -> str:
    """Text from a source that may hold any character (JSON) as the readers of XML text
    see it: C1 controls read as the mis-decoded bytes they are (``plain_text`` and
    ``html_text`` read them so), every other control, lone surrogate or non-character
    removed, and whitespace left for collapsing."""
    if text.isprintable():
        return text
    if _has_c1(text):
        text = _without_c1(text)
    return _CONTROL.sub("", text)


def _has_c1(text: str) -> bool:
    """Whether the text holds a C1 control character (U+0080 to U+009F).

    A byte-level scan: the Latin-1 bytes of the text (other characters left out) lose
    their C1 bytes to ``translate``, several times faster than a regular expression.
    """
    if text.isascii():
        return False
    data = text.encode("latin-1", "ignore")
    return len(data.translate(None, _C1_BYTES)) != len(data)


def _collapsed_without_controls(text: str) -> str:
    """``collapsed(without_controls(text))``, skipping the control scan when it cannot
    matter: no character that ``_CONTROL`` removes is whitespace, so each one survives
    collapsing, and a collapsed text that is all printable never held one."""
    result = " ".join(text.split())
    if result.isprintable():
        return result
    return " ".join(_CONTROL.sub("", text).split())


def plain_text(text: str) -> str:
    """Text that is already plain (Atom ``type="text"``, JSON ``content_text``)."""
    if text.isprintable():  # no C1 or other control character, no whitespace but " "
        return _SPACE_RUN.sub(" ", text).strip()
    if _has_c1(text):
        text = _without_c1(text)
    return _collapsed_without_controls(text)


def _simple_tags_removed(text: str) -> str | None:
    """The text with its tags removed when every ``<`` in it starts a plain tag and no
    dropped element is named; ``None`` otherwise (the general passes then run)."""
    # The usual markup, lowercase block and inline tags, goes in two C-level passes. A
    # match holds exactly one "<" and a replacement none, so no "<" left means that every
    # "<" started a listed tag. Block tags go first: removing an inline tag can join text
    # into a new tag ("<<b>p>"), which the pass that already ran cannot see.
    usual = _USUAL_INLINE_TAG.sub("", _USUAL_BLOCK_TAG.sub(" ", text))
    if "<" not in usual:
        return usual
    parts = _SIMPLE_TAG.split(text)
    if len(parts) >> 1 != text.count("<"):
        return None  # some "<" starts no plain tag: a comment, a stray "<", a cut tag
    separator = _SEPARATOR.get
    separators = [
        found if (found := separator(name)) is not None else separator(name.lower(), "")
        for name in parts[1::2]
    ]
    if "<" in separators:
        return None  # script, style and the like: dropped with their content
    parts[1::2] = separators
    return "".join(parts)


def html_text(text: str, *, unescape_twice: bool = False) -> str:
    """The words of an HTML fragment: no tags, no scripts, entities decoded.

    ``unescape_twice`` decodes entities once more when the first pass left some behind,
    which is what a double-escaped title (``AT&amp;amp;T``) needs.
    """
    if _has_c1(text):
        text = _without_c1(text)
    if "<" in text:
        stripped = _simple_tags_removed(text)  # None for any comment: "<!" is no plain tag
        if stripped is None:
            if _CONTROL_AFTER_LT.search(text) is not None:
                # "<\x7fimg …>": the control goes at the end, so a tag would be left
                # there; removed first, as a JSON reader removes it (the fast path
                # above saw every "<" start a tag: none is followed by a control).
                text = _CONTROL_AFTER_LT.sub("<", text)
            if "<!--" in text:
                text = _COMMENT.sub(" ", text)
            text = _DROPPED.sub(" ", text)
            text = _BLOCK_TAG.sub(" ", text)
            text = _TAG.sub("", text)
        else:
            text = stripped
    if "&" not in text:
        if text.isprintable():  # in printable text the only whitespace is " "
            return _SPACE_RUN.sub(" ", text).strip()
        return _collapsed_without_controls(text)
    ampersands = text.count("&")
    text = unescape(text) if ampersands < 3 else _unescaped(text, ampersands)
    if unescape_twice and "&" in text and CHARACTER_REFERENCE.search(text):
        text = unescape(text)
    if text.isprintable():  # no C1 or other control character, no whitespace but " "
        return _SPACE_RUN.sub(" ", text).strip()
    if _has_c1(text):
        text = _without_c1(text)
    return _collapsed_without_controls(text)


def capped(text: str, max_bytes: int) -> tuple[str, bool]:
    """The text cut to at most ``max_bytes`` of UTF-8 between two characters as a reader
    sees them (see graphemes.py), and whether it was cut."""
    if len(text) * 4 <= max_bytes:
        return text, False
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text, False
    head = data[:max_bytes].decode("utf-8", "ignore")
    return head[: cluster_boundary(text, len(head))].rstrip(), True


def utf8_length(text: str) -> int:
    """The length of the text in UTF-8 bytes."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "replace"))


# Characters that change no reading of a text: soft hyphen, zero-width space, direction
# marks and embeddings, word joiner, BOM. (Zero-width joiner and non-joiner are kept:
# they change how emoji and some scripts render.)
_INVISIBLE: Final = re.compile("[\u00ad\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def as_read(text: str) -> str:
    """``text``, collapsed as every text of an item is, as a reader sees it: the same
    characters however composed (NFC: "é" as one code point or as "e" and a combining
    accent), without the invisible ones, and without the spaces their removal leaves
    doubled or at an end (an empty paragraph holding a zero-width space, "Hello \u200b
    World", reads as "Hello World", as the text without it does)."""
    if text.isascii():
        return text
    text, removed = as_read_spaces_left(text)
    if removed and " " in text:  # a space next to one may now be doubled or at an end
        return _SPACE_RUN.sub(" ", text).strip(" ")
    return text


def as_read_spaces_left(text: str) -> tuple[str, int]:
    """``as_read`` as earlier versions read text (their hashes are in states), the
    spaces around an invisible character left as they were; and how many invisible
    characters it removed (with none, the text reads as ``as_read`` reads it)."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return _INVISIBLE.subn("", text)
