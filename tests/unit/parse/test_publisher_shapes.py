"""Shapes particular publishers serve: the fields a reader would show for them."""

from __future__ import annotations

import json

import pytest

from tap_feeddelta.models import Author
from tap_feeddelta.parse import parse_feed

_FEEDBURNER = "http://rssnamespace.org/feedburner/ext/1.0"


def test_feedburner_original_links_replace_the_proxy_links_in_rss() -> None:
    body = f"""<rss version="2.0" xmlns:feedburner="{_FEEDBURNER}"><channel><title>t</title>
<item><title>a</title><link>http://feedproxy.google.com/~r/Blog/~3/x/a.html</link>
<feedburner:origLink>https://blog.example/a.html</feedburner:origLink>
<enclosure url="http://feedproxy.google.com/~r/Blog/~5/y/a.mp3" length="100" type="audio/mpeg"/>
<feedburner:origEnclosureLink>https://blog.example/a.mp3</feedburner:origEnclosureLink></item>
<item><title>b</title><link>http://feedproxy.google.com/~r/Blog/~3/z/b.html</link>
<feedburner:origLink>javascript:alert(1)</feedburner:origLink></item>
</channel></rss>""".encode()
    first, second = parse_feed(body, None, "http://feeds.feedburner.com/Blog").items
    assert first.url == "https://blog.example/a.html"
    enclosures = [(e.url, e.length_bytes) for e in first.enclosures]
    assert enclosures == [("https://blog.example/a.mp3", 100)]
    # An original link that is no http(s) URL leaves the proxy link, which still works.
    assert second.url == "http://feedproxy.google.com/~r/Blog/~3/z/b.html"
    assert second.issues == ()


def test_feedburner_original_links_replace_the_proxy_links_in_atom() -> None:
    body = f"""<feed xmlns="http://www.w3.org/2005/Atom" xmlns:feedburner="{_FEEDBURNER}">
<title>t</title><entry><id>urn:a</id><title>a</title>
<link rel="alternate" href="http://feedproxy.google.com/~r/Blog/~3/x/a.html"/>
<link rel="enclosure" href="http://feedproxy.google.com/~r/Blog/~5/y/a.mp3" type="audio/mpeg"/>
<feedburner:origEnclosureLink>https://blog.example/a.mp3</feedburner:origEnclosureLink>
<feedburner:origLink>https://blog.example/a.html</feedburner:origLink></entry></feed>""".encode()
    (entry,) = parse_feed(body, None, "http://feeds.feedburner.com/Blog").items
    assert entry.url == "https://blog.example/a.html"
    assert [e.url for e in entry.enclosures] == ["https://blog.example/a.mp3"]


def test_an_rss_link_written_with_href_is_the_item_url() -> None:
    body = b"""<rss version="2.0"><channel><title>t</title>
<item><title>a</title><link href="https://t.example/a" rel="alternate"/></item>
<item><title>b</title><link href="https://t.example/b-self" rel="self"/></item>
<item><title>c</title><link href="https://t.example/ignored"/>
<link>https://t.example/c</link></item></channel></rss>"""
    items = parse_feed(body, None, "https://t.example/feed").items
    assert [item.url for item in items] == ["https://t.example/a", None, "https://t.example/c"]


def test_a_root_relative_permalink_guid_is_resolved_against_the_base() -> None:
    body = b"""<rss version="2.0"><channel><title>t</title>
<item><title>a</title><guid>/posts/a/</guid></item>
<item><title>b</title><guid>12345</guid></item>
<item><title>c</title><guid isPermaLink="false">/posts/c/</guid></item>
</channel></rss>"""
    items = parse_feed(body, None, "https://t.example/index.xml").items
    assert [(item.native_id, item.url) for item in items] == [
        ("/posts/a/", "https://t.example/posts/a/"),
        ("12345", None),
        ("/posts/c/", None),
    ]


def test_an_atom_entry_without_a_link_takes_its_http_id_as_url() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<entry><id>https://t.example/2026/c</id><title>c</title></entry>
<entry><id>tag:t.example,2026:d</id><title>d</title></entry>
<entry><id>https://t.example/e-id</id><title>e</title><link href="/e"/></entry>
</feed>"""
    items = parse_feed(body, None, "https://t.example/atom.xml").items
    assert [item.url for item in items] == ["https://t.example/2026/c", None, "https://t.example/e"]


def test_an_atom_mailto_uri_is_the_authors_email() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<author><name>Sam</name><uri>mailto:sam@notes.example</uri></author>
<entry><id>urn:a</id><title>a</title></entry>
<entry><id>urn:b</id><title>b</title><author><name>Kim</name><email>kim@notes.example</email>
<uri>mailto:other@notes.example</uri></author></entry></feed>"""
    feed = parse_feed(body, None, "https://notes.example/atom.xml")
    first, second = feed.items
    assert first.authors == (Author(name="Sam", email="sam@notes.example", url=None),)
    assert second.authors == (Author(name="Kim", email="kim@notes.example", url=None),)
    assert feed.issues == first.issues == second.issues == ()


def test_an_rss_author_with_name_and_email_children_is_read_as_a_person() -> None:
    body = b"""<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>t</title>
<item><title>a</title><author><name>Jane Roe</name><email>jane@news.example</email></author></item>
<item><title>b</title><author>"Jane Roe" &lt;jane@news.example&gt;</author></item>
<item><title>c</title><itunes:author><name>Jane Roe</name></itunes:author></item>
<item><title>d</title><author><b>Jane Roe</b> (jane@news.example)</author></item>
</channel></rss>"""
    items = parse_feed(body, None, "https://news.example/rss").items
    jane = Author(name="Jane Roe", email="jane@news.example", url=None)
    assert [item.authors for item in items] == [
        (jane,),
        (jane,),
        (Author(name="Jane Roe", email=None, url=None),),
        (jane,),  # markup that names no part of a person is read for its text
    ]


def test_html_in_an_author_name_is_read_for_its_words() -> None:
    # arXiv's RSS 1.0 listings link each author; a list of links is a list of authors.
    body = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://arxiv.org/"><title>cs.CL</title></channel>
<item rdf:about="http://arxiv.org/abs/1"><title>a</title>
<dc:creator> &lt;a href="http://arxiv.org/find/cs/1/au:+Smith_J/0/1/0/all/0/1"&gt;John Smith
&lt;/a&gt;
 , &lt;a href="http://arxiv.org/find/cs/1/au:+Doe_J/0/1/0/all/0/1"&gt;Jane O&amp;#8217;Doe&lt;/a&gt;
</dc:creator></item>
<item rdf:about="http://arxiv.org/abs/2"><title>b</title>
<dc:creator>&lt;a href="/people/kim"&gt;Kim Lee&lt;/a&gt;</dc:creator></item>
<item rdf:about="http://arxiv.org/abs/3"><title>c</title>
<dc:creator>&lt;b&gt;Smith, John&lt;/b&gt; and &lt;i&gt;Doe, Jane&lt;/i&gt;</dc:creator></item>
<item rdf:about="http://arxiv.org/abs/4"><title>d</title>
<dc:creator>Optional&lt;T&gt; Fan</dc:creator></item>
</rdf:RDF>"""
    items = parse_feed(body, None, "http://export.arxiv.org/rss/cs.CL").items
    assert [[author.name for author in item.authors] for item in items] == [
        ["John Smith", "Jane O\u2019Doe"],
        ["Kim Lee"],
        ["Smith, John and Doe, Jane"],  # not clearly a list: one name, without markup
        ["Optional<T> Fan"],  # no HTML: "<" is text
    ]


def test_atom_03_multipart_alternative_content_is_read_from_its_best_part() -> None:
    body = b"""<feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>t</title>
<entry><id>tag:a</id><title>a</title>
<content type="multipart/alternative" mode="xml">
<content type="text/plain">The plain words.</content>
<content type="text/html" mode="escaped">&lt;p&gt;The &lt;b&gt;HTML&lt;/b&gt;
words.&lt;/p&gt;</content>
</content></entry>
<entry><id>tag:b</id><title>b</title>
<content type="multipart/alternative"><content type="image/png" mode="base64">iVBO</content>
<content type="text/plain">Only plain.</content></content></entry>
<entry><id>tag:c</id><title>c</title>
<content type="multipart/alternative"><content type="image/png">x</content></content></entry>
</feed>"""
    items = parse_feed(body, None, "http://old.example/atom.xml").items
    assert [item.content_text for item in items] == ["The HTML words.", "Only plain.", None]


def test_json_feed_titles_and_summaries_decode_character_references() -> None:
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Example Blog &#8211; Thoughts",
        "description": "Notes &amp; links",
        "items": [
            {
                "id": "1",
                "title": "Don&#8217;t panic &amp; carry a towel",
                "summary": "Simple isn&#8217;t easy [&hellip;]",
            },
            {"id": "2", "title": "AT&T <T> news", "summary": "a & b"},
        ],
    }
    feed = parse_feed(json.dumps(document).encode(), None, "https://blog.example/feed.json")
    assert (feed.title, feed.description) == ("Example Blog \u2013 Thoughts", "Notes & links")
    assert [(item.title, item.summary) for item in feed.items] == [
        ("Don\u2019t panic & carry a towel", "Simple isn\u2019t easy [\u2026]"),
        ("AT&T <T> news", "a & b"),  # no reference: "&" and "<" are text
    ]


def test_an_atom_html_title_is_unescaped_once() -> None:
    # The XML text is HTML source: "Why &amp;nbsp;" there reads "Why &nbsp;".
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom">
<title type="html">Notes on &amp;amp;amp;</title>
<entry><id>urn:a</id><title type="html">Why &amp;amp;nbsp; breaks your layout</title></entry>
<entry><id>urn:b</id><title type="html">Escaping &amp;amp;lt;script&amp;amp;gt;</title></entry>
<entry><id>urn:c</id><title type="html">Tom &amp;amp; Jerry</title></entry>
<entry><id>urn:d</id><title>Tom &amp;amp; Jerry</title></entry>
</feed>"""
    feed = parse_feed(body, None, "https://t.example/atom.xml")
    assert feed.title == "Notes on &amp;"
    assert [item.title for item in feed.items] == [
        "Why &nbsp; breaks your layout",
        "Escaping &lt;script&gt;",
        "Tom & Jerry",
        "Tom &amp; Jerry",  # type="text": the text as it is
    ]


def test_html_in_a_podcast_s_itunes_summary_is_read_for_its_words() -> None:
    """itunes:summary is plain text by the spec, but podcast hosts put show notes there as
    HTML, escaped or raw; plain text holding "<" stays as written."""
    body = b"""<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>t</title>
<item><guid>1</guid><itunes:summary>Show notes:&lt;br&gt;guest &lt;b&gt;Sam&lt;/b&gt;
</itunes:summary></item>
<item><guid>2</guid><itunes:summary>Show notes:<br>guest <b>Kim</b></itunes:summary></item>
<item><guid>3</guid><itunes:summary>When a &lt; b holds</itunes:summary></item>
</channel></rss>"""
    items = parse_feed(body, None, "https://pod.example/feed").items
    assert [i.summary for i in items] == [
        "Show notes: guest Sam",
        "Show notes: guest Kim",
        "When a < b holds",
    ]


@pytest.mark.parametrize("element", ["itunes:summary", "description"])
def test_well_formed_raw_show_notes_read_with_spaces_between_blocks(element: str) -> None:
    """Raw markup that is well-formed XML (child elements of itunes:summary) reads as
    the same markup in description does: "Part one.Part two." ran the blocks together."""
    notes = "<p>Part one.</p><p>Part two.</p><ul><li>00:00 Intro</li><li>05:00 Main</li></ul>"
    body = f"""<rss version="2.0" xmlns:itunes="{_ITUNES}"><channel><title>t</title>
<item><guid>1</guid><{element}>{notes}</{element}></item></channel></rss>""".encode()
    feed = parse_feed(body, None, "https://pod.example/feed")
    assert "xml_recovered" not in {issue.code for issue in feed.issues}
    assert feed.items[0].summary == "Part one. Part two. 00:00 Intro 05:00 Main"


_MEDIA = "http://search.yahoo.com/mrss/"
_ITUNES = "http://www.itunes.com/dtds/podcast-1.0.dtd"


def test_wordpress_com_media_names_no_untitled_post_and_its_avatar_is_no_enclosure() -> None:
    """WordPress.com adds a media:content (with a media:title) for each image of a post and
    one for the author's Gravatar. An untitled post (<title></title>) stays untitled: a
    media:title inside a media:content names one picture, not the post. The avatar is the
    author's picture, not the post's media."""
    avatar = "https://0.gravatar.com/avatar/5f1e2d3c?s=96&amp;d=identicon&amp;r=G"
    body = f"""<rss version="2.0" xmlns:media="{_MEDIA}"
xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>Jane writes</title>
<item><title></title><link>https://jane.example/2025/06/03/1234/</link>
<dc:creator>janedoe42</dc:creator><description>Sunny day at the lake.</description>
<media:thumbnail url="https://jane.example/uploads/lake.jpg?w=1024"/>
<media:content url="https://jane.example/uploads/lake.jpg?w=1024" medium="image">
<media:title type="html">lake</media:title></media:content>
<media:content url="{avatar}" medium="image"><media:title type="html">janedoe42</media:title>
</media:content></item>
<item><title></title><link>https://jane.example/2025/06/02/1230/</link>
<media:content url="{avatar}" medium="image"><media:title type="html">janedoe42</media:title>
</media:content></item>
<item><link>https://jane.example/2025/06/01/1220/</link>
<media:content url="{avatar}" medium="image"><media:title type="html">janedoe42</media:title>
</media:content></item>
<item><title>Titled</title><link>https://jane.example/a/</link>
<media:content url="https://avatars.example/u/7?s=96" medium="image"/>
<media:content url="https://cdn.example/avatars/u7.png" medium="image"/>
<media:content url="https://cdn.example/2025/avatar.png" medium="image"/>
<media:content url="https://cdn.example/avatar/talk.mp4" type="video/mp4"/></item>
</channel></rss>""".encode()
    items = parse_feed(body, None, "https://jane.example/feed/").items
    assert [(item.title, [e.url for e in item.enclosures]) for item in items] == [
        (None, ["https://jane.example/uploads/lake.jpg?w=1024"]),
        (None, []),
        (None, []),  # no title element, but the only media:title is the avatar's
        (
            "Titled",
            ["https://cdn.example/2025/avatar.png", "https://cdn.example/avatar/talk.mp4"],
        ),
    ]


_HASH = "5f1e2d3c4b5a69788796a5b4c3d2e1f0"
# (media:content attributes, is it an author's picture)
_AVATAR_SHAPES = [
    (f'url="https://secure.gravatar.com/avatar/{_HASH}?s=96"', True),
    (f'url="https://www.gravatar.com/avatar/{_HASH}.jpg"', True),
    (f'url="https://cravatar.example/avatar/{_HASH}?s=96&amp;d=mm"', True),
    ('url="https://avatars.githubusercontent.com/u/7?v=4" medium="image"', True),
    ('url="https://avatars.example/u/7.png"', True),
    ('url="https://cdn.example/avatars/u7.png"', True),
    ('url="https://blog.example/wp-content/uploads/avatars/12/c0ffee-bpfull.jpg"', True),
    # Audio and video are never an author's picture, whatever their address.
    ('url="https://cdn.example.com/podcasts/avatar/episode-12.mp3" fileSize="31000000"', False),
    ('url="https://avatars.example.com/v/clip.mp4"', False),
    ('url="https://cdn.example/avatar/theme" medium="audio"', False),
    ('url="https://cdn.example/avatars/intro" type="audio/mpeg"', False),
    (f'url="https://secure.gravatar.com/avatar/{_HASH}.webm"', False),
    # An "avatar" folder deep in a media path is a topic, not a profile picture.
    ('url="https://img.example.com/movies/avatar/poster.jpg" type="image/jpeg"', False),
    ('url="https://img.example.com/movies/avatar/poster.jpg" medium="image"', False),
    # Of no declared kind and no image extension: a picture only at a Gravatar address.
    ('url="https://cdn.example/avatars/u7"', False),
    ('url="https://avatars.example/u/7"', False),
    ('url="https://blog.example/wp-content/uploads/2025/06/avatar.png"', False),
]


@pytest.mark.parametrize(
    ("attributes", "is_avatar"), _AVATAR_SHAPES, ids=[a for a, _ in _AVATAR_SHAPES]
)
def test_only_a_picture_at_an_avatar_shaped_address_is_an_author_s_picture(
    attributes: str, is_avatar: bool
) -> None:
    """An author's picture is no enclosure: Gravatar's /avatar/<hash>, an avatars.* host, a
    site's /avatars/ folder, WordPress's wp-content/.../avatars/. Audio, video and a
    picture whose path only mentions "avatar" deeper down are the item's media."""
    body = f"""<rss version="2.0" xmlns:media="{_MEDIA}"><channel><title>t</title>
<item><title>Ep 12</title><media:content {attributes}/></item></channel></rss>""".encode()
    (item,) = parse_feed(body, None, "https://e.example/feed").items
    assert (len(item.enclosures) == 0) is is_avatar


def test_a_media_title_inside_a_media_content_titles_only_an_item_with_no_title() -> None:
    """A media:title on the item or its media:group describes the item's media as a whole;
    one inside a media:content describes one object, and stands in only for an item that
    has no title element at all (a photo feed whose items are the photos), as in
    feedparser, where a deeper title never replaces a shallower one, even an empty one."""
    body = f"""<rss version="2.0" xmlns:media="{_MEDIA}"><channel><title>P</title>
<item><guid>1</guid><media:content url="https://p.example/1.jpg">
<media:title>Photo one</media:title></media:content></item>
<item><guid>2</guid><title> </title><media:content url="https://p.example/2.jpg">
<media:title>Not the post</media:title></media:content></item>
<item><guid>3</guid><title/><media:title>Item level</media:title>
<media:content url="https://p.example/3.jpg"><media:title>Not this</media:title></media:content>
</item>
<item><guid>4</guid><title/><media:group><media:content url="https://p.example/4.mp4">
<media:title>Rendition</media:title></media:content><media:title>Group level</media:title>
</media:group></item>
<item><guid>5</guid><title/><media:group><media:content url="https://p.example/5.mp4">
<media:title>Rendition</media:title></media:content></media:group></item>
</channel></rss>""".encode()
    items = parse_feed(body, None, "https://p.example/feed").items
    assert [item.title for item in items] == ["Photo one", None, "Item level", "Group level", None]


def test_media_categories_are_the_tags_of_an_item_that_has_no_category() -> None:
    """Flickr's RSS gives a photo's tags only in <media:category scheme="urn:flickr:tags">,
    separated by spaces; other Media RSS categories are one tag each (on the item or its
    media:group). An item's own categories win, as its enclosures win over media:content."""
    body = f"""<rss version="2.0" xmlns:media="{_MEDIA}"><channel><title>Flickr</title>
<item><title>Harbour at dusk</title><guid>1</guid>
<media:content url="https://live.staticflickr.com/1_b.jpg" type="image/jpeg"/>
<media:category scheme="urn:flickr:tags">harbour  dusk longexposure</media:category></item>
<item><title>Video</title><guid>2</guid><media:group>
<media:category scheme="http://gdata.youtube.com/schemas/2007/categories.cat" label="Music"
>Music</media:category><media:content url="https://v.example/2.mp4" type="video/mp4"/>
</media:group></item>
<item><title>Own categories</title><guid>3</guid><category>news</category>
<media:category scheme="urn:flickr:tags">not these</media:category></item>
<item><title>Rendition only</title><guid>4</guid><media:content url="https://v.example/4.mp4">
<media:category>one rendition</media:category></media:content>
<media:category scheme="urn:flickr:tags"> </media:category><media:category/></item>
</channel></rss>""".encode()
    items = parse_feed(body, None, "https://www.flickr.com/services/feeds/x").items
    assert [item.tags for item in items] == [
        ("harbour", "dusk", "longexposure"),
        ("Music",),
        ("news",),
        (),
    ]
    atom = f"""<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="{_MEDIA}"><title>t</title>
<entry><id>urn:1</id><title>a</title>
<media:category scheme="urn:flickr:tags">harbour dusk</media:category></entry>
<entry><id>urn:2</id><title>b</title><category term="own"/>
<media:category scheme="urn:flickr:tags">harbour dusk</media:category></entry>
</feed>""".encode()
    assert [item.tags for item in parse_feed(atom, None, "https://t.example/a").items] == [
        ("harbour", "dusk"),
        ("own",),
    ]


def test_keywords_are_the_tags_of_an_item_that_has_no_category() -> None:
    """Media RSS's media:keywords (on the item or its media:group) and podcasts'
    itunes:keywords are comma-separated lists; they tag an item without categories."""
    body = f"""<rss version="2.0" xmlns:media="{_MEDIA}" xmlns:itunes="{_ITUNES}">
<channel><title>t</title>
<item><title>a</title><guid>1</guid><media:keywords>kitty, cat,  big dog, </media:keywords></item>
<item><title>b</title><guid>2</guid><media:group><media:content url="https://v.example/2.mp4"/>
<media:keywords>tutorial,python</media:keywords></media:group></item>
<item><title>c</title><guid>3</guid><itunes:keywords>science,space ,</itunes:keywords></item>
<item><title>d</title><guid>4</guid><category>own</category>
<media:keywords>not, these</media:keywords><itunes:keywords>nor,these</itunes:keywords></item>
</channel></rss>""".encode()
    items = parse_feed(body, None, "https://t.example/rss").items
    assert [item.tags for item in items] == [
        ("kitty", "cat", "big dog"),
        ("tutorial", "python"),
        ("science", "space"),
        ("own",),
    ]


def test_an_itunes_author_reads_as_an_rss_author_does() -> None:
    """A bare email or "email (Name)" in itunes:author was taken for a name."""
    body = f"""<rss version="2.0" xmlns:itunes="{_ITUNES}"><channel><title>Show</title>
<itunes:author>host@show.example</itunes:author>
<item><title>a</title><guid>1</guid></item>
<item><title>b</title><guid>2</guid><itunes:author>jane@show.example (Jane Host)</itunes:author>
</item></channel></rss>""".encode()
    first, second = parse_feed(body, None, "https://show.example/rss").items
    assert first.authors == (Author(None, "host@show.example", None),)
    assert second.authors == (Author("Jane Host", "jane@show.example", None),)


def test_jira_items_are_dated_by_their_created_and_updated_elements() -> None:
    """Jira's issue RSS (version 0.92) dates an item only with unprefixed <created> and
    <updated>. They are read when the item has no other date of that kind."""
    body = b"""<rss version="0.92"><channel><title>Acme JIRA</title>
<item><title>[WID-42] Crash</title><link>https://jira.example/browse/WID-42</link>
<key id="10042">WID-42</key><status id="1">Open</status>
<created>Mon, 2 Jun 2025 09:12:00 +0000</created>
<updated>Tue, 3 Jun 2025 14:00:00 +0000</updated>
<comments><comment id="1" created="Tue, 3 Jun 2025 14:00:00 +0000">x</comment></comments>
</item>
<item><title>Dated</title><link>https://jira.example/browse/WID-43</link>
<pubDate>Wed, 4 Jun 2025 10:00:00 +0000</pubDate><created>Mon, 2 Jun 2025 09:12:00 +0000</created>
</item>
<item><title>Modified</title><link>https://jira.example/browse/WID-44</link>
<dcterms:modified xmlns:dcterms="http://purl.org/dc/terms/">2025-06-05T08:00:00Z</dcterms:modified>
<updated>Tue, 3 Jun 2025 14:00:00 +0000</updated><created>not a date</created></item>
</channel></rss>"""
    items = parse_feed(body, "text/xml;charset=UTF-8", "https://jira.example/sr/x.xml").items
    assert [(item.published_at, item.updated_at) for item in items] == [
        ("2025-06-02T09:12:00Z", "2025-06-03T14:00:00Z"),
        ("2025-06-04T10:00:00Z", None),
        (None, "2025-06-05T08:00:00Z"),
    ]
    assert [issue.code for issue in items[2].issues] == ["invalid_date"]


def test_google_s_redirect_links_are_read_as_the_page_they_lead_to() -> None:
    """Google Alerts links each entry through www.google.com/url?...&url=<page>&...; the
    item's URL is the page (checked as any URL), its id stays the entry's id."""

    def link(query: str) -> str:
        return f"https://www.google.com/url?{query}".replace("&", "&amp;")

    hrefs = [
        link("rct=j&sa=t&url=https://news.example.com/2025/06/03/acme-recall&ct=ga&usg=AOv"),
        link("url=https%3A%2F%2Fnews.example%2Fa%3Fb%3D1%26c%3D2&usg=x"),
        link("q=http://news.example/q-page&sa=U"),
        link("url=https://user:secret@news.example/cred"),
        link("url=javascript:alert(1)&usg=x"),
        link("sa=t&usg=x"),
        "https://www.google.com/search?q=https://news.example/not-a-redirect",
        "https://news.example/plain",
    ]
    entries = "".join(
        f"<entry><id>tag:google.com,2013:googlealerts/feed:{i}</id><title>t{i}</title>"
        f'<link href="{href}"/></entry>'
        for i, href in enumerate(hrefs)
    )
    body = f'<feed xmlns="http://www.w3.org/2005/Atom"><title>a</title>{entries}</feed>'
    items = parse_feed(body.encode(), None, "https://www.google.com/alerts/feeds/1/2").items
    assert [item.native_id for item in items] == [
        f"tag:google.com,2013:googlealerts/feed:{i}" for i in range(len(hrefs))
    ]
    assert [item.url for item in items] == [
        "https://news.example.com/2025/06/03/acme-recall",
        "https://news.example/a?b=1&c=2",
        "http://news.example/q-page",
        "https://news.example/cred",
        "https://www.google.com/url?url=javascript:alert(1)&usg=x",
        "https://www.google.com/url?sa=t&usg=x",
        "https://www.google.com/search?q=https://news.example/not-a-redirect",
        "https://news.example/plain",
    ]
    rss = f"""<rss version="2.0"><channel><title>a</title><item><title>r</title>
<link>{hrefs[0]}</link></item></channel></rss>""".encode()
    (item,) = parse_feed(rss, None, "https://www.google.com/alerts/feeds/1/2").items
    assert item.url == "https://news.example.com/2025/06/03/acme-recall"


def test_media_contents_are_an_atom_entry_s_enclosures_as_an_rss_item_s() -> None:
    """YouTube's Atom feed names a video only in media:group/media:content, and photo and
    video Atom feeds put media:content on the entry: when an entry has no enclosure link,
    they are its enclosures, read as RSS reads them (an author's picture is none)."""
    avatar = f"https://secure.gravatar.com/avatar/{_HASH}?s=96"
    media = [
        # YouTube: the group's content (not its thumbnail) is the video.
        '<media:group><media:title>Clip</media:title><media:content url="https://www.youtube'
        '.com/v/1?version=3" type="application/x-shockwave-flash" width="640" height="390"/>'
        '<media:thumbnail url="https://i.ytimg.com/vi/1/hqdefault.jpg"/></media:group>',
        # On the entry and in a group, in document order; the avatar is left out.
        '<media:content url="https://cdn.example/p.jpg" type="image/jpeg" fileSize="2345"/>'
        f'<media:content url="{avatar}" medium="image"/><media:group><media:content '
        'url="https://cdn.example/v.mp4" type="video/mp4" fileSize="1234567"/></media:group>',
        # The entry's own enclosure link wins.
        '<link rel="enclosure" href="https://cdn.example/own.mp3" type="audio/mpeg"/>'
        '<media:content url="https://cdn.example/not-this.mp3"/>',
        # Only the author's picture, or a content without a usable URL: none.
        f'<media:content url="{avatar}" medium="image"/><media:content url="javascript:x"/>'
        "<media:content/>",
    ]
    atom_entries = "".join(
        f"<entry><id>urn:{n}</id><title>e</title>{m}</entry>" for n, m in enumerate(media)
    )
    rss_items = "".join(
        f"<item><guid>{n}</guid><title>e</title>{m.replace('<link', '<atom:link')}</item>"
        for n, m in enumerate(media)
    )
    atom = f"""<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="{_MEDIA}"><title>t</title>
{atom_entries}</feed>""".encode()
    rss = f"""<rss version="2.0" xmlns:media="{_MEDIA}" xmlns:atom="http://www.w3.org/2005/Atom">
<channel><title>t</title>{rss_items}</channel></rss>""".encode()
    entries = parse_feed(atom, None, "https://t.example/atom").items
    items = parse_feed(rss, None, "https://t.example/rss").items
    found = [[(e.url, e.type, e.length_bytes) for e in entry.enclosures] for entry in entries]
    assert found == [
        [("https://www.youtube.com/v/1?version=3", "application/x-shockwave-flash", None)],
        [
            ("https://cdn.example/p.jpg", "image/jpeg", 2345),
            ("https://cdn.example/v.mp4", "video/mp4", 1234567),
        ],
        [("https://cdn.example/own.mp3", "audio/mpeg", None)],
        [],
    ]
    # The same media in RSS (an RSS item's atom:link is no enclosure): the same enclosures.
    assert [item.enclosures for item in items[:2]] == [entry.enclosures for entry in entries[:2]]
    assert [item.enclosures for item in items[3:]] == [entry.enclosures for entry in entries[3:]]
    assert [[i.code for i in entry.issues] for entry in entries] == [[], [], [], ["unsafe_url"]]
    assert items[3].issues == entries[3].issues
