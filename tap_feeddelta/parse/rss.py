"""RSS 0.90–0.94, 1.0 (RDF) and 2.0, with the usual modules (content, dc, media, itunes)."""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

from tap_feeddelta.errors import Issue, ParseError
from tap_feeddelta.models import Author, Enclosure, FeedFormat, ParsedFeed, ParsedItem
from tap_feeddelta.parse import fields, itemurls, markup
from tap_feeddelta.parse.aliases import with_reading_without_aliases
from tap_feeddelta.parse.budget import within_url_budget
from tap_feeddelta.parse.limits import MAX_ITEMS_READ
from tap_feeddelta.parse.media import (
    fallback_title,
    keyword_tags,
    media_enclosures,
    media_tags,
    media_text,
)
from tap_feeddelta.parse.names import (
    RDF_ABOUT,
    RSS_HOME,
    TagKey,
    link_relation,
    markup_of,
    tag_keys,
    text_of,
)
from tap_feeddelta.parse.persons import is_person, merged_authors, person
from tap_feeddelta.parse.xmldoc import (
    Bases,
    XmlDocument,
    bases_of,
    child_base,
    child_bases,
    cut_short,
    kept_items,
)

# A description in the XHTML namespace (a default one declared on it) is RSS's: XHTML has none.
_DESCRIPTIONS = frozenset({"description", "dc:description", "xhtml:description"})
# Media RSS elements read when the item lacks a title, description or tags of its own.
_MEDIA_TEXTS = frozenset({"media:description", "media:title", "media:category", "media:keywords"})


def rss_format(root_key: str, root: etree._Element) -> FeedFormat | None:
    """The RSS format of a root element, or ``None`` when it is no RSS root."""
    if root_key == "rdf:rdf":
        return "rss-1.0"
    if root_key == "rss":
        version = (root.get("version") or "").strip()
        return "rss-2.0" if version.startswith("2") else "rss-0.9x"
    if root_key == "channel":
        return "rss-0.9x"
    return None


def _home(root: etree._Element) -> frozenset[str]:
    """The RSS home namespaces of a document: the known ones, and the root's own (an RSS
    root is sometimes put in another default namespace, Atom's most often). The RDF
    namespace of an RSS 1.0 root is none: its children are in the RSS 1.0 namespace.
    (Either spelling of a namespace, with https or without its trailing "/", is the same.)"""
    tag = root.tag
    root_key = tag_keys(RSS_HOME)[tag]
    if ":" not in root_key or root_key.startswith("rdf:"):
        return RSS_HOME
    return RSS_HOME | {tag[1:].partition("}")[0] if tag.startswith("{") else ""}


def rss_feed(
    doc: XmlDocument, feed_format: FeedFormat, url: str, *, url_budget_bytes: int | None
) -> ParsedFeed:
    root = doc.root
    key = tag_keys(_home(root), root)
    # The channels, in document order: the first gives the feed's own fields, the
    # items of all are read (generators concatenate channels, or write an empty one first).
    channels: list[etree._Element] = []
    misplaced = 0  # channels and items in another format's namespace
    if key[root.tag] == "channel":
        channels.append(root)
    else:
        for child in root:
            name = key[child.tag]
            if name == "channel":
                channels.append(child)
            elif name[-8:] == ":channel" and name[0] != "?":
                misplaced += 1
    channel = channels[0] if channels else None
    issues = list(doc.issues)
    item_elements, has_more, misplaced_items = _item_elements(key, root, channels)
    if misplaced or misplaced_items:
        issues.append(_misplaced(misplaced + misplaced_items))
    parents = (*channels, root)
    item_elements, is_truncated = kept_items(doc, item_elements, key, "item", parents, issues)
    if is_truncated and not item_elements:
        raise ParseError("invalid_feed", cut_short(issues, "item"))
    if has_more:
        issues.append(Issue("too_many_items", f"Only the first {MAX_ITEMS_READ} items are read."))
    # The bases of the elements an xml:base applies on: None when the document has none.
    known_bases: dict[etree._Element, Bases] | None = {} if doc.has_xml_base else None
    bases = (
        (url, url)
        if known_bases is None
        else bases_of(channel if channel is not None else root, url, issues, known_bases)
    )
    base = bases[0]
    feed_authors: _Authors = ((), ())
    feed_values: dict[str, str | None] = {}
    if channel is not None:
        feed_authors = _channel(key, channel, bases, doc.has_xml_base, feed_values, issues)
    root_name = root.tag.rpartition("}")[2] if root.prefix is None else f"{root.prefix}:RDF"
    pointers = _pointers(root_name, channels, item_elements)
    items, is_over_budget = within_url_budget(
        (
            _item(key, element, pointer, url, known_bases, feed_authors)
            for element, pointer in zip(item_elements, pointers, strict=True)
        ),
        url_budget_bytes,
        feed_authors,
        "items",
        issues,
    )
    if key.reads_alias:  # versions before read the alias's elements as nothing
        then_key = tag_keys(_home(root), root, with_aliases=False)
        then_authors = (
            ((), ())
            if channel is None
            else _channel(then_key, channel, bases, doc.has_xml_base, {}, [])
        )
        items = tuple(
            [
                with_reading_without_aliases(
                    item, _item(then_key, element, pointer, url, known_bases, then_authors)
                )
                for item, element, pointer in zip(items, item_elements, pointers, strict=False)
            ]
        )
    feed_title = feed_values.get("title")
    feed_description = feed_values.get("description")
    new_feed_url = fields.url(feed_values.get("new_feed_url"), base, "new feed", issues)
    return ParsedFeed(
        format=feed_format,
        title=fields.rss_title(feed_title, issues),
        link=fields.url(
            feed_values.get("link"), feed_values.get("link_base", base), "feed", issues
        ),
        description=fields.summary(
            feed_description, markup.rss_description_kind(feed_description), issues
        ),
        language=fields.language(feed_values.get("language")),
        updated_at=fields.date(feed_values.get("updated"), "feed updated", issues),
        items=items,
        is_truncated=is_truncated or has_more or is_over_budget,
        new_feed_url=None if new_feed_url == url else new_feed_url,
        issues=tuple(issues),
    )


def _misplaced(count: int) -> Issue:
    return Issue(
        "items_ignored",
        f"{count} item or channel elements in another format's namespace (such as Atom's) "
        "were not read.",
    )


def _pointers(
    root_name: str, channels: list[etree._Element], item_elements: list[etree._Element]
) -> list[str]:
    """Where each item stands: ``/rss/channel/item[1]``, ``/rdf:RDF/item[1]`` beside the
    channel, ``/rss/channel[2]/item[1]`` in a document of several channels."""
    if channels and channels[0].getparent() is None:  # the channel is the root
        return [f"/{root_name}/item[{index}]" for index in range(1, len(item_elements) + 1)]
    positions: dict[etree._Element | None, str] = {
        channel: "/channel" if len(channels) == 1 else f"/channel[{index}]"
        for index, channel in enumerate(channels, 1)
    }
    first = item_elements[0].getparent() if item_elements else None
    if all(element.getparent() is first for element in item_elements):  # the usual feed
        path = f"/{root_name}{positions.get(first, '')}"  # "": the root
        return [f"{path}/item[{index}]" for index in range(1, len(item_elements) + 1)]
    counts: dict[etree._Element | None, int] = {}
    pointers = []
    for element in item_elements:
        parent = element.getparent()
        counts[parent] = count = counts.get(parent, 0) + 1
        pointers.append(f"/{root_name}{positions.get(parent, '')}/item[{count}]")
    return pointers


def _item_elements(
    key: TagKey, root: etree._Element, channels: list[etree._Element]
) -> tuple[list[etree._Element], bool, int]:
    """The item elements of the channels and of the root, in document order (RSS 1.0
    writes its items beside the channel, RSS 2.0 in it, and generators that mix them write
    items in both places), whether there were more than are read, and how many items in
    another format's namespace were not read (one in an extension's, written with a
    prefix, is none: ``?:item``)."""
    found: list[etree._Element] = []
    misplaced = 0
    for element in _channels_opened(key, root, channels):
        name = key[element.tag]
        if name == "item":
            if len(found) == MAX_ITEMS_READ:
                return found, True, misplaced
            found.append(element)
        elif name[-5:] == ":item" and name[0] != "?":
            misplaced += 1
    return found, False, misplaced


def _channels_opened(
    key: TagKey, root: etree._Element, channels: list[etree._Element]
) -> Iterator[etree._Element]:
    """The root's children in document order, each channel's children in its place (a
    channel that is the root is not opened twice)."""
    is_root_channel = bool(channels) and channels[0] is root
    for child in root:
        if not is_root_channel and key[child.tag] == "channel":
            yield from child
        else:
            yield child


# The authors of an item or a feed, and as versions before read them (their URLs).
_Authors = tuple[tuple[Author, ...], tuple[Author, ...]]


def _channel(
    key: TagKey,
    channel: etree._Element,
    bases: Bases,
    has_xml_base: bool,
    values: dict[str, str | None],
    issues: list[Issue],
) -> _Authors:
    """The channel's fields into ``values`` (``link_base``: the base of its link, when
    an xml:base of the link's own may apply), and its author (now, before)."""
    base = bases[0]
    # The authors of each author element, now and as read before (their URLs).
    authors: list[tuple[Author, ...]] = []
    authors_before: list[tuple[Author, ...]] = []
    editors: list[str] = []  # managingEditor texts, read only when no author has a name
    for child in channel:
        name = key[child.tag]
        if name == "item":
            continue
        if name in ("title", "dc:title") and not (values.get("title") or "").strip():
            values["title"] = markup_of(child, is_text_markup=True)  # an empty one is none
        elif name == "link" and not values.get("link"):
            values["link"] = text_of(child).strip()  # an empty <link/> hides no later one
            if has_xml_base:  # the link's own xml:base applies to it
                values["link_base"] = child_base(child, base, issues)
            if not values["link"] and "atomlink" not in values and _href_link(child):
                values["atomlink"] = _href_link(child)
                if has_xml_base:
                    values["atomlink_base"] = values["link_base"]
        elif name == "atom:link" and "atomlink" not in values:
            if link_relation(child.get("rel")) == "alternate" and child.get("href"):
                values["atomlink"] = child.get("href")
                if has_xml_base:
                    values["atomlink_base"] = child_base(child, base, issues)
        elif name in _DESCRIPTIONS and not (values.get("description") or "").strip():
            values["description"] = markup_of(child, is_text_markup=True)
        elif name in ("language", "dc:language") and "language" not in values:
            values["language"] = text_of(child)
        elif name in ("lastbuilddate", "pubdate", "dc:date", "dcterms:modified"):
            if "updated" not in values or name == "lastbuilddate":
                values["updated"] = text_of(child)
        elif name == "managingeditor":
            editors.append(text_of(child))
        elif name == "itunes:new-feed-url" and not values.get("new_feed_url"):
            values["new_feed_url"] = text_of(child)  # Apple's way to move a podcast
        elif name in ("dc:creator", "itunes:author", "author"):
            # "Name", "email (Name)", a bare email, a person: as an item's author reads
            found, found_before = _element_authors(key, child, bases, issues)
            authors.append(found)
            authors_before.append(found_before)
    if not values.get("link") and "atomlink" in values:
        values["link"] = values["atomlink"]
        if has_xml_base:
            values["link_base"] = values["atomlink_base"]
    shown = _show_author(authors, editors, base, issues)
    if authors_before == authors and not editors:
        shown_before = shown
    else:  # (an editor's text may be read otherwise before too)
        shown_before = _show_author(authors_before, editors, base, [], as_before=True)
    # Versions before kept only the first person the element names.
    then = next(((found,) for found in shown_before if found.name), shown_before[:1])
    return shown, shown if then == shown else then


def _show_author(
    authors: list[tuple[Author, ...]],
    editors: list[str],
    base: str | None,
    issues: list[Issue],
    *,
    as_before: bool = False,
) -> tuple[Author, ...]:
    """The feed's authors, whatever the order of its elements: all those named by the
    first of its author elements (``itunes:author``, ``dc:creator``, ``author``) to name
    someone (podcast co-hosts: "Jane Doe & John Smith"), else by the first of its
    ``managingEditor``s to; else those of the first found without a name (an email
    alone). At most ``MAX_AUTHORS``, as an item's. ``as_before``: the editors as versions
    before read them (``authors``: as they read them too)."""
    nameless: tuple[Author, ...] = ()
    for found in authors:
        if _names_someone(found):
            return fields.first_authors(found, issues)
        nameless = nameless or found
    for text in editors:
        now, before = fields.rss_author_readings(text, base, issues)
        found = before if as_before else now
        if _names_someone(found):
            return fields.first_authors(found, issues)
        nameless = nameless or found
    return fields.first_authors(nameless, issues)


def _names_someone(authors: tuple[Author, ...]) -> bool:
    return any(found.name for found in authors)


def _item(
    key: TagKey,
    element: etree._Element,
    pointer: str,
    document_url: str,
    known_bases: dict[etree._Element, Bases] | None,
    feed_authors: _Authors,
) -> ParsedItem:
    issues: list[Issue] = []
    cuts: fields.Cuts = []
    has_xml_base = known_bases is not None
    if known_bases is None:
        bases: Bases = (document_url, document_url)
    else:
        bases = bases_of(element, document_url, issues, known_bases)
    title = link = description = encoded = guid = published = dc_date = updated = None
    atom_published = created = plain_updated = None  # the last two: Jira's <created>, <updated>
    alternate = itunes_summary = itunes_title = itunes_keywords = original_link = None
    is_permalink = True
    # The bases of link, alternate and guid: an xml:base of the element's own applies.
    link_bases = alternate_bases = guid_bases = original_bases = bases
    authors: list[Author] = []
    itunes_authors: list[Author] = []
    # Both as versions before read them (their URLs), as are the enclosures below.
    authors_before: list[Author] = []
    itunes_authors_before: list[Author] = []
    tags: list[str] = []
    enclosures: list[Enclosure] = []
    media: list[Enclosure] = []
    enclosures_before: list[Enclosure] = []
    media_before: list[Enclosure] = []
    media_elements: list[etree._Element] = []  # read for a missing title or description
    original_enclosures: list[itemurls.Original] = []  # FeedBurner's, by enclosure index
    for child in element:
        name = key[child.tag]
        if name == "title" or name == "dc:title":
            if title is None or not title.strip():  # an empty <title/> hides no later one
                title = markup_of(child, is_text_markup=True)
        elif name == "link":
            if not link:
                link = text_of(child).strip()  # an empty <link/> hides no later one
                if has_xml_base:
                    link_bases = child_bases(child, *bases, issues)
                if not link and alternate is None:
                    alternate, alternate_bases = _href_link(child), link_bases
        elif name == "description" or name == "dc:description" or name == "xhtml:description":
            if description is None or not description.strip():  # an empty one hides none
                description = markup_of(child, is_text_markup=True)
        elif name == "pubdate" or name == "dcterms:issued":
            if published is None:
                published = text_of(child)
        elif name == "guid":
            if guid is None or not guid.strip():  # an empty <guid/> hides no later one
                guid = text_of(child)
                is_permalink = (child.get("isPermaLink") or "true").strip().lower() != "false"
                if has_xml_base:
                    guid_bases = child_bases(child, *bases, issues)
        elif name == "category" or name == "dc:subject":
            value = fields.tag(text_of(child), issues)
            if value:
                tags.append(value)
        elif name == "content:encoded" or name == "fullitem" or name == "xhtml:body":
            if encoded is None or not encoded.strip():
                encoded = markup_of(child, is_text_markup=name != "xhtml:body")
        elif name == "dc:creator" or name == "author" or name == "dc:author":
            found, found_before = _element_authors(key, child, bases, issues)
            authors.extend(found)
            authors_before.extend(found_before)
        elif name == "tags":
            tags.extend(keyword_tags(text_of(child), issues))
        elif name == "enclosure":
            if itemurls.are_full(enclosures, enclosures_before):
                continue  # one past the cap is read, to be reported
            itemurls.add_enclosure(
                enclosures,
                enclosures_before,
                child.get("url"),
                child.get("type"),
                child.get("length"),
                child_bases(child, *bases, issues) if has_xml_base else bases,
                issues,
            )
        elif name == "dc:date":
            if dc_date is None:
                dc_date = text_of(child)
        elif name == "dcterms:modified" or name == "atom:updated":
            if updated is None:
                updated = text_of(child)
        elif name == "atom:published":
            if atom_published is None:
                atom_published = text_of(child)
        elif name == "created":
            if created is None:
                created = text_of(child)
        elif name == "updated":
            if plain_updated is None:
                plain_updated = text_of(child)
        elif name == "media:content" or name == "media:group":
            media_enclosures(key, child, bases, has_xml_base, media, media_before, issues)
            media_elements.append(child)
        elif name in _MEDIA_TEXTS:
            media_elements.append(child)
        elif name == "atom:link":
            rel = link_relation(child.get("rel"))
            if rel == "alternate" and alternate is None:
                alternate = child.get("href")
                if has_xml_base:
                    alternate_bases = child_bases(child, *bases, issues)
        elif name == "itunes:author":
            found, found_before = _element_authors(key, child, bases, issues)
            itunes_authors.extend(found)
            itunes_authors_before.extend(found_before)
        elif name == "itunes:summary" and itunes_summary is None:
            # Raw markup (child elements) stays markup, as in description: its blocks
            # read as separate words.
            itunes_summary = markup_of(child, is_text_markup=True)
        elif name == "itunes:keywords" and itunes_keywords is None:
            itunes_keywords = text_of(child)
        elif name == "itunes:title" and not (itunes_title and itunes_title.strip()):
            itunes_title = markup_of(child, is_text_markup=True)
        elif name == "feedburner:origlink" and original_link is None:
            original_link = text_of(child)
            if has_xml_base:
                original_bases = child_bases(child, *bases, issues)
        elif name == "feedburner:origenclosurelink" and not itemurls.are_full(
            enclosures, enclosures_before
        ):  # It follows the enclosure it stands for.
            original_enclosures.append(
                itemurls.original_of_last(enclosures, enclosures_before, text_of(child))
            )
    if published is None:
        published = atom_published
    if published is None:
        published, dc_date = dc_date, None
    if published is None:
        published = created
    if updated is None:
        updated = dc_date if dc_date is not None else plain_updated
    native_id = fields.native_id(guid, issues)
    if native_id is None and element.get(RDF_ABOUT):
        native_id = fields.native_id(element.get(RDF_ABOUT), issues)
    # FeedBurner's <link> is its redirect; the original link is the page itself. Each
    # next candidate is read while the URL now or as read before has none yet.
    url = (
        itemurls.original_url(original_link, *original_bases)
        if original_link
        else itemurls.NONE_READ
    )
    if link and None in url:
        url = itemurls.next_url(url, link, *link_bases, "item", issues)
    if alternate and None in url:
        url = itemurls.next_url(url, alternate, *alternate_bases, "item", issues)
    if None in url and native_id and is_permalink:
        if native_id.startswith(("http://", "https://")):
            url = itemurls.next_url(url, native_id, None, None, "item", issues)
        elif native_id.startswith("/"):  # a site generator without its base URL
            url = itemurls.next_url(url, native_id, *guid_bases, "item", issues)
    url = itemurls.item_url(url)
    before: fields.ReadBefore = {}
    summary = fields.summary(description, markup.rss_description_kind(description), issues, cuts)
    if summary is None:  # no description, or one without words ("<![CDATA[ ]]>")
        summary = _fallback_summary(key, itunes_summary, media_elements, issues, cuts, before)
    if original_enclosures:
        itemurls.with_original_urls(enclosures, enclosures_before, original_enclosures, bases)
    if not tags and media_elements:  # Flickr's tags are only in media:category
        tags = media_tags(key, media_elements, issues)
    if not tags and itunes_keywords:  # podcasts often have no other
        tags = keyword_tags(itunes_keywords, issues)
    item_title = fields.rss_title(title, issues, cuts=cuts, before=before)
    if item_title is None:  # no title, or one without words
        has_title = any(key[child.tag] in ("title", "dc:title") for child in element)
        item_title = fallback_title(
            key,
            itunes_title,
            media_elements,
            issues,
            unescape_twice=True,
            has_title=has_title,
            cuts=cuts,
            before=before,
        )
    listed = authors or itunes_authors
    merged = merged_authors(listed) if len(listed) > 1 else listed
    # Versions before listed one person once per element, and read URLs otherwise.
    listed_before = authors_before or itunes_authors_before
    offered, offered_before = enclosures or media, enclosures_before or media_before
    # Read in the order of the fields, which is the order of their issues.
    content_text = fields.content(encoded, "html", issues, cuts)
    item_authors = fields.first_authors(merged, issues) or feed_authors[0]
    item_tags = fields.tags_without_markup(fields.item_tags(tags, issues), before)
    published_at = fields.date(published, "published", issues)
    updated_at = fields.date(updated, "updated", issues)
    item_enclosures = itemurls.first_enclosures(offered, issues)
    if url[1] is not url[0] or offered_before != offered:
        itemurls.record_before(before, url, offered, offered_before, item_enclosures)
    if merged is not listed or listed_before != listed or feed_authors[1] is not feed_authors[0]:
        authors_then = fields.first_authors(listed_before, []) or feed_authors[1]
        if merged is not listed or authors_then != item_authors:
            before["authors"] = authors_then
    # Positional (faster than keywords), read_before given rather than replaced after
    # (inherited co-hosts give one to each item); the order is checked by test_fields.py.
    return ParsedItem(
        native_id,  # native_id
        "guid" if native_id is not None else None,  # native_id_source
        url[0],  # url (Google Alerts: the page, not the redirect)
        item_title,  # title
        summary,  # summary
        content_text,  # content_text
        item_authors,  # authors
        item_tags,  # tags
        published_at,  # published_at
        updated_at,  # updated_at
        item_enclosures,  # enclosures
        pointer,  # source_pointer
        tuple(issues) if len(issues) < 2 else fields.distinct_issues(issues),  # issues
        tuple(cuts) if cuts else (),  # cut_digests
        tuple(before.items()) if before else (),  # read_before
    )


def _element_authors(
    key: TagKey, element: etree._Element, bases: Bases, issues: list[Issue]
) -> _Authors:
    """An item's author element: a person when its children are ``<name>``/``<email>``
    (templates made for Atom), else its text (around any markup); with the authors as
    versions before read them (their URLs, a placeholder address as an email)."""
    if len(element) and is_person(key, element):
        found, found_before = person(key, element, bases, True, issues)  # True: own xml:base
        now = _listed(found)
        return now, now if found_before is found else _listed(found_before)
    return fields.rss_author_readings(text_of(element), bases[0], issues)


def _href_link(element: etree._Element) -> str | None:
    """The URL of an empty ``<link>`` written as Atom writes it (``href``, feeds made from
    Atom templates), when it is an alternate link."""
    href = element.get("href")
    return href if href and link_relation(element.get("rel")) == "alternate" else None


def _fallback_summary(
    key: TagKey,
    itunes_summary: str | None,
    media_elements: list[etree._Element],
    issues: list[Issue],
    cuts: fields.Cuts,
    before: fields.ReadBefore,
) -> str | None:
    """The summary of an item whose description gives none: its ``itunes:summary``, else
    its Media RSS description. itunes:summary is plain text by the spec, but podcast
    hosts put HTML show notes there: read as HTML when it shows an end tag, a reference,
    a void tag or a tag active as written (titles, which often name a tag, need more).
    Versions before read show notes showing only an active tag as plain text: ``before``
    gets that reading where it differs."""
    summary = None
    shows_html = False
    if itunes_summary:
        shows_html = markup.text_shows_html(itunes_summary)
        notes = itunes_summary if shows_html else _as_html_text(itunes_summary)
        summary = fields.summary(notes, "html", issues, cuts)
    if summary is None and media_elements:
        raw, kind = media_text(key, media_elements, "media:description")
        summary = fields.summary(raw, kind, issues, cuts)
    if itunes_summary and shows_html and not markup.showed_html_before(itunes_summary):
        fields.summary_read_before(_as_html_text(itunes_summary), "html", summary, before)
    return summary


def _as_html_text(text: str) -> str:
    """Plain text written as HTML that reads as it: its "&" and "<" escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _listed(found: Author | None) -> tuple[Author, ...]:
    return () if found is None else (found,)
