"""The reading limits of the parse layer, in one place (sizes in UTF-8 bytes)."""

from __future__ import annotations

from typing import Final

# Re-exported: the parser reads all its limits here.
from tap_feeddelta.bounds import MAX_URL_BYTES as MAX_URL_BYTES

MAX_ITEMS_READ: Final = 10_000
MAX_TITLE_BYTES: Final = 1024
MAX_SUMMARY_BYTES: Final = 4096
MAX_CONTENT_BYTES: Final = 65_536
MAX_AUTHOR_NAME_BYTES: Final = 256
# Authors kept per item and per feed. A feed's authors are copied into each item that
# names none, so without a count cap a few KB of them multiply by the item count. 16 is
# more than any byline needs; at most 16 x (256 B name + 254 email + 2 KiB URL) = 41 KiB
# per item, below the content cap.
MAX_AUTHORS: Final = 16
# Text one author is read from (a name, or "Name <email>"): far above a 256-byte name, a
# 254-character email and the markup of a link around a name; the rest is not read.
MAX_PERSON_TEXT_CHARS: Final = 8192
# Tags: each cut like an author name; per item far above what posts carry (WordPress
# categories and tags together rarely pass 20), at most 64 x 256 B = 16 KiB per item.
MAX_TAG_BYTES: Final = 256
MAX_TAGS: Final = 64
# Enclosures (RSS enclosure, Atom link rel="enclosure", JSON Feed attachments, and the
# Media RSS media:content read when an item has none) kept per item. Podcast episodes
# carry one to three, photo and video galleries a few dozen renditions at most; 32 keeps
# those whole while one item's enclosures stay at most 32 x (2 KiB URL + 255 B type + a
# length) = 73 KiB, about the content cap (40,000 enclosures made a 2.6 MB record that
# target-duckdb could not load at all).
MAX_ENCLOSURES: Final = 32
MAX_ID_BYTES: Final = 1024
MAX_LANGUAGE_CHARS: Final = 35
MAX_MEDIA_TYPE_CHARS: Final = 255
MAX_EMAIL_CHARS: Final = 254
# Text of one element that is read at all; a longer text is cut before normalizing
# (it is then capped far lower by the field caps above and reported).
MAX_RAW_TEXT_CHARS: Final = 16 * MAX_CONTENT_BYTES
# Arrays and objects ("[" and "{", in strings too) in one JSON document, counted before
# it is built: an empty one costs some 20 times its 3 bytes once built (11 M of them at
# the 32 MiB max_feed_bytes took 850 MB). The XML bound is the same count of tags.
MAX_JSON_CONTAINERS: Final = 1_000_000
# XML nesting (256 elements deep) and one text node (10 MB) are libxml2's own limits,
# kept on by parsing without XML_PARSE_HUGE (``xmldoc._parser``, ``huge_tree=False``); a
# document past them is cut and reported ``limit_exceeded``. A document nested past the
# depth limit is read again with the tags deeper than this made spaces (their text
# kept, reported ``limit_exceeded``): one deep entry (nested XHTML content) cut every
# entry after it (tests/unit/parse/test_safety.py pins the depths).
MAX_XML_DEPTH: Final = 250
# The URL text the items of one document hold once resolved (item URLs, enclosure and author
# URLs; a feed's authors given to items that name none are shared, not counted): at most
# twice the document (its UTF-8 bytes) plus 1 MiB; the items past it are not read. A URL
# written out costs its bytes in the document, but a relative one costs only itself there
# and the base it is resolved on in the item: 32 one-character enclosure URLs resolved on
# a 1,900-character xml:base (or document URL, a redirect's target) made 64 KB an item,
# 50 times the document. The floor keeps any one item whole (at most 49 URLs of 2 KiB,
# 98 KiB) and never cuts a small feed.
MIN_URL_BUDGET_BYTES: Final = 1 << 20
# A document without xml:base resolves on its own URL alone: when that is at most this
# long, a resolved URL grows by no more than the str, Enclosure or Author and record
# dict that hold it take anyway (some 300 bytes), and the count is skipped (it costs
# 1-2% of parsing). Feed URLs are rarely over 100 bytes.
MAX_UNCOUNTED_BASE_BYTES: Final = 128
