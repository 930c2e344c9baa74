"""Visitor ids: the session and click ids a site writes into its links, and a link without them.

A site that keeps its sessions in the URL for a client without cookies (the tap has none)
writes a new session id into every link of each response: ``;jsessionid=…`` (Java),
``?PHPSESSID=…`` (PHP), ``CFID``/``CFTOKEN`` (ColdFusion), a forum's ``sid=``/``s=``; feeds
built from shared or mailed links carry a click, share or recipient id (``fbclid``,
``gclid``, ``igsh``, ``mc_eid``, ``_hsenc``…) that differs from copy to copy. Neither names
the page. Change detection compares item links without them (fingerprints.compared_item);
records keep the link as the feed gives it.

Only these are dropped, each a value per visitor or per click, never one that names the
content: ``id=``, ``p=``, ``page=``, ``ref=`` stay, and so do campaign tags (``utm_*``,
``mc_cid``), which many feeds put on every link unchanged. ``sid`` and ``s`` name a story
or a search on some sites: they are dropped only holding a 32-digit hex value (the
session ids of phpBB, vBulletin and Invision boards). ``si`` is a share id only on the hosts
that write one into every shared link, a value per share (YouTube's, Spotify's:
SHARE_ID_HOSTS); elsewhere it may name a story or a search, and stays.

Versions before dropped fewer (not ``igsh`` nor ``si``): without_visitor_ids_before gives
a link as they compared it, so that what they remembered is recognized (fingerprints).
"""

from __future__ import annotations

import re
from typing import Final

VISITOR_PARAMS: Final = frozenset(
    {
        # Sessions kept in the URL for clients without cookies
        "jsessionid",  # Java (as a query parameter; see _PATH_SESSION)
        "phpsessid",  # PHP's session.use_trans_sid
        "cfid",  # ColdFusion client management
        "cftoken",
        "oscsid",  # osCommerce
        "zenid",  # Zen Cart
        # Click ids of ad and social platforms
        "fbclid",  # Facebook, Instagram
        "gclid",  # Google Ads
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",  # Microsoft Advertising
        "yclid",  # Yandex
        "ysclid",
        "ttclid",  # TikTok
        "twclid",  # X (Twitter)
        "li_fat_id",  # LinkedIn
        "igshid",  # Instagram shares (older links)
        "igsh",  # Instagram shares (the name that replaced igshid)
        "srsltid",  # Google Merchant listings
        # A mail's recipient or a visitor, in links of newsletters and their archives
        "mc_eid",  # Mailchimp (mc_cid, the campaign, stays)
        "_hsenc",  # HubSpot
        "_hsmi",
        "__hstc",
        "__hssc",
        "__hsfp",
        "mkt_tok",  # Marketo
        "_kx",  # Klaviyo
        "vero_id",
        "oly_enc_id",  # Omeda
        "oly_anon_id",
        "_gl",  # Google Analytics' cross-domain linker
    }
)
# Names that are a visitor's only with a session id's value: 32 hex digits.
_HEX_SESSION_PARAMS: Final = ("sid", "s")
_HEX_SESSION: Final = re.compile("[0-9a-fA-F]{32}")
# The share id ``si`` a host writes into each shared link, a value per share: YouTube
# (youtube.com and its www., m. and music. hosts, youtu.be) and Spotify.
SHARE_ID: Final = "si"
SHARE_ID_HOSTS: Final = frozenset(
    {
        "youtube.com",
        "www.youtube.com",
        "m.youtube.com",
        "music.youtube.com",
        "youtu.be",
        "open.spotify.com",
    }
)
# Whether a link is on one of them (any case; a port, userinfo or a final dot allowed).
_ON_SHARE_ID_HOST: Final = re.compile(
    "https?://(?:[^/?#@]*@)?(?:{})\\.?(?::[0-9]*)?(?:[/?#]|$)".format(
        "|".join(re.escape(host) for host in sorted(SHARE_ID_HOSTS))
    ),
    re.IGNORECASE | re.ASCII,
)
# What versions before dropped: none of the names added since.
_VISITOR_PARAMS_BEFORE: Final = VISITOR_PARAMS - {"igsh"}


def _trie(words: list[str]) -> str:
    """An expression matching any of ``words``, branching on one character at a time:
    the search tries a branch or two at each ``?``, ``&`` and ``;``, not every name."""
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[:1], []).append(word[1:])
    alternatives = [
        re.escape(first) + (_trie(rests) if first else "")
        for first, rests in sorted(branches.items())
    ]
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"


# Whether a link may hold one: a search in C, so that a link with an ordinary query
# (``?p=12``) costs one scan. A match in the fragment, or a ``;name`` that is no Java
# session, finds nothing to drop (without_visitor_ids).
# (The first letters first: a parameter that begins with none of them, ``utm_source``,
# is passed over at once. ASCII: "ſid" is no sid.)
_MAY_HOLD: Final = re.compile(
    "[?&;](?=[{}])(?:{}|s(?:id)?=[0-9a-f]{{32}})(?![^=&#;/])".format(
        "".join(sorted({name[0] for name in VISITOR_PARAMS} | {"s"})),
        _trie(sorted(VISITOR_PARAMS | {SHARE_ID})),
    ),
    re.IGNORECASE | re.ASCII,
)
# Whether ``url`` may hold a session, click or share id (None: it holds none);
# without_visitor_ids looks closer (at the host, for ``si``). For a hot loop that takes
# most links for what they are.
may_hold_visitor_ids: Final = _MAY_HOLD.search
# A Java session id in the path's parameters (``/page;jsessionid=…?q``).
_PATH_SESSION: Final = re.compile(";jsessionid=[^;/?#]*", re.IGNORECASE | re.ASCII)


def without_visitor_ids(url: str) -> str:
    """``url`` without its session, click and share ids (the other parameters in their
    order, as written). A URL that has none is returned as it is, the same object."""
    return url if _MAY_HOLD.search(url) is None else drop_visitor_ids(url)


def without_visitor_ids_before(url: str) -> str:
    """``url`` as versions before share ids were dropped compared it: without the session
    and click ids they knew (``igsh`` and ``si`` kept). The same object when that is
    ``url``."""
    return drop_visitor_ids(url, _VISITOR_PARAMS_BEFORE, share_ids=False)


def drop_visitor_ids(
    url: str, names: frozenset[str] = VISITOR_PARAMS, share_ids: bool = True
) -> str:
    """without_visitor_ids of a ``url`` that may_hold_visitor_ids says may hold some
    (``names`` and ``share_ids``: what versions before dropped, for
    without_visitor_ids_before)."""
    fragment_at = url.find("#")
    end = len(url) if fragment_at < 0 else fragment_at
    if ";" in url:
        head = _PATH_SESSION.sub("", url[:end])
        if len(head) != end:
            url, end = head + url[end:], len(head)
    query_at = url.find("?", 0, end)
    if query_at < 0:
        return url
    params = url[query_at + 1 : end].split("&")
    host_of = url if share_ids else None
    kept = [param for param in params if not _is_visitor(param, names, host_of)]
    if len(kept) == len(params):
        return url
    query = "?" + "&".join(kept) if kept else ""
    return url[:query_at] + query + url[end:]


def _is_visitor(param: str, names: frozenset[str], host_of: str | None) -> bool:
    """Whether ``param`` is one of ``names``, a hex session id, or a share id on the host
    of the URL ``host_of`` (None: share ids are kept)."""
    name, _, value = param.partition("=")
    name = name.lower()
    if name in names:
        return True
    if name == SHARE_ID:  # rare: the host is looked at only then
        return host_of is not None and _ON_SHARE_ID_HOST.match(host_of) is not None
    return name in _HEX_SESSION_PARAMS and _HEX_SESSION.fullmatch(value) is not None
