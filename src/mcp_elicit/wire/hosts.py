"""Whether a host is this computer: the package's one loopback rule.

Every place that relaxes a rule for the local machine asks :func:`is_loopback_host`: plain
``http`` in development (the server's URL check, the kit's base URL, service and OAuth endpoint
URLs, the client's URL assessment) and the HTTP server's default Origin check. Because a "yes"
relaxes a security rule, the rule is narrow: a host is loopback only when it is written in a
spelling that every reader (a browser's WHATWG parser, Python's ``ipaddress``, ``inet_pton``, the
system resolver) takes for this computer. Nothing is resolved. A wrong "no" costs a developer one
edit of a URL; a wrong "yes" sends plain http off the machine or lets a foreign page in.

Loopback:

* ``localhost`` in any ASCII letter case: resolvers and browsers answer it with loopback without
  asking DNS (RFC 6761 §6.3).
* ``127.0.0.0/8`` in dotted decimal, four parts without leading zeros (``127.0.0.1``,
  ``127.0.0.2``, ``127.255.255.255``): the whole block is loopback (RFC 1122 §3.2.1.3), and
  browsers count all of it as "potentially trustworthy" (W3C Secure Contexts).
* ``::1`` in any RFC 4291 spelling (``0:0:0:0:0:0:0:1``), bare or bracketed as a URL writes it
  (``[::1]``).

Not loopback:

* ``localhost.`` and ``127.0.0.1.``: the absolute form is a different string to resolvers, hosts
  files and cookie and origin comparisons; it is never the spelling a configuration means.
* Names under ``localhost`` (``foo.localhost``): RFC 6761 allows resolvers to answer them with
  loopback and browsers do, but many system resolvers pass them to DNS, and we do not resolve.
* Other IPv4 notations (``0177.0.0.1``, ``2130706433``, ``127.1``, ``0x7f.0.0.1``,
  ``127.000.000.001``): a browser (and ``inet_aton``) reads them as ``127.0.0.1``, while
  ``inet_pton`` and ``ipaddress`` refuse them and other parsers have read ``0177`` as decimal
  177 (Python's own ``ipaddress`` before 3.9.5, CVE-2021-29921). Whoever reads the URL next may
  disagree, so the answer is no (the client's URL assessment refuses these spellings outright).
* IPv4-mapped and -compatible IPv6 (``::ffff:127.0.0.1``, ``::127.0.0.1``): RFC 4291's loopback
  address is ``::1`` alone; whether a mapped address reaches 127.0.0.1 depends on the socket
  (``IPV6_V6ONLY``), the system and the browser, and it is the usual spelling for slipping past
  loopback filters. The same for zone ids (``::1%lo``) and an IPv4 address in brackets.
* DNS names that happen to resolve to loopback (``127.0.0.1.nip.io``): that is a DNS server's
  answer, and it can change between the check and the connection (DNS rebinding).
* Anything else: empty, ``None``, non-ASCII (full-width ``ｌｏｃａｌｈｏｓｔ``), spaces, a port.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

__all__ = ["is_loopback_host"]

# Four decimal parts, no leading zeros; [0-9], not \d, which also matches other scripts' digits.
_DOTTED_QUAD: Final = re.compile(r"(?:0|[1-9][0-9]{0,2})(?:\.(?:0|[1-9][0-9]{0,2})){3}")
# Hex digits and colons only: no dotted IPv4 tail, no zone id.
_IPV6_TEXT: Final = re.compile(r"[0-9A-Fa-f:]{2,39}")
_IPV6_LOOPBACK: Final = ipaddress.IPv6Address("::1")


def is_loopback_host(host: str | None) -> bool:
    """Whether ``host`` (a URL's host, as ``urlsplit().hostname`` or a WHATWG parser gives it)
    is this computer under the module's rule: ``localhost``, ``127.0.0.0/8`` in dotted decimal,
    or ``::1`` (bracketed or not). Never resolves a name; never raises."""
    if not isinstance(host, str) or not host.isascii():
        return False
    if host.startswith("[") and host.endswith("]"):
        return _is_ipv6_loopback(host[1:-1])
    if host.lower() == "localhost":
        return True
    if _DOTTED_QUAD.fullmatch(host):
        octets = [int(part) for part in host.split(".")]
        return octets[0] == 127 and all(octet <= 255 for octet in octets)
    return _is_ipv6_loopback(host)


def _is_ipv6_loopback(text: str) -> bool:
    if not _IPV6_TEXT.fullmatch(text):
        return False
    try:
        return ipaddress.IPv6Address(text) == _IPV6_LOOPBACK
    except ValueError:
        return False
