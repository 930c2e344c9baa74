"""The config contract: one JSON schema (what singer-sdk validates and --about shows)
and the typed Settings the rest of the tap reads."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from tap_feeddelta import __version__
from tap_feeddelta.bounds import MAX_URL_BYTES
from tap_feeddelta.configwords import in_config_order, violations_told
from tap_feeddelta.fetch.errors import FetchError
from tap_feeddelta.fetch.urls import parse_target
from tap_feeddelta.models import FINGERPRINT_FIELDS, ContentMode, FirstRunMode
from tap_feeddelta.ports import BAD_PORTS
from tap_feeddelta.sharding import shard_of

PROJECT_URL: Final = "https://github.com/tap-feeddelta/tap-feeddelta"
DEFAULT_USER_AGENT: Final = f"tap-feeddelta/{__version__} (+{PROJECT_URL})"
# Feeds one run checks, at most; a config may list more when shards split it.
MAX_FEEDS_PER_RUN: Final = 10_000
MAX_FEED_URLS: Final = 1_000_000
# shard_count, at most (tap-feeddelta-state split refuses more too).
MAX_SHARD_COUNT: Final = 1_024

# A pattern ends in $(?!\n), not $: jsonschema applies it with Python's re.search, whose
# "$" also matches before a final newline ("default\n" passed ^[A-Za-z0-9_-]{1,64}$).
# The lookahead means the same in ECMA-262, JSON Schema's dialect, where "$" is the end.
_END: Final = r"$(?!\n)"
_RFC3339: Final = (
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?"
    + _END
    + r"|^\d{4}-\d{2}-\d{2}"
    + _END
)


def _integer(default: int, minimum: int, maximum: int, description: str) -> dict[str, Any]:
    return {
        "type": ["integer"],
        "default": default,
        "minimum": minimum,
        "maximum": maximum,
        "description": f"{description} ({minimum:,}–{maximum:,}, default {default:,}).",
    }


CONFIG_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["feed_urls"],
    "properties": {
        "feed_urls": {
            "type": ["array"],
            "minItems": 1,
            "maxItems": MAX_FEED_URLS,
            "items": {"type": "string", "pattern": r"^[Hh][Tt][Tt][Pp][Ss]?://", "maxLength": 2048},
            "description": (
                "Feeds to watch: http(s) URLs of RSS, Atom or JSON feeds, or of web pages "
                "that advertise one (with discover_from_websites), each at most 2 KiB. "
                "A run checks at most 10,000: a longer list (up to 1,000,000) needs "
                "shard_count, one run per shard, each checking its share (with shard_count "
                "1 it is refused)."
            ),
        },
        "monitor_id": {
            "type": ["string"],
            "default": "default",
            "pattern": r"^[A-Za-z0-9_-]{1,64}" + _END,
            "description": (
                "Namespace of the baselines: two monitor_ids watching the same feeds keep "
                "independent state and delivery ids. 1–64 of A-Z a-z 0-9 _ -."
            ),
        },
        "first_run_mode": {
            "type": ["string"],
            "default": "baseline_only",
            "enum": ["baseline_only", "emit_recent", "emit_all"],
            "description": (
                "What a feed's first run emits: nothing (baseline_only, everything is "
                "remembered), the newest max_initial_items (emit_recent), or every item "
                "within max_items_per_run (emit_all)."
            ),
        },
        "max_initial_items": _integer(
            20, 1, 10_000, "Items per feed that emit_recent emits on a feed's first run"
        ),
        "max_items_per_run": _integer(
            500,
            1,
            10_000,
            "Changes emitted per feed per run; the rest are deferred and come on a later run",
        ),
        "max_state_items": _integer(5_000, 100, 10_000, "Item fingerprints remembered per feed"),
        "content_mode": {
            "type": ["string"],
            "default": "excerpts",
            "enum": ["metadata", "excerpts", "feed_content"],
            "description": (
                "metadata: no summary or content; excerpts: summary; feed_content: summary "
                "and content_text. Changing it never causes updated records."
            ),
        },
        "start_date": {
            "type": ["string"],
            "format": "date-time",
            "pattern": _RFC3339,
            "description": (
                "RFC 3339 date-time: items dated before it are not emitted (undated items are)."
            ),
        },
        "ignored_changes": {
            "type": ["array"],
            "default": [],
            "uniqueItems": True,
            "items": {"type": "string", "enum": list(FINGERPRINT_FIELDS)},
            "description": (
                "Item fields whose edits do not make an item updated, for feeds that change "
                "them on every fetch (YouTube's updated date, the points in a Hacker News "
                "description): any of " + ", ".join(FINGERPRINT_FIELDS) + ". Records still "
                "carry every field's current value; their fingerprint and delivery_id "
                "depend on this list (default none)."
            ),
        },
        "discover_from_websites": {
            "type": ["boolean"],
            "default": False,
            "description": (
                "When a URL is a web page, read the first feed it advertises instead "
                "(one more fetch, checked like the first)."
            ),
        },
        "stale_after_days": _integer(
            30, 1, 3_650, "A feed whose newest item is older than this is flagged stale"
        ),
        "max_feed_bytes": _integer(
            4_194_304,
            65_536,
            33_554_432,
            "Cap on a feed's body, both as received and as decoded, in bytes",
        ),
        "max_redirects": _integer(3, 0, 5, "Redirects followed, each checked again"),
        "request_timeout_seconds": {
            "type": ["number"],
            "default": 30,
            "minimum": 1,
            "maximum": 120,
            "description": (
                "One time budget per feed over DNS, connect, TLS, redirects, headers and "
                "body; waiting for a free max_per_host slot is not counted (1–120, default 30)."
            ),
        },
        "max_concurrency": _integer(8, 1, 64, "Feeds fetched at once"),
        "state_interval_seconds": _integer(
            60,
            1,
            86_400,
            "Seconds between STATE messages during a run, written after a feed is done, so "
            "that a run stopped part-way keeps what its target confirmed (a run shorter "
            "than this writes one STATE, at its end)",
        ),
        "max_per_host": _integer(
            2, 1, 8, "Feeds fetched at once from one host, per run (shards add up)"
        ),
        "user_agent": {
            "type": ["string"],
            "default": DEFAULT_USER_AGENT,
            "minLength": 1,
            "maxLength": 512,
            "pattern": r"^[\x20-\x7e]+" + _END,
            "description": "User-Agent header sent with every request.",
        },
        "shard_count": _integer(
            1, 1, MAX_SHARD_COUNT, "Shards the feeds are split into (one tap run per shard)"
        ),
        "shard_index": {
            "type": ["integer"],
            "default": 0,
            "minimum": 0,
            "maximum": MAX_SHARD_COUNT - 1,
            "description": (
                "This run's shard, 0 to shard_count - 1: it checks only the feeds that hash "
                "to it and keeps only their state (default 0). Set it from the "
                "orchestrator, e.g. TAP_FEEDDELTA_SHARD_INDEX=$JOB_COMPLETION_INDEX."
            ),
        },
        "allow_private_networks": {
            "type": ["boolean"],
            "default": False,
            "description": (
                "Let loopback and private-network destinations through: for intranet feeds "
                "and tests only. Every other check still applies."
            ),
        },
        "ca_bundle_path": {
            "type": ["string"],
            "minLength": 1,
            "maxLength": 4096,
            "description": (
                "Path of a PEM file of CA certificates trusted for https in addition to the "
                "default roots (certifi's), e.g. an internal CA. Checked at start-up."
            ),
        },
    },
}


@dataclass(frozen=True, slots=True)
class Settings:
    feed_urls: tuple[str, ...]
    monitor_id: str = "default"
    first_run_mode: FirstRunMode = "baseline_only"
    max_initial_items: int = 20
    max_items_per_run: int = 500
    max_state_items: int = 5_000
    content_mode: ContentMode = "excerpts"
    start_date: str | None = None  # normalized to YYYY-MM-DDTHH:MM:SSZ
    ignored_changes: tuple[str, ...] = ()  # names of FINGERPRINT_FIELDS
    discover_from_websites: bool = False
    stale_after_days: int = 30
    max_feed_bytes: int = 4_194_304
    max_redirects: int = 3
    request_timeout_seconds: float = 30.0
    max_concurrency: int = 8
    state_interval_seconds: int = 60
    max_per_host: int = 2
    user_agent: str = DEFAULT_USER_AGENT
    allow_private_networks: bool = False
    shard_count: int = 1
    shard_index: int = 0
    ca_bundle_path: str | None = None


def settings_from_config(config: dict[str, Any]) -> Settings:
    """Typed settings from a config that already passed the JSON schema."""
    known = set(Settings.__slots__)
    values = {k: v for k, v in config.items() if k in known and v is not None}
    values["feed_urls"] = tuple(config["feed_urls"])
    if "ignored_changes" in values:
        values["ignored_changes"] = tuple(values["ignored_changes"])
    if "start_date" in values:
        values["start_date"] = normalize_start_date(values["start_date"])
    if "request_timeout_seconds" in values:
        values["request_timeout_seconds"] = float(values["request_timeout_seconds"])
    return Settings(**values)


def normalize_start_date(value: str) -> str:
    """RFC 3339 (or a bare date) → ``YYYY-MM-DDTHH:MM:SSZ``, the shape of items' dates,
    which it is compared with as text (so the year has four digits, 0999 too). A leap
    second (``23:59:60``) is the second before it, as in feed dates. ValueError if it
    names no date-time; OverflowError if it does, but outside years 1 to 9999 in UTC."""
    text = value.strip().replace("t", "T").replace("z", "Z").replace(" ", "T", 1)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        text += "T00:00:00"
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    text = _LEAP_SECOND.sub(r"\g<1>59", text)
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    utc = parsed.astimezone(UTC)  # OverflowError past year 9999 or before year 1
    return f"{utc.year:04d}-" + utc.strftime("%m-%dT%H:%M:%SZ")


_LEAP_SECOND: Final = re.compile(r"(T\d{2}:\d{2}:)60(?![0-9])")


# singer-sdk settings the tap turns down, with why. batch_config: the SDK's batch mode
# writes a feed's records to a file announced by a BATCH message only when the file is
# full, while a feed's state moves as soon as its records are handed over, so a STATE (on
# SIGTERM, say) could cover records never announced; its files also skip stream maps and
# flattening. Feeds give few records: RECORD messages carry them.
REFUSED_SETTINGS: Final = {
    "batch_config": (
        "batch mode is not supported: the tap writes RECORD messages (remove batch_config)"
    ),
}


def refused_settings(config: dict[str, Any]) -> list[str]:
    """One message for each setting the tap turns down that ``config`` holds."""
    return [f"config[{key!r}]: {why}" for key, why in REFUSED_SETTINGS.items() if key in config]


# How a boolean setting may be spelt in a TAP_FEEDDELTA_* variable (any case). The SDK
# reads anything but the true spellings as false: a typo ("ture") turned a setting off.
TRUE_SPELLINGS: Final = frozenset({"true", "1", "yes", "on"})
FALSE_SPELLINGS: Final = frozenset({"false", "0", "no", "off", ""})


def typed_from_text(text: Any, schema: dict[str, Any]) -> Any:
    """A setting's value given as text (a TAP_FEEDDELTA_* variable), read as the type its
    schema names: integer, boolean, object or array (JSON). Text that does not read as
    that type is returned as it is, so that the schema check refuses it, naming the
    setting and not quoting the value. Numbers and strings stay text (the tap reads
    numbers itself); anything not text (an array the SDK parsed) is returned as is."""
    if not isinstance(text, str):
        return text
    types = schema.get("type", [])
    types = {types} if isinstance(types, str) else set(types)
    if "integer" in types:
        try:
            return int(text)
        except ValueError:
            return text
    if "boolean" in types:
        spelling = text.strip().lower()
        if spelling in TRUE_SPELLINGS:
            return True
        return False if spelling in FALSE_SPELLINGS else text
    if types & {"object", "array"}:
        import json

        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def schema_problems(schema: dict[str, Any], config: dict[str, Any]) -> list[str]:
    """The config's JSON-schema violations, each naming the key and the rule but never
    the value: a misplaced feed URL can carry a token or a password. Reference for tests:
    the run uses all_config_problems."""
    problems = [problem for _, problem in _schema_violations(schema, config)]
    return in_config_order(problems, config)


def _schema_violations(
    schema: dict[str, Any], config: dict[str, Any]
) -> list[tuple[tuple[Any, ...], str]]:
    """(where in the config, what is wrong there) for each JSON-schema violation."""
    from jsonschema.validators import validator_for

    checked = _schema_to_check(schema, config)
    validator = validator_for(checked)(checked)
    return [told for error in validator.iter_errors(config) for told in violations_told(error)]


def _schema_to_check(schema: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """``schema``; or, when every feed URL plainly meets the rules of its items (a string,
    at most maxLength characters, matching the pattern: what jsonschema checks, as it
    checks it), a copy without them. jsonschema walks each URL at ~6.5 µs (65 ms of
    every start-up at 10,000 feeds) to find nothing; a URL that breaks a rule has
    jsonschema check them all, so the problems and their order are its own."""
    feed_urls = schema.get("properties", {}).get("feed_urls")
    urls = config.get("feed_urls")
    if not (isinstance(feed_urls, dict) and isinstance(urls, list)):
        return schema
    items = feed_urls.get("items")
    if not (isinstance(items, dict) and items.keys() == {"type", "pattern", "maxLength"}):
        return schema
    if items["type"] != "string":
        return schema
    pattern, longest = re.compile(items["pattern"]), items["maxLength"]
    if not all(type(url) is str and len(url) <= longest and pattern.search(url) for url in urls):
        return schema
    without_items = {key: rule for key, rule in feed_urls.items() if key != "items"}
    return {**schema, "properties": {**schema["properties"], "feed_urls": without_items}}


def all_config_problems(
    schema: dict[str, Any], config: dict[str, Any]
) -> tuple[list[str], frozenset[str]]:
    """Every problem of ``config`` at once, in the order of its keys: its schema
    violations, and config_problems of the values that passed the schema (a misspelt key
    hides no feed URL problem); and the keys whose values the schema refused. A feed_urls
    entry the schema refused is left out of the checks, the others are checked."""
    violations = _schema_violations(schema, config)
    settings = schema.get("properties", {})
    refused: set[str] = set()
    refused_urls: set[int] = set()
    for path, _ in violations:
        if len(path) >= 2 and path[0] == "feed_urls" and isinstance(path[1], int):
            refused_urls.add(path[1])
        elif path and path[0] in settings and path[0] in config:  # not a key left out
            refused.add(str(path[0]))
    judged = {key: value for key, value in config.items() if key not in refused}
    urls = judged.get("feed_urls")
    if refused_urls and isinstance(urls, list):
        judged["feed_urls"] = [None if i in refused_urls else u for i, u in enumerate(urls)]
    problems = [problem for _, problem in violations]
    problems += config_problems(judged, unjudged=frozenset(refused))
    return in_config_order(problems, config), frozenset(refused)


# A URL the fetcher sends as written, bar the case of nothing, a default port and an
# empty path: lower-case scheme and host name (no IP literal), no %, no dot segment,
# only the characters urllib3 leaves unescaped in a path and a query. Most URLs are
# so, and parse_target takes every one of them (with a port in range, a host name
# shorter than 253 characters and at most MAX_URL_BYTES in all; a test holds it to
# that): their key is read here, several times faster (a config may list a million URLs).
_PLAIN_URL: Final = re.compile(
    r"(https?)://([a-z0-9-]+(?:\.[a-z0-9-]+)*)\.?(?::(\d{1,5}))?"
    r"((?:/[A-Za-z0-9_~!$&'()*+,;=:@-][A-Za-z0-9._~!$&'()*+,;=:@-]*|/)*)"
    r"(\?[A-Za-z0-9._~!$&'()*+,;=:@/?-]+)?"
)


def feed_key(url: str) -> str:
    """``url`` as the fetcher sends it (``parse_target``'s normalized form: scheme and
    host in lower case, an IDN host in punycode, no default port, no fragment, "/" for
    an empty path, ``./`` and ``../`` segments resolved, upper-case %xx escapes), and
    without a trailing dot on the host. Two spellings with one key are one feed; a URL
    that cannot be fetched is its own key."""
    return feed_key_and_refusal(url)[0]


def feed_key_and_refusal(url: str) -> tuple[str, str | None]:
    """(``feed_key(url)``, None) for a URL the fetcher takes; (``url``, why not) for one
    that ``parse_target`` refuses, in its words (which never quote the URL)."""
    plain = _PLAIN_URL.fullmatch(url)
    # A port the fetcher refuses (BAD_PORTS) goes the long way, to be refused in its words.
    if (
        plain is not None
        and (plain[3] is None or (0 < int(plain[3]) < 65536 and int(plain[3]) not in BAD_PORTS))
        and len(plain[2]) < 253
        and len(url) <= MAX_URL_BYTES
    ):
        scheme, host, port, path, query = plain.groups()
        if port is not None and (scheme, int(port)) not in (("http", 80), ("https", 443)):
            host += f":{int(port)}"
        return f"{scheme}://{host}{path or '/'}{query or ''}", None
    return _fetcher_key_and_refusal(url)


def fetcher_key(url: str) -> str:
    """``feed_key`` through ``parse_target`` itself, for any URL. Reference for tests: the
    run uses feed_key, whose fast path for plain URLs must agree with it."""
    return _fetcher_key_and_refusal(url)[0]


def _fetcher_key_and_refusal(url: str) -> tuple[str, str | None]:
    try:
        target = parse_target(url)
    except FetchError as exc:
        return url, exc.message
    host = target.host.rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    if (target.scheme, target.port) not in (("http", 80), ("https", 443)):
        host += f":{target.port}"
    return f"{target.scheme}://{host}{target.request_target}", None


def _shard_size_problems(
    config: dict[str, Any], urls: list[str], shard_count: int, shard_index: int
) -> list[str]:
    """A run checks at most MAX_FEEDS_PER_RUN feeds: a longer list needs shards."""
    if len(urls) <= MAX_FEEDS_PER_RUN:
        return []
    monitor_id = config.get("monitor_id", "default")
    if not isinstance(monitor_id, str):
        return []
    owned = sum(1 for url in urls if shard_of(monitor_id, url, shard_count) == shard_index)
    if owned <= MAX_FEEDS_PER_RUN:
        return []
    # Shards come out within a few percent of each other: a tenth to spare.
    needed = -(-len(urls) * 11 // (10 * MAX_FEEDS_PER_RUN))
    return [
        f"config['feed_urls']: this shard would check {owned:,} feeds, more than "
        f"{MAX_FEEDS_PER_RUN:,} a run: split the {len(urls):,} feeds over more shards "
        f"(config['shard_count'] of at least {needed})"
    ]


# Lines of feed_urls problems listed at most; a list of a million URLs may hold as many.
MAX_LISTED_URL_PROBLEMS: Final = 20


def feed_url_refusal(url: str) -> tuple[str, str | None]:
    """(``feed_key(url)``, None) for a URL feed_urls may hold; else (``url``, what is
    wrong with it, to follow its name in a message: " is longer than 2 KiB", or ": " and
    the fetcher's own words), never quoting it."""
    if len(url.encode("utf-8")) > MAX_URL_BYTES:
        return url, " is longer than 2 KiB"
    # The fetcher's own check (parse_target), so that a URL it would refuse stops the run
    # now, not as an invalid_url row; credentials (user@host) are refused too: they would
    # travel into every record and log line.
    key, why = feed_key_and_refusal(url)
    if why is None:
        return key, None
    return url, f": {why[0].lower()}{why[1:].rstrip('.')}"


def feed_url_problems(feed_urls: list[Any]) -> list[str]:
    """One message per feed_urls entry that cannot be used, in config order, naming it by
    index and never quoting it: the first MAX_LISTED_URL_PROBLEMS, then how many more."""
    problems: list[str] = []
    first_of: dict[str, int] = {}  # feed_key -> index of its first entry
    for index, url in enumerate(feed_urls):
        if not isinstance(url, str):
            continue
        key, wrong = feed_url_refusal(url)
        if wrong is not None:
            problems.append(f"config['feed_urls'][{index}]{wrong}")
            continue
        earlier = first_of.setdefault(key, index)
        if earlier != index and feed_urls[earlier] == url:
            problems.append(
                f"config['feed_urls'][{index}] is the same URL as config['feed_urls'][{earlier}]"
            )
        elif earlier != index:
            problems.append(
                f"config['feed_urls'][{index}] is the same feed as "
                f"config['feed_urls'][{earlier}]: the tap would send the same request "
                "for both (they differ only in the case of the scheme or host, a "
                "default port, a #fragment, ./ or ../ segments, percent-encoding or "
                "the IDN form of the host)"
            )
    if len(problems) > MAX_LISTED_URL_PROBLEMS:
        more = len(problems) - MAX_LISTED_URL_PROBLEMS
        del problems[MAX_LISTED_URL_PROBLEMS:]
        problems.append(f"config['feed_urls']: and {more:,} more entries like these (not listed)")
    return problems


def config_problems(config: dict[str, Any], unjudged: frozenset[str] = frozenset()) -> list[str]:
    """Checks JSON schema cannot express; each message names the key. ``unjudged``: keys
    whose values the schema refused (and said so): the checks that read them are skipped.
    A value of the wrong type is passed over, never raised on."""
    feed_urls = config.get("feed_urls")
    if not isinstance(feed_urls, list):
        feed_urls = []
    problems = feed_url_problems(feed_urls)
    urls = [u for u in feed_urls if isinstance(u, str)]
    shard_count, shard_index = config.get("shard_count", 1), config.get("shard_index", 0)
    if (
        {"shard_count", "shard_index"} & unjudged
        or not _is_count(shard_count)
        or not _is_count(shard_index)
        or shard_count < 1
    ):
        pass  # the schema has said what is wrong with them
    elif shard_index >= shard_count:
        problems.append("config['shard_index'] must be smaller than config['shard_count']")
    elif "monitor_id" not in unjudged:
        problems += _shard_size_problems(config, urls, shard_count, shard_index)
    start = config.get("start_date")
    if isinstance(start, str):
        try:
            normalize_start_date(start)
        except ValueError:
            problems.append("config['start_date'] is not a valid RFC 3339 date-time")
        except OverflowError:
            problems.append("config['start_date'] is outside the years 0001 to 9999 in UTC")
    ca_bundle = config.get("ca_bundle_path")
    if isinstance(ca_bundle, str) and (why := ca_bundle_problem(ca_bundle)):
        problems.append(f"config['ca_bundle_path'] cannot be used: {why}")
    return problems


def _is_count(value: Any) -> bool:
    """An integer of 0 or more (a boolean is no count, though Python calls it an int)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def ca_bundle_problem(path: str) -> str | None:
    """Why the file at ``path`` cannot be loaded as trusted certificates, or None.

    Loaded as the fetcher will load it. The reason never quotes the file, nor the path.
    """
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cafile=path)
    except ssl.SSLError:
        return "the file holds no PEM certificate that can be loaded"
    except OSError as exc:
        return f"the file cannot be read ({exc.strerror or type(exc).__name__})"
    except (ValueError, TypeError):  # a NUL in the path, say
        return "the path is not a usable file name"
    if not context.cert_store_stats()["x509"]:
        return "the file holds no certificate"
    return None
