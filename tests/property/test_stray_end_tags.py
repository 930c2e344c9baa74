"""Hypothesis: a stray end tag between the elements of a valid document never loses an item
silently: every item is read, or the feed says it was read in part."""

from __future__ import annotations

from xml.sax.saxutils import escape

from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.errors import ParseError
from tap_feeddelta.parse import parse_feed

URL = "https://example.org/feed.xml"
text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=20)
names = st.sampled_from(
    ["p", "div", "b", "x:y", "item", "entry", "title", "summary", "link", "description",
     "channel", "rss", "feed", "rdf:RDF", "rdf:Seq", "pubDate", "updated", "a.b-c"]
) | st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_.-]{0,8}\Z")  # fmt: skip


def _rss(titles: list[str]) -> bytes:
    items = "".join(
        f"<item><guid>urn:i:{n}</guid><title>{escape(title)}</title>"
        f"<link>https://example.org/{n}</link><description>{escape(title)}</description>"
        f"<pubDate>Mon, 01 Jan 2024 00:00:0{n % 10} GMT</pubDate></item>"
        for n, title in enumerate(titles)
    )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<link>https://example.org/</link>{items}</channel></rss>"
    ).encode()


def _atom(titles: list[str]) -> bytes:
    entries = "".join(
        f"<entry><id>urn:e:{n}</id><title type='text'>{escape(title)}</title>"
        f"<link href='https://example.org/{n}'/><summary type='html'>{escape(title)}</summary>"
        f"<updated>2024-01-01T00:00:0{n % 10}Z</updated></entry>"
        for n, title in enumerate(titles)
    )
    return (
        "<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><title>t</title>"
        f"<id>urn:f</id>{entries}</feed>"
    ).encode()


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([_rss, _atom]),
    st.lists(text, min_size=2, max_size=8),
    st.lists(st.tuples(st.integers(0, 10_000), names, st.sampled_from(["", " ", "\n"])),
             min_size=1, max_size=3),
)  # fmt: skip
def test_a_stray_end_tag_between_elements_never_loses_an_item_silently(
    document: object, titles: list[str], strays: list[tuple[int, str, str]]
) -> None:
    data = document(titles)  # type: ignore[operator]
    between = [at for at in range(1, len(data)) if data[at - 1 : at + 1] == b"><"]
    for position, name, space in strays:
        at = between[position % len(between)]
        data = data[:at] + f"</{name}{space}>".encode() + data[at:]
        between = [at for at in range(1, len(data)) if data[at - 1 : at + 1] == b"><"]
    try:
        feed = parse_feed(data, None, URL)
    except ParseError as exc:
        assert exc.code == "invalid_feed"  # an error is no silent loss
        return
    codes = {issue.code for issue in feed.issues}
    if feed.is_truncated:
        assert "document_truncated" in codes
        return
    assert "document_truncated" not in codes
    # Every item is read; one a stray end tag of its own name ends early keeps its element
    # but not what follows the tag (its id, its link), as it would in any reader.
    assert len(feed.items) == len(titles)
    ids = [item.native_id for item in feed.items if item.native_id_source in ("guid", "atom_id")]
    assert len(set(ids)) == len(ids)
    assert set(ids) <= {f"urn:{kind}:{n}" for kind in "ie" for n in range(len(titles))}
