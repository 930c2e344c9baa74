"""Which partition a configured URL's feed had under another URL: another spelling of it
(``HTTP://Example.org/f`` for ``http://example.org/f``), or the URL it replaced, when the
document of that one was last read from this one (a redirect's target, a web page's feed).
The run takes such a partition over; under sharding another shard may hold it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from tap_feeddelta.config import feed_key
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.shownurl import as_fetched, final_url_hash


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
    without the query a redirect added, and ``/feed.php`` is not ``/feed.php?id=5``."""
    missing = {feed_key(url): url for url in feed_urls if (monitor_id, url) not in index}
    if not missing:
        return {}
    found: dict[str, tuple[str, str]] = {}
    for monitor, url in index:
        if monitor == monitor_id:
            configured = missing.get(feed_key(url))
            if configured is not None and configured not in found:
                found[configured] = (monitor, url)
    unmatched = {key: url for key, url in missing.items() if url not in found}
    if unmatched:
        still_configured = set(feed_urls)
        taken = set(found.values())
        read_from: dict[str, list[tuple[str, str]]] = {}
        for (monitor, url), partition in index.items():
            final_url = partition.get("final_url")
            if (
                monitor == monitor_id
                and url not in still_configured
                and (monitor, url) not in taken
                and isinstance(final_url, str)
                and (configured := unmatched.get(feed_key(final_url))) is not None
                and was_read_from(partition, configured)
            ):
                read_from.setdefault(configured, []).append((monitor, url))
        for configured, partitions in read_from.items():
            if len(partitions) == 1:  # two former feeds read from it: neither is surely it
                found[configured] = partitions[0]
    return found


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
    index: dict[tuple[str, str], dict[str, Any]],
    monitor_id: str,
    feed_urls: Sequence[str],
    shard_count: int,
    shard_index: int,
) -> list[tuple[str, tuple[str, str]]]:
    """The partitions of a shard's state whose feed another shard owns under the URL
    configured now, as (that URL, the partition's key): another spelling of its URL, or
    the URL its document was last read from (see respelled_feeds). That shard finds no
    state for it and would start it over, while this one kept the old partition as a
    removed feed's (``shard_of`` hashes the URL as written, so a respelling may move it).
    Only this shard's state is seen: a URL read from may have a partition of its own in
    its shard (a duplicate of it removed), see is_respelling."""
    if shard_count == 1:
        return []
    configured = set(feed_urls)
    if all(monitor != monitor_id or url in configured for monitor, url in index):
        return []  # every feed of the state is configured as spelled: the usual case
    return [
        (url, key)
        for url, key in respelled_feeds(index, monitor_id, feed_urls).items()
        if shard_of(monitor_id, url, shard_count) != shard_index
    ]


def is_respelling(configured_url: str, key: tuple[str, str]) -> bool:
    """Whether the partition ``key`` is the feed at ``configured_url`` under another
    spelling of it (the config takes one spelling of a feed: surely the same feed), not
    a feed that was last read from it (which may be a duplicate of it, removed)."""
    return feed_key(configured_url) == feed_key(key[1])
