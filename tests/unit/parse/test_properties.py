"""Properties: random and mutated documents raise nothing but ParseError, stay within the
bounds, and parse the same way twice."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tap_feeddelta.errors import CODES, ParseError
from tap_feeddelta.models import ParsedFeed
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.dates import rfc3339
from tap_feeddelta.parse.limits import (
    MAX_AUTHOR_NAME_BYTES,
    MAX_CONTENT_BYTES,
    MAX_ID_BYTES,
    MAX_ITEMS_READ,
    MAX_SUMMARY_BYTES,
    MAX_TITLE_BYTES,
    MAX_URL_BYTES,
)

CASES_DIR = Path(__file__).with_name("cases")
SEEDS = [p.read_bytes() for p in sorted(CASES_DIR.iterdir()) if not p.name.endswith(".json")]
SEEDS += [
    json.dumps(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "title": "t",
            "items": [{"id": "1", "url": "https://e.x/1", "content_html": "<p>x</p>"}],
        }
    ).encode()
]
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _outcome(
    body: bytes, content_type: str | None
) -> ParsedFeed | tuple[str, str, tuple[str, ...]]:
    try:
        return parse_feed(body, content_type, "https://example.org/feed")
    except ParseError as exc:
        return (exc.code, exc.message, exc.advertised_feeds)


def _check_bounds(feed: ParsedFeed) -> None:
    assert len(feed.items) <= MAX_ITEMS_READ
    for issue in feed.issues:
        assert issue.code in CODES
    for item in feed.items:
        for text, cap in (
            (item.title, MAX_TITLE_BYTES),
            (item.summary, MAX_SUMMARY_BYTES),
            (item.content_text, MAX_CONTENT_BYTES),
            (item.native_id, MAX_ID_BYTES),
        ):
            assert text is None or len(text.encode("utf-8")) <= cap
        for url in (item.url, *(e.url for e in item.enclosures), *(a.url for a in item.authors)):
            if url is not None:
                assert url.startswith(("http://", "https://"))
                assert len(url.encode("utf-8")) <= MAX_URL_BYTES
                assert "@" not in urlsplit(url).netloc  # an "@" in the query is no userinfo
        for author in item.authors:
            assert author.name is None or len(author.name.encode()) <= MAX_AUTHOR_NAME_BYTES
        for date in (item.published_at, item.updated_at):
            assert date is None or rfc3339(date) == date
        for issue in item.issues:
            assert issue.code in CODES
        for text in (item.title, item.summary, item.content_text):
            # every text is valid, serializable Unicode
            assert text is None or text.encode("utf-8")


def _check(body: bytes, content_type: str | None) -> None:
    first = _outcome(body, content_type)
    second = _outcome(body, content_type)
    assert first == second
    if isinstance(first, ParsedFeed):
        _check_bounds(first)


@SETTINGS
@given(st.binary(max_size=2000), st.sampled_from([None, "text/xml; charset=latin-1", "text/html"]))
def test_random_bytes(body: bytes, content_type: str | None) -> None:
    _check(body, content_type)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 8))):
        action = draw(st.sampled_from(["cut", "flip", "insert", "delete", "dup"]))
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        if action == "cut":
            del data[at:]
        elif action == "flip":
            data[at] = draw(st.integers(0, 255))
        elif action == "insert":
            chunk = draw(
                st.sampled_from(
                    [b"<", b"&", b"&nbsp;", b"]]>", b"<![CDATA[", b"</item>", b"<item>",
                     b"\x00", b"\xff", b"<!DOCTYPE x [<!ENTITY a 'b'>]>", b"&a;", b'"', b"{",
                     b"xml:base='javascript:x'", b"<entry>", b"</entry>", b"\xe2\x80"]
                )
            )  # fmt: skip
            data[at:at] = chunk
        elif action == "delete":
            del data[at : at + draw(st.integers(1, 20))]
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 200))]
    return bytes(data)


@SETTINGS
@given(mutated(), st.sampled_from([None, "application/rss+xml; charset=utf-8"]))
def test_mutated_documents(body: bytes, content_type: str | None) -> None:
    _check(body, content_type)


@st.composite
def generated_feed(draw: st.DrawFn) -> bytes:
    text = st.text(max_size=60)

    def esc(s: str) -> str:
        return s.replace("&", "&amp;").replace("<", "&lt;")

    items = []
    for _ in range(draw(st.integers(0, 5))):
        items.append(
            "<item><title>{}</title><link>{}</link><description>{}</description>"
            "<pubDate>{}</pubDate><guid>{}</guid></item>".format(
                *(esc(draw(text)) for _ in range(5))
            )
        )
    return (
        '<rss version="2.0"><channel><title>t</title>' + "".join(items) + "</channel></rss>"
    ).encode("utf-8", "surrogatepass")


@SETTINGS
@given(generated_feed())
def test_generated_rss(body: bytes) -> None:
    _check(body, None)


@SETTINGS
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "id",
                        "url",
                        "title",
                        "content_html",
                        "content_text",
                        "summary",
                        "authors",
                        "author",
                        "name",
                        "tags",
                        "attachments",
                        "mime_type",
                        "size_in_bytes",
                        "date_published",
                        "items",
                        "x",
                    ]
                ),
                children,
                max_size=6,
            )
        ),
        max_leaves=20,
    )
)
def test_random_json_feed_items(items: object) -> None:
    body = json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "items": items}, allow_nan=True
    ).encode()
    _check(body, None)


@SETTINGS
@given(st.text(max_size=40))
def test_dates_never_raise(raw: str) -> None:
    result = rfc3339(raw)
    assert result is None or rfc3339(result) == result
