"""Author lists written as one plain-text byline (arXiv's RSS: "Bo Li, Yifei Shen, ...")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tap_feeddelta.errors import Issue
from tap_feeddelta.parse import fields, parse_feed
from tap_feeddelta.parse.limits import MAX_AUTHORS

BYLINES = [
    ("Bo Li, Yifei Shen, Jingkang Yang", ["Bo Li", "Yifei Shen", "Jingkang Yang"]),
    ("Bo Li and Yifei Shen", ["Bo Li", "Yifei Shen"]),
    ("Bo Li, Yifei Shen and Jun Zhang", ["Bo Li", "Yifei Shen", "Jun Zhang"]),
    ("Bo Li, Yifei Shen, and Jun Zhang", ["Bo Li", "Yifei Shen", "Jun Zhang"]),
    ("B. Li, Y. Shen, J.-P. Yang", ["B. Li", "Y. Shen", "J.-P. Yang"]),
    (
        "Jan van der Berg, Ludwig van Beethoven, Martin Luther King Jr.",
        ["Jan van der Berg", "Ludwig van Beethoven", "Martin Luther King Jr."],
    ),
    ("Élodie Brûlé, Øyvind Ås, Zoë Ünal", ["Élodie Brûlé", "Øyvind Ås", "Zoë Ünal"]),
    # Two names and a comma: "Family, Given" just as well (Dublin Core's own advice).
    ("Bo Li, Yifei Shen", ["Bo Li, Yifei Shen"]),
    ("Smith, John", ["Smith, John"]),
    ("García Márquez, Gabriel José", ["García Márquez, Gabriel José"]),
    ("de la Cruz, Juan Carlos", ["de la Cruz, Juan Carlos"]),
    ("King, Martin Luther, Jr.", ["King, Martin Luther, Jr."]),
    ("Li, B., Shen, Y.", ["Li, B., Shen, Y."]),
    ("Li B., Shen Y., Yang J.", ["Li B.", "Shen Y.", "Yang J."]),  # "Family Initials"
    ("J. R., K. L., M. N.", ["J. R., K. L., M. N."]),
    ("Procter and Gamble", ["Procter and Gamble"]),
    ("Jane Doe, Staff Writer, The Daily News", ["Jane Doe, Staff Writer, The Daily News"]),
    ("Jane Doe, Senior Editor, Acme Labs", ["Jane Doe, Senior Editor, Acme Labs"]),
    (
        "Written by the team, edited by John Smith, photos by Jane Doe",
        ["Written by the team, edited by John Smith, photos by Jane Doe"],
    ),
    ("Bo Li, , Yifei Shen, Jun Zhang", ["Bo Li, , Yifei Shen, Jun Zhang"]),
    ("李博, 沈一飞, 杨静康", ["李博, 沈一飞, 杨静康"]),
    ("Jane Doe", ["Jane Doe"]),
]


@pytest.mark.parametrize(("raw", "names"), BYLINES, ids=[raw for raw, _ in BYLINES])
def test_a_plain_byline_is_split_only_when_every_part_is_a_full_name(
    raw: str, names: list[str]
) -> None:
    issues: list[Issue] = []
    assert [author.name for author in fields.rss_authors(raw, None, issues)] == names
    assert issues == []


_PARTICLES = st.sampled_from(["van", "der", "de", "la", "von", "da", "bin", "y"])
_WORDS = st.one_of(
    st.from_regex(r"[A-Z][a-z]{1,9}(-[A-Z][a-z]{1,9})?", fullmatch=True),
    st.from_regex(r"[A-Z]\.", fullmatch=True),
    st.from_regex(r"[ÀÉØÜŁ][a-zàéøüł]{1,6}", fullmatch=True),
    _PARTICLES,
)
_NAME_PART = st.lists(_WORDS, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_NAME_PART, _NAME_PART, st.sampled_from(["", ", Jr.", ", III", ", PhD"]))
def test_one_family_given_name_is_never_split(family: str, given_: str, suffix: str) -> None:
    raw = f"{family}, {given_}{suffix}"
    (author,) = fields.rss_authors(raw, None, [])
    assert author.name == raw


def test_arxiv_s_current_rss_lists_one_author_per_name_and_caps_them() -> None:
    many = ", ".join(f"Author{i} Surname{i}" for i in range(60))
    body = f"""<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
<title>cs.LG updates on arXiv.org</title>
<item><title>a</title><guid isPermaLink="false">oai:arXiv.org:2506.01234v1</guid>
<dc:creator>Bo Li, Yifei Shen, Jingkang Yang, Yezhen Wang, Jiawei Ren, Tong Che, Jun Zhang,
 Ziwei Liu</dc:creator></item>
<item><title>b</title><guid isPermaLink="false">oai:arXiv.org:2506.05555v1</guid>
<dc:creator>{many}</dc:creator></item>
<item><title>c</title><guid isPermaLink="false">oai:arXiv.org:2409.05555v3</guid>
<dc:creator>Jane Q. Public</dc:creator></item>
</channel></rss>""".encode()
    first, second, third = parse_feed(body, None, "https://rss.arxiv.org/rss/cs.LG").items
    assert [author.name for author in first.authors] == [
        "Bo Li",
        "Yifei Shen",
        "Jingkang Yang",
        "Yezhen Wang",
        "Jiawei Ren",
        "Tong Che",
        "Jun Zhang",
        "Ziwei Liu",
    ]
    assert first.issues == ()
    assert [author.name for author in second.authors] == [
        f"Author{i} Surname{i}" for i in range(MAX_AUTHORS)
    ]
    assert [issue.code for issue in second.issues] == ["limit_exceeded"]
    assert [author.name for author in third.authors] == ["Jane Q. Public"]
