"""The documents of the golden upgrade test (test_golden_upgrade.py): this project's parse
cases (tests/unit/parse/cases) and the documents below, whose URLs, texts and names
versions of the tap have read otherwise. Plain data: generate.py loads this file by its
path under the previous version's code, so it imports nothing of the tap."""

from __future__ import annotations

import json
from pathlib import Path

# (name, body, content type); the document's URL is FEED_URL.
FEED_URL = "https://m.example/feed"
PARSE_CASES = Path(__file__).resolve().parent.parent / "parse" / "cases"
_NAMESPACES = (
    'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'
    ' xmlns:dc="http://purl.org/dc/elements/1.1/"'
    ' xmlns:media="http://search.yahoo.com/mrss/"'
    ' xmlns:atom="http://www.w3.org/2005/Atom"'
    ' xmlns:feedburner="http://rssnamespace.org/feedburner/ext/1.0"'
)


def _rss(*items: str) -> tuple[str, str]:
    body = (
        f'<rss version="2.0" {_NAMESPACES}><channel><title>F</title>'
        f"<link>https://m.example/</link>{''.join(items)}</channel></rss>"
    )
    return body, "application/rss+xml"


def _atom(*entries: str, base: str = "") -> tuple[str, str]:
    attributes = f' xml:base="{base}"' if base else ""
    body = (
        f'<feed xmlns="http://www.w3.org/2005/Atom"{attributes}><title>F</title>'
        f"<id>urn:f</id>{''.join(entries)}</feed>"
    )
    return body, "application/atom+xml"


def _json(*items: dict[str, object]) -> tuple[str, str]:
    document = {"version": "https://jsonfeed.org/version/1.1", "title": "F", "items": list(items)}
    return json.dumps(document), "application/feed+json"


def _link(url: str, extra: str = "") -> str:
    return f"<item><title>T</title><link>{url}</link>{extra}</item>"


def _enclosure(url: str) -> str:
    return f'<enclosure url="{url}" type="audio/mpeg" length="5"/>'


def _aliased(items: str, namespace: str) -> tuple[str, str]:
    """RSS whose items use the prefix ``x`` for ``namespace``."""
    body = (
        f'<rss version="2.0" xmlns:x="{namespace}"><channel><title>F</title>'
        f"<link>https://m.example/</link>{items}</channel></rss>"
    )
    return body, "application/rss+xml"


BIDI_HOST_MP3 = "https://ex\u202eample.com/a.mp3"

DOCUMENTS: dict[str, tuple[str, str]] = {
    # Links with markup, quotes, braces, backticks; an empty query or fragment after them.
    "link-quote": _rss(_link('https://m.example/a"b')),
    "link-quote-empty-query": _rss(_link('https://m.example/a"b?')),
    "link-braces-empty-fragment": _rss(_link("https://m.example/a{b}#")),
    "link-braces-query-empty-fragment": _rss(_link("https://m.example/a{b}?x=1#")),
    "link-markup": _rss(_link("https://m.example/a&lt;b&gt;c?q=&lt;i&gt;#&lt;f&gt;")),
    "link-backtick": _rss(_link("https://m.example/a`b")),
    "link-space-quote": _rss(_link('https://m.example/a b"c')),
    "link-double-slash-braces": _rss(_link("https://m.example//a{b}")),
    "link-empty-query": _rss(_link("https://m.example/a?")),
    "link-upper-scheme-empty-query": _rss(_link("HTTPS://m.example/a?")),
    "link-relative-braces": _rss(_link("/posts/{slug}")),
    # Invisible characters: bidi controls and zero-width ones, in the host and the path.
    "link-bidi-path": _rss(_link("https://m.example/a\u202eb")),
    "link-zero-width-path": _rss(_link("https://m.example/a\u200bb")),
    "link-zero-width-fragment": _rss(_link("https://m.example/x#\u200b")),
    "link-nbsp-path": _rss(_link("https://m.example/\u00a0x")),
    "link-bidi-host": _rss(_link("https://ex\u202eample.com/p")),
    "link-zero-width-host": _rss(_link("https://ex\u200bample.com/p")),
    "link-markup-host": _rss(_link("https://a&lt;b.example/p")),
    "link-caret-host": _rss(_link("https://a^b.example/p")),
    "link-bar-host": _rss(_link("https://a|b.example/p")),
    "guid-and-bidi-host": _rss(
        '<item><guid isPermaLink="false">g</guid><title>T</title>'
        "<link>https://ex\u202eample.com/p</link></item>"
    ),
    "bidi-host-then-alternate": _rss(
        "<item><title>T</title><link>https://ex\u202eample.com/p</link>"
        '<atom:link rel="alternate" href="https://m.example/alt"/></item>'
    ),
    "bidi-host-then-permalink-guid": _rss(
        "<item><guid>https://m.example/g</guid><title>T</title>"
        "<link>https://ex\u202eample.com/p</link></item>"
    ),
    "feedburner-original-bidi-host": _rss(
        "<item><title>T</title><link>https://feeds.example/~r/x</link>"
        "<feedburner:origLink>https://ex\u202eample.com/p</feedburner:origLink></item>"
    ),
    # Backslashes, read as slashes now.
    "link-backslash-path": _rss(_link("https://m.example/files\\ep1.html")),
    "link-backslash-relative": _rss(_link("/a\\b.mp3")),
    "link-backslash-host": _rss(_link("https://good.example\\@evil.example/p")),
    "link-backslashes-scheme": _rss(_link("https:\\\\other.example\\p")),
    "link-backslash-query": _rss(_link("https://m.example/a?q=\\x")),
    "link-slashes-before-host": _rss(_link("///other.example/p")),
    # Google Alerts redirects, whose target is the item's URL.
    "redirect-to-markup": _rss(
        _link("https://www.google.com/url?rct=j&amp;url=https://good.example/a%3Cb%3E&amp;ct=ga")
    ),
    "redirect-to-quote": _rss(
        _link("https://www.google.com/url?rct=j&amp;url=https://good.example/a%22b&amp;ct=ga")
    ),
    "redirect-to-backslash-host": _rss(
        _link("https://www.google.com/url?rct=j&amp;url=https://good.example%5C@evil.example/")
    ),
    "redirect-to-bidi-path": _rss(
        _link("https://www.google.com/url?rct=j&amp;url=https://good.example/a%E2%80%AEb")
    ),
    "redirect-to-bidi-host": _rss(
        _link("https://www.google.com/url?rct=j&amp;url=https://ex%E2%80%AEample.com/p")
    ),
    # Enclosures: identifying an item without guid or link, or in its fingerprint.
    "enclosure-braces": _rss(
        f"<item><title>T</title>{_enclosure('https://cdn.example/{ep}.mp3')}</item>"
    ),
    "enclosure-bidi-path": _rss(
        "<item><title>T</title>" + _enclosure("https://m.example/a\u202eb.mp3") + "</item>"
    ),
    "enclosure-bidi-host": _rss("<item><title>T</title>" + _enclosure(BIDI_HOST_MP3) + "</item>"),
    "enclosure-bidi-host-then-another": _rss(
        "<item><title>T</title>"
        + _enclosure(BIDI_HOST_MP3)
        + _enclosure("https://m.example/b.mp3")
        + "</item>"
    ),
    "guid-and-enclosure-bidi-host": _rss(
        "<item><guid>g</guid><title>T</title>" + _enclosure(BIDI_HOST_MP3) + "</item>"
    ),
    "link-and-enclosure-bidi-host": _rss(
        "<item><title>T</title><link>https://m.example/a</link>"
        + _enclosure(BIDI_HOST_MP3)
        + "</item>"
    ),
    "media-content-quote": _rss(
        '<item><guid>g</guid><title>T</title><media:content url="https://m.example/a&quot;b.mp4"'
        ' type="video/mp4"/></item>'
    ),
    "several-items": _rss(
        _link("https://m.example/plain"),
        _link("https://ex\u202eample.com/p"),
        _link('https://m.example/a"b'),
        "<item><title>U</title>" + _enclosure(BIDI_HOST_MP3) + "</item>",
        _link("https://m.example/a%22b"),
    ),
    "two-spellings-one-reading": _rss(
        "<item><title>A</title><link>https://m.example/a&quot;b</link></item>",
        "<item><title>B</title><link>https://m.example/a%22b</link></item>",
    ),
    "two-spellings-one-reading-with-guids": _rss(
        "<item><guid>g1</guid><title>A</title><link>https://m.example/a&quot;b</link></item>",
        "<item><guid>g2</guid><title>B</title><link>https://m.example/a%22b</link></item>",
    ),
    # Relative links under xml:base, itself read otherwise.
    "atom-base-markup": _atom(
        '<entry><title>T</title><id>urn:1</id><link href="p&quot;q"/></entry>',
        base="https://m.example/a&lt;b/",
    ),
    "atom-base-space": _atom(
        '<entry xml:base="https://m.example/a b/"><title>T</title><link href="p"/></entry>'
    ),
    "atom-base-bidi-host": _atom(
        '<entry xml:base="https://ex\u202eample.com/"><title>T</title><link href="p"/></entry>'
    ),
    "atom-enclosure-braces": _atom(
        '<entry><title>T</title><link href="https://m.example/a"/>'
        '<link rel="enclosure" href="https://m.example/x{y}.mp3" type="audio/mpeg"/></entry>'
    ),
    "rss-base-relative-quote": _rss(
        '<item xml:base="https://m.example/d&quot;/"><title>T</title><link>p</link></item>'
    ),
    # Author URIs.
    "atom-author-uri-quote": _atom(
        "<entry><title>T</title><id>urn:1</id><author><name>Ann</name>"
        '<uri>https://m.example/a"b</uri></author></entry>'
    ),
    "atom-author-uri-zero-width-path": _atom(
        "<entry><title>T</title><id>urn:1</id><author><name>Bo</name>"
        "<uri>https://m.example/a\u200bb</uri></author></entry>"
    ),
    "atom-author-uri-bidi-host": _atom(
        "<entry><title>T</title><id>urn:1</id><author><name>Di</name>"
        "<uri>https://ex\u202eample.com/di</uri></author></entry>"
    ),
    # JSON Feed items.
    "json-url-markup": _json({"url": "https://m.example/a<b>", "title": "x"}),
    "json-url-quote-empty-query": _json({"url": 'https://m.example/a"b?', "title": "x"}),
    "json-url-bidi-host": _json({"url": "https://ex\u202eample.com/p", "title": "x"}),
    "json-external-url-braces": _json(
        {"id": "1", "title": "x", "external_url": "https://m.example/{x}"}
    ),
    "json-author-url-quote": _json(
        {"id": "1", "title": "T", "authors": [{"name": "Cy", "url": 'https://m.example/a"b'}]}
    ),
    "json-author-url-bidi-host": _json(
        {"id": "1", "title": "T", "authors": [{"name": "Ed", "url": "https://ex\u202eample.com/e"}]}
    ),
    "json-attachment-braces": _json(
        {
            "title": "T",
            "attachments": [{"url": "https://m.example/{a}.mp3", "mime_type": "audio/mpeg"}],
        }
    ),
    "json-attachment-bidi-host": _json(
        {
            "title": "T",
            "attachments": [{"url": "https://ex\u202eample.com/a.mp3", "mime_type": "audio/mpeg"}],
        }
    ),
    "json-relative-backslash": _json({"url": "/a\\b", "title": "x"}),
    # Extensions under namespace names that version did not know (read as nothing then).
    "squarespace-media-rss": _aliased(
        "<item><title>Spring</title><link>https://m.example/spring</link><guid>s1</guid>"
        '<x:content url="https://cdn.m.example/1.jpg" type="image/jpeg" medium="image">'
        "<x:title>Spring</x:title></x:content></item>"
        '<item><link>https://m.example/visit</link><guid>s2</guid><x:content medium="image"'
        ' url="https://cdn.m.example/2.jpg"><x:title>Visit</x:title></x:content></item>',
        "http://www.rssboard.org/media-rss",
    ),
    "sourceforge-media-rss-known-by-enclosure": _aliased(
        "<item><title>/app-1.2.zip</title><pubDate>Mon, 15 Jan 2024 10:00:00 GMT</pubDate>"
        '<x:content type="application/zip" url="https://dl.m.example/app-1.2.zip"/></item>',
        "http://video.search.yahoo.com/mrss/",
    ),
    "dublin-core-documentation-page": _aliased(
        "<item><guid>n1</guid><title>Results</title><x:creator>Acme</x:creator>"
        "<x:date>2024-01-15T10:00:00Z</x:date><x:subject>Earnings</x:subject></item>",
        "http://dublincore.org/documents/dcmi-namespace/",
    ),
    "itunes-example-namespace": _aliased(
        "<item><x:title>Episode 1</x:title><x:author>Host</x:author>"
        f"{_enclosure('https://cdn.m.example/1.mp3')}</item>",
        "http://example.com/DTDs/PodCast-1.0.dtd",
    ),
    "atom-media-rssboard": _atom(
        '<entry xmlns:x="http://www.rssboard.org/media-rss"><id>urn:1</id>'
        '<x:title>One</x:title><x:content url="https://cdn.m.example/1.jpg"/></entry>'
    ),
}


def parse_cases() -> dict[str, tuple[bytes, str | None, str]]:
    """The parse cases: (body, content type, document URL) by file name."""
    cases: dict[str, tuple[bytes, str | None, str]] = {}
    for path in sorted(PARSE_CASES.iterdir()):
        if path.name.endswith(".expected.json"):
            continue
        expected = json.loads(path.with_name(f"{path.stem}.expected.json").read_text())
        url = expected.get("url", FEED_URL)
        cases[f"case:{path.name}"] = (path.read_bytes(), expected.get("content_type"), url)
    return cases


def all_documents() -> dict[str, tuple[bytes, str | None, str]]:
    """Every document of the test: (body, content type, document URL) by name."""
    documents = parse_cases()
    for name, (body, content_type) in DOCUMENTS.items():
        documents[name] = (body.encode(), content_type, FEED_URL)
    return documents
