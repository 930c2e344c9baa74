"""Refused destinations: the URL rules and the address policy, literal and resolved."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import pytest

from tap_feeddelta.fetch import Fetcher
from tap_feeddelta.fetch.guard import address_denial

from .conftest import Clock, Server, StubResolver, assert_error

# Literal addresses in the URL: refused before any connection.
REFUSED_LITERALS = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback-high"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "this-network"),
    ("10.1.2.3", "rfc1918-10"),
    ("172.16.0.1", "rfc1918-172-low"),
    ("172.31.255.255", "rfc1918-172-high"),
    ("192.168.1.1", "rfc1918-192"),
    ("169.254.169.254", "metadata-v4"),
    ("169.254.1.1", "link-local"),
    ("100.64.0.1", "cgnat-low"),
    ("100.127.255.255", "cgnat-high"),
    ("100.100.100.200", "metadata-alibaba"),
    ("168.63.129.16", "metadata-azure"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast-ssdp"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    ("192.0.2.10", "doc-test-net-1"),
    ("198.51.100.7", "doc-test-net-2"),
    ("203.0.113.9", "doc-test-net-3"),
    ("198.18.0.1", "benchmarking"),
    ("192.0.0.8", "ietf-protocol"),
    ("192.88.99.1", "6to4-relay"),
    ("[::1]", "v6-loopback"),
    ("[::]", "v6-unspecified"),
    ("[::ffff:127.0.0.1]", "v4-mapped-loopback"),
    ("[::ffff:169.254.169.254]", "v4-mapped-metadata"),
    ("[::ffff:10.0.0.1]", "v4-mapped-private"),
    ("[::127.0.0.1]", "v4-compatible-loopback"),
    ("[64:ff9b::7f00:1]", "nat64-loopback"),
    ("[64:ff9b::a9fe:a9fe]", "nat64-metadata"),
    ("[64:ff9b:1::1]", "nat64-local-use"),
    ("[2002:7f00:1::]", "6to4-loopback"),
    ("[2002:a00:1::1]", "6to4-private"),
    ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "teredo-client-loopback"),
    ("[fe80::1]", "v6-link-local"),
    ("[fe80::1%25eth0]", "v6-scope-id"),
    ("[fc00::1]", "v6-ula"),
    ("[fd12:3456::1]", "v6-ula-fd"),
    ("[fd00:ec2::254]", "metadata-aws-v6"),
    ("[ff02::1]", "v6-multicast"),
    ("[2001:db8::1]", "v6-documentation"),
    ("[3fff::1]", "v6-documentation-3fff"),
    ("[fec0::1]", "v6-site-local"),
    ("[100::1]", "v6-discard"),
    ("[2001:2::1]", "v6-benchmarking"),
]

# Names the system resolver turns into loopback (no DNS traffic: numeric or /etc/hosts).
NUMERIC_TRICKS = ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "localhost"]

# Answers from a (stub) resolver for a public-looking name.
REFUSED_ANSWERS = [
    (["127.0.0.1"], "loopback"),
    (["10.0.0.5"], "private"),
    (["169.254.169.254"], "metadata"),
    (["100.64.1.1"], "cgnat"),
    (["0.0.0.0"], "unspecified"),
    (["::1"], "v6-loopback"),
    (["fd00:ec2::254"], "metadata-v6"),
    (["::ffff:192.168.0.1"], "v4-mapped-private"),
    (["fe80::1%eth0"], "scope-id"),
    (["64:ff9b::a00:1"], "nat64-private"),
    (["not-an-address"], "garbage"),
    (["93.184.216.34", "10.0.0.1"], "mixed-public-private"),
    (["2606:2800:220:1::1", "::1"], "mixed-v6"),
]


@pytest.mark.parametrize(("host", "case"), REFUSED_LITERALS, ids=[c for _, c in REFUSED_LITERALS])
def test_literal_destination_is_refused(
    host: str, case: str, fetchers: Callable[..., Fetcher], server: Server, clock: Clock
) -> None:
    resolver = StubResolver()
    fetcher = fetchers(resolver=resolver)
    result = fetcher.fetch(f"http://{host}:{server.port}/feed")
    assert_error(result, "destination_denied", clock, 1.0)
    assert resolver.calls == []  # literals never reach the resolver
    assert server.connections == 0


def test_a_scope_id_a_server_chose_is_not_quoted(
    fetchers: Callable[..., Fetcher], server: Server
) -> None:
    # The zone text of an IPv6 literal is whatever a redirect's Location held.
    result = fetchers().fetch(f"http://[fe80::1%25{'Z' * 2000}]:{server.port}/feed")
    assert result.error is not None and result.error.code == "destination_denied"
    assert result.error.message == (
        "The address fe80::1%… is refused (IPv6 address with a scope id)."
    )


@pytest.mark.parametrize("host", NUMERIC_TRICKS)
def test_numeric_trick_is_refused_after_resolution(
    host: str, fetchers: Callable[..., Fetcher], server: Server, clock: Clock
) -> None:
    fetcher = fetchers()  # the system resolver
    result = fetcher.fetch(f"http://{host}:{server.port}/feed")
    assert_error(result, "destination_denied", clock, 2.0)
    assert "127.0.0.1" not in (result.requested_url or "")  # the check ran on the answer
    assert server.connections == 0


@pytest.mark.parametrize(("answers", "case"), REFUSED_ANSWERS, ids=[c for _, c in REFUSED_ANSWERS])
def test_resolved_destination_is_refused(
    answers: list[str], case: str, fetchers: Callable[..., Fetcher], server: Server, clock: Clock
) -> None:
    resolver = StubResolver({"feed.example": answers})
    result = fetchers(resolver=resolver).fetch(f"http://feed.example:{server.port}/feed")
    assert_error(result, "destination_denied", clock, 1.0)
    assert resolver.calls == ["feed.example"]
    assert server.connections == 0


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "fd00:ec2::254",
        "100.100.100.200",
        "fe80::1",
        "0.0.0.0",
        "64:ff9b::7f00:1",
    ],
)
def test_private_networks_flag_still_refuses_the_rest(
    address: str, fetchers: Callable[..., Fetcher], server: Server
) -> None:
    resolver = StubResolver({"feed.example": [address]})
    fetcher = fetchers(resolver=resolver, allow_private_networks=True)
    assert_error(fetcher.fetch(f"http://feed.example:{server.port}/"), "destination_denied")
    assert server.connections == 0


INVALID_URLS = [
    ("file:///etc/passwd", "file"),
    ("gopher://127.0.0.1:70/_x", "gopher"),
    ("ftp://example.com/feed", "ftp"),
    ("javascript:alert(1)", "javascript"),
    ("//example.com/feed", "scheme-relative"),
    ("example.com/feed", "no-scheme"),
    ("http://user:pass@example.com/feed", "userinfo"),
    ("http://user@example.com/feed", "user-only"),
    ("http://@example.com/feed", "empty-userinfo"),
    ("http://example.com\\@evil.example/", "backslash"),
    ("http://example.com/\x00", "nul"),
    ("http://example.com/a\r\nHost: evil", "crlf"),
    ("http://exa mple.com/", "space"),
    ("http:///feed", "no-host"),
    ("http://ex..ample.com/", "empty-label"),
    ("http://example.com:0/", "port-zero"),
    ("http://example.com:99999/", "port-range"),
    ("http://example.com:25/feed", "smtp-port"),
    ("https://example.com:22/", "ssh-port"),
    ("http://example.com:6667/", "irc-port"),
    ("http://" + "a" * 2100 + ".com/", "too-long"),
    ("", "empty"),
]


@pytest.mark.parametrize(("url", "case"), INVALID_URLS, ids=[c for _, c in INVALID_URLS])
def test_invalid_url_is_refused(url: str, case: str, fetchers: Callable[..., Fetcher]) -> None:
    resolver = StubResolver()
    result = fetchers(resolver=resolver).fetch(url)
    assert_error(result, "invalid_url")
    assert resolver.calls == []
    secret = "user:pass@"
    assert secret not in result.requested_url
    assert result.error is not None
    assert secret not in result.error.message


PUBLIC = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "2606:2800:220:1:248:1893:25c8:1946",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:5db8:d822::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo, client 8.8.8.8
]


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert address_denial(address, allow_private=False) is None


def test_mapped_private_passes_only_with_the_flag() -> None:
    assert address_denial("::ffff:10.0.0.1", allow_private=True) is None
    assert address_denial("::ffff:10.0.0.1", allow_private=False) is not None
    assert address_denial("127.0.0.1", allow_private=True) is None
    assert address_denial("::1", allow_private=True) is None
    assert address_denial("fd12::1", allow_private=True) is None
    assert address_denial("fd00:ec2::254", allow_private=True) is not None
    # Shared address space: carriers' NAT, and overlay networks' (Tailscale) intranet hosts.
    assert address_denial("100.64.0.1", allow_private=True) is None
    assert address_denial("100.127.255.254", allow_private=False) == "shared address space (CGNAT)"


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("::ffff:169.254.169.254", "IPv4-mapped cloud metadata address"),
        ("64:ff9b::a9fe:a9fe", "NAT64 address embedding a cloud metadata IPv4 address"),
        ("::ffff:0.1.2.3", "IPv4-mapped unspecified ('this network') address"),
        (
            "64:ff9b::0.1.2.3",
            "NAT64 address embedding an unspecified ('this network') IPv4 address",
        ),
        ("2002:c000:0001::", "6to4 address embedding an IETF protocol assignments IPv4 address"),
    ],
)
def test_a_refusal_reads_as_plain_words(address: str, reason: str) -> None:
    assert address_denial(address, allow_private=True) == reason


@pytest.mark.parametrize("literal", [literal for literal, _ in REFUSED_LITERALS])
def test_no_refusal_repeats_a_word(literal: str) -> None:
    address = literal.strip("[]").replace("%25", "%")
    for allow_private in (False, True):
        reason = address_denial(address, allow_private=allow_private) or ""
        words = reason.split()
        assert all(a != b for a, b in pairwise(words)), reason


# Says the setting is off in this run: a user who believes they set it (a Meltano variable
# spelt "ture" reads as false) read "set allow_private_networks" as advice already taken.
HINT = (
    "; allow_private_networks is false in this run's configuration: "
    "set it to true to fetch private and loopback addresses)."
)


@pytest.mark.parametrize(
    ("host", "answers"),
    [("127.0.0.1", []), ("10.1.2.3", []), ("[::1]", []), ("feed.example", ["192.168.1.5"])],
    ids=["loopback", "private", "loopback-v6", "resolves-private"],
)
def test_an_address_the_flag_would_let_through_names_the_flag(
    host: str, answers: list[str], fetchers: Callable[..., Fetcher], server: Server
) -> None:
    # The message said only "The address 127.0.0.1 is refused (loopback)."
    resolver = StubResolver({"feed.example": answers})
    result = fetchers(resolver=resolver).fetch(f"http://{host}:{server.port}/feed")
    assert_error(result, "destination_denied")
    assert result.error is not None and result.error.message.endswith(HINT)


@pytest.mark.parametrize("address", ["169.254.169.254", "100.100.100.200", "192.0.2.1", "fe80::1"])
def test_an_address_the_flag_would_not_let_through_names_no_flag(
    address: str, fetchers: Callable[..., Fetcher], server: Server
) -> None:
    resolver = StubResolver({"feed.example": [address]})
    result = fetchers(resolver=resolver).fetch(f"http://feed.example:{server.port}/feed")
    assert_error(result, "destination_denied")
    assert result.error is not None and "allow_private_networks" not in result.error.message
