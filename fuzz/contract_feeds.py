"""The contract fuzzer's feeds: a model of each feed's items, the random edits made to
them between runs, and the documents rendered from them (RSS 2.0, RSS 1.0, Atom, JSON Feed),
intact or damaged.

Nothing here imports the tap: the model is the independent account of what a feed holds.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal
from xml.sax.saxutils import escape

# Markup characters, non-ASCII letters and Windows-1252-only ones (€, curly quotes, dash)
# in every text, so that escaping and every encoding are exercised.
WORDS = (
    *("alpha", "beta", "gamma", "delta", "café", "naïve", "Müller", "€uro", "“quoted”"),
    *("R&D", "a<b", "x>y", "déjà", "vu", "zeta", "straße", "Ærø", "œuvre", "½", "price"),
    *("—", "dash"),
)
# Dates up to ~4 days later than this, so that no item is dated in the future.
BASE_TIME = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=5)
MAX_ITEMS_PER_FEED = 25
RECENTLY_REMOVED_RUNS = 10  # an item removed this many runs ago or fewer may come back

Format = Literal["rss2", "rss1", "atom", "json"]
# What the checks may expect of a feed's run: an intact document read in full, a damaged one
# (truncated or malformed: only "nothing silently lost"), or none read at all.
Expectation = Literal["intact", "damaged", "unread"]
# url, title, summary, published_at: what a record shows of an item, and what an edit changes.
Version = tuple[str, str, str, dt.datetime]

# Encoding name -> (label in the XML declaration, Python codec). "iso-8859-1-decl" declares
# ISO-8859-1 but holds Windows-1252 bytes (€, curly quotes), as many real feeds do.
ENCODINGS: dict[str, tuple[str, str]] = {
    "utf-8": ("UTF-8", "utf-8"),
    "windows-1252": ("windows-1252", "cp1252"),
    "utf-16": ("UTF-16", "utf-16"),
    "iso-8859-1-decl": ("ISO-8859-1", "cp1252"),
}
ERROR_MODES = ("404", "500", "429", "503ra", "bogus304")
STRAY_END_TAG = "</p>"
MARKUP_DAMAGE = ("&", "<", STRAY_END_TAG, "<b>", "& ")


@dataclass
class Item:
    item_id: str
    url: str
    title: str
    summary: str
    published_at: dt.datetime

    def version(self) -> Version:
        return (self.url, self.title, self.summary, self.published_at)

    def restore(self, version: Version) -> None:
        self.url, self.title, self.summary, self.published_at = version

    def copy(self) -> Item:
        return Item(self.item_id, self.url, self.title, self.summary, self.published_at)


@dataclass
class TapMemory:
    """What the tap must know of a feed after the runs so far, by item id.

    ``remembered`` holds the version last delivered (or seen unchanged); None when a record
    was delivered that the model cannot match to a version (read from a damaged document):
    then the next intact run may give the item as updated, or not.
    """

    remembered: dict[str, Version | None] = field(default_factory=dict)
    # Per item, the delivery_id of each change delivered: (the version it replaced, None
    # for a new item; the version delivered).
    delivery_ids: dict[str, dict[tuple[Version | None, Version], str]] = field(default_factory=dict)
    consecutive_failures: int = 0
    last_checked_at: str = ""


@dataclass(frozen=True)
class Document:
    """One run's response for a feed: the HTTP mode, the body and what to expect of it."""

    mode: str
    body: bytes
    content_type: str
    etag: str
    last_modified: str
    is_gzipped: bool
    expectation: Expectation
    damage: str  # the markup a broken document got, for the report


class Feed:
    def __init__(self, name: str, fmt: Format, path: str, rng: random.Random) -> None:
        self.name, self.fmt, self.path, self.rng = name, fmt, path, rng
        self.numbers_used = 0
        self.items = [self.new_item() for _ in range(rng.randint(3, 10))]
        self.removed: dict[str, tuple[Item, int]] = {}  # id -> (item, run it was removed in)
        self.encoding = "utf-8"
        self.etag_salt = 0  # bumped to change the ETag of an unchanged document
        self.document_version = 0  # bumped when the document changes: its Last-Modified
        self.last_digest = ""
        self.memory = TapMemory()

    def new_item(self) -> Item:
        self.numbers_used += 1
        number = self.numbers_used
        url = f"http://example.com/{self.name}/post/{number}"
        ids: dict[Format, str] = {
            "rss1": url,  # an RSS 1.0 item is identified by its rdf:about
            "json": f"{self.name}-{number}",
        }
        return Item(
            item_id=ids.get(self.fmt, f"urn:{self.name}:{number}"),
            url=url,
            title=words(self.rng, self.rng.randint(1, 5)) + f" {number}",
            summary=words(self.rng, self.rng.randint(2, 12)),
            published_at=BASE_TIME + dt.timedelta(minutes=self.rng.randint(0, 6000)),
        )

    # ------------------------------------------------------------ edits between runs

    def mutate(self, run: int) -> list[str]:
        """Makes 0 to 3 random edits (and maybe an encoding or ETag change); returns their names."""
        edits: dict[str, Callable[[int], str | None]] = {
            "add": self._add,
            "title": self._edit_title,
            "summary": self._edit_summary,
            "date": self._edit_date,
            "remove": self._remove,
            "reorder": self._reorder,
            "chid": self._change_id,
            "url": self._edit_url,
            "readd": self._readd,
            "edit_back": self._edit_back,
        }
        names = ["add", "add", *list(edits)[1:]]
        done = []
        for _ in range(self.rng.choice([0, 0, 1, 1, 2, 3])):
            applied = edits[self.rng.choice(names)](run)
            if applied is not None:
                done.append(applied)
        if self.rng.random() < 0.15 and self.fmt != "json":
            self.encoding = self.rng.choice(list(ENCODINGS))
            done.append("enc:" + self.encoding)
        if self.rng.random() < 0.1:
            self.etag_salt += 1
            done.append("etag")
        return done

    def _add(self, run: int) -> str | None:
        if len(self.items) >= MAX_ITEMS_PER_FEED:
            return None
        self.items.insert(self.rng.randint(0, len(self.items)), self.new_item())
        return "add"

    def _edit_title(self, run: int) -> str | None:
        if not self.items:
            return None
        item = self.rng.choice(self.items)
        item.title = words(self.rng, self.rng.randint(1, 8)) + f" {self.rng.randint(0, 99)}"
        return "title"

    def _edit_summary(self, run: int) -> str | None:
        if not self.items:
            return None
        self.rng.choice(self.items).summary = words(self.rng, self.rng.randint(1, 8))
        return "summary"

    def _edit_date(self, run: int) -> str | None:
        if not self.items:
            return None
        item = self.rng.choice(self.items)
        item.published_at += dt.timedelta(minutes=self.rng.randint(-300, 300))
        return "date"

    def _remove(self, run: int) -> str | None:
        if len(self.items) <= 1:
            return None
        item = self.items.pop(self.rng.randrange(len(self.items)))
        self.removed[item.item_id] = (item, run)
        return "remove"

    def _reorder(self, run: int) -> str | None:
        self.rng.shuffle(self.items)
        return "reorder"

    def _change_id(self, run: int) -> str | None:
        """The same entry under a new id (a CMS migration): the old id is gone."""
        if not self.items or self.fmt == "rss1":
            return None
        item = self.items[self.rng.randrange(len(self.items))]
        self.removed[item.item_id] = (item.copy(), run)
        self.numbers_used += 1
        if self.fmt == "json":
            item.item_id = f"{self.name}-{self.numbers_used}x"
        else:
            item.item_id = item.item_id.rsplit(":", 1)[0] + f":{self.numbers_used}x"
        return "chid"

    def _edit_url(self, run: int) -> str | None:
        if not self.items or self.fmt == "rss1":
            return None
        item = self.rng.choice(self.items)
        item.url = item.url.split("?")[0] + f"?v={self.rng.randint(0, 9)}"
        return "url"

    def _readd(self, run: int) -> str | None:
        """An item removed recently comes back, as it was or edited."""
        present = {item.item_id for item in self.items}
        recent = [
            item_id
            for item_id, (_, removed_in) in self.removed.items()
            if run - removed_in <= RECENTLY_REMOVED_RUNS and item_id not in present
        ]
        if not recent:
            return None
        item, _ = self.removed.pop(self.rng.choice(recent))
        if self.rng.random() < 0.5:
            item.title += " again"
        self.items.insert(self.rng.randint(0, len(self.items)), item)
        return "readd"

    def _edit_back(self, run: int) -> str | None:
        """An item goes back to a version delivered before (A -> B -> A)."""
        if not self.items:
            return None
        item = self.rng.choice(self.items)
        # Drawn whether or not there is an older version: which versions were delivered
        # depends on the tap (and on time, as with Retry-After), the random sequence must not.
        pick = self.rng.random()
        delivered = dict.fromkeys(v for _, v in self.memory.delivery_ids.get(item.item_id, {}))
        older = [version for version in delivered if version != item.version()]
        if not older:
            return "edit_back"
        item.restore(older[int(pick * len(older))])
        return "edit_back!"

    # ------------------------------------------------------------ documents

    def document(self, mode: str, damage: Callable[[random.Random], str]) -> Document:
        """This run's response: the current items in ``mode`` ("ok", an error, "redirect",
        "truncate" or "brokenxml"); ``damage`` picks the markup a broken document gets."""
        body, content_type = self.render()
        digest = hashlib.sha256(body + str(self.etag_salt).encode()).hexdigest()[:12]
        if digest != self.last_digest:
            self.document_version += 1
            self.last_digest = digest
        expectation: Expectation = "intact"
        markup = ""
        if mode == "truncate":
            body = self._truncated(body)
            expectation = "damaged"
        elif mode == "brokenxml":
            markup = damage(self.rng)
            body = self._broken(body, markup)
            expectation = "damaged"
        if mode in ERROR_MODES:
            expectation = "unread"
        last_modified = BASE_TIME + dt.timedelta(seconds=10 * self.document_version)
        return Document(
            mode=mode,
            body=body,
            content_type=content_type + self.rng.choice(self._charset_parameters()),
            etag=f'"{digest}"',
            last_modified=email.utils.format_datetime(last_modified, usegmt=True),
            is_gzipped=self.rng.random() < 0.15,
            expectation=expectation,
            damage=markup,
        )

    def _charset_parameters(self) -> list[str]:
        # Right, missing, wrong and unknown charsets: the document's own declaration or BOM
        # must win over a wrong or unknown one.
        if self.encoding in ("utf-8", "utf-16"):
            return ["", "", "; charset=utf-8", "; charset=iso-8859-1", "; charset=bogus"]
        return ["", "; charset=windows-1252"]

    def _truncated(self, body: bytes) -> bytes:
        cut = self.rng.randint(len(body) // 3, len(body) - 1)
        if self.encoding == "utf-16":
            cut -= cut % 2  # whole code units: the break, not a broken character, is tested
        return body[:cut]

    def _broken(self, body: bytes, markup: str) -> bytes:
        """``markup`` inserted at the start of an item's title (the channel's is left alone)."""
        codec = ENCODINGS[self.encoding][1]
        text = body.decode(codec)
        item_titles = _positions(text, "<title")[1:]
        at = text.find(">", self.rng.choice(item_titles)) + 1 if item_titles else len(text) // 2
        return (text[:at] + markup + text[at:]).encode(codec)

    def render(self) -> tuple[bytes, str]:
        """The current items as a document of this feed's format, and its media type."""
        if self.fmt == "json":
            return self._render_json(), "application/feed+json"
        renderers: dict[Format, Callable[[], str]] = {
            "rss2": self._render_rss2,
            "rss1": self._render_rss1,
            "atom": self._render_atom,
        }
        media_types = {
            "rss2": "application/rss+xml",
            "rss1": "application/rdf+xml",
            "atom": "application/atom+xml",
        }
        label, codec = ENCODINGS[self.encoding]
        declaration = f'<?xml version="1.0" encoding="{label}"?>\n'
        return (declaration + renderers[self.fmt]()).encode(codec), media_types[self.fmt]

    def _render_json(self) -> bytes:
        document = {
            "version": "https://jsonfeed.org/version/1.1",
            "title": f"{self.name} feed",
            "home_page_url": "http://example.com/",
            "items": [
                {
                    "id": item.item_id,
                    "url": item.url,
                    "title": item.title,
                    "summary": item.summary,
                    "content_text": item.summary,
                    "date_published": item.published_at.isoformat().replace("+00:00", "Z"),
                }
                for item in self.items
            ],
        }
        return json.dumps(document, ensure_ascii=self.rng.random() < 0.5).encode()

    def _render_rss2(self) -> str:
        # The description is HTML, escaped once more as the element's text.
        entries = "".join(
            f'<item><guid isPermaLink="false">{escape(item.item_id)}</guid>'
            f"<title>{escape(item.title)}</title><link>{escape(item.url)}</link>"
            f"<description>{escape('<p>' + escape(item.summary) + '</p>')}</description>"
            f"<pubDate>{email.utils.format_datetime(item.published_at)}</pubDate></item>\n"
            for item in self.items
        )
        return (
            f'<rss version="2.0"><channel><title>{self.name} feed</title>'
            f"<link>http://example.com/</link><description>d</description>\n"
            f"{entries}</channel></rss>\n"
        )

    def _render_rss1(self) -> str:
        sequence = "".join(f'<rdf:li rdf:resource="{escape(item.url)}"/>' for item in self.items)
        entries = "".join(
            f'<item rdf:about="{escape(item.url)}"><title>{escape(item.title)}</title>'
            f"<link>{escape(item.url)}</link>"
            f"<description>{escape(escape(item.summary))}</description>"
            f"<dc:date>{item.published_at.isoformat()}</dc:date></item>\n"
            for item in self.items
        )
        return (
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f'<channel rdf:about="http://example.com/"><title>{self.name} feed</title>'
            "<link>http://example.com/</link><description>d</description>"
            f"<items><rdf:Seq>{sequence}</rdf:Seq></items></channel>\n{entries}</rdf:RDF>\n"
        )

    def _render_atom(self) -> str:
        entries = "".join(
            f"<entry><id>{escape(item.item_id)}</id>"
            f'<title type="text">{escape(item.title)}</title>'
            f'<link rel="alternate" href="{escape(item.url)}"/>'
            f'<summary type="html">{escape("<p>" + escape(item.summary) + "</p>")}</summary>'
            f"<published>{item.published_at.isoformat()}</published>"
            f"<updated>{item.published_at.isoformat()}</updated></entry>\n"
            for item in self.items
        )
        return (
            f'<feed xmlns="http://www.w3.org/2005/Atom"><title>{self.name} feed</title>'
            f"<id>urn:feed:{self.name}</id><updated>{BASE_TIME.isoformat()}</updated>\n"
            f"{entries}</feed>\n"
        )


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def markup_damage(with_stray_end_tags: bool) -> Callable[[random.Random], str]:
    """Picks the markup a broken document gets. Without stray end tags, one drawn is
    replaced by a bare "&", so that a seed still makes the same runs otherwise."""

    def pick(rng: random.Random) -> str:
        markup = rng.choice(MARKUP_DAMAGE)
        return "&" if markup == STRAY_END_TAG and not with_stray_end_tags else markup

    return pick


def _positions(text: str, needle: str) -> list[int]:
    found: list[int] = []
    at = text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found
