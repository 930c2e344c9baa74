"""Shapes particular publishers serve: the fields a reader would show for them."""

from __future__ import annotations

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
