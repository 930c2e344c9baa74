"""What change detection knows of one item: its identity and its fingerprint.

Identity: the feed's own id; else its URL; else its first enclosure's URL (a podcast
episode without guid or link); else a hash of its title, date and summary (``derived``),
the text as a reader reads it, as the fingerprint reads it. An item whose id another
item of its document shares is known by the next of those it has of its own
(id_candidates), else by a title id, else a content id (delta).
A field ignored_changes lists identifies no item either: it is left out of that hash, and
ignored enclosures identify none.
Fingerprint: a hash over what a user sees of the item (FINGERPRINT_FIELDS), the text as
a reader reads it, with a digest of the whole text of a text field cut to its cap (so an
edit past the cap counts); the fields ignored_changes lists are left out. Enclosure URLs
are compared, and identify items, without their signature and expiry parameters
(signed_urls), without the tracking prefixes podcast hosts add and drop
(tracking_prefixes), and with http:// read as https:// (caches that disagree on it). Item
links are compared without the session, click and share ids a site writes anew for each
visitor (visitor_ids): ids and fingerprints are made of the item as compared
(compared_item). The
hashes earlier versions computed are here too, so a state they wrote is read as they
wrote it. Pure: no clock, no I/O, no state.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Final, Literal

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import FINGERPRINT_FIELDS, Author, Enclosure, ParsedItem
from tap_feeddelta.signed_urls import unsigned_url
from tap_feeddelta.tracking_prefixes import without_tracking_prefixes
from tap_feeddelta.visitor_ids import (
    drop_visitor_ids,
    may_hold_visitor_ids,
    without_visitor_ids_before,
)


def _load_text_reading() -> None:
    """Bind as_read and as_read_spaces_left to parse.text's. That module compiles its
    HTML expressions when imported (~12 ms of CPU), and a run whose feeds all answer 304
    reads no item: it is imported when the first item is read, not at start-up. Once
    bound, a call costs what a call of parse.text's own function costs."""
    global as_read, as_read_spaces_left
    from tap_feeddelta.parse import text

    as_read, as_read_spaces_left = text.as_read, text.as_read_spaces_left


def _first_as_read(text: str) -> str:
    _load_text_reading()
    return as_read(text)


def _first_as_read_spaces_left(text: str) -> tuple[str, int]:
    _load_text_reading()
    return as_read_spaces_left(text)


# parse.text's as_read and as_read_spaces_left, from their first call on.
as_read: Callable[[str], str] = _first_as_read
as_read_spaces_left: Callable[[str], tuple[str, int]] = _first_as_read_spaces_left

IdSourceOut = Literal["guid", "atom_id", "json_id", "url", "enclosure", "derived"]

FINGERPRINT_VERSION: Final = "v1"
# FINGERPRINT_FIELDS: the fields of a record a user can see, in the fingerprint's order;
# text is already plain text with collapsed whitespace, so markup- or whitespace-only
# edits do not change it.
_FIELD_INDEX: Final = {name: index for index, name in enumerate(FINGERPRINT_FIELDS)}
# What an ignored field (ignored_changes) is hashed as: no field's value can be it (no
# text of an item holds a control character) nor can a missing field's (_NONE).
_IGNORED: Final = "\x1a"
SEP: Final = "\x1f"
_NONE: Final = "\x00"
# Between a cut text and the digest of its whole text (ParsedItem.cut_digests).
_CUT: Final = "\x1d"


def compared_item(item: ParsedItem) -> ParsedItem:
    """The item as change detection compares it, and ids and fingerprints are made of it:
    its link without session, click and share ids (visitor_ids), a value written anew
    for each visitor, fetch, share or mail. The item itself, the same object, when its
    link has none (a link without ``?`` or ``;`` is not even looked at). Records keep the
    item as given."""
    url = item.url
    if not url or ("?" not in url and ";" not in url) or may_hold_visitor_ids(url) is None:
        return item
    return with_link(item, drop_visitor_ids(url))


def with_link(item: ParsedItem, url: str) -> ParsedItem:
    """``item`` with ``url`` as its link; the item itself when that is its link."""
    if url is item.url:
        return item
    # Positionally: ``_replace`` takes three times as long.
    return ParsedItem._make((*item[:_URL], url, *item[_URL + 1 :]))


_URL: Final = ParsedItem._fields.index("url")


def compared_before(item: ParsedItem, compared: ParsedItem) -> list[ParsedItem]:
    """``item`` (as given) as versions before this one compared it, where that is not
    ``compared`` (its compared_item): as given (before session and click ids were
    dropped) and without the ids they knew (before share ids were: igsh, si), the most
    recent first. Empty for a link without such ids (``compared`` is ``item``)."""
    if compared is item:
        return []
    before = with_link(item, without_visitor_ids_before(item.url or ""))
    if before is item or before.url == compared.url:
        return [item]
    return [before, item]


def item_identity(
    item: ParsedItem, ignored: Collection[str] = ()
) -> tuple[str, IdSourceOut, tuple[Issue, ...]]:
    """The item's id (of the item as compared: compared_item), where it came from, and
    an issue when it had to be derived; the fields named in ``ignored`` (ignored_changes)
    take no part in it."""
    if item.native_id and item.native_id_source:
        return item.native_id, item.native_id_source, ()
    if item.url:
        return item.url, "url", ()
    # What podcast apps use for an episode without guid or link; not when the feed
    # changes it on every fetch (dynamic ad insertion), as ignoring it says.
    if item.enclosures and "enclosures" not in ignored:
        issue = Issue("derived_id", "the item has no id or link; its id is its enclosure's URL")
        return comparable_enclosure_url(item.enclosures[0].url), "enclosure", (issue,)
    issue = Issue("derived_id", "the item has no id or link; its id is a hash of its content")
    return derived_id(text_parts(item, ignored)), "derived", (issue,)


def id_candidates(item: ParsedItem, ignored: Collection[str] = ()) -> list[tuple[str, IdSourceOut]]:
    """What may identify the item, in identity's order: its own id, its link, its first
    enclosure's URL as compared (not when ``ignored`` lists enclosures). The first is
    item_identity's; none when that is derived. An item whose id another item of its
    document shares is known by the first of the others that is its own (delta)."""
    candidates: list[tuple[str, IdSourceOut]] = []
    if item.native_id and item.native_id_source:
        candidates.append((item.native_id, item.native_id_source))
    if item.url:
        candidates.append((item.url, "url"))
    if item.enclosures and "enclosures" not in ignored:
        candidates.append((comparable_enclosure_url(item.enclosures[0].url), "enclosure"))
    return candidates


# Before the link or enclosure URL that tells an item apart from others sharing its id: its
# memory is kept under a key of its own, so an item whose own id is that URL (a permalink
# guid, the link of an item without guid) never takes it. Ids hold no control character.
_TOLD_APART: Final = "told-apart" + SEP


def told_apart_id(value: str) -> str:
    """What an item known by its link or enclosure ``value`` (it shares the ids before it
    with other items of its document) is remembered under."""
    return _TOLD_APART + value


def comparable_enclosure_url(url: str) -> str:
    """An enclosure URL as change detection sees it: without signature or expiry,
    without tracking prefixes, and https (a proxy whose caches disagree on the scheme
    gives http:// on one fetch and https:// on the next); the same object when an https
    URL has neither."""
    url = unsigned_url(without_tracking_prefixes(url))
    return f"https://{url[7:]}" if url.startswith("http://") else url


def text_parts(
    item: ParsedItem, ignored: Collection[str] = (), *, as_given: bool = False
) -> list[str]:
    """What a derived id is a hash of: the title, date and summary, each but when
    ignored, the texts as a reader reads them (as the fingerprint does) unless
    ``as_given`` (as earlier versions read them)."""
    read = _as_given if as_given else as_read
    title = _IGNORED if "title" in ignored else read(item.title or _NONE)
    summary = _IGNORED if "summary" in ignored else read(item.summary or _NONE)
    if not ignored:
        return [title, item.published_at or item.updated_at or _NONE, summary]
    date = (item.published_at if "published_at" not in ignored else None) or (
        item.updated_at if "updated_at" not in ignored else None
    )
    return [title, date or _NONE, summary]


def derived_id(parts: list[str]) -> str:
    digest = hashlib.blake2b(SEP.join(parts).encode("utf-8"), digest_size=16).hexdigest()
    return f"derived:{digest}"


def title_id(
    item: ParsedItem, shared_id: str, ignored: Collection[str] = (), *, as_given: bool = False
) -> str:
    """The id of an item that shares ``shared_id`` with other items of its document: from
    it, the title as read (unless ``as_given``, as earlier versions read it) and the
    publication date (not the update date, which an edit moves), each but when ignored."""
    title = item.title or _NONE
    title = _IGNORED if "title" in ignored else title if as_given else as_read(title)
    published = _IGNORED if "published_at" in ignored else item.published_at or _NONE
    return derived_id([shared_id, title, published])


def content_id(shared_id: str, fingerprint: bytes) -> str:
    """The id of an item whose title id is shared too: from its whole content."""
    return derived_id([shared_id, fingerprint.hex()])


def fingerprint_bytes(
    item: ParsedItem,
    *,
    tags_in_document_order: bool = False,
    keep_signatures: bool = False,
    keep_tracking_prefixes: bool = False,
    text_as_given: bool = False,
    spaces_left: bool = False,
    ignored: Collection[str] = (),
) -> bytes:
    """The content hash of ``item`` as compared (compared_item: its link is hashed as it
    is, as versions before hashed every link), with the fields named in ``ignored``
    (ignored_changes) left out: each hashed as a placeholder. The other keyword arguments
    give the hashes earlier versions computed (see earlier_content_hashes)."""
    # Tags are a set: a feed that lists them in another order on every request (built
    # from a hash set, say) would otherwise give an update on every run.
    tags = item.tags if tags_in_document_order or len(item.tags) < 2 else sorted(item.tags)
    # A signature re-issued on every fetch, a tracking prefix added or dropped, or the
    # scheme flipping between http and https is no edit. An https enclosure URL without
    # signature or prefix goes in as it is, so the hash of an ordinary item is the one
    # earlier versions remembered. (Signatures were dropped before prefixes, and those
    # before schemes were compared, so keeping them keeps the prefixes and the scheme.)
    if keep_signatures:
        comparable = _as_given
    elif keep_tracking_prefixes:
        comparable = unsigned_url
    else:
        comparable = comparable_enclosure_url
    parts: list[str] = [
        item.url or _NONE,
        item.title or _NONE,
        item.summary or _NONE,
        item.content_text or _NONE,
        SEP.join([f"{a.name or ''}|{a.email or ''}|{a.url or ''}" for a in item.authors]),
        SEP.join(tags),
        item.published_at or _NONE,
        item.updated_at or _NONE,
        SEP.join(
            [f"{comparable(e.url)}|{e.type or ''}|{e.length_bytes or ''}" for e in item.enclosures]
        ),
    ]
    if item.cut_digests:  # the text as read goes on past the cap: the edits there count
        for name, digest, digest_before in item.cut_digests:
            parts[_FIELD_INDEX[name]] += _CUT + (digest_before if spaces_left else digest)
    if ignored:  # after the digests: an ignored field is ignored whole
        for name in ignored:
            parts[_FIELD_INDEX[name]] = _IGNORED
    material = "\x1e".join(parts)
    if not text_as_given and not material.isascii():
        # As earlier versions read it: the material whole. That is how this version reads
        # it too unless it holds an invisible character (rare), whose removal may leave a
        # space doubled or at the end of a text: then each text is read on its own.
        material, invisible = as_read_spaces_left(material)
        if invisible and not spaces_left:
            return fingerprint_bytes(
                _as_read(item),
                tags_in_document_order=tags_in_document_order,
                keep_signatures=keep_signatures,
                keep_tracking_prefixes=keep_tracking_prefixes,
                text_as_given=True,  # read already
                ignored=ignored,
            )
    return hashlib.blake2b(material.encode("utf-8"), digest_size=16).digest()


def _as_read(item: ParsedItem) -> ParsedItem:
    """The item with each of its texts, names and URLs as a reader reads it (as_read)."""
    return ParsedItem(  # positionally: ``_replace`` takes longer than all the rest
        item.native_id,
        item.native_id_source,
        _text_as_read(item.url),
        _text_as_read(item.title),
        _text_as_read(item.summary),
        _text_as_read(item.content_text),
        tuple([_author_as_read(author) for author in item.authors]),
        tuple([as_read(tag) for tag in item.tags]),
        item.published_at,
        item.updated_at,
        tuple([_enclosure_as_read(enclosure) for enclosure in item.enclosures]),
        item.source_pointer,
        item.issues,
        item.cut_digests,
        item.read_before,
    )


def _author_as_read(author: Author) -> Author:
    return Author(
        _text_as_read(author.name), _text_as_read(author.email), _text_as_read(author.url)
    )


def _enclosure_as_read(enclosure: Enclosure) -> Enclosure:
    return Enclosure(as_read(enclosure.url), _text_as_read(enclosure.type), enclosure.length_bytes)


def _text_as_read(text: str | None) -> str | None:
    return as_read(text) if text else text


def _as_given(url: str) -> str:
    return url


def earlier_content_hashes(item: ParsedItem, ignored: tuple[str, ...] = ()) -> list[int]:
    """What runs with another ignored_changes and earlier versions of the tap remembered
    of this content (``item`` as given), where it differs from this run's hash (of the
    item as compared: compared_item). Versions before compared a link with session,
    click or share ids otherwise (compared_before): the hashes of the item as each
    compared it are among them, this run's and those earlier versions computed (see
    _hashes_before)."""
    compared = compared_item(item)
    hashes = _hashes_before(compared, ignored)
    for before in compared_before(item, compared):
        hashes.append(short_hash(fingerprint_bytes(before, ignored=ignored)))
        hashes += _hashes_before(before, ignored)
    return hashes


def _hashes_before(item: ParsedItem, ignored: tuple[str, ...]) -> list[int]:
    """What runs with another ignored_changes and earlier versions of the tap remembered
    of this content, where it differs from this run's hash (see _earlier_hashes); for an
    item that versions before read otherwise (``ParsedItem.read_before``: one person
    named by several elements listed once per element, markup kept in a title, summary
    or tag, a URL read otherwise, an extension's elements under a namespace name they
    did not know read as nothing), those of the item as they read it too. Only for items
    that look changed or renamed, so it costs nothing on unchanged ones."""
    hashes = _earlier_hashes(item, ignored)
    if item.read_before:
        before = item.as_read_before()
        hashes.append(short_hash(fingerprint_bytes(before, ignored=ignored)))
        hashes += _earlier_hashes(before, ignored)
    return hashes


def earlier_ids(
    item: ParsedItem,
    item_id: str,
    id_source: IdSourceOut,
    digest: bytes,
    ignored: tuple[str, ...] = (),
) -> list[str]:
    """The ids other than ``item_id`` (from ``id_source``; ``digest``: its fingerprint_bytes)
    ``item`` (as given) may have had before (see _ids_before, of the item as compared:
    compared_item). Versions before compared a link with session, click or share ids
    otherwise (compared_before): the ids of the item as each compared it are among
    them, those the versions before gave it and those earlier ones did."""
    compared = compared_item(item)
    ids = _ids_before(compared, item_id, id_source, digest, ignored)
    earlier = compared_before(item, compared)
    if not earlier:
        return ids
    for before in earlier:
        digest_before = fingerprint_bytes(before, ignored=ignored)
        ids += _ids_before(before, item_id, id_source, digest_before, ignored)
    return list(dict.fromkeys(ids))


def _ids_before(
    item: ParsedItem,
    item_id: str,
    id_source: IdSourceOut,
    digest: bytes,
    ignored: tuple[str, ...],
) -> list[str]:
    """The ids other than ``item_id`` (from ``id_source``; ``digest``: its fingerprint_bytes)
    the item may have had before: its own, title and content ids (it shared its id then,
    or no longer does), its link and enclosure ids (id_candidates) as an item told apart
    by them is remembered (told_apart_id: it shared the ids before them then, or no
    longer does) and as given (it had no id before them, or the version before remembered
    it so), the content id as the version before computed its
    fingerprint (before cut texts, tracking prefixes and enclosure schemes counted, and
    before invisible characters left no spaces doubled); the title and derived ids of
    its texts as given (before ids were made of them as read); with fields ignored,
    those ids with the fields in (before the setting was on, or before it applied to
    ids); for an item identified by its enclosure, the hash of its text (before
    enclosures identified items), and its URL, with tracking prefixes (before they were
    dropped), spelled http:// (before schemes were compared) and signed (before
    signatures were dropped), each also as the id it shared with other items; for an
    item read otherwise before (``read_before``), its ids as read then, the one its link
    or enclosure URL gave it as read then too (before URLs were percent-encoded)."""
    primary, primary_source, _ = item_identity(item, ignored)
    legacy = legacy_fingerprint(item, ignored, digest)
    ids = [primary, title_id(item, primary, ignored), content_id(primary, digest)]
    # Its link or enclosure: its id while the ids before them were not its own (the key
    # this version remembers such an item by; as the version before did, as is); or with
    # no id before them.
    later = [candidate for candidate, _ in id_candidates(item, ignored)[1:]]
    ids += [told_apart_id(candidate) for candidate in later if candidate != primary]
    ids += later
    ids.append(content_id(primary, legacy))
    if spaced := spaces_left_fingerprint(item, ignored):
        ids.append(content_id(primary, spaced))
    # Before ids were made of the texts as read: of the texts as given.
    ids.append(title_id(item, primary, ignored, as_given=True))
    if primary_source == "derived":
        given = derived_id(text_parts(item, ignored, as_given=True))
        ids += [given, title_id(item, given, ignored, as_given=True)]
        digests = (digest, legacy, spaced)
        ids += [content_id(given, earlier) for earlier in digests if earlier]
    if item.read_before:  # before authors were merged, markup was read or URLs encoded
        earlier = item.as_read_before()
        earlier_digest = fingerprint_bytes(earlier, ignored=ignored)
        ids.append(content_id(primary, earlier_digest))
        ids.append(title_id(earlier, primary, ignored))
        ids.append(title_id(earlier, primary, ignored, as_given=True))
        # The id its link or enclosure gave it as read then, and that id's title and
        # content ids (when it shared it).
        earlier_id, _, _ = item_identity(earlier, ignored)
        if earlier_id != primary:
            ids.append(earlier_id)
            ids.append(title_id(earlier, earlier_id, ignored))
            ids.append(content_id(earlier_id, earlier_digest))
        if primary_source == "derived":  # a derived id is made of the title too
            for as_given in (False, True):
                ids.append(derived_id(text_parts(earlier, ignored, as_given=as_given)))
    own, own_source = primary, primary_source
    if ignored:
        own, own_source, _ = item_identity(item)
        plain = fingerprint_bytes(item)  # before the setting was on
        ids += [own, title_id(item, own), content_id(own, digest)]
        ids += [content_id(own, plain), content_id(own, legacy_fingerprint(item, (), plain))]
    if own_source == "enclosure":
        if id_source == "enclosure" or own != primary:  # a shared one had a title id
            ids += [derived_id(text_parts(item)), derived_id(text_parts(item, as_given=True))]
        signed = item.enclosures[0].url
        unsigned = unsigned_url(signed)
        for before in dict.fromkeys((unsigned, http_spelling(unsigned), signed)):
            if before != own:
                ids += [before, title_id(item, before), content_id(before, legacy)]
    return [earlier for earlier in dict.fromkeys(ids) if earlier != item_id]


def _earlier_hashes(item: ParsedItem, ignored: tuple[str, ...]) -> list[int]:
    """What runs with another ignored_changes (see hashes_under_other_lists) and earlier
    versions of the tap remembered of this content, where it differs from this run's
    hash. Earlier versions: the hash with tracking prefixes and the http scheme kept
    (before they were dropped or read as https), of the text as given too (before it was
    hashed as read), also with enclosure URLs as given (before signatures were dropped),
    and with tags in document order too (before tags were sorted); with the spaces
    around invisible characters left (before their removal left none doubled); for an
    item with a text cut to its cap, all of those without the digests of the cut texts
    (before they were hashed)."""
    hashes = [short_hash(full) for full in hashes_under_other_lists(item, ignored)]
    if spaced := spaces_left_fingerprint(item, ignored):
        hashes.append(short_hash(spaced))
    if item.cut_digests:
        uncut = item._replace(cut_digests=())
        hashes.append(short_hash(fingerprint_bytes(uncut, ignored=ignored)))
        return hashes + _earlier_hashes(uncut, ignored)
    prefixed = enclosures_compared_otherwise(item)
    if prefixed:
        hashes.append(
            short_hash(fingerprint_bytes(item, keep_tracking_prefixes=True, ignored=ignored))
        )
    if as_http := with_http_enclosures(item):  # read over http before, when it differed
        hashes.append(
            short_hash(fingerprint_bytes(as_http, keep_tracking_prefixes=True, ignored=ignored))
        )
    as_given = fingerprint_bytes(item, text_as_given=True, keep_tracking_prefixes=prefixed)
    if as_given != fingerprint_bytes(item, keep_tracking_prefixes=prefixed):  # see as_read
        hashes.append(short_hash(as_given))
    if any(unsigned_url(enclosure.url) is not enclosure.url for enclosure in item.enclosures):
        hashes.append(short_hash(fingerprint_bytes(item, keep_signatures=True, text_as_given=True)))
    if len(item.tags) > 1 and list(item.tags) != sorted(item.tags):
        legacy = fingerprint_bytes(
            item, tags_in_document_order=True, keep_signatures=True, text_as_given=True
        )
        hashes.append(short_hash(legacy))
    return hashes


def spaces_left_fingerprint(item: ParsedItem, ignored: Collection[str] = ()) -> bytes | None:
    """The fingerprint as the version before read an invisible character next to a space
    (see as_read_spaces_left), where it differs from this version's; else None."""
    spaced = fingerprint_bytes(item, spaces_left=True, ignored=ignored)
    return None if spaced == fingerprint_bytes(item, ignored=ignored) else spaced


def enclosures_compared_otherwise(item: ParsedItem) -> bool:
    """Whether an enclosure URL of ``item`` is compared otherwise than the version before
    compared it: it has a tracking prefix or an http scheme."""
    return any(
        comparable_enclosure_url(enclosure.url) != unsigned_url(enclosure.url)
        for enclosure in item.enclosures
    )


def legacy_fingerprint(
    item: ParsedItem, ignored: Collection[str] = (), current: bytes | None = None
) -> bytes:
    """The fingerprint as the version before tracking prefixes, enclosure schemes and cut
    texts counted computed it (for content ids it made). ``current``, the item's
    fingerprint with ``ignored``, is that already unless one of those applies."""
    if current is not None and not item.cut_digests and not enclosures_compared_otherwise(item):
        return current
    return fingerprint_bytes(
        item._replace(cut_digests=()) if item.cut_digests else item,
        keep_tracking_prefixes=True,
        ignored=ignored,
    )


def with_http_enclosures(item: ParsedItem) -> ParsedItem | None:
    """``item`` with its https enclosure URLs spelled http:// (as a feed may have given
    them before); None when it has none."""
    if not any(enclosure.url.startswith("https://") for enclosure in item.enclosures):
        return None
    return item._replace(
        enclosures=tuple(
            replace(enclosure, url=http_spelling(enclosure.url)) for enclosure in item.enclosures
        )
    )


def http_spelling(url: str) -> str:
    return f"http://{url[8:]}" if url.startswith("https://") else url


_SITE_LINK: Final = re.compile(r"(https?)://(www\.)?([^/?#]*)([^?#]*)(.*)", re.ASCII | re.DOTALL)


def site_move_spellings(url: str) -> list[str]:
    """The spellings ``url`` may have had before its site moved all its links: the other
    scheme (a move to https), with or without ``www.``, with or without a trailing slash
    on the path; each combination once, ``url`` itself left out. None for a URL that is
    not http(s)."""
    match = _SITE_LINK.fullmatch(url)
    if match is None:
        return []
    _, _, host, path, rest = match.groups()
    if path in ("", "/"):
        paths = ("", "/")
    else:
        trimmed = path.rstrip("/")
        paths = (trimmed, f"{trimmed}/")
    spellings = [
        f"{scheme}://{www}{host}{each_path}{rest}"
        for scheme in ("https", "http")
        for www in ("", "www.")
        for each_path in paths
    ]
    return [spelling for spelling in dict.fromkeys(spellings) if spelling != url]


def hashes_under_other_lists(item: ParsedItem, ignored: tuple[str, ...]) -> list[bytes]:
    """The item's hash as a run with an ignored_changes one step from ``ignored``
    remembered it: with nothing ignored (so turning the setting on, with any number of
    fields, gives no wave of updates), with one field fewer, and with one field more (so
    turning it off from one field gives none either). At most ten hashes."""
    lists: list[tuple[str, ...]] = []
    if ignored:
        lists.append(())
        if len(ignored) > 1:
            lists += [tuple(other for other in ignored if other != name) for name in ignored]
    lists += [(*ignored, name) for name in FINGERPRINT_FIELDS if name not in ignored]
    return [fingerprint_bytes(item, ignored=names) for names in lists]


def fingerprint(item: ParsedItem) -> str:
    """An item's record fingerprint, nothing ignored. Reference for tests: the run
    formats fingerprint_bytes in delta._change."""
    return f"{FINGERPRINT_VERSION}:{fingerprint_bytes(compared_item(item)).hex()}"


def delivery_id(
    monitor_id: str,
    feed_url: str,
    item_id: str,
    item_fingerprint: str,
    replaced_content_hash: int | None = None,
) -> str:
    """A record's delivery_id; ``replaced_content_hash``: for an update, the content hash
    the state kept of the version it replaces (none for a new item). Reference for tests:
    the run computes it via delivery_prefix (delta._change)."""
    parts = [monitor_id, feed_url, item_id, item_fingerprint]
    if replaced_content_hash is not None:
        parts.append(f"{replaced_content_hash:08x}")
    material = SEP.join(parts)
    return hashlib.blake2b(material.encode("utf-8"), digest_size=16).hexdigest()


def delivery_prefix(monitor_id: str, feed_url: str) -> hashlib.blake2b:
    """``delivery_id``'s hash with one feed's part already fed in (copied per item)."""
    return hashlib.blake2b(f"{monitor_id}{SEP}{feed_url}{SEP}".encode(), digest_size=16)


def key_hash(item_id: str) -> int:
    digest = hashlib.blake2b(item_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def short_hash(full: bytes) -> int:
    return int.from_bytes(full[:4], "big")
