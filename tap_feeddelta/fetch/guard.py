"""Address policy: may the tap connect to this IP address?

The check runs on resolved addresses, never on the URL's text, so numeric tricks
(``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``) land here as 127.0.0.1.
It does not lean on ``ipaddress.is_global``: Python 3.11.7 calls several special ranges
global. Everything outside the public unicast space is refused; loopback, private and
shared (CGNAT) ranges pass only with ``allow_private_networks``. IPv6 forms that embed an
IPv4 address (mapped, compatible, 6to4, NAT64, Teredo) are judged by the address they embed.
"""

from __future__ import annotations

import ipaddress
from typing import Final

# Cloud metadata and platform endpoints: refused even when private networks are allowed.
METADATA_ADDRESSES: Final[frozenset[ipaddress.IPv4Address | ipaddress.IPv6Address]] = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS DNS
        "169.254.169.123",  # AWS time sync
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure WireServer
        "192.0.0.192",  # Oracle Cloud (legacy)
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::23",  # AWS DNS over IPv6
        "fd00:ec2::123",  # AWS time sync over IPv6
        "fd20:ce::254",  # GCP metadata over IPv6
    )
)


def _v4(cidr: str) -> tuple[int, int]:
    net = ipaddress.IPv4Network(cidr)
    return int(net.network_address), int(net.netmask)


def _v6(cidr: str) -> tuple[int, int]:
    net = ipaddress.IPv6Network(cidr)
    return int(net.network_address), int(net.netmask)


# (network, mask, reason, passes with allow_private_networks)
_V4_RANGES: Final[tuple[tuple[int, int, str, bool], ...]] = tuple(
    (*_v4(cidr), reason, private)
    for cidr, reason, private in (
        ("0.0.0.0/8", "unspecified ('this network')", False),
        ("10.0.0.0/8", "private", True),
        # Carriers' NAT, and overlay networks (Tailscale) hand it out to intranet hosts.
        ("100.64.0.0/10", "shared address space (CGNAT)", True),
        ("127.0.0.0/8", "loopback", True),
        ("169.254.0.0/16", "link-local", False),
        ("172.16.0.0/12", "private", True),
        ("192.0.0.0/24", "IETF protocol assignments", False),
        ("192.0.2.0/24", "documentation", False),
        ("192.88.99.0/24", "6to4 relay anycast (deprecated)", False),
        ("192.168.0.0/16", "private", True),
        ("198.18.0.0/15", "benchmarking", False),
        ("198.51.100.0/24", "documentation", False),
        ("203.0.113.0/24", "documentation", False),
        ("224.0.0.0/4", "multicast", False),
        ("240.0.0.0/4", "reserved", False),  # includes 255.255.255.255 (broadcast)
    )
)

_V6_MAPPED = _v6("::ffff:0:0/96")
_V6_COMPATIBLE = _v6("::/96")
_V6_NAT64 = _v6("64:ff9b::/96")
_V6_6TO4 = _v6("2002::/16")
_V6_TEREDO = _v6("2001::/32")
_V6_ULA = _v6("fc00::/7")
_V6_GLOBAL_UNICAST = _v6("2000::/3")

# Inside 2000::/3 but not public (after the embedding forms above were handled).
_V6_DENIED_IN_GLOBAL: Final[tuple[tuple[int, int, str], ...]] = tuple(
    (*_v6(cidr), reason)
    for cidr, reason in (
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("2001::/23", "IETF protocol assignments"),
    )
)
# Outside 2000::/3: named for the message only; all of it is refused.
_V6_OTHER_NAMES: Final[tuple[tuple[int, int, str], ...]] = tuple(
    (*_v6(cidr), reason)
    for cidr, reason in (
        ("64:ff9b:1::/48", "NAT64 local-use"),
        ("100::/64", "discard-only"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local (deprecated)"),
        ("ff00::/8", "multicast"),
    )
)


def _in(value: int, net: tuple[int, int]) -> bool:
    return value & net[1] == net[0]


def address_denial(address: str, *, allow_private: bool) -> str | None:
    """``None`` if the tap may connect to ``address``; otherwise why not, in a few words."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "not an IP address"
    if ip in METADATA_ADDRESSES:
        return "cloud metadata address"
    if isinstance(ip, ipaddress.IPv4Address):
        return _v4_denial(int(ip), allow_private)
    return _v6_denial(ip, allow_private)


def _v4_denial(value: int, allow_private: bool) -> str | None:
    """Why an IPv4 address is refused, as words that go before "address"."""
    if ipaddress.IPv4Address(value) in METADATA_ADDRESSES:
        return "cloud metadata"
    for net, mask, reason, private in _V4_RANGES:
        if value & mask == net:
            return None if private and allow_private else reason
    return None


def _embedded(value: int, form: str) -> str | None:
    # Translation forms are never intranet routes: judge the embedded address strictly.
    reason = _v4_denial(value & 0xFFFFFFFF, allow_private=False)
    if reason is None:
        return None
    article = "an" if reason[0] in "aeiouAEIOU" else "a"
    return f"{form} embedding {article} {reason} IPv4 address"


def _v6_denial(ip: ipaddress.IPv6Address, allow_private: bool) -> str | None:
    if ip.scope_id is not None:
        return "IPv6 address with a scope id"
    value = int(ip)
    if value == 0:
        return "unspecified"
    if value == 1:
        return None if allow_private else "loopback"
    if _in(value, _V6_MAPPED):
        reason = _v4_denial(value & 0xFFFFFFFF, allow_private)
        return None if reason is None else f"IPv4-mapped {reason} address"
    if _in(value, _V6_COMPATIBLE):
        return _embedded(value, "IPv4-compatible address")
    if _in(value, _V6_NAT64):
        return _embedded(value, "NAT64 address")
    if _in(value, _V6_6TO4):
        return _embedded(value >> 80, "6to4 address")
    if _in(value, _V6_TEREDO):
        # Teredo: server IPv4 in bits 64..95, client IPv4 inverted in the low 32 bits.
        return _embedded(value >> 64, "Teredo address (server)") or _embedded(
            ~value, "Teredo address (client)"
        )
    if _in(value, _V6_ULA):
        return None if allow_private else "unique local (private)"
    if _in(value, _V6_GLOBAL_UNICAST):
        for net, mask, reason in _V6_DENIED_IN_GLOBAL:
            if value & mask == net:
                return reason
        return None
    for net, mask, reason in _V6_OTHER_NAMES:
        if value & mask == net:
            return reason
    return "reserved"
