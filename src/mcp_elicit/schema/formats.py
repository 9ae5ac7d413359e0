"""Checks and parsers for the four string formats of the subset.

Each ``check_*`` returns ``None`` for a good value or a message a person can act on.
The checks are practical rather than exhaustive: they accept what people really type and
refuse what would surprise the server (spaces, controls, impossible dates).

>>> check_date("2024-02-30")
'must be a real calendar date (2024-02-30 does not exist)'
>>> parse_datetime("2026-01-02T03:04:05Z").isoformat()
'2026-01-02T03:04:05+00:00'
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Callable

from .limits import MAX_DATETIME, MAX_EMAIL, MAX_URI

#: The string formats of the subset.
FORMATS = frozenset({"email", "uri", "date", "date-time"})

__all__ = [
    "CHECKS",
    "FORMATS",
    "check_date",
    "check_datetime",
    "check_email",
    "check_uri",
    "parse_date",
    "parse_datetime",
]

# [0-9], not \d: \d also matches Arabic-Indic and other digits that int() would accept.
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))"
)
# RFC 3986 scheme, then only characters allowed somewhere in a URI, plus well-formed
# percent escapes.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")
# Where the authority of "scheme://authority" ends.
_AUTHORITY_END = re.compile(r"[/?#]")
# RFC 3986's IPvFuture, the other form of a host in "[...]" beside an IPv6 address.
_IP_FUTURE = re.compile(r"[Vv][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+")
# Schemes that run code or carry inline content when a page renders them as a link.
_UNSAFE_SCHEMES = frozenset({"javascript", "vbscript", "data"})
# Schemes whose URIs always name a host.
_HOST_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
# Characters that have no place in a practical email address (outside quoted local parts,
# which almost no one uses and many systems mishandle).
_EMAIL_BAD = frozenset('<>()[]\\,;:"')

_DATE_HINT = "must be a calendar date written YYYY-MM-DD, such as 2026-01-31"
_DATETIME_HINT = (
    "must be a date and time with a time zone (RFC 3339), such as 2026-01-31T09:30:00Z "
    "or 2026-01-31T09:30:00+02:00"
)


def parse_date(text: str) -> _dt.date | None:
    """The date of a ``YYYY-MM-DD`` string, or ``None`` if it is not one."""
    m = _DATE.fullmatch(text)
    if m is None:
        return None
    try:
        return _dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def check_date(text: str) -> str | None:
    """``None`` for a real calendar date written ``YYYY-MM-DD``."""
    if _DATE.fullmatch(text) is None:
        return _DATE_HINT
    if parse_date(text) is None:
        return f"must be a real calendar date ({text} does not exist)"
    return None


def _datetime(text: str) -> tuple[_dt.datetime | None, str | None]:
    """``(value, None)``, or ``(None, why)`` for text that is not a date-time this module keeps."""
    m = _DATETIME.fullmatch(text) if len(text) <= MAX_DATETIME else None
    if m is None:
        return None, _DATETIME_HINT
    if m[6] == "60":
        return None, "must not be a leap second (:60), which cannot be stored here: write :59 instead"
    micro = int((m[7][1:] + "000000")[:6]) if m[7] else 0
    if m[8]:
        tz = _dt.UTC
    else:
        hours, minutes = int(m[10]), int(m[11])
        if hours > 23 or minutes > 59:
            return None, f"{_DATETIME_HINT} (the offset {m[9]}{m[10]}:{m[11]} does not exist)"
        offset = _dt.timedelta(hours=hours, minutes=minutes)
        tz = _dt.timezone(-offset if m[9] == "-" else offset)
    try:
        value = _dt.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), micro, tz)
    except ValueError:
        return None, f"must be a real date and time ({text} does not exist)"
    try:
        # 0001-01-01T00:00:00+01:00 is a year 0 instant: a server converting it to UTC
        # (astimezone, a database) would fail on it.
        value.astimezone(_dt.UTC)
    except OverflowError:
        return None, "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z once converted to UTC"
    return value, None


def parse_datetime(text: str) -> _dt.datetime | None:
    """An aware datetime from an RFC 3339 ``date-time``, or ``None``.

    Fractions beyond microseconds are truncated. Leap seconds (``:60``) are refused:
    Python cannot represent them and no form needs them. So are instants outside the
    years 1 to 9999 in UTC (``0001-01-01T00:00:00+01:00``), which Python cannot convert.
    """
    return _datetime(text)[0]


def check_datetime(text: str) -> str | None:
    """``None`` for an RFC 3339 date-time with ``Z`` or a numeric offset."""
    return _datetime(text)[1]


def _is_domain_char(ch: str) -> bool:
    """A character of a domain label: an ASCII letter, digit or hyphen (RFC 1035), or a
    letter, mark or digit of another script (IDN; U+3002 and other dots are separators, so
    they are not letters of a label either)."""
    if ch.isascii():
        return ch.isalnum() or ch == "-"
    return unicodedata.category(ch)[0] in "LMN"


def check_email(text: str) -> str | None:
    """``None`` for a practical email address: ``local@domain.tld``.

    One ``@``; a non-empty local part of at most 64 characters without spaces, controls
    or separators; a domain with at least one dot, no empty or over-long label, labels
    not starting or ending with ``-``, and a top-level label that is not all digits.
    Domain labels hold ASCII letters, digits and hyphens, or, in internationalized
    domains, letters, marks and digits of any script (no punctuation: ``x@a.com/path``,
    ``x@a_b.example`` and ``x@a.com。evil`` are refused). Internationalized addresses are
    accepted.
    """
    hint = "must be an email address such as name@example.com"
    if len(text) > MAX_EMAIL:
        return f"must be an email address of at most {MAX_EMAIL} characters"
    if text.count("@") != 1:
        return hint
    local, domain = text.split("@")
    for ch in text:
        if ch.isspace() or ch in _EMAIL_BAD or unicodedata.category(ch) in ("Cc", "Cf", "Cs"):
            return f"{hint} (it contains {ch!r})"
    if not local or len(local) > 64:
        return hint
    if local.startswith(".") or local.endswith(".") or ".." in local:
        return hint
    labels = domain.split(".")
    if len(labels) < 2:
        return f"{hint} (the domain needs a dot)"
    for label in labels:
        if not label or len(label) > 63 or label.startswith("-") or label.endswith("-"):
            return hint
        for ch in label:
            if not _is_domain_char(ch):
                return f"{hint} (the domain may hold only letters, digits, hyphens and dots, not {ch!r})"
    if labels[-1].isdigit():
        return hint
    return None


def check_uri(text: str) -> str | None:
    """``None`` for an absolute URI (RFC 3986) with a scheme, such as ``https://a.example``.

    Only ASCII is accepted (percent-encode the rest, as RFC 3986 requires). Spaces,
    controls and malformed percent escapes are refused. ``javascript:``, ``vbscript:``
    and ``data:`` are refused although RFC 3986 allows them: a server that later renders
    the answer as a link would run them. ``http(s)``, ``ws(s)`` and ``ftp`` URIs must
    name a host. The structure is checked where a mistake could change what the URI points
    at: one ``@`` at most before the host, ``[`` and ``]`` only around an IPv6 host in the
    authority (tolerated in the path and query, where browsers send them), and for ``http(s)``,
    ``ws(s)`` and ``ftp`` a port from 0 to 65535. A fragment may hold more ``#`` (hash routing).
    """
    hint = "must be an absolute URI with a scheme, such as https://example.com/page"
    if len(text) > MAX_URI:
        return f"must be a URI of at most {MAX_URI} characters"
    m = _SCHEME.match(text)
    if m is None:
        return hint
    if not text.isascii():
        return f"{hint} (only ASCII characters; percent-encode the others)"
    if _URI_CHARS.fullmatch(text, m.end()) is None:
        for ch in text:
            if ch.isspace() or not ch.isprintable():
                return f"{hint} (it contains {ch!r})"
        return f"{hint} (it contains characters that must be percent-encoded)"
    scheme = m[1].lower()
    if scheme in _UNSAFE_SCHEMES:
        return f"must not use the {scheme}: scheme"
    rest = text[m.end() :]
    if not rest.startswith("//"):
        if scheme in _HOST_SCHEMES:
            return f"{hint} (a {scheme} URI needs //host)"
        return None  # urn:, mailto:, tel:...: no authority whose meaning a typo could change
    end = _AUTHORITY_END.search(rest, 2)
    authority = rest[2 : end.start()] if end else rest[2:]
    userinfo, _, hostport = authority.rpartition("@")
    if "@" in userinfo:
        return f"{hint} (only one @ may separate the user from the host; percent-encode the others as %40)"
    # Where brackets would change what the URI points at. In the path, query and fragment they
    # only break RFC 3986, and browsers send them there (PHP-style ``?a[]=1``): tolerated.
    outside = userinfo
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0 or not _is_ip_literal(hostport[1:close]):
            return f"{hint} (a host in [ ] must be an IPv6 address, such as [::1])"
        host, port = hostport[: close + 1], hostport[close + 1 :]
        if port and not port.startswith(":"):
            return f"{hint} (only :port may follow the host)"
    else:
        host, colon, port = hostport.partition(":")
        port = colon + port
        outside += host
    problem = _bracket_problem(hint, outside + port)  # (a port is digits, or scp-style text)
    if problem is not None:
        return problem
    # RFC 3986 allows an empty port. Only web schemes are held to a number: npm documents
    # git+ssh://git@host:owner/repo, which other tools read as scp-style.
    if scheme in _HOST_SCHEMES and not port[1:].isdigit() and port not in ("", ":"):
        return f"{hint} (the port after the host must be a number)"
    # Past 65535 no client can connect, and urllib's .port raises on it: a server reading the
    # answer would fail. (Length first: int() refuses more than 4300 digits.)
    digits = port[1:].lstrip("0")
    if scheme in _HOST_SCHEMES and digits.isdigit() and (len(digits) > 5 or int(digits) > 65535):
        return f"{hint} (the port after the host must be a number from 0 to 65535)"
    if not host and scheme in _HOST_SCHEMES:
        return f"{hint} (a {scheme} URI needs a host)"
    return None


def _bracket_problem(hint: str, part: str) -> str | None:
    """RFC 3986 keeps ``[`` and ``]`` for an IP address as the host: elsewhere they must be
    percent-encoded."""
    if "[" in part or "]" in part:
        return f"{hint} ([ and ] may only enclose an IP address as the host; percent-encode them elsewhere)"
    return None


def _is_ip_literal(inside: str) -> bool:
    """The inside of ``[...]`` as a host: an IPv6 address or RFC 3986's IPvFuture. No zone id
    (``%25eth0``, RFC 6874), which RFC 3986 has not and ``ipaddress`` takes of any text."""
    if _IP_FUTURE.fullmatch(inside) is not None:
        return True
    if "%" in inside:
        return False
    import ipaddress  # here, not at start-up: 1.7% of a stdio server's cold start

    try:
        ipaddress.IPv6Address(inside)
    except ValueError:
        return False
    return True


#: Checker for each format name.
CHECKS: dict[str, Callable[[str], str | None]] = {
    "email": check_email,
    "uri": check_uri,
    "date": check_date,
    "date-time": check_datetime,
}
