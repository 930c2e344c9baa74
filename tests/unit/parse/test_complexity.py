"""Algorithmic-complexity attacks: the work of reading a document grows linearly in its size.

Bounded work is asserted by counting (pattern calls, resolutions, characters read), never
by timing. Where a document is also read whole at a size the old code needed minutes or
years for, a generous deadline turns a regression into a failure instead of a hang.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse import atom, endtags, fields, markup, names, parse_feed, repair, rss
from tap_feeddelta.parse import text as parse_text
from tap_feeddelta.parse.limits import MAX_PERSON_TEXT_CHARS

URL = "http://example.com/feed"


class _Counting:
    """A compiled pattern that counts its calls, and each match ``finditer`` yields."""

    def __init__(self, pattern: re.Pattern[Any]) -> None:
        self.pattern, self.calls = pattern, 0

    def finditer(self, *args: Any) -> Iterator[re.Match[Any]]:
        self.calls += 1
        for found in self.pattern.finditer(*args):
            self.calls += 1
            yield found

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.pattern, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return method(*args, **kwargs)

        return counted


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> _Counting:
    counting = _Counting(getattr(module, name))
    monkeypatch.setattr(module, name, counting)
    return counting


@contextmanager
def _deadline(seconds: int = 120) -> Iterator[None]:
    """A guard, not a measurement: the work is bounded by counting; this only turns a
    regression (minutes to years of backtracking) into a failure instead of a hang."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise AssertionError(f"still reading after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _grows_linearly(work: list[int]) -> bool:
    """Whether the work measured on inputs of size n, 2n, 4n... at most about doubles
    with each doubling (a quadratic cost quadruples)."""
    return all(later <= 2 * earlier + 8 for earlier, later in pairwise(work))


# 1. A prolog of many processing instructions or comments, and "<!DOCTYPE" later.

_TAIL = (
    b'<rss version="2.0"><channel><title>t</title><item><title>x</title>'
    b"<link>http://e.com/1</link><description><![CDATA[<!DOCTYPE html><p>hi</p>]]>"
    b"</description></item></channel></rss>"
)


@pytest.mark.parametrize("piece", [b"<?a?>", b"<!---->", b"<?a?>\n<!-- c -->\n"])
def test_a_long_prolog_and_a_doctype_string_later_read_in_one_pass(piece: bytes) -> None:
    # 22 processing instructions took 4 s, each one more twice as long: 64 is years.
    body = b'<?xml version="1.0"?>' + piece * 64 + _TAIL
    with _deadline():
        feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["x"]
    assert feed.items[0].summary == "hi"


def test_a_long_prolog_before_a_malformed_root_reads_in_one_pass() -> None:
    body = b'<?xml version="1.0"?>' + b"<?a?>" * 64 + b"<rss><channel><title>A & B</title>"
    with _deadline():
        assert repair.is_rss(body)
        feed = parse_feed(body + b"</channel></rss>", None, URL)
    assert feed.title == "A & B"


def test_the_prolog_is_read_one_match_per_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _counting(monkeypatch, repair, "_PROLOG_PIECE")
    work = []
    for n in (16, 32, 64, 128):
        counting.calls = 0
        body = b'<?xml version="1.0"?>' + b"<?a?><!---->" * n + _TAIL
        assert isinstance(parse_feed(body, None, URL), ParsedFeed)
        assert not repair.is_rss(b"<?a?>" * n + b"<1rss>")
        work.append(counting.calls)
    assert _grows_linearly(work)
    assert work[-1] <= 2 * (2 * 128 + 2) + 4


# 2. RSS text elements left open: each one's end was searched for to the end of the data.


def _text_tokens_read(monkeypatch: pytest.MonkeyPatch) -> list[_Counting]:
    return [_counting(monkeypatch, repair, name) for name in ("_TEXT_TOKEN", "_TEXT_TAG_TOKEN")]


@pytest.mark.parametrize(
    "piece",
    [b"<title>x", b"<description>x<b>", b"<title>x<item>", b"<a:encoded>x<title>y</title>"],
    ids=["title", "description-with-markup", "title-before-item", "encoded-and-closed-title"],
)
def test_text_elements_left_open_are_read_in_linear_work(
    monkeypatch: pytest.MonkeyPatch, piece: bytes
) -> None:
    counters = _text_tokens_read(monkeypatch)
    work = []
    for n in (250, 500, 1000, 2000):
        body = b'<rss version="2.0"><channel>' + piece * n
        repair.with_raw_html_as_text(body, is_rss=True)
        work.append(sum(counter.calls for counter in counters))
        for counter in counters:
            counter.calls = 0
    assert _grows_linearly(work)
    assert work[-1] <= 8 * 2000


def test_text_elements_of_many_names_left_open_are_read_in_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One name per element: whether an end follows is looked up, not searched for.
    counters = _text_tokens_read(monkeypatch)
    work = []
    for n in (250, 500, 1000, 2000):
        body = b'<rss version="2.0"><channel>' + b"".join(b"<a%d:encoded>x" % i for i in range(n))
        repair.with_raw_html_as_text(body, is_rss=True)
        work.append(sum(counter.calls for counter in counters))
        for counter in counters:
            counter.calls = 0
    assert _grows_linearly(work)


def test_many_text_elements_left_open_are_read_whole() -> None:
    # 5,000 took 15 s, growing with the square of the count: 50,000 is half an hour.
    body = b'<rss version="2.0"><channel><item><title>a</title></item>' + b"<title>x" * 50_000
    with _deadline():
        feed = parse_feed(body, None, URL)
    assert [item.title for item in feed.items] == ["a"]


# 3. RSS authors: "Name <email>" and "email (Name)" with runs of spaces or of "a@".


def _rss_with_author(author: bytes) -> bytes:
    return (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        b"<item><title>x</title><link>http://e.com/1</link><author>"
        + author
        + b"</author></item></channel></rss>"
    )


@pytest.mark.parametrize(
    "text",
    [
        " " * 20_000 + "a@b",
        "a@" * 20_000,
        "Jane " + " " * 20_000 + "(a@b" + " " * 20_000,
        "a@b (" + "(" * 20_000,
        "x" * 20_000 + " <a@b" + "@" * 20_000,
    ],
    ids=["spaces-then-at", "at-pairs", "spaces-in-parens", "open-parens", "angle-without-end"],
)
def test_the_author_patterns_read_long_text_in_linear_time(text: str) -> None:
    # 2,000 spaces and "a@b" took 8 s (cubic): 20,000 would take hours.
    with _deadline():
        for pattern in (
            fields._RSS_AUTHOR_PAREN,
            fields._RSS_AUTHOR_ANGLE,
            fields._RSS_AUTHOR_NAME_PAREN,
        ):
            pattern.fullmatch(text.strip())


def test_an_author_is_read_from_a_bounded_text(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []

    class Recording:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def fullmatch(self, text: str) -> re.Match[str] | None:
            read.append(len(text))
            return self.pattern.fullmatch(text)

    for name in ("_RSS_AUTHOR_PAREN", "_RSS_AUTHOR_ANGLE", "_RSS_AUTHOR_NAME_PAREN"):
        monkeypatch.setattr(fields, name, Recording(getattr(fields, name)))
    feed = parse_feed(_rss_with_author(b"Jane &lt;jane@example.com&gt; " * 100_000), None, URL)
    assert read
    assert max(read) <= MAX_PERSON_TEXT_CHARS
    (person,) = feed.items[0].authors
    assert person.name is not None
    assert len(person.name.encode()) <= 256
    assert "author_truncated" in {issue.code for issue in feed.items[0].issues}


@pytest.mark.parametrize(
    ("author", "name", "email"),
    [
        (b"  Jane Roe   &lt;jane@example.com&gt;  ", "Jane Roe", "jane@example.com"),
        (b' "Jane Roe" &lt;jane@example.com&gt;', "Jane Roe", "jane@example.com"),
        (b"jane@example.com ( Jane Roe )", "Jane Roe", "jane@example.com"),
        (b"\n Jane Roe\t(jane@example.com) \n", "Jane Roe", "jane@example.com"),
        (b" jane@example.com ", None, "jane@example.com"),
    ],
    ids=["angle", "quoted-angle", "email-then-name", "name-then-email", "bare-email"],
)
def test_authors_with_space_around_their_parts_read_as_before(
    author: bytes, name: str | None, email: str
) -> None:
    (person,) = parse_feed(_rss_with_author(author), None, URL).items[0].authors
    assert (person.name, person.email) == (name, email)


# Properties: on any document made of one repeated piece, the counted work of a repair
# at most about doubles when the document doubles.

_PIECES = [
    b"<title>", b"</title>", b"x", b"<![CDATA[", b"]]>", b"<item>", b"</item>", b"<a:encoded>",
    b"<b>", b"</b>", b"<br>", b"<!--", b"-->", b"<?a?>", b"<", b"&", b" ", b"<x:note>",
    b"<description>", b"<title/>", b"<itunes:summary>", b"</li>", b"<li>", b"<x:note>x</x:note>",
]  # fmt: skip
_REPAIR_PATTERNS = ("_TEXT_TOKEN", "_TEXT_TAG_TOKEN", "_TAG", "_RSS_TEXT_TAG", "_OWN_END")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6))
def test_the_repairs_work_grows_linearly_on_any_repeated_piece(pieces: list[bytes]) -> None:
    unit = b"".join(pieces)
    with pytest.MonkeyPatch.context() as monkeypatch:
        counters = [_counting(monkeypatch, repair, name) for name in _REPAIR_PATTERNS]
        counters.append(_counting(monkeypatch, repair, "_PROLOG_PIECE"))
        work = []
        for n in (100, 200, 400):
            for counter in counters:
                counter.calls = 0
            body = b'<rss version="2.0"><channel>' + unit * n
            repair.with_raw_html_as_text(body, is_rss=True)
            repair.with_raw_html_as_text(body, is_rss=True, is_thorough=True)
            repair.is_rss(unit * n + b"<rss>")
            work.append(sum(counter.calls for counter in counters))
    assert _grows_linearly(work), (unit, work)


def test_items_nested_away_by_recovery_are_found_in_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each item holds raw HTML left open in an element of no known kind: the repairs read
    # the document a second time, every element, and the items are looked for once.
    counters = [_counting(monkeypatch, repair, name) for name in _REPAIR_PATTERNS]
    work = []
    for n in (250, 500, 1000, 2000):
        item = b"<item><title>t</title><x:person><b>Jane</x:person></item>"
        body = b'<rss version="2.0"><channel>' + item * n + b"</channel></rss>"
        feed = parse_feed(body, None, URL)
        assert len(feed.items) == n
        work.append(sum(counter.calls for counter in counters))
        for counter in counters:
            counter.calls = 0
    assert _grows_linearly(work)


# 4. Plain-text RSS descriptions: every "<" is looked at once, and no scan passes the next.


@pytest.mark.parametrize(
    "piece",
    [
        "<b and c",
        "<Vec<",
        "<a:",
        "<x y ",
        "<String>",
        "<svg:x",
        "<" + "a" * 1000,
        "<b " + "a " * 500,
    ],
    ids=["words", "nested", "prefix", "open", "closed", "prefixed", "long-name", "long-rest"],
)
def test_a_description_is_told_plain_or_html_in_linear_work(
    monkeypatch: pytest.MonkeyPatch, piece: str
) -> None:
    counting = _counting(monkeypatch, parse_text, "_MARKUP_START")
    work = []
    for n in (250, 500, 1000, 2000):
        counting.calls = 0
        markup.rss_description_kind("Post: " + piece * n)
        work.append(counting.calls)
    assert _grows_linearly(work)
    # A megabyte of it, through the reader: the scans give nothing back (a guard only).
    escaped = (piece * ((1 << 20) // len(piece))).replace("<", "&lt;")
    body = f'<rss version="2.0"><channel><item><title>a</title><description>{escaped}'
    with _deadline():
        feed = parse_feed((body + "</description></item></channel></rss>").encode(), None, URL)
    assert [item.title for item in feed.items] == ["a"]


# 5. Stray end tags: balanced in one pass over the tags, and at most one more.


@pytest.mark.parametrize(
    "piece",
    [b"<x>a</p>", b"<x>", b"</p>", b"<x><y></x>", b"<a b='1>", b'<i c="></i>', b"</ p>",
     b"<a b c d", b"<item><title>t</p></title>"],
    ids=["stray-in-open", "left-open", "stray", "closes-outer", "open-quote", "open-dquote",
         "nameless", "attributes-without-end", "item"],
)  # fmt: skip
def test_end_tags_are_balanced_in_linear_work(
    monkeypatch: pytest.MonkeyPatch, piece: bytes
) -> None:
    counting = _counting(monkeypatch, endtags, "_TOKEN")
    work = []
    for n in (500, 1000, 2000, 4000):
        counting.calls = 0
        body = b'<rss version="2.0"><channel>' + piece * n + b"</channel></rss>"
        endtags.with_end_tags_balanced(body)
        work.append(counting.calls)
    assert _grows_linearly(work)
    assert work[-1] <= 2 * (4000 * piece.count(b"<") + 4) + 2


def test_many_stray_end_tags_among_many_names_are_read_whole() -> None:
    # Each stray end tag asks where the end tags of the two elements open there stand:
    # looked up in a table walked through once, never searched for.
    items = b"".join(
        b"<item><title>%d</title><x:a%d><b>t</p></b></x:a%d></p><link>http://e.com/%d</link>"
        b"</item>" % (n, n % 97, n % 97, n)
        for n in range(20_000)
    )
    body = b'<rss version="2.0"><channel><title>t</title>' + items + b"</channel></rss>"
    with _deadline():
        feed = parse_feed(body, None, URL)
    assert len(feed.items) == 10_000  # the reading limit
    assert feed.items[-1].url == "http://e.com/9999"


# 6. Elements of many unknown namespaces: whether each tag is written without a prefix.


class _CountingRoot:
    """A document root whose ``iter`` walks the elements one by one, as lxml does inside,
    and counts each element it looks at, yielded or skipped."""

    def __init__(self, root: etree._Element) -> None:
        self.root, self.visited = root, 0

    def iter(self, *tags: object) -> Iterator[etree._Element]:
        for element in self.root.iter():
            self.visited += 1
            if (
                not tags
                or element.tag in tags
                or (etree.Element in tags and isinstance(element.tag, str))
            ):
                yield element


def _items_of_default_namespaces(n: int, namespace: str, *, is_atom: bool) -> bytes:
    """n elements, ten in each item, each under a default namespace of its own."""
    item = "entry" if is_atom else "item"
    items = "".join(
        f"<{item}><id>{i}</id>"
        + "".join(f'<e{k} xmlns="{namespace}{i}-{k}">v</e{k}>' for k in range(10))
        + f"</{item}>"
        for i in range(n // 10)
    )
    if is_atom:
        return f'<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title>{items}</feed>'.encode()
    return f'<rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


@pytest.mark.parametrize(
    ("module", "namespace"),
    [(rss, "urn:x"), (rss, "urn:*x"), (atom, "urn:x"), (atom, "urn:*x")],
    ids=["rss", "rss-asterisk", "atom", "atom-asterisk"],
)
def test_tags_of_many_default_namespaces_are_told_apart_in_linear_work(
    monkeypatch: pytest.MonkeyPatch, module: object, namespace: str
) -> None:
    # Each distinct tag's first element was searched for from the root: n tags, n² work
    # (an asterisk in the namespace took a loop in Python: 12,000 such elements, 11 s).
    roots: list[_CountingRoot] = []

    def counting_tag_keys(home: frozenset[str], root: Any = None) -> names.TagKey:
        if root is not None:
            roots.append(_CountingRoot(root))
            root = roots[-1]
        return names.TagKey(home, root)

    monkeypatch.setattr(module, "tag_keys", counting_tag_keys)
    work = []
    for n in (500, 1000, 2000, 4000):
        roots.clear()
        body = _items_of_default_namespaces(n, namespace, is_atom=module is atom)
        feed = parse_feed(body, None, URL)
        assert len(feed.items) == n // 10
        work.append(sum(root.visited for root in roots))
    assert _grows_linearly(work)
    assert work[-1] <= 2 * 4000  # every element once at most (4,000 of them, and 800 more)


# 9. Long runs that look like the start of an address in angle brackets ("<x@@@@…",
# "<x:/:/…") and never reach their ">": each "<" is read to its run's end once.


@pytest.mark.parametrize(
    "run",
    [b"@", b"a@", b"://", b":/", b"@:", b"?@"],
    ids=["at", "a-at", "scheme", "colon-slash", "at-colon", "qm"],
)
def test_a_long_run_after_a_lt_is_read_in_linear_time(run: bytes) -> None:
    body = _rss_with_author(b"Jane &amp; <x" + run * 100_000)
    with _deadline(30):
        parse_feed(body, None, URL)
