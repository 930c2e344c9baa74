"""Element names as short keys, and the text held by an element.

Feeds mix namespaces freely (and sometimes get them wrong), so each tag is mapped once
per document kind to a key: the "home" namespaces of the format give bare lowercase local
names (``title``), known extension namespaces give ``prefix:local`` (``dc:creator``),
anything else gives a key that matches nothing. Lookups are cached per tag string.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Final, cast

from lxml import etree

from tap_feeddelta.errors import ParseError
from tap_feeddelta.parse.limits import MAX_RAW_TEXT_CHARS, MAX_URL_BYTES

RSS_HOME: Final = frozenset(
    {
        "",
        "http://purl.org/rss/1.0/",
        "http://my.netscape.com/rdf/simple/0.9/",
        "http://backend.userland.com/rss2",
        "http://backend.userland.com/rss",
        "http://blogs.law.harvard.edu/tech/rss",
        "http://purl.org/net/rss1.1#",
    }
)
ATOM_HOME: Final = frozenset({"", "http://www.w3.org/2005/Atom", "http://purl.org/atom/ns#"})

_PREFIXES: Final = {
    "http://www.w3.org/2005/atom": "atom",
    "http://purl.org/atom/ns#": "atom",
    "http://purl.org/dc/elements/1.1/": "dc",
    "http://purl.org/dc/elements/1.0/": "dc",
    "http://purl.org/dc/terms/": "dcterms",
    "http://purl.org/rss/1.0/modules/content/": "content",
    "http://search.yahoo.com/mrss/": "media",
    "http://www.itunes.com/dtds/podcast-1.0.dtd": "itunes",
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
    "http://www.w3.org/1999/xhtml": "xhtml",
    "http://rssnamespace.org/feedburner/ext/1.0": "feedburner",
}
# Other names generators give the same namespaces, which versions before read as no known
# one (as nothing): the readers record how they read an item then (``TagKey.reads_alias``).
# Found in real feeds or kept by other feed readers (feedparser, feedsmith,
# audiofluidity-rss); the scheme, case and a trailing "/" never matter (_namespace_key).
ALIASES: Final = {
    # Media RSS: the RSS Advisory Board's page for its spec (Squarespace), Yahoo's video
    # search (SourceForge's file feeds) and its tools site, where the spec first was.
    "http://www.rssboard.org/media-rss": "media",
    "http://video.search.yahoo.com/mrss/": "media",
    "http://tools.search.yahoo.com/mrss/": "media",
    "http://search.yahoo.com/rss": "media",
    # iTunes: copied from an example (feedparser reads it too).
    "http://example.com/DTDs/PodCast-1.0.dtd": "itunes",
    # Dublin Core elements: its namespace's documentation page (GlobeNewswire).
    "http://dublincore.org/documents/dcmi-namespace/": "dc",
}


def _namespace_key(namespace: str) -> str:
    """A namespace URI as the prefix table knows it: lowercase, without its scheme, its
    surrounding whitespace or a trailing "/"."""
    key = namespace.strip().lower()
    for scheme in ("http://", "https://"):
        if key.startswith(scheme):
            key = key[len(scheme) :]
            break
    return key.rstrip("/")


# Feeds write the same namespace with https:// and with or without a trailing "/".
_PREFIX_OF_KEY_BEFORE: Final = {
    _namespace_key(namespace): prefix for namespace, prefix in _PREFIXES.items()
}
_ALIAS_KEYS: Final = frozenset(_namespace_key(namespace) for namespace in ALIASES)
_PREFIX_OF_KEY: Final = {
    **_PREFIX_OF_KEY_BEFORE,
    **{_namespace_key(namespace): prefix for namespace, prefix in ALIASES.items()},
}
# Prefixes that recovery may leave unbound ("dc:creator" without a namespace).
_KNOWN_PREFIXES: Final = frozenset(
    {"atom", "dc", "dcterms", "content", "media", "itunes", "rdf", "feedburner"}
)
RDF_NAMESPACE: Final = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_ABOUT: Final = f"{{{RDF_NAMESPACE}}}about"
XML_LANG: Final = "{http://www.w3.org/XML/1998/namespace}lang"


_IANA_RELATION: Final = "http://www.iana.org/assignments/relation/"


def link_relation(raw: str | None) -> str:
    """An Atom link's relation: "alternate" when it has none, and a registered relation
    written as its IANA URI (RFC 4287 4.2.7.2) read as its name."""
    if not raw:
        return "alternate"
    rel = raw.strip()
    if rel.startswith(_IANA_RELATION):
        return rel[len(_IANA_RELATION) :] or "alternate"
    return rel


# An element's tag is its namespace name (a URI) and its local name. lxml copies the
# whole tag each time it is read: a namespace of a megabyte on thousands of short
# prefixed elements would take gigabytes, so a longer tag ends the reading at once.
MAX_TAG_CHARS: Final = MAX_URL_BYTES + 256


def _tag_too_long() -> ParseError:
    return ParseError(
        "invalid_feed", f"An element's namespace name is longer than {MAX_URL_BYTES:,} bytes."
    )


class TagKey(dict[object, str]):
    """Element tag → key, for a document whose own namespaces are ``home``: read as
    ``key[element.tag]``, a plain dict lookup once a tag has been seen (a document has
    few distinct tags; at most 4096 are kept). A home namespace, like a known one, is
    matched with either scheme and with or without a trailing "/".

    An element of an unknown namespace written without a prefix (under a default
    namespace declared below the root: an aggregator's copy of an item keeps its
    source's) is read as the format's own, as the root's own namespace is; one written
    with a prefix is an extension's, read as nothing. Which it is comes from the first
    element of that tag in ``root``'s document: the document is read once, in order and
    only as far as a tag asked about first appears, noting each tag's first prefix on the
    way, so every element is looked at once at most, however many tags there are.

    ``with_aliases``: whether the other names of known namespaces (``ALIASES``) are
    known, or read as versions before read them; ``reads_alias``: whether one was read."""

    __slots__ = ("_elements", "_firsts", "_prefixes", "_shared", "home", "reads_alias")

    def __init__(
        self,
        home: frozenset[str],
        root: etree._Element | None = None,
        *,
        with_aliases: bool = True,
    ) -> None:
        self.home = _home_keys(home)
        self._shared = _shared_keys(self.home, with_aliases=with_aliases)
        super().__init__(self._shared)
        self._prefixes = _PREFIX_OF_KEY if with_aliases else _PREFIX_OF_KEY_BEFORE
        self.reads_alias = False
        # The elements not yet read, and namespace → local name → whether the first
        # element of that tag has no prefix (each namespace string is kept once).
        self._elements = None if root is None else root.iter(etree.Element)
        self._firsts: dict[str, dict[str, bool]] = {}

    def __missing__(self, tag: object) -> str:
        is_shared = True  # a key that depends on no document is kept for the next ones
        if not isinstance(tag, str):
            result = ""  # comment, processing instruction, entity
        elif len(tag) > MAX_TAG_CHARS:
            raise _tag_too_long()
        elif tag.startswith("{"):
            namespace, _, local = tag[1:].partition("}")
            namespace_key = _namespace_key(namespace)
            if namespace_key in self.home:
                result = local.lower()
            else:
                prefix = self._prefixes.get(namespace_key, "")
                if prefix:
                    result = f"{prefix}:{local.lower()}"
                    if namespace_key in _ALIAS_KEYS:
                        self.reads_alias = True  # a document's own: not kept
                        is_shared = False
                else:
                    is_shared = False
                    result = (
                        local.lower() if self._is_unprefixed(namespace, local) else "?:" + local
                    )
        elif ":" in tag:
            prefix, _, local = tag.partition(":")
            result = f"{prefix.lower()}:{local.lower()}" if prefix in _KNOWN_PREFIXES else "?:"
        else:
            result = tag.lower()
        if len(self) < 4096:
            self[tag] = result
        if is_shared and len(self._shared) < _MAX_SHARED_KEYS:
            self._shared[tag] = result
        return result

    def _is_unprefixed(self, namespace: str, local: str) -> bool:
        """Whether the document writes the first element of this tag without a prefix."""
        firsts = self._firsts.get(namespace)
        if firsts is not None and local in firsts:
            return firsts[local]
        if self._elements is None:
            return False  # no document, or not in it
        for element in self._elements:
            tag = element.tag
            if tag[0] != "{":
                continue
            if len(tag) > MAX_TAG_CHARS:
                raise _tag_too_long()
            # Compared as strings: an asterisk in a namespace is no wildcard here.
            element_namespace, _, element_local = tag[1:].partition("}")
            firsts = self._firsts.get(element_namespace)
            if firsts is None:
                firsts = self._firsts[element_namespace] = {}
            if element_local not in firsts:
                firsts[element_local] = is_unprefixed = element.prefix is None
                if element_local == local and element_namespace == namespace:
                    return is_unprefixed
        self._elements = None
        return False


# The keys that depend on no document, by home namespaces and aliases: a document's
# tags are mostly those of the documents before, and filling a table anew cost a tenth of
# a small document's parse. Bounded: documents of made-up tags or namespaces fill them
# once, and are then read as before, key by key.
_SHARED_KEYS: Final[dict[tuple[frozenset[str], bool], dict[object, str]]] = {}
_MAX_SHARED_KEYS: Final = 512
_MAX_SHARED_TABLES: Final = 16


def _shared_keys(home: frozenset[str], *, with_aliases: bool) -> dict[object, str]:
    """The keys kept for documents of these home namespaces (a new table, not kept, when
    there are already too many)."""
    table = _SHARED_KEYS.get((home, with_aliases))
    if table is None:
        table = {}
        if len(_SHARED_KEYS) < _MAX_SHARED_TABLES:
            table = _SHARED_KEYS.setdefault((home, with_aliases), table)
    return table


@lru_cache(maxsize=64)
def _home_keys(home: frozenset[str]) -> frozenset[str]:
    """The keys of a set of home namespaces: a few sets serve every document (RSS's and
    Atom's, and an RSS root's own namespace beside RSS's), and every document reads the
    table two or three times, which cost a tenth of a small document's parse."""
    return frozenset(_namespace_key(namespace) for namespace in home)


def tag_keys(
    home: frozenset[str], root: etree._Element | None = None, *, with_aliases: bool = True
) -> TagKey:
    """A caching mapping: element tag → key, for a document whose own namespaces are
    ``home`` (and whose root is ``root``; ``with_aliases``: see ``TagKey``)."""
    return TagKey(home, root, with_aliases=with_aliases)


def text_of(element: etree._Element) -> str:
    """All text inside the element (its own and its descendants'), bounded in length."""
    if len(element):
        text = "".join(cast("Iterator[str]", element.itertext()))
    else:
        own = element.text
        if own is None:
            return ""
        text = own
    return text if len(text) <= MAX_RAW_TEXT_CHARS else text[:MAX_RAW_TEXT_CHARS]


def markup_of(element: etree._Element, *, is_text_markup: bool) -> str:
    """The element's content as HTML source, bounded in length.

    ``is_text_markup`` (RSS ``description``, Atom ``type="html"``): the element's own text
    is escaped HTML, the source itself. Naked child elements there are markup as they are,
    their text stays text (``<p>Use &lt;b&gt;</p>`` says "Use <b>"), except for a lone
    ``<div>`` holding only text (the "typepad" shape): that text is escaped HTML too.
    Otherwise (XHTML) the children are markup and all text stays text.
    """
    own = element.text or ""
    if is_text_markup:
        text = own if len(element) == 0 else own + _naked_children_markup(element)
    else:
        if "&" in own or "<" in own:
            own = own.replace("&", "&amp;").replace("<", "&lt;")
        text = own + "".join(etree.tostring(child, encoding="unicode") for child in element)
    return text[:MAX_RAW_TEXT_CHARS] if len(text) > MAX_RAW_TEXT_CHARS else text


def _naked_children_markup(element: etree._Element) -> str:
    """The HTML source of the child elements of an element whose own text is escaped
    HTML: each child serialized as it is, each tail (text of the element) as source."""
    if len(element) == 1:
        only = element[0]
        if not len(only) and isinstance(only.tag, str) and only.tag.rpartition("}")[2] == "div":
            return (only.text or "") + (only.tail or "")  # typepad: the div holds the source
    return "".join(
        etree.tostring(child, encoding="unicode", with_tail=False) + (child.tail or "")
        for child in element
    )
