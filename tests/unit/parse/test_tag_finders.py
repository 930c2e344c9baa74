"""Every pattern that finds tags on the recovery path reads the same tags in the same
bytes: CDATA sections, comments and processing instructions (closed or left open) hold
no tag for any of them, and a name of letters past ASCII is a name for all of them.

Every finder reads the data after ``repair.with_addresses_as_text``, the first repair:
an address in angle brackets (``<jane@example.org>``) is text, never a tag.

Each finder reads only some tags (``repair._RSS_TEXT_TAG`` the start tags of RSS text
elements, ``xmldoc._tags_of`` the tags of the names it is asked for): its answer is
compared with the tags of the input it can read at all.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tap_feeddelta.parse import endtags, repair, xmldoc

START, END = "start", "end"
Tag = tuple[str, bytes]  # (START or END, the name as written, with its prefix)

# (id, input, the tags recovery reads in it, in order)
CASES: list[tuple[str, bytes, list[Tag]]] = [
    (
        "plain",
        b"<description>x<br>y</description>",
        [(START, b"description"), (START, b"br"), (END, b"description")],
    ),
    (
        "processing-instruction",
        b'<description><?php echo "<br><title></description>"; ?>x</description>',
        [(START, b"description"), (END, b"description")],
    ),
    (
        "comment",
        b"<description><!-- <br><title></description> -->x</description>",
        [(START, b"description"), (END, b"description")],
    ),
    (
        "cdata",
        b"<description><![CDATA[<br><title></description>]]>x</description>",
        [(START, b"description"), (END, b"description")],
    ),
    (
        "unterminated-cdata",
        b"<description><![CDATA[x <br><title></description>",
        [(START, b"description")],
    ),
    (
        "unterminated-comment",
        b"<description><!-- x <br><title></description>",
        [(START, b"description")],
    ),
    (
        "unterminated-processing-instruction",
        b"<description><?php x <br><title></description>",
        [(START, b"description")],
    ),
    (
        "addresses-in-angle-brackets",
        b"<author>Jane <jane@example.org> <https://example.org/a?b> <mailto:x@y.org></author>",
        [(START, b"author"), (END, b"author")],
    ),
    (
        "non-ascii-names",
        "<café><média:description>x<br></média:description></café>".encode(),
        [
            (START, "café".encode()),
            (START, "média:description".encode()),
            (START, b"br"),
            (END, "média:description".encode()),
            (END, "café".encode()),
        ],
    ),
]
# The local names ``xmldoc._tags_of`` is asked for.
LOCAL_NAMES = ("description", "br", "café", "author", "https", "jane")


def _end_tag_tokens(data: bytes) -> list[Tag]:
    found: list[Tag] = []
    for token in endtags._TOKEN.finditer(data):
        if token.group("start") is not None:
            found.append((START, token.group("start")))
        elif token.group("end") is not None:
            found.append((END, token.group("end")))
    return found


def _named_tags(tags: Callable[[bytes], list[tuple[int, Tag]]]) -> Callable[[bytes], list[Tag]]:
    return lambda data: [tag for _, tag in sorted(tags(data))]


def _tags_of(data: bytes) -> list[tuple[int, Tag]]:
    found: list[tuple[int, Tag]] = []
    for local_name in LOCAL_NAMES:
        for is_end in (False, True):
            for match in xmldoc._tags_of(local_name, is_end=is_end).finditer(data):
                if match.lastgroup == "tag":
                    name = match.group("tag").strip(b"/> \t\r\n")
                    found.append((match.start(), (END if is_end else START, name)))
    return found


def _repair_tags(pattern_name: str) -> Callable[[bytes], list[Tag]]:
    def tags(data: bytes) -> list[Tag]:
        pattern = getattr(repair, pattern_name)
        return [
            (END if match.group("end") else START, match.group("name"))
            for match in pattern.finditer(data)
            if match.group("name") is not None
        ]

    return tags


def _any(tag: Tag) -> bool:
    return True


def _rss_text_start(tag: Tag) -> bool:
    kind, name = tag
    return kind == START and repair._RSS_TEXT.fullmatch(name) is not None


# (id, the tags the finder reads in the data, which tags it reads at all)
FINDERS: list[tuple[str, Callable[[bytes], list[Tag]], Callable[[Tag], bool]]] = [
    ("endtags._TOKEN", _end_tag_tokens, _any),
    ("xmldoc._tags_of", _named_tags(_tags_of), _any),
    ("repair._TAG", _repair_tags("_TAG"), _any),
    ("repair._RSS_TEXT_TAG", _repair_tags("_RSS_TEXT_TAG"), _rss_text_start),
    ("repair._TEXT_TOKEN", _repair_tags("_TEXT_TOKEN"), _any),
    ("repair._TEXT_TAG_TOKEN", _repair_tags("_TEXT_TAG_TOKEN"), _any),
]


@pytest.mark.parametrize(("finder", "reads"), [f[1:] for f in FINDERS], ids=[f[0] for f in FINDERS])
@pytest.mark.parametrize(("data", "tags"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_tag_finder_reads_the_same_tags(
    finder: Callable[[bytes], list[Tag]],
    reads: Callable[[Tag], bool],
    data: bytes,
    tags: list[Tag],
) -> None:
    assert finder(repair.with_addresses_as_text(data)) == [tag for tag in tags if reads(tag)]


# What is no tag: each kept whole by the repairs, closed or left open.
NO_TAGS = [
    ("processing-instruction", b'<?php echo "<br>" && $a; ?>'),
    ("comment", b"<!-- <br> && -->"),
    ("cdata", b"<![CDATA[<br> &&]]>"),
    ("unterminated-cdata", b"<![CDATA[<br> && </a>"),
    ("unterminated-comment", b"<!-- <br> && </a>"),
    ("unterminated-processing-instruction", b"<?php <br> && </a>"),
]


@pytest.mark.parametrize("no_tag", [n[1] for n in NO_TAGS], ids=[n[0] for n in NO_TAGS])
def test_the_repairs_leave_what_holds_no_tag_as_it_is(no_tag: bytes) -> None:
    after = b"" if no_tag.endswith(b"</a>") else b" & x</a>"
    data = b"<a>1 < 2" + no_tag + after
    repaired = b"<a>1 &#60; 2" + no_tag + after.replace(b"&", b"&#38;")
    assert repair.repaired(data) == repaired


@pytest.mark.parametrize("no_tag", [n[1] for n in NO_TAGS], ids=[n[0] for n in NO_TAGS])
def test_escaped_content_keeps_cdata_and_drops_comments_and_instructions(no_tag: bytes) -> None:
    kept = no_tag if no_tag.startswith(b"<![CDATA[") else b""
    assert repair._escaped(b"x<b>" + no_tag) == b"x&#60;b&#62;" + kept


@pytest.mark.parametrize("no_tag", [n[1] for n in NO_TAGS], ids=[n[0] for n in NO_TAGS])
def test_an_address_in_angle_brackets_is_escaped_as_text_but_where_no_tag_stands(
    no_tag: bytes,
) -> None:
    address = no_tag.replace(b"<br>", b"<jane@example.org>")
    data = b"<a>Jane <jane@example.org>, <https://x.org/?a> <b>c</b> </a@b>" + address
    escaped = b"<a>Jane &#60;jane@example.org>, &#60;https://x.org/?a> <b>c</b> </a@b>" + address
    assert repair.with_addresses_as_text(data) == escaped
    assert repair.with_addresses_as_text(b"<a>Jane <jane></a>" + address) == (
        b"<a>Jane <jane></a>" + address
    )
