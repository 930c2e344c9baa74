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
    # "&" joins the last two names as "and" does (podcast co-hosts in itunes:author), and
    # a company written with it stays one name, as with "and": its parts are one word.
    ("Jane Doe & John Smith", ["Jane Doe", "John Smith"]),
    ("Jane Doe, John Smith & Bob Lee", ["Jane Doe", "John Smith", "Bob Lee"]),
    ("Jane Doe, John Smith, & Bob Lee", ["Jane Doe", "John Smith", "Bob Lee"]),
    ("Simon & Schuster", ["Simon & Schuster"]),
    ("Johnson & Johnson", ["Johnson & Johnson"]),
    ("Simon & Schuster Audio", ["Simon & Schuster Audio"]),
    ("Jane Doe & Associates Consulting", ["Jane Doe & Associates Consulting"]),
    ("Jane Doe, Smith & Wesson", ["Jane Doe, Smith & Wesson"]),
    ("Jane Doe, Staff Writer, The Daily News", ["Jane Doe, Staff Writer, The Daily News"]),
    ("Jane Doe, Senior Editor, Acme Labs", ["Jane Doe, Senior Editor, Acme Labs"]),
    # One person with a job title and an employer: guest posts, press releases, think tanks.
    (
        "Jane Doe, Chief Executive Officer, Acme Corp",
        ["Jane Doe, Chief Executive Officer, Acme Corp"],
    ),
    (
        "Maria Garcia, Associate Professor, Stanford Law School",
        ["Maria Garcia, Associate Professor, Stanford Law School"],
    ),
    (
        "John Smith, Senior Fellow, Brookings Institution",
        ["John Smith, Senior Fellow, Brookings Institution"],
    ),
    ("Jane Doe, Head of Research, Acme Analytics", ["Jane Doe, Head of Research, Acme Analytics"]),
    ("Jane Doe and Associates Consulting", ["Jane Doe and Associates Consulting"]),
    ("Jane Doe, Smith & Wesson, Acme Arms", ["Jane Doe, Smith & Wesson, Acme Arms"]),
    (
        "Ahmed al-Sayed, Jean d'Alembert, Ana de la Cruz",
        ["Ahmed al-Sayed", "Jean d'Alembert", "Ana de la Cruz"],
    ),
    (
        "Written by the team, edited by John Smith, photos by Jane Doe",
        ["Written by the team, edited by John Smith, photos by Jane Doe"],
    ),
    ("Bo Li, , Yifei Shen, Jun Zhang", ["Bo Li, , Yifei Shen, Jun Zhang"]),
    ("李博, 沈一飞, 杨静康", ["李博, 沈一飞, 杨静康"]),
    ("Jane Doe", ["Jane Doe"]),
    # Semicolons separate names, each also written "Family, Given" (library catalogues).
    ("Smith, John; Doe, Jane", ["Smith, John", "Doe, Jane"]),
    ("Li, B.; Shen, Yifei; Jun Zhang;", ["Li, B.", "Shen, Yifei", "Jun Zhang"]),
    ("Jane Doe; Editor", ["Jane Doe; Editor"]),  # no name after the semicolon
    ("Smith, John; Acme Corp", ["Smith, John; Acme Corp"]),
    ("John Smith, Jane Doe; Bob Roe", ["John Smith, Jane Doe; Bob Roe"]),  # which is which?
    ("By John Smith; Photos: Jane Doe", ["By John Smith; Photos: Jane Doe"]),  # credits
    ("By John Smith and Jane Doe", ["By John Smith and Jane Doe"]),
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


_GIVEN = st.sampled_from(["Bo", "Yifei", "Maria", "John", "Élodie", "Ahmed", "Jun", "A.", "Q."])
_FAMILY = st.sampled_from(["Li", "Shen", "Garcia", "Smith", "van der Berg", "Ås", "al-Sayed"])
# A full name as arXiv lists them: one or two given names or initials, then the family name.
_PEOPLE = st.tuples(st.lists(_GIVEN, min_size=1, max_size=2), _FAMILY).map(
    lambda name: " ".join([*name[0], name[1]])
)
_ROLES = st.tuples(
    st.sampled_from(["", "Senior ", "Chief ", "Associate ", "Managing ", "Deputy ", "Vice "]),
    st.sampled_from(
        [
            "Executive Officer",
            "Professor",
            "Fellow",
            "Director",
            "Manager",
            "Editor",
            "President",
            "Founder",
            "Correspondent",
            "Staff Writer",
            "Contributor",
            "Research Scientist",
            "Policy Analyst",
        ]
    ),
).map("".join)
_ORGS = st.tuples(
    st.sampled_from(["Acme", "Stanford Law", "Brookings", "Daily", "The Washington", "Open"]),
    st.sampled_from(
        [
            " Corp",
            " Inc.",
            " Ltd",
            " Company",
            " Group",
            " Institute",
            " Institution",
            " University",
            " School",
            " Foundation",
            " Center",
            " Council",
            " News",
            " Media",
            " Press",
            " Times",
            " Post",
            " Journal",
        ]
    ),
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_PEOPLE, _ROLES, _ORGS, st.sampled_from([", ", " and ", " & "]))
def test_a_name_with_a_role_and_an_organisation_is_never_split(
    person: str, role: str, org: str, last_joint: str
) -> None:
    for raw in (f"{person}, {role}, {org}", f"{person}, {role}{last_joint}{org}"):
        (author,) = fields.rss_authors(raw, None, [])
        assert author.name == raw
    for raw in (f"{person} and {org}", f"{person} & {org}"):
        (author,) = fields.rss_authors(raw, None, [])
        assert author.name == raw


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PEOPLE, min_size=3, max_size=12),
    st.sampled_from([", ", " and ", ", and ", " & ", ", & "]),
)
def test_an_arxiv_style_list_of_full_names_is_split(names: list[str], last_joint: str) -> None:
    raw = ", ".join(names[:-1]) + last_joint + names[-1]
    assert [author.name for author in fields.rss_authors(raw, None, [])] == names


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
