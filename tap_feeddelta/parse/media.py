"""Media RSS (``media:``): an item's title, description, tags and enclosures when it gives
none itself, in RSS and Atom alike.

YouTube's Atom feed and many video and photo feeds say what an item is only in Media RSS
elements, which may sit on the item, in a ``media:group`` or in a ``media:content``.
Podcast items may name themselves only in ``itunes:title``, which comes before them.
"""

from __future__ import annotations

import re
from typing import Final

from lxml import etree

from tap_feeddelta.errors import Issue
from tap_feeddelta.models import Enclosure
from tap_feeddelta.parse import fields, itemurls
from tap_feeddelta.parse.markup import TextKind
from tap_feeddelta.parse.names import TagKey, markup_of, text_of
from tap_feeddelta.parse.xmldoc import Bases, child_bases

_GROUP: Final = frozenset({"media:group"})
_HOLDERS: Final = frozenset({"media:group", "media:content"})
# Item → group or content → a group's content.
_LEVELS: Final = 3
_AVATAR_WORDS: Final = frozenset({"avatar", "avatars"})
_IMAGE_EXTENSIONS: Final = frozenset(
    {"jpg", "jpeg", "jpe", "png", "gif", "webp", "avif", "svg", "bmp", "ico", "heic", "jxl"}
)
# Gravatar's (and its clones') name for a picture: the MD5 or SHA-256 of an address.
_ADDRESS_HASH: Final = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}")


def media_text(
    key: TagKey, elements: list[etree._Element], name: str, *, in_contents: bool = True
) -> tuple[str | None, TextKind]:
    """The text of the first non-empty ``name`` (``media:title``, ``media:description``)
    among an item's media elements (its ``media:`` children), and how to read it. The one
    closest to the item wins: the spec lets a deeper one describe a single rendition.
    ``in_contents``: whether one inside a ``media:content`` (one media object) counts,
    or only one on the item or its ``media:group``. An author's picture never counts."""
    holders = _HOLDERS if in_contents else _GROUP
    level = elements
    for _ in range(_LEVELS):
        for element in level:
            if key[element.tag] == name and text_of(element).strip():
                return _text(element)
        level = [
            child
            for element in level
            if key[element.tag] in holders and not is_avatar(key, element)
            for child in element
        ]
    return None, "text"


def _text(element: etree._Element) -> tuple[str, TextKind]:
    """A Media RSS text element: ``type="html"`` holds escaped HTML, any other is plain."""
    if (element.get("type") or "").strip().lower() == "html":
        return markup_of(element, is_text_markup=True), "html"
    return text_of(element), "text"


def is_avatar(key: TagKey, element: etree._Element) -> bool:
    """Whether a ``media:content`` is a person's picture, not the item's media (WordPress.com
    adds the author's Gravatar to every post). It must be an image: of declared medium
    "image" or type image/*, or of no declared kind with an image file extension; audio,
    video and other files never are. And its address must have an avatar's shape: a
    Gravatar host, or a path ending /avatar/<hash> (Gravatar and its clones), which alone
    also makes a content of no declared kind and no extension an image; a host named
    "avatar(s)" (avatars.githubusercontent.com); a site's top /avatar(s)/ folder; an
    "avatar" folder under wp-content/ (BuddyPress). An "avatar" folder deeper in a media
    path (/movies/avatar/poster.jpg) or a file named avatar.png is the item's media."""
    if key[element.tag] != "media:content":
        return False
    kind = _declared_kind(element)
    if kind == "other":
        return False
    url = (element.get("url") or "").strip().lower()
    scheme, slashes, rest = url.partition("//")
    if slashes and ("/" in scheme or "?" in scheme):
        return False  # "//" in a path or query, not before a host
    path = (rest if slashes else url).partition("?")[0].partition("#")[0]
    host = ""
    if slashes:
        host, _, path = path.partition("/")
        host = host.rpartition("@")[2].partition(":")[0]
    segments = [segment for segment in path.split("/") if segment]
    if not segments:
        return False
    stem, dot, extension = segments[-1].rpartition(".")
    if not dot:
        stem, extension = segments[-1], ""
    if extension and extension not in _IMAGE_EXTENSIONS:
        return False  # audio, video or another file
    folders = segments[:-1]
    if host == "gravatar.com" or host.endswith(".gravatar.com"):
        return True
    if folders and folders[-1] in _AVATAR_WORDS and _ADDRESS_HASH.fullmatch(stem):
        return True
    if kind is None and not extension:
        return False  # of no declared kind: no sign it is an image
    if host.partition(".")[0] in _AVATAR_WORDS:
        return True
    if folders and folders[0] in _AVATAR_WORDS:
        return True
    if "wp-content" in folders:
        return any("avatar" in folder for folder in folders[folders.index("wp-content") :])
    return False


def media_enclosures(
    key: TagKey,
    element: etree._Element,
    bases: Bases,
    has_xml_base: bool,
    found: list[Enclosure],
    found_before: list[Enclosure],
    issues: list[Issue],
) -> None:
    """Add to ``found`` the enclosures of a Media RSS ``media:content`` or of the
    ``media:content``s of a ``media:group`` (an RSS item's or an Atom entry's child), other
    than an author's picture; an item uses them when it has no enclosure of its own. To
    ``found_before``, the same as versions before read them (``bases``: the base now and
    as they read it; see itemurls). Reading stops one past ``MAX_ENCLOSURES``: that one
    is enough to report the cut."""
    if key[element.tag] == "media:content":
        contents = [element]
    else:
        contents = [child for child in element if key[child.tag] == "media:content"]
        bases = child_bases(element, *bases, issues) if has_xml_base else bases
    for content in contents:
        if itemurls.are_full(found, found_before):
            return  # one past the cap is read, to be reported
        if is_avatar(key, content):
            continue  # the author's picture (WordPress.com's Gravatar), not the item's media
        media_bases = child_bases(content, *bases, issues) if has_xml_base else bases
        itemurls.add_enclosure(
            found,
            found_before,
            content.get("url"),
            content.get("type"),
            content.get("fileSize"),
            media_bases,
            issues,
        )


def _declared_kind(element: etree._Element) -> str | None:
    """What a ``media:content`` says it is: "image", "other" (audio, video, a document),
    or ``None`` when it declares neither a medium nor a type."""
    medium = (element.get("medium") or "").strip().lower()
    media_type = (element.get("type") or "").strip().lower()
    if (medium and medium != "image") or (media_type and not media_type.startswith("image/")):
        return "other"
    return "image" if medium or media_type else None


def fallback_title(
    key: TagKey,
    itunes_title: str | None,
    elements: list[etree._Element],
    issues: list[Issue],
    *,
    unescape_twice: bool,
    has_title: bool,
    cuts: fields.Cuts | None = None,
    before: fields.ReadBefore | None = None,
) -> str | None:
    """The title of an item whose own title (RSS ``title`` or ``dc:title``, Atom ``title``)
    is missing or has no words: its ``itunes:title``, else its Media RSS title.

    itunes:title comes first: it names the episode, the item itself, where a media:title
    names a media object (and a deeper one a single rendition). itunes:title has no
    declared kind: it is read as an RSS title is, HTML only when it shows markup.

    ``has_title``: the item has a title element, empty or blank (an untitled WordPress
    post). Then a media:title on the item or its media:group still stands in, but not one
    inside a media:content: that names one picture of the post (WordPress.com adds one
    per image), not the post. Only an item with no title element at all (a photo feed
    whose items are the photos) takes it, as in feedparser, where a deeper title never
    replaces a shallower one, even an empty one."""
    found = fields.rss_title(
        itunes_title, issues, unescape_twice=unescape_twice, cuts=cuts, before=before
    )
    if found is not None:
        return found
    if not elements:
        return None
    raw, kind = media_text(key, elements, "media:title", in_contents=not has_title)
    return fields.title(raw, kind, issues, unescape_twice=unescape_twice, cuts=cuts, before=before)


_FLICKR_TAGS: Final = "urn:flickr:tags"


def media_tags(key: TagKey, elements: list[etree._Element], issues: list[Issue]) -> list[str]:
    """The tags of an item that has no category of its own: its Media RSS
    ``media:category`` and ``media:keywords`` on the item or its ``media:group`` (one in
    a ``media:content`` classifies one rendition). Each category is a tag, except
    Flickr's, whose scheme ``urn:flickr:tags`` lists tags separated by spaces (its RSS
    has no other); keywords are separated by commas."""
    found: list[str] = []
    for element in elements:
        name = key[element.tag]
        if name == "media:category":
            _add_tags(element, found, issues)
        elif name == "media:keywords":
            found.extend(keyword_tags(text_of(element), issues))
        elif name == "media:group":
            for child in element:
                child_name = key[child.tag]
                if child_name == "media:category":
                    _add_tags(child, found, issues)
                elif child_name == "media:keywords":
                    found.extend(keyword_tags(text_of(child), issues))
    return found


def keyword_tags(text: str, issues: list[Issue]) -> list[str]:
    """The tags of a comma-separated keyword list (``media:keywords``,
    ``itunes:keywords``)."""
    return list(filter(None, (fields.tag(part, issues) for part in text.split(","))))


def _add_tags(element: etree._Element, found: list[str], issues: list[Issue]) -> None:
    text = text_of(element)
    scheme = element.get("scheme")
    if scheme is not None and scheme.strip().lower() == _FLICKR_TAGS:
        values = text.split()
    else:
        values = [text]
    for value in values:
        tag = fields.tag(value, issues)
        if tag:
            found.append(tag)
