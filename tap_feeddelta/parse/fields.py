"""Raw feed values to record fields: plain text, safe URLs, UTC dates, capped sizes.

Every function appends what it had to drop or cut to ``issues``; messages name the field,
never its content.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import Author, CutDigest
from tap_feeddelta.models import ReadBefore as ReadBefore  # passed as ``before`` by the readers
from tap_feeddelta.parse.bylines import byline_names
from tap_feeddelta.parse.dates import rfc3339
from tap_feeddelta.parse.limits import (
    MAX_AUTHOR_NAME_BYTES,
    MAX_AUTHORS,
    MAX_CONTENT_BYTES,
    MAX_EMAIL_CHARS,
    MAX_ID_BYTES,
    MAX_LANGUAGE_CHARS,
    MAX_PERSON_TEXT_CHARS,
    MAX_SUMMARY_BYTES,
    MAX_TAG_BYTES,
    MAX_TAGS,
    MAX_TITLE_BYTES,
)
from tap_feeddelta.parse.markup import (
    TextKind,
    rss_title_kind,
    rss_title_read_as_text_before,
    shows_tags,
    text_shows_html,
    without_markup,
)
from tap_feeddelta.parse.text import (
    as_read,
    as_read_spaces_left,
    capped,
    decoded_references,
    html_text,
    id_text,
    plain_text,
    references_replaced,
    utf8_length,
)
from tap_feeddelta.parse.urls import UrlProblem, safe_url, safe_url_readings

# (field, digest of its whole text, the digest earlier versions computed) of the
# text fields of an item cut to their cap (ParsedItem.cut_digests): passed as ``cuts``
# by the readers, which fill it.
Cuts = list[tuple[str, str, str]]

_EMAIL: Final = re.compile(r"[^\s@<>()\"',;]+@[^\s@<>()\"',;]+")
# Addresses a hosted platform writes as every author's email, nobody's: no author has one
# (versions before read it as the author's). Blogger's, in its Atom and RSS feeds.
PLACEHOLDER_EMAILS: Final = frozenset({"noreply@blogger.com"})
_LANGUAGE: Final = re.compile(r"[A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*")


REFERENCE_REPLACED: Final = Issue(
    "encoding_replaced", "A character reference to no character (a lone surrogate) was replaced."
)
_TITLE_CUT: Final = Issue("title_truncated", "The title was cut to 1 KiB.")
_SUMMARY_CUT: Final = Issue("summary_truncated", "The summary was cut to 4 KiB.")
_CONTENT_CUT: Final = Issue("content_truncated", "The content was cut to 64 KiB.")
# A field's cap and the issue of a cut to it.
_TITLE_CAP: Final = (MAX_TITLE_BYTES, _TITLE_CUT)
_SUMMARY_CAP: Final = (MAX_SUMMARY_BYTES, _SUMMARY_CUT)


def title(
    raw: str | None,
    kind: TextKind,
    issues: list[Issue],
    *,
    unescape_twice: bool = True,
    cuts: Cuts | None = None,
    before: ReadBefore | None = None,
) -> str | None:
    """A title as plain text that shows no markup.

    Titles are unescaped twice by default: RSS titles, whose level of escaping is not
    declared, are often double-escaped. An Atom title declares it: pass False. A title
    whose text still shows markup by an RSS title's rules (``shows_tags``: markup
    escaped once more than declared, or a plain-text title holding it, such as
    ``<script>…</script>Hi``) is read as HTML again until it shows none: nothing active
    reaches a record. Versions before kept that markup: ``before`` gets their reading."""
    if not raw:
        return None
    value = _read_text(raw, kind, issues, unescape_twice=unescape_twice)
    if "<" in value and shows_tags(value):
        if before is not None:
            before["title"], before["title_cuts"] = _reading_then(value, *_TITLE_CAP)
        value = without_markup(value)
    if len(value) * 4 <= MAX_TITLE_BYTES:  # it cannot be over the cap (most titles)
        return value or None
    return _capped(value, issues, MAX_TITLE_BYTES, _TITLE_CUT, cuts)


def rss_title(
    raw: str | None,
    issues: list[Issue],
    *,
    unescape_twice: bool = True,
    cuts: Cuts | None = None,
    before: ReadBefore | None = None,
) -> str | None:
    """A title of no declared kind (an RSS title, ``itunes:title``) read as
    ``rss_title_kind`` says. Versions before read one that shows only a tag active as
    written as plain text: ``before`` gets that reading where it differs."""
    if not raw:
        return None
    kind = rss_title_kind(raw)
    found = title(raw, kind, issues, unescape_twice=unescape_twice, cuts=cuts, before=before)
    if before is not None and kind == "html" and rss_title_read_as_text_before(raw):
        title_read_before(raw, found, before)
    return found


def title_read_before(text: str | None, title_now: str | None, before: ReadBefore) -> None:
    """Puts in ``before`` the title versions before read of ``text`` (taken from the
    document as plain text, its markup kept), where that differs from ``title_now``: a
    JSON Feed title, read as an RSS title is since, or an RSS title read as HTML for a
    tag active as written."""
    if not text:
        return
    earlier, earlier_cuts = _reading_then(plain_text(text), *_TITLE_CAP)
    if earlier != title_now:
        before["title"], before["title_cuts"] = earlier, earlier_cuts


def summary_read_before(
    raw: str | None, kind: TextKind, summary_now: str | None, before: ReadBefore
) -> None:
    """Puts in ``before`` the summary versions before read of ``raw`` (as ``kind``), where
    that differs from ``summary_now``: one read as HTML now for a tag active as written
    (``_shows_active_tag``), which they read as plain text."""
    read = _read_text(raw, kind, [], unescape_twice=False) if raw else ""
    earlier, earlier_cuts = _reading_then(read, *_SUMMARY_CAP)
    if earlier != summary_now:
        before["summary"], before["summary_cuts"] = earlier, earlier_cuts


def _reading_then(
    read: str, max_bytes: int, when_cut: Issue
) -> tuple[str | None, tuple[CutDigest, ...]]:
    """A field as versions before kept it: its text as they read it (``read``) cut to
    the field's cap, and the cut_digests entries of that cut (none when not cut)."""
    cuts: Cuts = []
    return _capped(read, [], max_bytes, when_cut, cuts), tuple(cuts)


def tags_without_markup(tags: tuple[str, ...], before: ReadBefore) -> tuple[str, ...]:
    """The tags, each that shows markup by a title's rules (``shows_tags``) read as
    HTML for its words (none left: the tag is dropped); ``tags`` itself when none shows
    any, as in nearly every item. Versions before kept the markup: ``before`` gets their
    tags when they differ."""
    for tag in tags:
        if "<" in tag:
            break
    else:
        return tags
    read = [without_markup(tag) if "<" in tag and shows_tags(tag) else tag for tag in tags]
    if read == list(tags):
        return tags
    before["tags"] = tags
    return tuple(dict.fromkeys(filter(None, read)))


def summary(
    raw: str | None, kind: TextKind, issues: list[Issue], cuts: Cuts | None = None
) -> str | None:
    return _capped_text(raw, kind, issues, MAX_SUMMARY_BYTES, _SUMMARY_CUT, cuts=cuts)


def content(
    raw: str | None, kind: TextKind, issues: list[Issue], cuts: Cuts | None = None
) -> str | None:
    return _capped_text(raw, kind, issues, MAX_CONTENT_BYTES, _CONTENT_CUT, cuts=cuts)


# The field each cut issue stands for.
_CUT_FIELDS: Final = {_TITLE_CUT: "title", _SUMMARY_CUT: "summary", _CONTENT_CUT: "content_text"}


def _capped_text(
    raw: str | None,
    kind: TextKind,
    issues: list[Issue],
    max_bytes: int,
    when_cut: Issue,
    *,
    unescape_twice: bool = False,
    cuts: Cuts | None = None,
) -> str | None:
    """Plain text of a text construct, cut to ``max_bytes``; ``when_cut`` reports a cut.
    A cut text adds its field and a digest of the whole text to ``cuts``, so an edit
    past the cap still changes the item's fingerprint."""
    if not raw:
        return None
    if kind == "html":
        value = html_text(raw, unescape_twice=unescape_twice)
        if references_replaced(raw, value):
            issues.append(REFERENCE_REPLACED)
    else:
        value = plain_text(raw)
    if len(value) * 4 <= max_bytes:  # it cannot be over the cap
        return value or None
    return _capped(value, issues, max_bytes, when_cut, cuts)


def _read_text(raw: str, kind: TextKind, issues: list[Issue], *, unescape_twice: bool) -> str:
    """The plain text of ``raw`` read as ``kind``."""
    if kind == "html":
        value = html_text(raw, unescape_twice=unescape_twice)
        if references_replaced(raw, value):
            issues.append(REFERENCE_REPLACED)
        return value
    return plain_text(raw)


def _capped(
    value: str, issues: list[Issue], max_bytes: int, when_cut: Issue, cuts: Cuts | None
) -> str | None:
    """``value`` cut to ``max_bytes`` (``_capped_text``), ``None`` when empty."""
    if len(value) * 4 > max_bytes:  # else it cannot be over the cap
        whole = value
        value, was_cut = capped(value, max_bytes)
        if was_cut:
            issues.append(when_cut)
            if cuts is not None:
                cuts.append((_CUT_FIELDS[when_cut], *whole_text_digests(whole)))
    return value or None


def whole_text_digests(text: str) -> tuple[str, str]:
    """A short digest of a text as a reader reads it (``as_read``, as the fingerprint),
    and the one earlier versions computed (``as_read_spaces_left``): the same object
    unless the text has an invisible character next to a space."""
    if text.isascii():
        digest = _digest(text)
        return digest, digest
    before, invisible = as_read_spaces_left(text)
    digest = _digest(before)
    if not invisible:
        return digest, digest
    return _digest(as_read(text)), digest


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).hexdigest()


def url(raw: str | None, base: str | None, what: str, issues: list[Issue]) -> str | None:
    if not raw:
        return None
    value, problem = safe_url(raw, base)
    if problem is not None:
        _report(problem, what, issues)
    return value


def url_readings(
    raw: str | None, base: str | None, base_before: str | None, what: str, issues: list[Issue]
) -> tuple[str | None, str | None]:
    """``url``, and the URL as versions before this one read it (``base_before``: the
    base as they read it): the same object when they read it alike."""
    if not raw:
        return None, None
    value, problem, before = safe_url_readings(raw, base, base_before)
    if problem is not None:
        _report(problem, what, issues)
    return value, before


def _report(problem: UrlProblem, what: str, issues: list[Issue]) -> None:
    if problem == "url_too_long":
        issues.append(Issue("url_too_long", f"The {what} URL is over 2 KiB; dropped."))
    else:
        message = f"The {what} URL is not http(s) or names no valid host; dropped."
        issues.append(Issue("unsafe_url", message))


def date(raw: str | None, what: str, issues: list[Issue]) -> str | None:
    if not raw:
        return None
    value = rfc3339(raw)
    if value is None and raw.strip():
        issues.append(Issue("invalid_date", f"The {what} date could not be read."))
    return value


def native_id(raw: str | None, issues: list[Issue]) -> str | None:
    if raw is None:
        return None
    value = id_text(raw)
    if not value:
        return None
    if utf8_length(value) > MAX_ID_BYTES:
        issues.append(Issue("id_too_long", "The id is over 1 KiB; dropped."))
        return None
    return value


def language(raw: str | None) -> str | None:
    if not raw:
        return None
    value = raw.strip()
    if len(value) > MAX_LANGUAGE_CHARS or _LANGUAGE.fullmatch(value) is None:
        return None
    return value


# Feeds repeat the same author (and category) on every item: the cleaned values of short
# inputs are kept, with the issues they raised, in small tables that are emptied when
# full. Only immutable values are kept, so a hit returns what a computation would.
_CACHED_INPUT_CHARS: Final = 512
_CACHE_ENTRIES: Final = 1024
# An author as read now, as versions before this one read it (the same object when they
# read it alike: its URL, see urls.safe_url_readings), and the issues it raised.
_Found = tuple[Author | None, Author | None, tuple[Issue, ...]]
_AUTHORS: dict[tuple[str | None, str | None, str | None, str | None], _Found] = {}
# RSS authors as read now, as versions before read them (the same object when alike).
_RssFound = tuple[tuple[Author, ...], tuple[Author, ...]]
_RSS_AUTHORS: dict[tuple[str, str | None], tuple[_RssFound, tuple[Issue, ...]]] = {}
_TAGS: dict[str, str] = {}


def _remember(table: dict[Any, Any], key: object, value: object) -> None:
    if len(table) >= _CACHE_ENTRIES:
        table.clear()
    table[key] = value


def author(
    name: str | None,
    email: str | None,
    link: str | None,
    base: str | None,
    issues: list[Issue],
) -> Author | None:
    key = (name, email, link, base)
    found = _AUTHORS.get(key)
    if found is None:
        found = _found_author(name, email, link, base, base)
        if len(name or "") + len(email or "") + len(link or "") <= _CACHED_INPUT_CHARS:
            _remember(_AUTHORS, key, found)
    if found[2]:
        issues.extend(found[2])
    return found[0]


def author_readings(
    name: str | None,
    email: str | None,
    link: str | None,
    base: str | None,
    base_before: str | None,
    issues: list[Issue],
) -> tuple[Author | None, Author | None]:
    """``author``, and the author as versions before this one read it (``base_before``:
    the base as they read it): the same object when they read it alike. The cache
    keeps both readings of a base read alike; an author under a base read otherwise
    (an xml:base, rare) is read each time, as the key does not tell the two apart."""
    key = (name, email, link, base)
    is_cached = base_before == base
    found = _AUTHORS.get(key) if is_cached else None
    if found is None:
        found = _found_author(name, email, link, base, base_before)
        is_short = len(name or "") + len(email or "") + len(link or "") <= _CACHED_INPUT_CHARS
        if is_cached and is_short:
            _remember(_AUTHORS, key, found)
    if found[2]:
        issues.extend(found[2])
    return found[0], found[1]


def _found_author(
    name: str | None, email: str | None, link: str | None, base: str | None, base_before: str | None
) -> _Found:
    issues: list[Issue] = []
    was_cut = False
    if name and len(name) > MAX_PERSON_TEXT_CHARS:
        name, was_cut = name[:MAX_PERSON_TEXT_CHARS], True
    clean_name = _name_text(name) if name else None
    if clean_name and not clean_name.isascii() and not as_read(clean_name):
        clean_name = None  # only invisible characters: no name a reader sees
    if clean_name and references_replaced(name or "", clean_name):
        issues.append(REFERENCE_REPLACED)
    if clean_name:
        clean_name, was_capped = capped(clean_name, MAX_AUTHOR_NAME_BYTES)
        was_cut = was_cut or was_capped
    if was_cut:
        issues.append(_PERSON_CUT)
    clean_email = email_before = None
    if email:
        email = email.strip()
        if email.lower().startswith("mailto:"):
            email = email[7:]
        if len(email) <= MAX_EMAIL_CHARS and _EMAIL.fullmatch(email) and email.isprintable():
            clean_email = email_before = email
            if email.lower() in PLACEHOLDER_EMAILS:
                clean_email = None
    clean_url, url_before = url_readings(link, base, base_before, "author", issues)
    found = _person(clean_name, clean_email, clean_url)
    if url_before is clean_url and email_before is clean_email:
        return found, found, tuple(issues)
    return found, _person(clean_name, email_before, url_before), tuple(issues)


def _person(name: str | None, email: str | None, url: str | None) -> Author | None:
    if not (name or email or url):
        return None
    return Author(name=name or None, email=email, url=url)


def _name_text(raw: str) -> str:
    """The plain text of a name: HTML when it shows HTML (an author page link), else
    text with references in it (names come CDATA-wrapped from WordPress). Like a title,
    a name whose text still shows markup (escaped once more, or put together again by
    removing a tag: ``<<b></b>script>``) is read as HTML until it shows none."""
    if "<" in raw and text_shows_html(raw):
        text = html_text(raw)
    else:
        text = plain_text(decoded_references(raw))
    return without_markup(text) if "<" in text and shows_tags(text) else text


# Names that are each a link, separated by commas, semicolons or "and" (arXiv's listings).
_LINKED_NAME: Final = r"<a\b[^<>]*>([^<>]*)</a>"
_LINKED_NAMES: Final = re.compile(
    # One "\s*" before and one after a separator: "\s*\s*" would backtrack quadratically.
    rf"\s*{_LINKED_NAME}(?:\s*(?:(?:[,;]|and|&amp;|&)\s*)?{_LINKED_NAME})+\s*",
    re.I,
)
_LINK_TEXT: Final = re.compile(_LINKED_NAME, re.I)


_AUTHORS_CUT: Final = Issue("limit_exceeded", f"Only the first {MAX_AUTHORS} authors are kept.")


def first_authors(
    found: list[Author] | tuple[Author, ...], issues: list[Issue]
) -> tuple[Author, ...]:
    """The first ``MAX_AUTHORS`` of the authors found, reporting any dropped."""
    if len(found) <= MAX_AUTHORS:
        return tuple(found)
    issues.append(_AUTHORS_CUT)
    return tuple(found[:MAX_AUTHORS])


# "email (Name)", "Name (email)", "Name <email>", read from the stripped text. Every
# part ends where it must: an email's local part at its first "@", a name before "<"
# at the first "<" (its spaces are stripped after). A name that may end in spaces
# followed by "\s*" backtracked cubically on a run of spaces before an "@".
_EMAIL_IN_PARENS: Final = r"[^\s()<>][^\s()<>@]*@[^\s()<>]+"
_RSS_AUTHOR_PAREN: Final = re.compile(rf"(?P<email>{_EMAIL_IN_PARENS})\s*\((?P<name>.*)\)")
_RSS_AUTHOR_NAME_PAREN: Final = re.compile(rf"(?P<name>[^()<>]*)\((?P<email>{_EMAIL_IN_PARENS})\)")
_RSS_AUTHOR_ANGLE: Final = re.compile(r"(?P<name>[^<>]*)<(?P<email>[^\s<>][^\s<>@]*@[^\s<>]+)>")
_PERSON_CUT: Final = Issue("author_truncated", "An author's name was cut to 256 bytes.")


def rss_authors(raw: str | None, base: str | None, issues: list[Issue]) -> tuple[Author, ...]:
    """RSS ``author`` or ``dc:creator``: "email (Name)", "Name <email>", a bare email, a
    bare name, or several authors: names that are each a link, or a plain list of names
    (see ``bylines``)."""
    return rss_author_readings(raw, base, issues)[0]


def rss_author_readings(raw: str | None, base: str | None, issues: list[Issue]) -> _RssFound:
    """rss_authors, and the authors as versions before read them (a placeholder address
    as an author's email): the same object when they read them alike."""
    if not raw:
        return _NO_RSS_AUTHORS
    key = (raw, base)
    found = _RSS_AUTHORS.get(key)
    if found is None:
        new_issues: list[Issue] = []
        found = (_rss_authors(raw, base, new_issues), tuple(new_issues))
        if len(raw) <= _CACHED_INPUT_CHARS:
            _remember(_RSS_AUTHORS, key, found)
    if found[1]:
        issues.extend(found[1])
    return found[0]


_NO_RSS_AUTHORS: Final[_RssFound] = ((), ())


def _rss_authors(raw: str, base: str | None, issues: list[Issue]) -> _RssFound:
    if "<" in raw and _LINKED_NAMES.fullmatch(raw):
        found = (author(name, None, None, base, issues) for name in _LINK_TEXT.findall(raw))
        named = tuple(person for person in found if person is not None)
        return named, named
    if "<" not in raw and "@" not in raw:
        names = byline_names(raw)
        if names is not None:  # a plain list of names (arXiv's current RSS)
            # One past the cap is enough for the item to report the rest.
            found = (author(name, None, None, base, issues) for name in names[: MAX_AUTHORS + 1])
            named = tuple(person for person in found if person is not None)
            return named, named
    person, person_before = _rss_author(raw, base, issues)
    listed = () if person is None else (person,)
    if person_before is person:
        return listed, listed
    return listed, () if person_before is None else (person_before,)


def _rss_author(
    raw: str, base: str | None, issues: list[Issue]
) -> tuple[Author | None, Author | None]:
    if len(raw) > MAX_PERSON_TEXT_CHARS:
        issues.append(_PERSON_CUT)
        raw = raw[:MAX_PERSON_TEXT_CHARS]
    if "@" in raw:
        stripped = raw.strip()
        match = (
            _RSS_AUTHOR_PAREN.fullmatch(stripped)
            or _RSS_AUTHOR_ANGLE.fullmatch(stripped)
            or _RSS_AUTHOR_NAME_PAREN.fullmatch(stripped)
        )
        if match is not None:
            name = match.group("name")
            if match.re is not _RSS_AUTHOR_PAREN:
                name = name.strip()  # what stood around it, before "<" or "("
            if len(name) > 1 and name[0] == name[-1] == '"':
                name = name[1:-1]  # an RFC 5322 quoted display name: "Jane Roe" <jane@...>
            return author_readings(name, match.group("email"), None, base, base, issues)
        if _EMAIL.fullmatch(stripped):
            return author_readings(None, stripped, None, base, base, issues)
    found = author(raw, None, None, base, issues)
    return found, found


_TAG_CUT: Final = Issue("limit_exceeded", f"A tag was cut to {MAX_TAG_BYTES} bytes.")
_TAGS_CUT: Final = Issue("limit_exceeded", f"Only the first {MAX_TAGS} tags are kept.")


def tag(raw: str | None, issues: list[Issue]) -> str | None:
    if not raw:
        return None
    value = _TAGS.get(raw)
    if value is None:
        value = plain_text(decoded_references(raw))
        if not value.isascii() and not as_read(value):
            value = ""  # only invisible characters: no tag a reader sees
        # Issues are not remembered: a cache hit would not report them.
        remember = True
        if references_replaced(raw, value):
            issues.append(REFERENCE_REPLACED)
            remember = False
        if len(value) * 4 > MAX_TAG_BYTES:  # else it cannot be over the cap
            value, was_cut = capped(value, MAX_TAG_BYTES)
            if was_cut:
                issues.append(_TAG_CUT)
                remember = False
        if remember and len(raw) <= _CACHED_INPUT_CHARS:
            _remember(_TAGS, raw, value)
    return value or None


def item_tags(values: list[str], issues: list[Issue]) -> tuple[str, ...]:
    """The tags without repeats, in first-seen order, at most ``MAX_TAGS`` of them."""
    if len(values) < 2:
        return tuple(values)
    found = tuple(dict.fromkeys(values))
    if len(found) > MAX_TAGS:
        issues.append(_TAGS_CUT)
        return found[:MAX_TAGS]
    return found


def distinct_issues(issues: list[Issue]) -> tuple[Issue, ...]:
    """The issues without repeats: messages name no value, so a repeat (one per long tag
    or name) says nothing new, and a record's issues stay bounded."""
    return tuple(dict.fromkeys(issues))
