"""Per-item caps on repeated fields: a record stays small whatever the document repeats."""

from __future__ import annotations

import json
import unicodedata

import pytest

from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.limits import MAX_AUTHORS, MAX_ENCLOSURES, MAX_TAGS
from tap_feeddelta.parse.text import capped

URL = "https://t.example/feed"


def _codes(issues: tuple[object, ...]) -> list[str]:
    return [issue.code for issue in issues]  # type: ignore[attr-defined]


def test_feed_authors_are_capped_once_and_items_inherit_the_capped_list() -> None:
    people = [{"name": f"author {n}"} for n in range(MAX_AUTHORS + 5)]
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "authors": people,
        "items": [{"id": "1"}, {"id": "2", "authors": people}],
    }
    feed = parse_feed(json.dumps(document).encode(), None, URL)
    inherited, own = feed.items
    names = [f"author {n}" for n in range(MAX_AUTHORS)]
    assert [a.name for a in inherited.authors] == [a.name for a in own.authors] == names
    assert _codes(feed.issues) == ["limit_exceeded"]
    assert _codes(inherited.issues) == []
    assert _codes(own.issues) == ["limit_exceeded"]


def test_atom_and_rss_authors_are_capped() -> None:
    people = "".join(f"<author><name>a{n}</name></author>" for n in range(MAX_AUTHORS + 1))
    atom = f"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>{people}
<entry><id>urn:1</id><title>x</title></entry>
<entry><id>urn:2</id><title>y</title>{people}</entry>
<entry><id>urn:3</id><title>z</title><source>{people}</source></entry></feed>""".encode()
    feed = parse_feed(atom, None, URL)
    assert _codes(feed.issues) == ["limit_exceeded"]
    assert [len(item.authors) for item in feed.items] == [MAX_AUTHORS] * 3
    assert [_codes(item.issues) for item in feed.items] == [
        [],  # the feed's authors, already capped (reported on the feed)
        ["limit_exceeded"],
        ["limit_exceeded"],
    ]
    creators = "".join(f"<dc:creator>c{n}</dc:creator>" for n in range(MAX_AUTHORS + 1))
    rss = f"""<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
<title>t</title><item><title>x</title>{creators}</item></channel></rss>""".encode()
    (item,) = parse_feed(rss, None, URL).items
    assert len(item.authors) == MAX_AUTHORS and _codes(item.issues) == ["limit_exceeded"]


def test_tags_are_cut_to_256_bytes_and_capped_in_number() -> None:
    long_tag = "é" * 200  # 400 bytes: cut at a character boundary
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "items": [
            {"id": "1", "tags": [long_tag, "short"]},
            {"id": "2", "tags": [f"t{n}" for n in range(MAX_TAGS + 1)] + ["t0"] * 50},
            {"id": "3", "tags": ["t0"] * 200},  # repeats count once
        ],
    }
    cut, many, repeated = parse_feed(json.dumps(document).encode(), None, URL).items
    assert cut.tags == ("é" * 128, "short") and _codes(cut.issues) == ["limit_exceeded"]
    assert many.tags == tuple(f"t{n}" for n in range(MAX_TAGS))
    assert _codes(many.issues) == ["limit_exceeded"]
    assert repeated.tags == ("t0",) and _codes(repeated.issues) == []


def test_a_tag_with_a_reference_to_no_character_is_still_capped() -> None:
    rss = f"""<rss version="2.0"><channel><title>t</title>
<item><title>x</title><category>{"x" * 300}&amp;#0;</category></item></channel></rss>"""
    (item,) = parse_feed(rss.encode(), None, URL).items
    assert item.tags == ("x" * 256,)
    assert sorted(_codes(item.issues)) == ["encoding_replaced", "limit_exceeded"]


def test_rss_and_atom_tags_are_capped() -> None:
    categories = "".join(f"<category>c{n}</category>" for n in range(MAX_TAGS + 1))
    rss = f"""<rss version="2.0"><channel><title>t</title>
<item><title>x</title>{categories}</item>
<item><title>y</title><category>{"x" * 300}</category></item></channel></rss>""".encode()
    many, cut = parse_feed(rss, None, URL).items
    assert len(many.tags) == MAX_TAGS and _codes(many.issues) == ["limit_exceeded"]
    assert cut.tags == ("x" * 256,) and _codes(cut.issues) == ["limit_exceeded"]
    terms = "".join(f'<category term="c{n}"/>' for n in range(MAX_TAGS + 1))
    atom = f"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<entry><id>urn:1</id><title>x</title>{terms}</entry></feed>""".encode()
    (entry,) = parse_feed(atom, None, URL).items
    assert len(entry.tags) == MAX_TAGS and _codes(entry.issues) == ["limit_exceeded"]


def test_a_json_feed_size_out_of_range_is_reported_as_rss_length_is() -> None:
    sizes = [1e20, -5, 2**63, 0, 1500, 1.5e3]
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "items": [
            {"id": str(n), "attachments": [{"url": "https://t.example/a.mp3", "size_in_bytes": s}]}
            for n, s in enumerate(sizes)
        ],
    }
    items = parse_feed(json.dumps(document).encode(), None, URL).items
    assert [item.enclosures[0].length_bytes for item in items] == [None] * 4 + [1500, 1500]
    # 0 means "unknown" (as RSS length="0"): no issue, as in RSS.
    assert [_codes(item.issues) for item in items] == [["invalid_value"]] * 3 + [[]] * 3


def test_an_item_reports_each_distinct_issue_once() -> None:
    # Each long tag and each long name is cut: the item says so once, not once per value.
    many = "".join(f"<category>{n}{'x' * 300}</category>" for n in range(200))
    many += "".join(f"<author>{n}{'y' * 300}</author>" for n in range(200))
    rss = f"""<rss version="2.0"><channel><title>t</title>
<item><title>x</title>{many}</item></channel></rss>""".encode()
    (item,) = parse_feed(rss, None, URL).items
    assert sorted(issue.message for issue in item.issues) == [
        "A tag was cut to 256 bytes.",
        "An author's name was cut to 256 bytes.",
        "Only the first 16 authors are kept.",
        "Only the first 64 tags are kept.",
    ]


# str.isdigit() is True for "²", "①" and other digits that int() refuses (ValueError, the
# run died), and int() reads other scripts' decimal digits ("١٢٣" is 123): a length is
# ASCII digits only.
_NOT_ASCII_LENGTHS = [
    "\u00b2", "\u2460", "12\u00b3", "\u0661\u0662\u0663", "\uff11\uff12", "\u09e7",
]  # fmt: skip


def test_an_enclosure_length_of_other_digits_than_ascii_is_no_byte_count() -> None:
    enclosures = "".join(
        f'<item><guid>{n}</guid><enclosure url="https://t.example/{n}.mp3" length="{length}"'
        ' type="audio/mpeg"/></item>'
        for n, length in enumerate([*_NOT_ASCII_LENGTHS, "123"])
    )
    rss = f'<rss version="2.0"><channel><title>t</title>{enclosures}</channel></rss>'
    items = parse_feed(rss.encode(), None, URL).items
    assert [item.enclosures[0].length_bytes for item in items] == [None] * 6 + [123]
    assert [_codes(item.issues) for item in items] == [["invalid_value"]] * 6 + [[]]
    links = "".join(
        f'<entry><id>urn:{n}</id><title>x</title><link rel="enclosure"'
        f' href="https://t.example/{n}.mp3" length="{length}"/></entry>'
        for n, length in enumerate(_NOT_ASCII_LENGTHS)
    )
    atom = f'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>{links}</feed>'
    entries = parse_feed(atom.encode(), None, URL).items
    assert [entry.enclosures[0].length_bytes for entry in entries] == [None] * 6
    assert [_codes(entry.issues) for entry in entries] == [["invalid_value"]] * 6
    media = (
        '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t'
        '</title><item><guid>m</guid><media:content url="https://t.example/v.mp4"'
        ' fileSize="\u00b2"/></item></channel></rss>'
    )
    (item,) = parse_feed(media.encode(), None, URL).items
    assert item.enclosures[0].length_bytes is None and _codes(item.issues) == ["invalid_value"]


def _urls(item: object) -> list[str]:
    return [enclosure.url for enclosure in item.enclosures]  # type: ignore[attr-defined]


_KEPT = [f"https://t.example/{n}.mp3" for n in range(MAX_ENCLOSURES)]


def test_rss_enclosures_and_media_contents_are_capped() -> None:
    many = "".join(f'<enclosure url="https://t.example/{n}.mp3"/>' for n in range(40_000))
    contents = "".join(
        f'<media:content url="https://t.example/{n}.mp3"/>' for n in range(MAX_ENCLOSURES + 5)
    )
    rss = f"""<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>
<title>t</title><item><guid>1</guid>{many}</item>
<item><guid>2</guid>{contents}</item>
<item><guid>3</guid><media:group>{contents}</media:group></item>
<item><guid>4</guid>{many[: many.index("/0.mp3") + 9] * 3}</item></channel></rss>"""
    many_items, media, group, few = parse_feed(rss.encode(), None, URL).items
    for item in (many_items, media, group):
        assert _urls(item) == _KEPT and _codes(item.issues) == ["limit_exceeded"]
    assert len(few.enclosures) == 3 and _codes(few.issues) == []


def test_feedburner_original_enclosures_stay_with_theirs_under_the_cap() -> None:
    pairs = "".join(
        f'<enclosure url="https://feeds.example/{n}.mp3"/>'
        f"<feedburner:origEnclosureLink>https://t.example/{n}.mp3</feedburner:origEnclosureLink>"
        for n in range(MAX_ENCLOSURES + 5)
    )
    rss = f"""<rss version="2.0" xmlns:feedburner="http://rssnamespace.org/feedburner/ext/1.0">
<channel><title>t</title><item><guid>1</guid>{pairs}</item></channel></rss>"""
    (item,) = parse_feed(rss.encode(), None, URL).items
    assert _urls(item) == _KEPT and _codes(item.issues) == ["limit_exceeded"]


def test_atom_enclosures_media_contents_and_json_attachments_are_capped() -> None:
    links = "".join(
        f'<link rel="enclosure" href="https://t.example/{n}.mp3"/>'
        for n in range(MAX_ENCLOSURES + 5)
    )
    atom = f"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<entry><id>urn:1</id><title>x</title>{links}</entry></feed>"""
    (entry,) = parse_feed(atom.encode(), None, URL).items
    assert _urls(entry) == _KEPT and _codes(entry.issues) == ["limit_exceeded"]
    contents = "".join(
        f'<media:content url="https://t.example/{n}.mp3"/>' for n in range(MAX_ENCLOSURES + 5)
    )
    atom = f"""<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
<title>t</title><entry><id>urn:1</id><title>x</title>{contents}</entry>
<entry><id>urn:2</id><title>x</title><media:group>{contents}</media:group></entry></feed>"""
    for entry in parse_feed(atom.encode(), None, URL).items:
        assert _urls(entry) == _KEPT and _codes(entry.issues) == ["limit_exceeded"]
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "items": [
            {
                "id": "1",
                "attachments": [
                    {"url": f"https://t.example/{n}.mp3"} for n in range(MAX_ENCLOSURES + 5)
                ],
            }
        ],
    }
    (item,) = parse_feed(json.dumps(document).encode(), None, URL).items
    assert _urls(item) == _KEPT and _codes(item.issues) == ["limit_exceeded"]


@pytest.mark.parametrize(
    ("tail", "pad"),
    [
        ("\U0001f468\u200d\U0001f469\u200d\U0001f467", 1010),  # a family: emoji and joiners
        ("\U0001f1ef\U0001f1f5", 1020),  # a flag: two regional indicators
        ("\u0915\u094d\u0937", 1018),  # a conjunct: consonant, virama, consonant
        ("e\u0323\u0302", 1020),  # a letter and two combining marks (NFD)
        (unicodedata.normalize("NFD", "\ud55c"), 1018),  # a Hangul syllable as jamo
        ("1\ufe0f\u20e3", 1020),  # a keycap
        ("\U0001f44b\U0001f3fd", 1018),  # a waving hand and its skin tone
    ],
)
def test_a_cap_never_splits_what_a_reader_sees_as_one_character(tail: str, pad: int) -> None:
    title = "a" * pad + tail
    for cut in range(pad, len(title.encode())):
        text, was_cut = capped(title, cut)
        assert was_cut
        assert text == "a" * pad, (cut, ascii(text[-3:]))
    assert capped(title, len(title.encode())) == (title, False)


def test_a_cap_cuts_a_long_run_of_stacked_marks_at_the_byte_bound() -> None:
    zalgo = "a" + "\u0301" * 5000
    text, was_cut = capped(zalgo, 1024)
    assert was_cut and len(text.encode()) <= 1024 and len(text) > 400


def test_flags_in_a_row_are_cut_between_two_flags() -> None:
    flags = "\U0001f1ef\U0001f1f5" * 3  # 24 bytes
    for cut in range(4, 24):
        text, _ = capped(flags, cut)
        assert len(text) % 2 == 0 and text == flags[: len(text)]


def test_an_excerpt_without_a_space_near_its_end_splits_no_character() -> None:
    from tap_feeddelta.records import EXCERPT_CHARS, excerpt

    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    text = "\u3042" * (EXCERPT_CHARS - 2) + family + "x" * 20
    assert excerpt(text) == "\u3042" * (EXCERPT_CHARS - 2) + "…"
