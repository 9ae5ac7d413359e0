"""The one loopback rule (``wire.hosts.is_loopback_host``): a table of the spellings that matter,
and properties checking that a "yes" is one that every reader of the host agrees with."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from ada_url import URL, HostType
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.hosts import is_loopback_host


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("LocalHost", True),
        ("localhost.", False),  # the absolute form: another string to resolvers and origins
        ("127.0.0.1", True),
        ("127.0.0.2", True),  # all of 127.0.0.0/8
        ("127.8.9.10", True),
        ("127.255.255.255", True),
        ("128.0.0.1", False),
        ("126.255.255.255", False),
        ("0.0.0.0", False),  # "any address", not loopback
        ("::1", True),
        ("[::1]", True),  # as a WHATWG parser writes it
        ("0:0:0:0:0:0:0:1", True),
        ("[0:0:0:0:0:0:0:1]", True),
        ("0000::0001", True),
        ("::", False),
        ("::2", False),
        ("::ffff:127.0.0.1", False),  # IPv4-mapped: depends on the socket, a filter-dodging spelling
        ("[::ffff:127.0.0.1]", False),
        ("::ffff:7f00:1", False),  # the same address as a browser writes it
        ("::127.0.0.1", False),  # IPv4-compatible (deprecated)
        ("::1%lo", False),  # zone id
        ("[::1%25lo]", False),
        ("[127.0.0.1]", False),
        ("[localhost]", False),
        ("[::1", False),
        ("::1]", False),
        ("[[::1]]", False),
        ("0177.0.0.1", False),  # octal to a browser, decimal 177 to others
        ("2130706433", False),
        ("0x7f.0.0.1", False),
        ("0x7f000001", False),
        ("127.1", False),
        ("127.0.1", False),
        ("127.000.000.001", False),
        ("127.0.0.01", False),
        ("127.0.0.256", False),
        ("127.0.0.1.", False),
        ("127.0.0.1:8000", False),  # a host, not host:port
        ("127.0.0.1.nip.io", False),
        ("foo.localhost", False),  # RFC 6761 allows it; many system resolvers ask DNS
        ("localhost.localdomain", False),
        ("localhost.evil.com", False),
        ("evillocalhost", False),
        ("ｌｏｃａｌｈｏｓｔ", False),  # full-width: a browser maps it to localhost, others do not
        ("１２７.０.０.１", False),  # full-width digits
        (" localhost", False),
        ("localhost ", False),
        ("localhost\n", False),
        ("127.0.0.1\n", False),
        ("", False),
        (None, False),
    ],
)
def test_the_rule(host: str | None, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


@given(st.ip_addresses(v=4))
def test_ipv4_dotted_decimal_is_loopback_exactly_in_127_slash_8(address: ipaddress.IPv4Address) -> None:
    assert is_loopback_host(str(address)) is (address in ipaddress.IPv4Network("127.0.0.0/8"))
    assert is_loopback_host(f"[{address}]") is False  # brackets are for IPv6 only


@given(st.ip_addresses(v=6))
def test_ipv6_is_loopback_only_for_1(address: ipaddress.IPv6Address) -> None:
    expected = address == ipaddress.IPv6Address("::1")
    for text in (address.compressed, address.exploded):
        assert is_loopback_host(text) is expected
        assert is_loopback_host(f"[{text}]") is expected
        assert is_loopback_host(text.upper()) is expected


def _browser_loopback(host: str) -> bool:
    """What a browser (WHATWG URL parser) makes of the host in an http URL."""
    try:
        parsed = URL(f"http://{host}/")
    except ValueError:
        return False
    if parsed.host_type == HostType.IPV4:
        return ipaddress.IPv4Address(parsed.hostname).is_loopback
    if parsed.host_type == HostType.IPV6:
        return ipaddress.IPv6Address(parsed.hostname.strip("[]")) == ipaddress.IPv6Address("::1")
    return parsed.hostname == "localhost"


def _socket_loopback(host: str) -> bool:
    """What the socket layer's strict parser (inet_pton) makes of it, names aside."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if bare.lower() == "localhost":
        return True
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            packed = socket.inet_pton(family, bare)
        except (OSError, ValueError):
            continue
        if family == socket.AF_INET:
            return packed[0] == 127
        return packed == ipaddress.IPv6Address("::1").packed
    return False


_HOSTISH = st.text(alphabet="0123456789abcdefxlocahstLOCAHST.:[]%", max_size=24)


@given(
    st.one_of(
        _HOSTISH,
        st.text(max_size=40),
        st.sampled_from(["127.1", "0177.0.0.1", "2130706433", "0x7f.1", "[::1]", "127.0.0.2", "LOCALHOST"]),
    )
)
def test_a_yes_is_a_yes_for_every_reader(host: str) -> None:
    if is_loopback_host(host):
        assert _browser_loopback(host), host
        assert _socket_loopback(host), host
        bare = host[1:-1] if host.startswith("[") else host
        assert bare.lower() == "localhost" or ipaddress.ip_address(bare).is_loopback, host
