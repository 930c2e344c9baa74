"""``tap-feeddelta-state``: merge and split Singer states by shard, for re-sharding; move a
feed's state to its new URL (``rename``), for a private feed's token that was rotated.

Going from N to M shards without losing a baseline (README, "Scaling out", has the script),
from the Meltano project directory, stopping at the first failure (``set -e``)::

    for i in 0..N-1:  meltano state get <state-id>:shard-$i > old-$i.json
    tap-feeddelta-state merge --keep older old-*.json > all.json
    tap-feeddelta-state split --shard-count M --out-dir new all.json
    for j in 0..M-1:  meltano state set --force --input-file new/shard-$j.json <state-id>:shard-$j

Pass each state as a file (``--input-file``), never as an argument: Linux caps one argument
at 128 KiB, which a shard's state passes at about 50 feeds.

A feed whose URL holds a credential (``?token=…``) is a new feed to the tap once the token
changes: ``rename`` moves its partition to the new URL, so that the next run reads it as the
same feed (README, "Private feeds (a token in the URL)")::

    meltano state get <state-id> > old.json
    tap-feeddelta-state rename --urls-file urls.txt old.json > new.json
    meltano state set --force --input-file new.json <state-id>

``urls.txt`` holds two lines, the old URL then the new one, so that the tokens stay out of
shell history and ``ps`` (``--old``/``--new`` take them as arguments instead).

Every command reads plain Singer states and Meltano's ``{"singer_state": …}`` form, and
writes the form it read. Every input is validated as the tap would validate it. Any error (a
state that cannot be used, a file that cannot be read or written, a bad argument) is one
line on stderr and exit status 2, never quoting a URL or the state.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from tap_feeddelta.config import MAX_SHARD_COUNT, feed_key, feed_url_refusal
from tap_feeddelta.errors import JSON_READ_ERRORS, StateError, unread_json_text
from tap_feeddelta.respellings import was_read_from
from tap_feeddelta.sharding import shard_of
from tap_feeddelta.shownurl import as_fetched, final_url_hash
from tap_feeddelta.state import (
    decode_bookmark,
    feed_items_state,
    index_partitions,
    not_utf8_text,
    partition_key,
)

_WRAPPER = "singer_state"
# What a partition knows of the resource its document was read from, and its validators
# (and those of the web page it was found through): kept for the new URL only when that
# document was read from the old URL itself.
_READ_FROM_FIELDS = (
    "final_url",
    "final_url_hash",
    "advertised_url_hash",
    "etag",
    "last_modified",
    "page_etag",
    "page_last_modified",
    "page_url_hash",
)


class UsageError(Exception):
    """A bad argument, or a file that cannot be read as what it is given as: one line on
    stderr, exit status 2."""


def _unwrap(document: Any) -> tuple[dict[str, Any], bool]:
    if isinstance(document, dict) and set(document) == {_WRAPPER}:
        inner = document[_WRAPPER]
        if not isinstance(inner, dict):
            raise StateError("state: 'singer_state' must be an object")
        return inner, True
    if not isinstance(document, dict):
        raise StateError("state: the state must be a JSON object")
    return document, False


def _partitions(state: dict[str, Any]) -> list[dict[str, Any]]:
    feed_state = feed_items_state(state)
    if feed_state is None:
        return []
    index_partitions(feed_state)
    return list(feed_state.get("partitions", []))


Keep = Literal["older", "newer"]


def merge_states(states: list[dict[str, Any]], keep: Keep | None = None) -> dict[str, Any]:
    """One state holding every feed partition of ``states``.

    A feed found in several inputs keeps its one partition that holds a baseline (one
    that never read a document holds none). When two hold one and differ, which to keep
    depends on where they come from, which the partitions do not tell: ``keep`` says it
    (see _keeps). Without it, StateError, naming how many feeds and both choices."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    undecided: set[tuple[str, str]] = set()
    for state in states:
        for partition in _partitions(state):
            key = partition_key(partition, "state")
            current = chosen.get(key)
            if current is None:
                chosen[key] = partition
            elif partition != current:
                if _has_baseline(partition) and _has_baseline(current) and keep is None:
                    undecided.add(key)
                if _keeps(partition, current, keep or "older"):
                    chosen[key] = partition
    if undecided:
        raise StateError(
            f"the states hold {len(undecided)} feeds twice, each time with a baseline: "
            "pass --keep older when re-sharding (a shard ran without the feed's state and "
            "started it over: the older one still has what was published since), or "
            "--keep newer when merging a backup with the current state (the newer one is "
            "the backup's continuation)"
        )
    return {"bookmarks": {"feed_items": {"partitions": list(chosen.values())}}}


def _has_baseline(partition: dict[str, Any]) -> bool:
    return partition.get("success_at") is not None or bool(partition.get("items"))


def _last_check(partition: dict[str, Any]) -> str:
    return max((partition.get("checked_at") or "")[:19], (partition.get("failed_at") or "")[:19])


def _keeps(partition: dict[str, Any], other: dict[str, Any], keep: Keep) -> bool:
    """Whether ``partition`` is kept rather than ``other``, of the same feed: one holding a
    baseline over one without, then by ``keep`` the one last checked earlier or later."""
    if _has_baseline(partition) != _has_baseline(other):
        return _has_baseline(partition)
    if keep == "older":
        return _older_baseline(partition, other)
    return _last_check(partition) > _last_check(other)


def _older_baseline(partition: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether ``partition``, of the same feed as ``other``, holds the older baseline.
    A feed gets a second partition only from a run that did not find the first (a state
    not moved to the feed's new shard, a respelled URL in another shard): that run came
    after the first partition's last check, so the partition last checked earlier holds
    the older baseline. Keeping it delivers again at worst what the other's runs
    delivered, under the same delivery_ids; keeping the newer one would lose for good
    what was published before its first run. A partition that never read a document
    holds no baseline at all."""

    def age(p: dict[str, Any]) -> tuple[bool, str]:
        return not _has_baseline(p), _last_check(p)

    return age(partition) < age(other)


def split_state(
    state: dict[str, Any], shard_count: int, feed_urls: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """``shard_count`` states; each feed's partition goes to the shard that owns it. With
    ``feed_urls`` (the configured list), a partition whose feed is configured under
    another URL goes to that URL's shard, renamed to it (see _as_configured)."""
    partitions = _partitions(state)
    placed = (
        [(p, p["context"]["feed_url"]) for p in partitions]
        if feed_urls is None
        else _as_configured(partitions, feed_urls)
    )
    shards: list[list[dict[str, Any]]] = [[] for _ in range(shard_count)]
    for partition, url in placed:
        shards[shard_of(partition["context"]["monitor_id"], url, shard_count)].append(partition)
    return [{"bookmarks": {"feed_items": {"partitions": parts}}} for parts in shards]


def _as_configured(
    partitions: list[dict[str, Any]], feed_urls: Sequence[str]
) -> list[tuple[dict[str, Any], str]]:
    """Each partition with the URL whose shard is to hold it, as the tap takes partitions
    over (respellings.respelled_feeds): one under another spelling of a configured URL,
    and the one partition of a feed no longer configured whose document was last read
    from a configured URL without a partition of its own (a URL replaced by its
    redirect's target), are renamed to that URL. ``shard_of`` hashes the URL as written,
    so the configured spelling's shard may be another one, which would start the feed
    over. When one feed has partitions under several spellings (the new spelling's shard
    has run already and taken a baseline of its own), the older baseline is kept.

    A feed no longer configured read from a configured URL that has a partition of its
    own (a duplicate removed, or a replacement whose new shard has run already: the two
    look alike), or read from it with another such feed, is not surely its feed: it goes
    to that URL's shard under its own URL, where the run takes nothing over (the URL has
    its state) and drops it 30 days after its last check, as a removed feed's."""
    configured = set(feed_urls)
    by_key = {feed_key(url): url for url in feed_urls}
    owners: list[str | None] = []
    claims: dict[tuple[str, str], list[int]] = {}
    for n, partition in enumerate(partitions):
        monitor, url = partition["context"]["monitor_id"], partition["context"]["feed_url"]
        owner = url if url in configured else by_key.get(feed_key(url))
        owners.append(owner)
        final_url = partition.get("final_url")
        if (
            owner is None
            and isinstance(final_url, str)
            and (read := by_key.get(feed_key(final_url))) is not None
            and was_read_from(partition, read)
        ):
            claims.setdefault((monitor, read), []).append(n)
    owned = {
        (partition["context"]["monitor_id"], owner)
        for partition, owner in zip(partitions, owners, strict=True)
        if owner is not None
    }
    beside: dict[int, str] = {}
    for (monitor, url), claimants in claims.items():
        for n in claimants:
            if len(claimants) == 1 and (monitor, url) not in owned:
                owners[n] = url
            else:
                beside[n] = url
    kept: dict[tuple[str, str], int] = {}
    for n, owner in enumerate(owners):
        if owner is not None:
            feed = (partitions[n]["context"]["monitor_id"], owner)
            current = kept.get(feed)
            if current is None or _older_baseline(partitions[n], partitions[current]):
                kept[feed] = n
    placed: list[tuple[dict[str, Any], str]] = []
    for n, partition in enumerate(partitions):
        owner, url = owners[n], partition["context"]["feed_url"]
        if owner is None:
            placed.append((partition, beside.get(n, url)))
        elif kept[(partition["context"]["monitor_id"], owner)] == n:
            placed.append((partition if owner == url else moved_partition(partition, owner), owner))
    return placed


def renamed_state(
    state: dict[str, Any], old: str, new: str, monitor_id: str | None = None
) -> dict[str, Any]:
    """``state`` with one feed's partition moved from URL ``old`` to ``new``: that of
    ``monitor_id``, or of the only monitor that has one. StateError (never quoting a URL)
    when ``old`` has none, or several, or ``new`` has one of that monitor already."""
    if feed_key(old) == feed_key(new):
        raise StateError(
            "the old and the new URL are one feed to the tap (they differ only in spelling): "
            "it finds the partition under either, there is nothing to rename"
        )
    partitions = _partitions(state)
    position = _position_of(partitions, old, monitor_id)
    monitor = partitions[position]["context"]["monitor_id"]
    new_key = feed_key(new)
    if any(
        partition["context"]["monitor_id"] == monitor
        and feed_key(partition["context"]["feed_url"]) == new_key
        for partition in partitions
    ):
        raise StateError(
            f"the new URL already has a partition for monitor_id {monitor!r} (a run with it "
            "took a baseline of its own): nothing was changed"
        )
    moved = moved_partition(partitions[position], new)
    decode_bookmark(moved, "the renamed partition")
    partitions[position] = moved
    bookmarks = state["bookmarks"]
    feed_items = {**bookmarks["feed_items"], "partitions": partitions}
    return {**state, "bookmarks": {**bookmarks, "feed_items": feed_items}}


def _position_of(partitions: list[dict[str, Any]], url: str, monitor_id: str | None) -> int:
    """Where the one partition of feed ``url`` (as spelled, or another spelling the tap
    sends as the same request) of ``monitor_id``, or of any monitor, stands."""
    key = feed_key(url)
    found = [
        n
        for n, partition in enumerate(partitions)
        if monitor_id in (None, partition["context"]["monitor_id"])
        and feed_key(partition["context"]["feed_url"]) == key
    ]
    of_monitor = f" for monitor_id {monitor_id!r}" if monitor_id is not None else ""
    if not found:
        raise StateError(f"the old URL has no partition{of_monitor} in this state")
    monitors = sorted({partitions[n]["context"]["monitor_id"] for n in found})
    if len(monitors) > 1:
        raise StateError(
            f"the old URL has a partition in each of the monitors {monitors}: choose one "
            "with --monitor-id"
        )
    # As the tap does: the partition under the URL as spelled first.
    found = [n for n in found if partitions[n]["context"]["feed_url"] == url] or found
    if len(found) > 1:
        raise StateError(
            f"the old URL has partitions under {len(found)} spellings for monitor_id "
            f"{monitors[0]!r}: pass it as the state spells it"
        )
    return found[0]


def moved_partition(partition: dict[str, Any], new: str) -> dict[str, Any]:
    """``partition`` as the feed's at URL ``new``. What it knows of the URL its document
    was read from is carried over when that was its old URL itself (the new one is read
    in its place, a 304 on the same validators trusted); otherwise (a redirect, a web
    page's feed) it is dropped, with the validators, as the URL the new one leads to is
    not known: the next run reads the document once in full and compares its items with
    the remembered ones as usual. Either way no partition keeps the old URL. (A document
    read from the new URL itself, which the old one redirected to, keeps it all.)"""
    old = partition["context"]["feed_url"]
    moved = {**partition, "context": {**partition["context"], "feed_url": new}}
    if _read_from_itself(partition, new):
        return moved
    if _read_from_itself(partition, old):
        fetched = as_fetched(new)
        moved["final_url"] = fetched
        moved["final_url_hash"] = final_url_hash(fetched, new)
    else:
        for name in _READ_FROM_FIELDS:
            moved.pop(name, None)
    return moved


def _read_from_itself(partition: dict[str, Any], url: str) -> bool:
    """Whether ``partition``'s document was read from its feed's ``url`` itself, as the
    tap compares them (``final_url_hash``, or ``final_url`` in a partition without it)."""
    url_hash = partition.get("final_url_hash")
    if url_hash is not None:
        return bool(url_hash == final_url_hash(as_fetched(url), url))
    final_url = partition.get("final_url")
    return final_url is not None and final_url in (url, as_fetched(url))


def _checked_url(url: str, which: str) -> str:
    """``url`` if the tap takes it as a feed_urls entry; UsageError in its words, which
    never quote the URL."""
    wrong = feed_url_refusal(url)[1]
    if wrong is not None:
        raise UsageError(f"the {which} URL{wrong}")
    return url


def _input_text(path: str, what: str) -> str:
    """The text of the ``what`` file ``path`` ('-': stdin): UTF-8, with or without a byte
    order mark (as the tap reads a state). Every file the tool reads is read here."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({_why(exc)})") from None
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: the {what} {not_utf8_text(data[:2])}") from None


def _why(exc: OSError) -> str:
    """An OSError's words alone ("No such file or directory"), as the tap gives them: not
    str(exc), which is "[Errno 2] ..." and the path again."""
    return exc.strerror or type(exc).__name__


def _write_shards(out_dir: Path, shard_states: list[dict[str, Any]], wrapped: bool) -> None:
    """shard-<i>.json in ``out_dir`` (made if missing) for each shard's state."""
    written = out_dir
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for index, shard_state in enumerate(shard_states):
            written = out_dir / f"shard-{index}.json"
            written.write_text(_dump(shard_state, wrapped) + "\n")
    except OSError as exc:
        raise UsageError(f"{written}: cannot be written ({_why(exc)})") from None


def _json_document(text: str, path: str, what: str) -> Any:
    """The JSON document of the ``what`` file ``path``. Anything the reader cannot take,
    valid JSON too (nesting past the recursion limit, an integer past Python's digits),
    is a UsageError in one line, never quoting the file."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg})") from None
    except JSON_READ_ERRORS as exc:
        raise UsageError(f"{path}: the {what} {unread_json_text(exc)}") from None


def _read_urls(path: str) -> tuple[str, str]:
    """The old and the new URL from a file (``-``: stdin) of two lines."""
    text = _input_text(path, "URLs file")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 2:
        raise UsageError(
            f"{path}: the URLs file must hold two lines, the old URL then the new one "
            f"(it holds {len(lines)})"
        )
    return lines[0], lines[1]


def _read_feed_urls(path: str) -> list[str]:
    """The configured feed URLs from a file ('-': stdin): the tap's config (a JSON object
    with ``feed_urls``, as ``meltano invoke --dump=config tap-feeddelta`` writes it), or
    one URL a line. Each must be one the tap takes."""
    text = _input_text(path, "feed URLs file")
    if text.lstrip().startswith("{"):
        urls = _json_document(text, path, "config").get("feed_urls")
        if not isinstance(urls, list) or not all(isinstance(url, str) for url in urls):
            raise UsageError(f"{path}: the config holds no feed_urls list of strings")
    else:
        urls = [line.strip() for line in text.splitlines() if line.strip()]
    if not urls:
        raise UsageError(f"{path}: the feed URLs file lists no URL")
    for n, url in enumerate(urls, start=1):
        if (wrong := feed_url_refusal(url)[1]) is not None:
            raise UsageError(f"{path}: feed URL {n}{wrong}")
    return urls


def _read(path: str) -> tuple[dict[str, Any], bool]:
    state, wrapped = _unwrap(_json_document(_input_text(path, "state file"), path, "state"))
    if not state:
        # What `meltano state get` prints for a state id it does not know: a wrong id
        # must not pass for a shard without feeds.
        raise StateError(
            f"{path}: the state is empty; is its state id right? (meltano state get prints "
            "{} for an unknown id, and an unsharded pipeline's id has no :shard-N suffix)"
        )
    return state, wrapped


def _dump(state: dict[str, Any], wrapped: bool) -> str:
    return json.dumps({_WRAPPER: state} if wrapped else state, separators=(",", ":"))


_MERGE_HELP = """Merge states into one (stdout), in the form read. A feed found in several
states keeps the partition that holds a baseline (one that never read a document holds
none). When two hold one and differ, --keep says which: 'older' (the one last checked
earlier) when re-sharding, as reshard.sh does: a second partition there comes from a shard
that ran without the feed's state and started it over, and the older one still has what
was published since (what the newer one's runs sent comes again, under the same
delivery_ids); 'newer' when merging a backup with the current state, whose partitions
continue the backup's. Without --keep such a merge is refused, naming how many feeds."""

_SPLIT_HELP = """Split one state into shard states, one file per shard (shard-<i>.json in
--out-dir, <i> from 0), in the form read: each feed's partition goes to the shard that owns
the feed, as the tap run with that shard_count and shard_index=<i> reads it. Give the
configured feed URLs (--feed-urls-file) to have a feed whose state is under another
spelling of its URL, or under the URL it replaced, follow its configured URL. Refused when
the state is empty (a wrong state id)."""

_RENAME_HELP = """Move one feed's partition from its old URL to its new one, for a private
feed whose token changed: the next run reads the new URL as the same feed (no new
baseline, no item again). Give the URLs in a file of two lines, the old URL then the new
one (--urls-file; '-' for stdin), to keep the token out of shell history and ps; --old and
--new take them as arguments. The URLs are as in feed_urls. Writes the state to stdout,
in the form read. Refused when the old URL has no partition, or the new URL has one."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tap-feeddelta-state",
        description="Merge and split tap-feeddelta states by shard; move a feed's state to "
        "its new URL.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    merge = commands.add_parser(
        "merge", help="merge states into one (stdout)", description=_MERGE_HELP
    )
    merge.add_argument("files", nargs="+", help="state files ('-' for stdin)")
    merge.add_argument(
        "--keep",
        choices=("older", "newer"),
        help="of a feed found twice, each time with a baseline: the partition last checked "
        "earlier (re-sharding) or later (a backup merged with the current state)",
    )
    split = commands.add_parser(
        "split", help="split one state into shard states", description=_SPLIT_HELP
    )
    split.add_argument("file", help="state file ('-' for stdin)")
    split.add_argument(
        "--shard-count",
        type=int,
        required=True,
        help=f"how many shards: the shard_count the tap will run with (1 to {MAX_SHARD_COUNT:,})",
    )
    split.add_argument("--out-dir", required=True, help="writes shard-<i>.json here")
    split.add_argument(
        "--feed-urls-file",
        help="the configured feed URLs (one a line, or the tap's JSON config; '-' for "
        "stdin): a feed whose state is under another spelling of its URL, or under the URL "
        "it replaced (its redirect's target) when the URL has none of its own, has it "
        "renamed and put in that URL's shard; a removed feed read from a URL that has its "
        "own goes to that shard under its own URL (and ages out there)",
    )
    rename = commands.add_parser(
        "rename",
        help="move one feed's partition to its new URL (stdout)",
        description=_RENAME_HELP,
    )
    rename.add_argument("file", help="state file ('-' for stdin)")
    rename.add_argument(
        "--urls-file", help="a file of two lines: the old URL, then the new one ('-' for stdin)"
    )
    rename.add_argument("--old", help="the old URL (shows in shell history and ps)")
    rename.add_argument("--new", help="the new URL (shows in shell history and ps)")
    rename.add_argument(
        "--monitor-id", help="the feed's monitor_id (default: the only one with the old URL)"
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "rename":
            return _rename(args, rename)
        if args.command == "merge":
            read = [_read(path) for path in args.files]
            merged = merge_states([state for state, _ in read], args.keep)
            print(_dump(merged, any(wrapped for _, wrapped in read)))
            return 0
        if not 1 <= args.shard_count <= MAX_SHARD_COUNT:
            # Shard files for a count the tap refuses would only be refused at its start.
            parser.error(
                f"--shard-count must be 1 to {MAX_SHARD_COUNT:,}, as the tap's shard_count"
            )
        if args.feed_urls_file == "-" and args.file == "-":
            parser.error("only one of the state and the feed URLs file can come from stdin")
        urls = None if args.feed_urls_file is None else _read_feed_urls(args.feed_urls_file)
        state, wrapped = _read(args.file)
        _write_shards(Path(args.out_dir), split_state(state, args.shard_count, urls), wrapped)
        return 0
    except (StateError, UsageError, OSError) as exc:
        print(f"tap-feeddelta-state: {exc}", file=sys.stderr)
        return 2


def _rename(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if (args.urls_file is None) == (args.old is None and args.new is None):
        parser.error("give the URLs either in --urls-file or as --old and --new")
    if args.urls_file is None and (args.old is None or args.new is None):
        parser.error("give both --old and --new")
    if args.urls_file == "-" and args.file == "-":
        parser.error("only one of the state and the URLs file can come from stdin")
    old, new = (args.old, args.new) if args.urls_file is None else _read_urls(args.urls_file)
    old, new = _checked_url(old, "old"), _checked_url(new, "new")
    state, wrapped = _read(args.file)
    print(_dump(renamed_state(state, old, new, args.monitor_id), wrapped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
