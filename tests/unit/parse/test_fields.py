"""Dates, URLs and text: the normalizers every field goes through."""

from __future__ import annotations

import pytest

from tap_feeddelta.parse import markup, text
from tap_feeddelta.parse.dates import rfc3339
from tap_feeddelta.parse.text import capped, html_text, plain_text
from tap_feeddelta.parse.urls import safe_url, unwrapped_url

DATES = [
    ("Thu, 01 Jan 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
    ("01 Jan 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
    ("Thu,01 Jan 2004 19:48:21 +0000", "2004-01-01T19:48:21Z"),
    ("Thu, 1 Jan 2004 19:48 UT", "2004-01-01T19:48:00Z"),
    ("Thu, 01 Jan 04 19:48:21 Z", "2004-01-01T19:48:21Z"),
    # Two-digit years as RFC 5322 (4.3) reads them: 00-49 are 20xx, 50-99 are 19xx.
    ("Fri, 01 Jan 49 19:48:21 GMT", "2049-01-01T19:48:21Z"),
    ("Sun, 01 Jan 50 19:48:21 GMT", "1950-01-01T19:48:21Z"),
    ("Thu, 03 Mar 55 10:00:00 GMT", "1955-03-03T10:00:00Z"),
    ("Mon, 03 Mar 69 10:00:00 GMT", "1969-03-03T10:00:00Z"),
    ("01 Jan 00 00:00:00 GMT", "2000-01-01T00:00:00Z"),
    ("31 Dec 99 00:00:00 GMT", "1999-12-31T00:00:00Z"),
    ("Thu, 01 Jan 2004 19:48:21 EST", "2004-01-02T00:48:21Z"),
    ("Thu, 01 Jan 2004 19:48:21 EDT", "2004-01-01T23:48:21Z"),
    ("Thu, 01 Jan 2004 19:48:21 CST", "2004-01-02T01:48:21Z"),
    ("Thu, 01 Jan 2004 19:48:21 MDT", "2004-01-02T01:48:21Z"),
    ("Thu, 01 Jan 2004 19:48:21 PST", "2004-01-02T03:48:21Z"),
    ("Thu, 01 January 2004 19:48:21 -05:00", "2004-01-02T00:48:21Z"),
    ("Mon, 26 Jan 2004 16:31:00 +0000 (UTC)", "2004-01-26T16:31:00Z"),
    ("Thu, 01 Jan 2004 19:48:21 GMT+2", "2004-01-01T17:48:21Z"),
    ("Mon, 15 Jan 2024 10:30:00 +0000 GMT", "2024-01-15T10:30:00Z"),  # offset, then its name
    ("Mon, 15 Jan 2024 10:30:00 -0500 EST", "2024-01-15T15:30:00Z"),
    ("Mon, 15 Jan 2024 10:30:00 +01:00 CET", "2024-01-15T09:30:00Z"),
    ("Mon, 15 Jan 2024 10:30:00 -0800 PST", "2024-01-15T18:30:00Z"),
    ("Mon, 15 Jan 2024 10:30:00 +0000 UTC", "2024-01-15T10:30:00Z"),
    ("Mon, 15 Jan 2024 10:30:00 +0000 UT", "2024-01-15T10:30:00Z"),
    ("Mon, 15 Jan 2024 10:30:00 +0100 ABC", "2024-01-15T09:30:00Z"),  # a name not known
    ("Sun Jan  4 16:29:06 -0500 EST 2004", "2004-01-04T21:29:06Z"),
    ("January 15, 2024 10:30 +0200 EET", "2024-01-15T08:30:00Z"),
    ("2004-01-01T19:48:21Z", "2004-01-01T19:48:21Z"),
    ("2004-01-01T19:48:21.123456Z", "2004-01-01T19:48:21Z"),
    ("2004-01-01T19:48:21+01:00", "2004-01-01T18:48:21Z"),
    ("2004-01-01T19:48:21-0800", "2004-01-02T03:48:21Z"),
    ("2004-01-01T19:48Z", "2004-01-01T19:48:00Z"),
    ("2004-01-01 19:48:21", "2004-01-01T19:48:21Z"),
    ("2004-01-01", "2004-01-01T00:00:00Z"),
    ("2004-01", "2004-01-01T00:00:00Z"),
    ("2004", "2004-01-01T00:00:00Z"),
    ("20040101T194821Z", "2004-01-01T19:48:21Z"),
    ("Sun Jan  4 16:29:06 2004", "2004-01-04T16:29:06Z"),
    ("January 4, 2004 4:29 PM", "2004-01-04T16:29:00Z"),
    # 12 o'clock on a 12-hour clock: 12 PM is noon, 12 AM midnight (not 24:xx and 12:xx).
    ("January 4, 2004 12:30 PM", "2004-01-04T12:30:00Z"),
    ("January 4, 2004 12:30 AM", "2004-01-04T00:30:00Z"),
    ("Sun, 04 Jan 2004 12:05 pm GMT", "2004-01-04T12:05:00Z"),
    ("2004-12-31T23:59:60Z", "2004-12-31T23:59:59Z"),
    ("2004-12-31T24:00:00Z", "2005-01-01T00:00:00Z"),
    ("2004-02-29T00:00:00Z", "2004-02-29T00:00:00Z"),
    # Minutes and seconds without zero padding (hand-rolled generators).
    ("Tue, 1 Dec 2026 9:5:3 EST", "2026-12-01T14:05:03Z"),
    ("Tue, 01 Dec 2026 09:05:3 EST", "2026-12-01T14:05:03Z"),
    ("Mon, 30 Nov 2026 10:0:00 GMT", "2026-11-30T10:00:00Z"),
    ("Nov 30, 2026 9:5 PM", "2026-11-30T21:05:00Z"),
    ("Mon Nov 30 9:5:3 2026", "2026-11-30T09:05:03Z"),
    # Year first with slashes (Chinese and Japanese CMSs): unambiguous; no zone is UTC.
    ("2024/03/04 12:00:00", "2024-03-04T12:00:00Z"),
    ("2024/3/4 12:00", "2024-03-04T12:00:00Z"),
    ("2024/03/04 12:00:00 +0800", "2024-03-04T04:00:00Z"),
    ("2024/03/04 12:00:00+08:00", "2024-03-04T04:00:00Z"),
    ("2024/03/04 9:05:03 GMT", "2024-03-04T09:05:03Z"),
    ("2024/03/04T12:00:00Z", "2024-03-04T12:00:00Z"),
    ("2024/03/04 12:00:00.250", "2024-03-04T12:00:00Z"),
    ("2024/03/04", "2024-03-04T00:00:00Z"),
    ("2024/03/01 02:00:00 +0800", "2024-02-29T18:00:00Z"),
]
# Dates a CMS formatted with the site's locale: month and weekday names in German,
# French, Spanish, Italian, Dutch and Portuguese, with or without a dot.
LOCALIZED_DATES = [
    ("Mi, 02 Dez 2026 10:00:00 +0100", "2026-12-02T09:00:00Z"),
    ("Mo, 04 Mai 2026 10:00:00 +0200", "2026-05-04T08:00:00Z"),
    ("Mon, 04 Mai 2026 10:00:00 +0200", "2026-05-04T08:00:00Z"),  # the fast path's shape
    ("Di, 03 Mär 2026 10:00:00 +0100", "2026-03-03T09:00:00Z"),
    ("Do, 01 Okt 2026 10:00:00 MESZ", "2026-10-01T08:00:00Z"),
    ("Fr, 04 Dezember 2026 10:00:00 MEZ", "2026-12-04T09:00:00Z"),
    ("mar., 01 déc. 2026 10:00:00 +0100", "2026-12-01T09:00:00Z"),
    ("lun., 02 févr. 2026 10:00:00 +0100", "2026-02-02T09:00:00Z"),
    ("sam., 01 août 2026 10:00:00 +0200", "2026-08-01T08:00:00Z"),
    ("mer., 01 juil. 2026 10:00:00 +0200", "2026-07-01T08:00:00Z"),
    ("jeu., 01 janvier 2026 10:00:00 +0100", "2026-01-01T09:00:00Z"),
    ("jue, 03 dic 2026 10:00:00 +0100", "2026-12-03T09:00:00Z"),
    ("sáb, 05 ene 2026 10:00:00 +0100", "2026-01-05T09:00:00Z"),
    ("mié, 16 septiembre 2026 10:00:00 +0200", "2026-09-16T08:00:00Z"),
    ("gio, 10 set 2026 10:00:00 +0200", "2026-09-10T08:00:00Z"),
    ("ven, 09 ott 2026 10:00:00 +0200", "2026-10-09T08:00:00Z"),
    ("mer, 10 giu 2026 10:00:00 +0200", "2026-06-10T08:00:00Z"),
    ("wo, 04 mrt 2026 10:00:00 +0100", "2026-03-04T09:00:00Z"),
    ("vr, 15 mei 2026 10:00:00 +0200", "2026-05-15T08:00:00Z"),
    ("qui, 01 out 2026 10:00:00 -0300", "2026-10-01T13:00:00Z"),
    ("terça-feira, 01 dez 2026 10:00:00 -0300", "2026-12-01T13:00:00Z"),
    ("sáb, 07 fev 2026 10:00:00 -0300", "2026-02-07T13:00:00Z"),
    ("02 março 2026", "2026-03-02T00:00:00Z"),
    # The day with a dot (German), "de" around the month (Spanish, Portuguese).
    ("Mi, 03. Mär 2021 10:00:00 +0100", "2021-03-03T09:00:00Z"),
    ("Mittwoch, 3. März 2021 10:00 MEZ", "2021-03-03T09:00:00Z"),
    ("mié, 03 de marzo de 2021 10:00:00 +0100", "2021-03-03T09:00:00Z"),
    ("3 de março de 2021", "2021-03-03T00:00:00Z"),
    ("03 De Marzo De 2021 10:00:00 +0100", "2021-03-03T09:00:00Z"),
]
BAD_DATES = [
    "",
    "   ",
    "2004-02-31",
    "Tue, 31 Feb 2004 10:00:00 GMT",
    "2003-02-29T00:00:00Z",
    "2100-02-29T00:00:00Z",  # a century is a leap year only when 400 divides it
    "1900-02-29T10:00:00Z",
    "2004-13-01",
    "2004-01-01T25:00:00Z",
    "Thu, 01 Jan 2004 19:48:21 XYZ",
    "yesterday",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:00:00-05:00",
    "1" * 500,
    # Slash dates: impossible ones, and day- or month-first ones (which is which is unknown).
    "2024/02/30 12:00:00",
    "2023/2/29",
    "2024/13/01 12:00",
    "2024/03/04 24:30:00",
    "2024/03/04 12:00:00 +1500",
    "2024/03/04 12:00:00 CST",  # China's or the US's: no guess
    "04/03/2024",
    "03/04/2024 12:00",
    "24/03/04 12:00",
    "2024/03",
    # "de" belongs around a month, a dot after a day: nothing else is skipped.
    "03 da marzo da 2021",
    "03 de de marzo 2021",
    "03.. Mär 2021",
    "03 Mär. de 2021 de",
]
# Zero values that generators print for "no date": PHP's rendering of MySQL's zero date,
# Go's and .NET's zero time. No feed item is dated in the first century.
PLACEHOLDER_DATES = [
    "Wed, 30 Nov -0001 00:00:00 +0000",
    "30 Nov -0001",
    "Mon, 01 Jan 0001 00:00:00 +0000",
    "Mon, 01 Jan 0001 00:00:00 GMT",
    "0001-01-01T00:00:00Z",
    "0001-01-01T00:00:00+00:00",
    "0001-01-01",
    "Sat, 01 Jan 0000 00:00:00 +0000",
    "0099-12-31T23:59:59Z",
]


@pytest.mark.parametrize(("raw", "expected"), DATES)
def test_dates(raw: str, expected: str) -> None:
    assert rfc3339(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), LOCALIZED_DATES)
def test_localized_dates(raw: str, expected: str) -> None:
    assert rfc3339(raw) == expected


@pytest.mark.parametrize("raw", BAD_DATES)
def test_impossible_or_unreadable_dates_are_none(raw: str) -> None:
    assert rfc3339(raw) is None


@pytest.mark.parametrize("raw", PLACEHOLDER_DATES)
def test_placeholder_dates_are_none(raw: str) -> None:
    assert rfc3339(raw) is None


# Digits are ASCII: "²" is a digit to str.isdigit() but not to int() (a month "²²²"
# raised ValueError), and int() reads other scripts' digits (no feed writes a date so).
NOT_ASCII_DIGIT_DATES = [
    "1 \u00b2\u00b2\u00b2 2020",
    "Sun, 1 \u00b2\u00b2\u00b2 2020 10:00:00 GMT",
    "5 \u2460\u2461\u2462 2020",
    "\u0662\u0660\u0662\u0660-\u0660\u0661-\u0660\u0665T12:00:00Z",
    "2020-01-05T12:00:00+\u0660\u0665:\u0660\u0660",
    "2020-01-05 12:00 +\u0660\u0665",
    "Sun, 05 Jan 2020 12:00:00 +\u0660\u0665\u0660\u0660",
    "Sun, 05 Jan \u0662\u0660\u0662\u0660 12:00:00 GMT",
    "2020/\u0661/\u0665",
    "Jan \u0665, 2020",
    "2020-01-05T\uff11\uff12:00:00Z",
]


# Offsets past ±14:59 name no zone, in the fast RFC 3339 shape as in every other.
OUT_OF_RANGE_OFFSETS = [
    "2020-01-05T12:00:00+05:99",
    "2020-01-05T12:00:00+99:99",
    "2020-01-05T12:00:00+15:00",
    "2020-01-05T12:00:00-15:00",
    "2020-01-31T12:00:00+05:60",
    "2020-01-05T12:00:00.5+15:00",
    "2020-01-05T12:00+15:00",
    "2020-01-05T12:00:00.5+05:99",
    "Sun, 05 Jan 2020 12:00:00 +1500",
]


@pytest.mark.parametrize("raw", OUT_OF_RANGE_OFFSETS)
def test_offsets_out_of_range_are_no_date(raw: str) -> None:
    assert rfc3339(raw) is None


@pytest.mark.parametrize("raw", NOT_ASCII_DIGIT_DATES)
def test_dates_are_read_in_ascii_digits_only(raw: str) -> None:
    assert rfc3339(raw) is None


# An offset followed by a known zone name that means another offset: which one the
# publisher meant is unknown, so no date (never a guess).
CONTRADICTING_ZONES = [
    "Wed, 03 Mar 2021 10:00:00 +0100 PST",
    "Wed, 03 Mar 2021 10:00:00 -0800 GMT",
    "Wed, 03 Mar 2021 10:00:00 +0000 CET",
    "Wed, 03 Mar 2021 10:00:00 +01:00 UTC",
    "March 3, 2021 10:00 +0200 CET",
    "Wed Mar  3 10:00:00 +0100 GMT 2021",
]


@pytest.mark.parametrize("raw", CONTRADICTING_ZONES)
def test_an_offset_and_a_zone_name_that_disagree_are_no_date(raw: str) -> None:
    assert rfc3339(raw) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Java's "Z z" and date(1) on a server in Asia/Shanghai: CST is China's there.
        ("Sun, 04 Aug 2024 12:00:00 +0800 CST", "2024-08-04T04:00:00Z"),
        ("Sun, 04 Aug 2024 12:00:00 -0500 CST", "2024-08-04T17:00:00Z"),  # Cuba
        ("Sun, 04 Aug 2024 12:00:00 +1000 EST", "2024-08-04T02:00:00Z"),  # Australia, once
        ("Sun, 04 Aug 2024 12:00:00 +0800 MST", "2024-08-04T04:00:00Z"),  # Malaysia
        ("Sat, 03 Jul 2021 10:00:00 -0400 EST", "2021-07-03T14:00:00Z"),
    ],
)
def test_a_name_that_means_several_offsets_leaves_the_offset_standing(
    raw: str, expected: str
) -> None:
    assert rfc3339(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("30-Nov-2026", "2026-11-30T00:00:00Z"), ("0100-01-01T00:00:00Z", "0100-01-01T00:00:00Z")],
)
def test_dates_next_to_the_placeholders_are_read(raw: str, expected: str) -> None:
    assert rfc3339(raw) == expected


URLS = [
    ("https://example.com/a?b=1#c", None, "https://example.com/a?b=1#c", None),
    ("/x", "https://example.com/feed", "https://example.com/x", None),
    ("  HTTP://Example.com/ ", None, "http://Example.com/", None),
    ("https://user:pw@example.com/p", None, "https://example.com/p", None),
    ("https://example.com/\n  path", None, "https://example.com/path", None),
    ("javascript:alert(1)", "https://example.com/", None, "unsafe_url"),
    (" jAvAsCrIpT:alert(1)", None, None, "unsafe_url"),
    ("java\nscript:alert(1)", None, None, "unsafe_url"),
    ("data:text/html,<script>", None, None, "unsafe_url"),
    ("ftp://example.com/f", None, None, "unsafe_url"),
    ("mailto:me@example.com", None, None, "unsafe_url"),
    ("relative/only", None, None, "unsafe_url"),
    ("https://example.com:99999/", None, None, "unsafe_url"),
    ("https://example.com/" + "a" * 3000, None, None, "url_too_long"),
    # The cap is on UTF-8 bytes: 1,520 characters here, 3,020 bytes.
    ("https://example.com/" + "é" * 1500, None, None, "url_too_long"),
    ("http:///etc/passwd", None, "http://etc/passwd", None),  # browsers: the host "etc"
    ("http:///", None, None, "unsafe_url"),  # no host
    ("https://example.com/a b.mp3", None, "https://example.com/a%20b.mp3", None),
    ("", None, None, None),
    # What browsers percent-encode in a path (and we in a query and fragment too), and
    # invisible or spacing characters: no markup, no hidden text reaches a record.
    (
        'https://e.org/p?a="><svg onload=alert(1)>',
        None,
        "https://e.org/p?a=%22%3E%3Csvg%20onload=alert(1)%3E",
        None,
    ),
    ("https://e.org/{a}/`b`#<c>", None, "https://e.org/%7Ba%7D/%60b%60#%3Cc%3E", None),
    ('/a"b', "https://e.org/feed", "https://e.org/a%22b", None),
    ("https://e.org/\u202egpj.exe", None, "https://e.org/%E2%80%AEgpj.exe", None),
    ("https://e.org/a\u200bb?q=\u00a0c", None, "https://e.org/a%E2%80%8Bb?q=%C2%A0c", None),
    ("https://e.org/café?q=ü", None, "https://e.org/café?q=ü", None),  # a letter stays
    ("https://e.org/%22ok%22", None, "https://e.org/%22ok%22", None),
    # A host holds none: browsers drop the invisible characters IDNA ignores (a
    # zero-width space, a soft hyphen) and refuse the others (bidi controls) and markup.
    ("https://exa\u200bmple.com/p", None, "https://example.com/p", None),
    ("https://\u200b/p", None, None, "unsafe_url"),
    ("https://exa\u202emple.com/p", None, None, "unsafe_url"),
    ('https://a"b.example/p', None, None, "unsafe_url"),
    ("https://a<b>.example/p", None, None, "unsafe_url"),
    # A backslash before the query is a slash to browsers in an http(s) URL, and slashes
    # past two before a host are none: they read these hosts, and so does the tap.
    ("https://good.example\\@evil.example/p", None, "https://good.example/@evil.example/p", None),
    ("https:\\\\other.example\\p", "https://e.org/feed", "https://other.example/p", None),
    ("/\\other.example/p", "https://e.org/feed", "https://other.example/p", None),
    ("\\\\other.example\\p", "https://e.org/feed", "https://other.example/p", None),
    ("///other.example/p", "https://e.org/feed", "https://other.example/p", None),
    ("https:///other.example/p", "https://e.org/feed", "https://other.example/p", None),
    ("https:\\other.example", "https://e.org/feed", "https://e.org/other.example", None),
    ("https://e.org/a\\b?q=\\#\\", None, "https://e.org/a/b?q=\\#\\", None),
    ("a\\b", "https://e.org/d/feed", "https://e.org/d/a/b", None),
]


@pytest.mark.parametrize(("raw", "base", "url", "problem"), URLS)
def test_urls(raw: str, base: str | None, url: str | None, problem: str | None) -> None:
    assert safe_url(raw, base) == (url, problem)


def test_a_google_redirect_leads_where_browsers_go() -> None:
    link = "https://www.google.com/url?url=https://good.example%5C@evil.example/"
    assert unwrapped_url(link) == "https://good.example/@evil.example/"


HTML = [
    ("plain   words\n here", "plain words here"),
    ("<p>One</p><p>Two</p>", "One Two"),
    ("<b>Ex</b>ample &amp; more", "Example & more"),
    ("a<br>b<br/>c", "a b c"),
    ("x<script>alert('<p>')</script>y<style>p{}</style>z", "x y z"),
    ("<!-- hidden -->seen", "seen"),
    ("&lt;b&gt;literal&lt;/b&gt;", "<b>literal</b>"),
    ("caf&eacute; &#233; &#xE9; &nbsp;", "café é é"),
    ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),
    ("<script>never closed", ""),
    # Unclosed to the end: nothing after the opening leaks into the text.
    ("Hello <!-- draft: <b>secret</b> more", "Hello"),
    ('a<script a="b>stealCookies()', "a"),
    ("<a href='javascript:x'>click</a>", "click"),
]


@pytest.mark.parametrize(("raw", "expected"), HTML)
def test_html_text(raw: str, expected: str) -> None:
    assert html_text(raw) == expected


def test_double_escaped_title() -> None:
    assert html_text("AT&amp;amp;T &amp;#039;quoted&amp;#039;", unescape_twice=True) == (
        "AT&T 'quoted'"
    )
    assert html_text("AT&amp;amp;T") == "AT&amp;T"


def test_plain_text_keeps_markup_characters_and_drops_controls() -> None:
    assert plain_text("History of the <blink> tag\x00\x07") == "History of the <blink> tag"


def test_plain_text_collapses_runs_of_spaces() -> None:
    # Printable text takes a fast path: it must still read as the general path does.
    assert plain_text("a  b   c ") == "a b c"


def test_a_reference_without_its_semicolon_is_no_reference() -> None:
    """Only text holding a well-formed reference is decoded: without one, "&" is plain
    text (AT&T), and "&amp chips" stays as written (HTML5 would read "& chips")."""
    assert text.decoded_references("Fish &amp chips") == "Fish &amp chips"


def test_mis_decoded_text_is_repaired() -> None:
    assert html_text("don\x92t") == "don’t"
    assert html_text("\xe2\x80\xa6") == "…"


def test_capped_cuts_at_a_character_boundary() -> None:
    text, was_cut = capped("é" * 10, 5)
    assert (text, was_cut) == ("éé", True)
    assert capped("short", 5) == ("short", False)


@pytest.mark.parametrize(
    ("raw", "shows"),
    [
        ("Tom &amp; Jerry", True),
        ("Line<br/>two", True),
        ("<p>Notes</p>", True),
        ("Optional<T> & Vec<String>", False),
        ("The <details> element", False),
    ],
    ids=["reference", "void-tag", "end-tag", "generics", "named-tag"],
)
def test_text_shows_html_reads_one_text_field(raw: str, shows: bool) -> None:
    # About one field's text (str); sniff.looks_like_html is about a whole document (bytes).
    assert markup.text_shows_html(raw) is shows


@pytest.mark.parametrize("reference", ["&amp;", "&#38;", "&#x26;", "&a;", "&#123456789;", "&nbsp"])
def test_a_title_and_a_twice_escaped_text_read_references_alike(reference: str) -> None:
    # One definition: a title is escaped HTML by the references a second unescape reads.
    is_html = markup.rss_title_kind("x " + reference) == "html"
    assert is_html is (text.CHARACTER_REFERENCE.search(reference) is not None)
