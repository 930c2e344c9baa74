"""Which partition a configured URL's feed had under another URL: another spelling of it
(``HTTP://Example.org/f`` for ``http://example.org/f``), or the URL it replaced, when the
document of that one was last read from this one (a redirect's target, a web page's feed).
The run takes such a partition over; under sharding another shard may hold it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from tap_feeddelta.config import feed_key
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.shownurl import as_fetched, final_url_hash

_PLAIN_HOST = re.compile(r"[a-z0-9.-]+")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
_ESCAPED_HOST = re.compile(r"://[^/?#\n]*%")


def respelled_feeds(
    index: dict[tuple[str, str], dict[str, Any]], monitor_id: str, feed_urls: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """Configured URLs without a partition of their own whose feed has one under another
    spelling (``HTTP://Example.org/f`` for ``http://example.org/f``): editing the case of
    a host in the config must not start a new baseline and lose the changes since.

    Failing that, the one partition of a feed no longer configured that was last read
    from this URL (its ``final_url``): a configured URL replaced by the URL it redirects
    to, or a web page by the feed it advertises, as the tap's own rows show them. Only
    when it is surely this URL (see ``was_read_from``): a ``final_url`` can be shown
    without the query a redirect added, and ``/feed.php`` is not ``/feed.php?id=5``.

    Only the partitions no longer configured as spelled can be taken over: their keys
    are computed, and only the configured URLs that can have one of them are keyed
    (configured_by_key), not every URL (a sharded config may list a million)."""
    configured = set(feed_urls)
    unconfigured = {
        url: partition
        for (monitor, url), partition in index.items()
        if monitor == monitor_id and url not in configured
    }
    if not unconfigured:
        return {}
    keys = {url: feed_key(url) for url in unconfigured}
    read_keys = {
        url: feed_key(final_url)
        for url, partition in unconfigured.items()
        if isinstance(final_url := partition.get("final_url"), str)
    }
    missing = {
        key: url
        for key, url in configured_by_key(feed_urls, {*keys.values(), *read_keys.values()}).items()
        if (monitor_id, url) not in index
    }
    found: dict[str, tuple[str, str]] = {}
    for url, key in keys.items():
        wanted = missing.get(key)
        if wanted is not None and wanted not in found:
            found[wanted] = (monitor_id, url)
    unmatched = {key: url for key, url in missing.items() if url not in found}
    if unmatched:
        taken = {url for _, url in found.values()}
        read_from: dict[str, list[tuple[str, str]]] = {}
        for url, read_key in read_keys.items():
            wanted = unmatched.get(read_key)
            if wanted is not None and url not in taken and was_read_from(unconfigured[url], wanted):
                read_from.setdefault(wanted, []).append((monitor_id, url))
        for wanted, partitions in read_from.items():
            if len(partitions) == 1:  # two former feeds read from it: neither is surely it
                found[wanted] = partitions[0]
    return found


def configured_by_key(feed_urls: Sequence[str], keys: set[str]) -> dict[str, str]:
    """The URLs of ``feed_urls`` whose ``feed_key`` is one of ``keys``, by key (the last
    of a key). A key costs about 1.3 us, 0.65 s for 200,000 URLs at every start-up, so
    only the URLs whose text can lead to one are keyed: those that name one of the keys'
    hosts in any case (a host is kept but for its case, a trailing dot and the port),
    and, as their host is not read from the text alone, those with a character outside
    ASCII (an IDN host) or a ``%`` in their host part. A few searches of the joined text."""
    if not keys or not feed_urls:
        return {}
    text = "\n".join(feed_urls)
    needles = _hosts(keys)
    if "" in needles or text.count("\n") != len(feed_urls) - 1:
        lines: Sequence[str] = feed_urls  # a key of no plain host, or a URL with a line break
    else:
        lines = [text[start:end] for start, end in sorted(_candidate_lines(text, needles))]
    found: dict[str, str] = {}
    for url in lines:
        key = feed_key(url)
        if key in keys:
            found[key] = url
    return found


def _hosts(keys: set[str]) -> set[str]:
    """The host of each key as found in the text of every URL with that key: "[" for an
    IPv6 address (as the URL writes it), "" for a key that names no plain host (a URL the
    fetcher refuses is its own key)."""
    needles: set[str] = set()
    for key in keys:
        host = key.partition("://")[2].partition("/")[0]
        name = host.partition(":")[0]
        needles.add("[" if host.startswith("[") else name if _PLAIN_HOST.fullmatch(name) else "")
    return needles


def _candidate_lines(text: str, needles: set[str]) -> set[tuple[int, int]]:
    """Where the lines of ``text`` that can have a key of one of these hosts start and end.
    Separate literal searches: an alternation, or a case-blind pattern, reads every
    character in Python's re, 10 to 20 times slower than a literal."""
    found: set[tuple[int, int]] = set()
    if text.isascii():
        lowered = text.lower()  # the same length: positions are the text's
        for needle in needles:
            found.update(_lines_of(text, _found(lowered, needle)))
    else:
        for needle in needles:
            pattern = re.compile(re.escape(needle), re.I)
            found.update(_lines_of(text, (m.start() for m in pattern.finditer(text))))
        found.update(_lines_of(text, (m.start() for m in _NOT_ASCII.finditer(text))))
    if "%" in text:
        found.update(_lines_of(text, (m.start() for m in _ESCAPED_HOST.finditer(text))))
    return found


def _found(text: str, needle: str) -> Iterator[int]:
    position = text.find(needle)
    while position != -1:
        yield position
        position = text.find(needle, position + 1)


def _lines_of(text: str, positions: Iterable[int]) -> Iterator[tuple[int, int]]:
    """Where the line of each position starts and ends."""
    for position in positions:
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        yield start, len(text) if end == -1 else end


def was_read_from(partition: dict[str, Any], url: str) -> bool:
    """Whether ``partition``'s document was read from ``url`` itself (its ``final_url``
    names it): its ``final_url_hash``, of the whole URL read, is that of ``url`` as the
    fetcher asks for it. A partition from before the hash was kept knows only the URL
    as it was shown: a query a redirect added (or credentials) left it as scheme, host
    and path, so without a query it may be another resource; taken only with one."""
    url_hash = partition.get("final_url_hash")
    if url_hash is not None:
        return bool(url_hash == final_url_hash(as_fetched(url), url))
    return bool(urlsplit(partition["final_url"]).query)


def respelled_in_other_shards(
    respelled: Mapping[str, tuple[str, str]],
    monitor_id: str,
    shard_count: int,
    shard_index: int,
) -> list[tuple[str, tuple[str, str]]]:
    """The partitions of a shard's state whose feed another shard owns under the URL
    configured now, as (that URL, the partition's key), of ``respelled`` (respelled_feeds
    over every configured URL): another spelling of its URL, or the URL its document was
    last read from. That shard finds no state for it and would start it over, while this
    one kept the old partition as a removed feed's (``shard_of`` hashes the URL as
    written, so a respelling may move it). Only this shard's state is seen: a URL read
    from may have a partition of its own in its shard (a duplicate of it removed), see
    is_respelling."""
    if shard_count == 1:
        return []
    return [
        (url, key)
        for url, key in respelled.items()
        if shard_of(monitor_id, url, shard_count) != shard_index
    ]


def respelled_in_shard(
    respelled: Mapping[str, tuple[str, str]],
    monitor_id: str,
    shard_count: int,
    shard_index: int,
) -> dict[str, tuple[str, str]]:
    """respelled_feeds over this shard's URLs, from ``respelled``, that over every
    configured URL, of a state check_shard let through. The same: that state holds no
    partition of a feed another shard owns, configured or respelled (check_shard refuses
    it), and feed_urls holds one URL a feed (the config refuses two), so no URL of
    another shard takes a partition from, or shares a key with, one of this shard."""
    return {
        url: key
        for url, key in respelled.items()
        if shard_of(monitor_id, url, shard_count) == shard_index
    }


def is_respelling(configured_url: str, key: tuple[str, str]) -> bool:
    """Whether the partition ``key`` is the feed at ``configured_url`` under another
    spelling of it (the config takes one spelling of a feed: surely the same feed), not
    a feed that was last read from it (which may be a duplicate of it, removed)."""
    return feed_key(configured_url) == feed_key(key[1])
