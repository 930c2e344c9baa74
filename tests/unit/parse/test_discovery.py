"""Web pages: which feeds a page advertises, and in what order."""

from __future__ import annotations

import pytest

from tap_feeddelta.errors import ParseError
from tap_feeddelta.parse import parse_feed


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


def test_the_first_base_applies_to_links_before_it() -> None:
    page = """<!DOCTYPE html><html><head>
<link rel="alternate" type="application/rss+xml" href="feed.xml">
<base href="https://static.example.org/site/"><base href="https://other.example.org/">
<title>t</title></head><body></body></html>"""
    assert _advertised(page, "https://www.example.com/blog/post/") == [
        "https://static.example.org/site/feed.xml"
    ]
