"""Web pages: which feeds a page advertises, and in what order."""

from __future__ import annotations

import pytest

from tap_feeddelta.errors import ParseError
from tap_feeddelta.parse import parse_feed
from tap_feeddelta.parse.discovery import chosen_feed


def _advertised(page: str, url: str) -> list[str]:
    with pytest.raises(ParseError) as caught:
        parse_feed(page.encode(), "text/html; charset=utf-8", url)
    assert caught.value.code == "not_a_feed"
    return list(caught.value.advertised_feeds)


def test_feed_types_schemes_and_spellings_that_pages_use() -> None:
    page = """<!DOCTYPE html><html><head><title>Blog</title>
<LINK REL="Alternate" TYPE="Application/RSS+XML" HREF="/feed.xml">
<link rel="alternate home" type="application/atom+xml; charset=utf-8" href="atom.xml">
<link rel="alternate" type="application/json" title="JSON Feed" href="/feed.json">
<link rel="alternate" type="application/feed+json" href="/feed2.json">
<link rel="alternate" type="text/xml" title="RSS 0.92" href="/rss092.xml">
<link rel="alternate" type="application/rss+xml" href="feed://blog.example.com/legacy.rss">
<link rel="alternate" type="application/rss+xml" href="feed:https://blog.example.com/s.rss">
<link rel="alternate" type="application/json+oembed" href="/oembed">
<link rel="alternate" type="text/xml+oembed" href="/oembed.xml">
<link rel="alternate" hreflang="fr" type="text/html" href="/fr/">
</head><body></body></html>"""
    assert _advertised(page, "https://blog.example.com/posts/index.html") == [
        "https://blog.example.com/feed.xml",
        "https://blog.example.com/posts/atom.xml",
        "https://blog.example.com/feed2.json",
        "https://blog.example.com/rss092.xml",
        "http://blog.example.com/legacy.rss",
        "https://blog.example.com/s.rss",
        "https://blog.example.com/feed.json",  # plain JSON: after every other feed
    ]


def test_a_json_feed_advertised_as_plain_json_is_found() -> None:
    page = """<html><head><title>Micro.blog-style page</title>
<link rel="alternate" type="application/json" title="JSON Feed" href="/feed.json">
</head><body></body></html>"""
    assert _advertised(page, "https://me.example.com/") == ["https://me.example.com/feed.json"]


def test_a_wordpress_rest_api_link_comes_after_the_feeds() -> None:
    page = """<!DOCTYPE html><html lang="en-US"><head><title>Site</title>
<link rel="https://api.w.org/" href="https://site.example/wp-json/" />
<link rel="alternate" type="application/json" href="https://site.example/wp-json/wp/v2/pages/2" />
<link rel="alternate" type="application/rss+xml" href="https://site.example/feed/" />
<link rel="alternate" type="application/rss+xml" href="https://site.example/comments/feed/" />
</head><body></body></html>"""
    assert _advertised(page, "https://site.example/")[:2] == [
        "https://site.example/feed/",
        "https://site.example/comments/feed/",
    ]


WEAK_LINKS_TO_NO_FEED = {
    "rest-api": "https://site.example/wp-json/wp/v2/pages/2",
    "rest-api-in-a-subfolder": "https://site.example/blog/wp-json/wp/v2/posts/7",
    "rest-api-plain-permalinks": "https://site.example/?rest_route=/wp/v2/pages/2",
    "rest-api-plain-permalinks-index": "https://site.example/index.php?rest_route=%2Fwp%2Fv2%2Fpages%2F2",
    "oembed": "https://site.example/oembed/1.0/embed?url=x",
}


@pytest.mark.parametrize("href", WEAK_LINKS_TO_NO_FEED.values(), ids=WEAK_LINKS_TO_NO_FEED.keys())
def test_a_wordpress_rest_api_link_is_no_feed(href: str) -> None:
    """WordPress prints its REST API link as application/json on every page: a site whose
    feeds are turned off was read as a broken JSON Feed, fetched every run."""
    page = f"""<!DOCTYPE html><html lang="en-US"><head><title>Site</title>
<link rel="https://api.w.org/" href="https://site.example/wp-json/" />
<link rel="alternate" title="JSON" type="application/json" href="{href}" />
</head><body></body></html>"""
    assert _advertised(page, "https://site.example/") == []


HTML_NOTICE = (
    "<br />\n<b>Deprecated</b>:  Creation of dynamic property WP_Theme::$x is deprecated in "
    "<b>/var/www/html/wp-content/themes/old/functions.php</b> on line <b>42</b><br />\n"
)
TEXT_NOTICE = "PHP Notice:  Undefined index: x in /var/www/html/index.php on line 42\n"
NOTICES = {"html-notices": HTML_NOTICE, "text-notices": TEXT_NOTICE}


@pytest.mark.parametrize("notice", NOTICES.values(), ids=NOTICES.keys())
@pytest.mark.parametrize("count", [3, 100])
def test_a_page_behind_a_server_s_warnings_is_searched_for_feeds(notice: str, count: int) -> None:
    """PHP with display_errors prints its notices before the page: past 4 KB of them,
    the page was no longer recognised as HTML, and its feed links never searched."""
    page = notice * count + (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Blog</title>"
        '<link rel="alternate" type="application/rss+xml" href="/feed/" />'
        "</head><body><p>Hello</p></body></html>"
    )
    assert _advertised(page, "https://blog.example/") == ["https://blog.example/feed/"]


def test_the_first_base_applies_to_links_before_it() -> None:
    page = """<!DOCTYPE html><html><head>
<link rel="alternate" type="application/rss+xml" href="feed.xml">
<base href="https://static.example.org/site/"><base href="https://other.example.org/">
<title>t</title></head><body></body></html>"""
    assert _advertised(page, "https://www.example.com/blog/post/") == [
        "https://static.example.org/site/feed.xml"
    ]


def _advertised_bytes(page: bytes, content_type: str, url: str) -> list[str]:
    with pytest.raises(ParseError) as caught:
        parse_feed(page, content_type, url)
    assert caught.value.code == "not_a_feed"
    return list(caught.value.advertised_feeds)


CYRILLIC_PAGE = (
    "<!DOCTYPE html><html><head>{meta}<title>Сайт</title>"
    '<link rel="alternate" type="application/rss+xml" href="/лента.xml"></head>'
    "<body>Привет</body></html>"
)
META_CHARSETS = {
    "meta-charset": '<meta charset="windows-1251">',
    "meta-charset-unquoted": "<META CHARSET=windows-1251 />",
    "meta-http-equiv": (
        '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
    ),
    "meta-http-equiv-content-first": (
        "<meta content='text/html;charset=\"windows-1251\"' http-equiv=content-type>"
    ),
}


@pytest.mark.parametrize("meta", META_CHARSETS.values(), ids=META_CHARSETS.keys())
def test_a_page_that_names_its_charset_in_a_meta_element_is_read_in_it(meta: str) -> None:
    """Before, only a BOM or the HTTP charset named a page's encoding: a windows-1251 page
    with <meta charset> was read as windows-1252, and its feed link came out mojibake."""
    page = CYRILLIC_PAGE.format(meta=meta).encode("cp1251")
    assert _advertised_bytes(page, "text/html", "https://site.example/") == [
        "https://site.example/лента.xml"
    ]


def test_the_http_charset_beats_a_meta_charset() -> None:
    page = CYRILLIC_PAGE.format(meta='<meta charset="koi8-r">').encode("cp1251")
    assert _advertised_bytes(page, "text/html; charset=windows-1251", "https://site.example/") == [
        "https://site.example/лента.xml"
    ]


def test_a_meta_charset_in_a_comment_or_past_the_first_kilobyte_is_no_charset() -> None:
    """As the HTML prescan reads it: comments are skipped, and it stops at 1,024 bytes."""
    commented = CYRILLIC_PAGE.format(meta='<!-- <meta charset="koi8-r"> -->').encode()
    late = CYRILLIC_PAGE.format(meta="<!--" + "x" * 1024 + '--><meta charset="koi8-r">').encode()
    for page in (commented, late):
        assert _advertised_bytes(page, "text/html", "https://site.example/") == [
            "https://site.example/лента.xml"
        ]


def test_utf8_bytes_under_a_legacy_meta_charset_are_read_as_utf8() -> None:
    page = CYRILLIC_PAGE.format(meta='<meta charset="windows-1251">').encode()
    assert _advertised_bytes(page, "text/html", "https://site.example/") == [
        "https://site.example/лента.xml"
    ]


WORDPRESS_SITE = "https://blog.example/feed/"
WORDPRESS_COMMENTS = "https://blog.example/comments/feed/"

CHOICES = {
    # WordPress prints the site's feed and its comments feed before the page's own.
    "category-page": (
        "https://blog.example/category/news/",
        [WORDPRESS_SITE, WORDPRESS_COMMENTS, "https://blog.example/category/news/feed/"],
        "https://blog.example/category/news/feed/",
    ),
    "page-without-trailing-slash": (
        "https://blog.example/category/news",
        [WORDPRESS_SITE, "https://blog.example/category/news/feed/"],
        "https://blog.example/category/news/feed/",
    ),
    "percent-encoded-alike": (
        "https://blog.example/category/%C3%A9t%C3%A9/",
        [WORDPRESS_SITE, "https://blog.example/category/été/feed/"],
        "https://blog.example/category/été/feed/",
    ),
    "first-of-the-page-s-own": (
        "https://blog.example/blog/",
        ["https://blog.example/blog/feed/", "https://blog.example/blog/comments/feed/"],
        "https://blog.example/blog/feed/",
    ),
    "home-page-takes-the-first": (
        "https://blog.example/",
        [WORDPRESS_SITE, WORDPRESS_COMMENTS],
        WORDPRESS_SITE,
    ),
    "none-of-the-page-s-own": (
        "https://blog.example/about/",
        [WORDPRESS_SITE, WORDPRESS_COMMENTS],
        WORDPRESS_SITE,
    ),
    "another-host-is-not-the-page-s": (
        "https://blog.example/category/news/",
        [WORDPRESS_SITE, "https://cdn.example/category/news/feed/"],
        WORDPRESS_SITE,
    ),
    "a-sibling-path-is-not-an-extension": (
        "https://blog.example/category/news",
        [WORDPRESS_SITE, "https://blog.example/category/newsletter/feed/"],
        WORDPRESS_SITE,
    ),
    # Squarespace: the page's own path with a query.
    "the-page-s-path-with-a-query": (
        "https://site.example/blog",
        ["https://site.example/feed.xml", "https://site.example/blog?format=rss"],
        "https://site.example/blog?format=rss",
    ),
}


@pytest.mark.parametrize(("page", "advertised", "expected"), CHOICES.values(), ids=CHOICES.keys())
def test_the_feed_read_is_the_page_s_own_when_it_advertises_one(
    page: str, advertised: list[str], expected: str
) -> None:
    assert chosen_feed(tuple(advertised), page) == expected


def test_an_advertised_url_holds_no_markup() -> None:
    page = """<html><head><title>Blog</title>
<link rel="alternate" type="application/rss+xml" href="/a&quot;&gt;&lt;svg onload=alert(1)&gt;">
</head><body></body></html>"""
    assert _advertised(page, "https://blog.example.com/") == [
        "https://blog.example.com/a%22%3E%3Csvg%20onload=alert(1)%3E"
    ]


def test_an_advertised_url_goes_to_the_host_browsers_read() -> None:
    page = """<html><head><title>Blog</title>
<link rel="alternate" type="application/rss+xml" href="https://site.example\\@evil.example/feed">
<link rel="alternate" type="application/atom+xml" href="/\\other.example/atom">
</head><body></body></html>"""
    assert _advertised(page, "https://site.example/") == [
        "https://site.example/@evil.example/feed",
        "https://other.example/atom",
    ]
