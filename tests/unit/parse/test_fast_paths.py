"""The fast paths of the normalizers give exactly what the general code gives.

Each fast path (plain tags removed in one pass, entity references read from a table,
printable text collapsed without a control scan, the common date shapes read without the
general patterns, the author and category tables, Atom constructs read from their
attributes at once) is checked against a reference: the general code it stands in for.
"""

from __future__ import annotations

import re
from html import unescape

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lxml import etree

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import ParsedItem
from tap_feeddelta.parse import atom, dates, repair, text
from tap_feeddelta.parse import fields as field_values
from tap_feeddelta.parse.dates import rfc3339
from tap_feeddelta.parse.text import html_text, plain_text

# C1 controls, as the general code finds them (``text._has_c1`` scans bytes instead).
_C1 = re.compile("[\x80-\x9f]")
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reference_html_text(raw: str, *, unescape_twice: bool = False) -> str:
    """The general passes, without any fast path."""
    if not raw.isascii() and _C1.search(raw):
        raw = text._without_c1(raw)
    if "<" not in raw and "&" not in raw:
        return " ".join(text._CONTROL.sub("", raw).split())
    if "<" in raw:
        raw = text._CONTROL_AFTER_LT.sub("<", raw)  # "<\x7fimg …>" is a tag once read
        raw = text._COMMENT.sub(" ", raw)
        raw = text._DROPPED.sub(" ", raw)
        raw = text._BLOCK_TAG.sub(" ", raw)
        raw = text._TAG.sub("", raw)
    if "&" in raw:
        raw = unescape(raw)
        if unescape_twice and "&" in raw and text.CHARACTER_REFERENCE.search(raw):
            raw = unescape(raw)
        if not raw.isascii() and _C1.search(raw):
            raw = text._without_c1(raw)
    return " ".join(text._CONTROL.sub("", raw).split())  # on every path


def _reference_plain_text(raw: str) -> str:
    if not raw.isascii() and _C1.search(raw):
        raw = text._without_c1(raw)
    return " ".join(text._CONTROL.sub("", raw).split())


def _reference_rfc3339(raw: str) -> str | None:
    """The general date patterns only."""
    value = raw.strip()
    if not value or len(value) > dates._MAX_DATE_CHARS:
        return None
    if value.endswith(")"):
        value = dates._COMMENT.sub("", value)
    for pattern in dates._PATTERNS:
        match = pattern.fullmatch(value)
        if match is not None:
            return dates._instant(match.groupdict())
    return None


# Pieces that reach every branch: plain and block tags in either case, dropped elements
# (open, closed and self-closed), void ones, comments, stray "<", cut tags, names that only
# look like tag names, quoted attribute values holding ">", "/>" or "<" and unbalanced
# quotes, namespace prefixes, entities, C1 and other control characters, and whitespace
# that is not a space.
PIECES = [
    "<p>", "</p>", "<P class='x'>", "<<b>", "<<br>", "<b>", "</B>", "<br/>", "<BR>",
    "<img src=x />", "<h1>", "<h7>", "<pre>", "<progress>", "<p_x>", "<pé>", "<p\xa0>",
    "<a href='x>y'>", "</a>", "<span>", "<script>", "</script>", "<Script\n>", "<script-x>",
    "<scripts>", "<ſcript>", "<style x>", "<select>", "<svg>", "<svg/>", "<SVG a='1' />",
    "<iframe/>", "<iframe src='x/'>", "</iframe>", "<script src=x/>", "<embed src=x>",
    "</embed>", "</ p>", "<!x>", "<?x?>", "<!--", "-->", "<", ">",
    '<img alt="a > b">', "<P title='>>'>", '<a title="x>', "<b c='", '<br d="/>"/>',
    '<script a=">">', "<iframe src='/>'>", '<svg a="/>"/>', '<em x="<">', '"', "'", '=">"',
    "<xhtml:p>", "</xhtml:p>", "<x:script>", "</x:script>", "<b:p>", "<b-x:p>", "<a:1>",
    "<h:svg/>", "<X.Y:STYLE a='>'>", "</x.y:style>", "<x:b>", "<_:br/>", "<:p>", ":",
    "&", "&amp;", "&amp;amp;", "&lt;b&gt;", "&#133;", "&#x92;", "&nbsp;", "&eacute;",
    "&bogus;", "&#0;", "\x85", "\x92", "\x80", "\x01", "\x1c", "\xad", "\u200b", "\ufffe",
    "\ud800", "Ã©", "é", "中", " ", "  ", "\n", "\t", "a", "word", "K", "İ",
]  # fmt: skip
fragments = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=14).map("".join)


@SETTINGS
@given(fragments, st.booleans())
def test_html_text_matches_the_general_passes(raw: str, twice: bool) -> None:
    assert html_text(raw, unescape_twice=twice) == _reference_html_text(raw, unescape_twice=twice)


@SETTINGS
@given(fragments)
def test_plain_text_matches_the_general_passes(raw: str) -> None:
    assert plain_text(raw) == _reference_plain_text(raw)


def test_plain_tags_take_the_one_pass_path() -> None:
    raw = "<p>one <b>two</b></p><P>three<br/>four</P><img src='x'>"
    assert text._simple_tags_removed(raw) == " one two  three four  "
    assert html_text(raw) == "one two three four"
    usual = "<p>one <b>two</b></p><br/><a href='x'>three</a><img src='x'>"
    assert text._simple_tags_removed(usual) == " one two  three "  # the two-pass path
    prefixed = "<x:p>one <x:b>two</x:b></x:p>"  # read by the local name
    assert text._simple_tags_removed(prefixed) == " one two "


@pytest.mark.parametrize(
    "raw",
    [
        "<p>a</p><script>x</script>",  # a dropped element
        "<SCRIPT>x</SCRIPT>",
        "<x:script>x</x:script>",
        "a < b <p>",  # a stray "<"
        "<p>cut <b",  # a cut tag
        "<p_x>y",  # a name that does not end at a word boundary
        "<!-- c --><p>",  # left to the comment pass
        "<<b>p>x",  # removing the inline tag would join a new tag
        "<<br>i>x",
        "<p<b>>x",
        '<a title="x>y',  # an unbalanced quote
        # Once the img is gone, the a's quote closes: only the passes in turn see that.
        '<a title="x>=<IMG src=x />K =">"z',
    ],
)
def test_other_markup_takes_the_general_passes(raw: str) -> None:
    assert text._simple_tags_removed(raw) is None
    assert html_text(raw) == _reference_html_text(raw)


def _common_dates() -> st.SearchStrategy[str]:
    two = st.integers(0, 99).map("{:02d}".format)
    year = st.sampled_from(["0000", "0001", "0999", "1969", "1970", "2024", "2100", "9999"])
    # Any two-digit offset: one rule on every path (at most 14 hours, 59 minutes).
    zone = st.sampled_from(
        ["Z", "z", "+02:00", "-14:00", "+14:59", "+٠٢:٠٠", "+00:00", "-00:00", "+00:30", "-09:30"]
    ) | st.tuples(st.sampled_from("+-"), two, two).map("{0[0]}{0[1]}:{0[2]}".format)
    iso = st.tuples(year, two, two, two, two, two, zone).map(
        lambda p: f"{p[0]}-{p[1]}-{p[2]}T{p[3]}:{p[4]}:{p[5]}{p[6]}"
    )
    month = st.sampled_from(["Jan", "Feb", "Sep", "Dec", "Foo", "Mai", "JAN", "jan"])
    rfc_zone = st.sampled_from(
        ["+0200", "-1400", "+1500", "+0099", "GMT", "UTC", "UT", "Z", "+0000", "-0000", "+0530"]
    )
    rfc = st.tuples(two, month, year, two, two, two, rfc_zone).map(
        lambda p: f"Mon, {p[0]} {p[1]} {p[2]} {p[3]}:{p[4]}:{p[5]} {p[6]}"
    )
    return iso | rfc


@SETTINGS
@given(_common_dates())
def test_common_date_shapes_match_the_general_patterns(raw: str) -> None:
    assert rfc3339(raw) == _reference_rfc3339(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-02-29T23:30:00-01:00", "2024-03-01T00:30:00Z"),  # the offset changes the day
        ("2023-02-29T00:00:00Z", None),
        ("Thu, 29 Feb 2024 23:59:59 -1400", "2024-03-01T13:59:59Z"),
        ("0001-01-01T00:30:00+01:00", None),  # before year 1
        ("0999-01-01T00:00:00Z", "0999-01-01T00:00:00Z"),
        ("Mon, 11 Jan ٢٠٢٤ 12:11:00 +0200", None),  # ASCII digits only, on every path
        ("2024-01-11T12:11:00+²²:00", None),  # no decimal digits: once a ValueError
    ],
)
def test_dates_at_the_edges_of_the_fast_path(raw: str, expected: str | None) -> None:
    assert rfc3339(raw) == expected


@SETTINGS
@given(
    st.sampled_from(["2020-01-05T12:00:00", "2020-01-28T23:59:59", "2020-02-28T00:00:00"]),
    st.sampled_from("+-"),
    st.integers(0, 99),
    st.integers(0, 99),
)
def test_rfc3339_offsets_follow_one_rule_on_every_path(
    local: str, sign: str, hours: int, minutes: int
) -> None:
    # The fast shape once applied any two digits (+05:99, +99:99) and +15:00, which every
    # other shape refuses as invalid_date.
    raw = f"{local}{sign}{hours:02d}:{minutes:02d}"
    expected = _reference_rfc3339(raw)
    assert rfc3339(raw) == expected
    assert (expected is None) == (hours > 14 or minutes > 59)


def test_remembered_authors_and_tags_repeat_their_issues() -> None:
    for _ in range(3):
        issues: list[Issue] = []
        found = field_values.author("Jane", None, "javascript:alert(1)", None, issues)
        assert found is not None and found.name == "Jane" and found.url is None
        assert [issue.code for issue in issues] == ["unsafe_url"]
        issues = []
        assert field_values.rss_author_readings("jane@example.com (Jane)", None, issues) == (
            field_values._rss_authors("jane@example.com (Jane)", None, [])
        )
        assert field_values.tag(" caf\x92 ", issues) == "caf’"
        assert field_values.tag("\x01", issues) is None


def test_parsed_item_fields_are_in_the_order_the_readers_pass_them() -> None:
    # rss.py, atom.py and jsonfeed.py build ParsedItem positionally.
    assert list(ParsedItem._fields) == [
        "native_id", "native_id_source", "url", "title", "summary", "content_text", "authors",
        "tags", "published_at", "updated_at", "enclosures", "source_pointer", "issues",
        "cut_digests", "read_before",
    ]  # fmt: skip


# References of every kind: table names with and without ";", numbers in and out of the
# table (C1, surrogates, zero, leading zeros, hex in either case), unknown names, names
# longer than a reference can be, and a bare "&".
REFERENCES = [
    "&amp;", "&amp", "&lt;", "&nbsp;", "&nbspx;", "&eacute;", "&Eacute;", "&copy", "&notin;",
    "&notit;", "&bogus;", "&#39;", "&#039;", "&#0039;", "&#x27;", "&#X27;", "&#x2f;", "&#x2F;",
    "&#8217;", "&#x2019;", "&#133;", "&#x92;", "&#0;", "&#xD800;", "&#55296;", "&#1114112;",
    "&#65535;", "&#;", "&#x;", "&", "&&amp;", "&amp;amp;", "&" + "a" * 33 + ";", "&A1;",
]  # fmt: skip
entity_texts = st.lists(
    st.sampled_from(REFERENCES) | st.sampled_from(PIECES) | st.text(max_size=3), max_size=14
).map("".join)


@SETTINGS
@given(entity_texts)
def test_references_read_by_the_table_match_unescape(raw: str) -> None:
    assert text._unescaped(raw, raw.count("&")) == unescape(raw)


@SETTINGS
@given(entity_texts, st.booleans())
def test_html_text_with_many_references_matches_the_general_passes(raw: str, twice: bool) -> None:
    assert html_text(raw, unescape_twice=twice) == _reference_html_text(raw, unescape_twice=twice)


def _reference_construct(element: etree._Element) -> tuple[str | None, str]:
    """``atom._construct`` as it read every construct before its shortcuts."""
    kind = element.get("type")
    kind = kind.strip().lower() if kind else ""
    mode = element.get("mode")
    mode = mode.strip().lower() if mode else ""
    return atom._construct_of(element, kind, mode)


ATTRIBUTES = [
    "", ' type="html"', ' type=" HTML "', ' type=""', ' type="text"', ' type="xhtml"',
    ' type="image/png"', ' type="text/html"', ' mode="escaped"', ' mode="base64"',
    ' mode="xml"', ' src="x"', ' type="html" src="x"', ' xml:lang="en"', ' x:type="html"',
    ' type="html" mode="base64"', ' type="text" xml:lang="en"',
]  # fmt: skip
CONTENTS = ["", "words", "&lt;b&gt;bold&lt;/b&gt;", "<div>x</div>", " <div>y</div> ", "PGI+"]


@pytest.mark.parametrize("attributes", ATTRIBUTES)
@pytest.mark.parametrize("content", CONTENTS)
def test_atom_construct_shortcuts_match_the_general_reading(attributes: str, content: str) -> None:
    element = etree.fromstring(f'<summary xmlns:x="urn:x"{attributes}>{content}</summary>'.encode())
    assert atom._construct(element) == _reference_construct(element)


# Pieces for the recovery repair: stray and tag-starting "<", every kind of reference
# (XML's own, HTML's in either case, numeric with "x" or "X", broken ones), controls
# that can split a reference, and bytes that are no ASCII.
REPAIR_PIECES = [
    b"<", b"<b>", b"</b>", b"<1", b"<!", b"<?", b"< ", b"&", b"&amp;", b"&lt;", b"&LT;",
    b"&AMP;", b"&nbsp;", b"&nbsp", b"&bogus;", b"&#65;", b"&#x41;", b"&#X41;", b"&#;",
    b"&am", b"p;", b";", b"#", b"x", b"\x01", b"\x0b", b"\t", b"\n", b"a", b" ", b"\xc3\xa9",
]  # fmt: skip
repair_inputs = st.lists(st.sampled_from(REPAIR_PIECES) | st.binary(max_size=3), max_size=20).map(
    b"".join
)


@SETTINGS
@given(repair_inputs)
def test_repair_in_passes_matches_the_one_pass_repair(data: bytes) -> None:
    assume(b"<![CDATA[" not in data and b"<!--" not in data)
    assert repair.repaired(data) == repair._repaired_by_match(data)


@SETTINGS
@given(st.text(st.characters(max_codepoint=0x2FF)))
def test_the_c1_byte_scan_matches_the_c1_pattern(raw: str) -> None:
    assert text._has_c1(raw) is (_C1.search(raw) is not None)
