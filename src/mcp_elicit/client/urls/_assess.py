"""``assess_url``: decide whether a URL from a server may be shown as openable, offline.

The URL is parsed as a browser parses it (WHATWG, via ``ada-url``), never with ``urllib.parse``:
the canonical ``href`` is what a browser would navigate to, so it is the only string shown and
opened. Nothing here touches the network (no DNS, no sockets, no fetching).

Policy (the verdict table in ``tests/client/urls/url_cases.py`` has a row for each case):

refuse
    not a string, empty, unparseable, longer than ``max_length`` (raw or canonical), starts with
    ``-``; tabs, line breaks, spaces, control, invisible, bidi or private-use characters, or a
    backslash anywhere in the raw string; any scheme but https (http only for a loopback host with
    ``allow_loopback_http``); user name or password; an IP literal in any notation (unless loopback
    in development mode); ``localhost`` outside development mode; a host without a registrable
    domain (single label, ``.local``, ``.internal``, unknown TLD, a public suffix itself); a name
    under ``.arpa`` (``home.arpa``: a home network) or ``.onion``; empty labels, a host over 253 or
    a label over 63 characters, characters that have no place in a host name; invalid Punycode; a
    host or scheme written in a form that the parser rewrites (``https:evil.com``,
    ``exa%6dple.com``, full-width letters, ``0x7f.1``...); IDN labels that mix scripts or digit
    systems, use a script not recommended for identifiers, stack or leave loose combining marks,
    contain symbols, or imitate an ASCII name (skeleton check; see ``_idn``).
warn
    any internationalised (``xn--``) host; a trailing dot; an explicit non-default port; ``_`` in
    the host; more than three subdomain labels, or a subdomain that is itself a plausible domain
    (``accounts.google.com.evil.co.uk``); a path/query/fragment the parser rewrote (percent-encoding,
    dot segments); a loopback URL allowed by development mode.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from mcp_elicit.wire.hosts import is_loopback_host

from . import _idn, _psl
from ._model import UrlAssessment, UrlVerdict

if TYPE_CHECKING:
    from ada_url import URL

DEFAULT_MAX_LENGTH = 2048
# Above this many characters the string is not even parsed (the verdict is refuse anyway).
_PARSE_LIMIT = 64 * 1024
_MAX_HOST = 253
_MAX_LABEL = 63
_MAX_SUBDOMAIN_LABELS = 3
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")
# Top-level domains the public suffix list knows but under which no public web site lives.
_NOT_THE_WEB = {
    "arpa": "under .arpa, the DNS's own infrastructure domain (home.arpa names a device on a home network)",
    "onion": "a Tor onion service, which an ordinary browser cannot open and whose name says nobody's site",
}
# What lets a loopback URL through: the client option (the CLI's --allow-loopback-http).
_LOOPBACK_ALLOWED = (
    "loopback links are allowed (allow_loopback_http=True; mcp-elicit call --allow-loopback-http)"
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_SCHEME_HINTS = {
    "javascript": "it would run code instead of opening a page",
    "vbscript": "it would run code instead of opening a page",
    "data": "it carries its own page content, which can imitate any site",
    "blob": "it refers to content made by another page",
    "file": "it would open a file on this computer",
    "filesystem": "it would open browser-stored files",
    "view-source": "it is a browser-internal address",
    "ftp": "FTP is unencrypted and not a web page",
    "mailto": "it would start an e-mail program",
    "tel": "it would start a phone call",
    "http": "plain http is unencrypted and can be altered on the way",
}


class _Findings:
    def __init__(self) -> None:
        self.refusals: list[str] = []
        self.warnings: list[str] = []
        self.bad_characters = False

    def refuse(self, reason: str) -> None:
        if reason not in self.refusals:
            self.refusals.append(reason)

    def warn(self, reason: str) -> None:
        if reason not in self.warnings:
            self.warnings.append(reason)

    @property
    def verdict(self) -> UrlVerdict:
        if self.refusals:
            return "refuse"
        return "warn" if self.warnings else "ok"

    @property
    def reasons(self) -> tuple[str, ...]:
        return (*self.refusals, *self.warnings)


def assess_url(
    url: object, *, allow_loopback_http: bool = False, max_length: int = DEFAULT_MAX_LENGTH
) -> UrlAssessment:
    """Assess a URL received from a server. Never raises; never touches the network.

    ``allow_loopback_http`` is development mode: it allows ``http``/``https`` to ``localhost``,
    ``127.0.0.0/8`` and ``[::1]`` (with a warning). ``max_length`` caps the raw and the canonical
    length (default 2048 characters, longer URLs are refused).
    """
    original = url if isinstance(url, str) else ""
    try:
        return _assess(url, allow_loopback_http=allow_loopback_http, max_length=max_length)
    except Exception as exc:  # a bug here must not become an openable URL
        return _bare(original, f"the URL could not be examined ({type(exc).__name__})")


def _bare(original: str, *reasons: str) -> UrlAssessment:
    return UrlAssessment(
        verdict="refuse",
        original=original,
        href=None,
        scheme=None,
        host=None,
        unicode_host=None,
        registrable_domain=None,
        parts=(),
        reasons=reasons,
    )


def _u(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip()


def _scan_characters(raw: str, found: _Findings) -> None:
    """Refuse characters that browsers strip or reinterpret, or that disguise the text."""
    kinds: dict[str, str] = {}
    for ch in raw:
        if ch == "\\":
            kind = "backslash"
        elif ch in "\t\n\r":
            kind = "tab"
        else:
            category = unicodedata.category(ch)
            if category == "Zs":
                kind = "space"
            elif category == "Cc":
                kind = "control"
            elif category in ("Cf", "Zl", "Zp"):
                kind = "invisible"
            elif category == "Cs":
                kind = "surrogate"
            elif category in ("Co", "Cn"):
                kind = "private"
            else:
                continue
        kinds.setdefault(kind, ch)
    messages = {
        "tab": "the URL contains tabs or line breaks ({}): browsers silently delete them, so the text "
        "you read is not the address that opens",
        "space": "the URL contains spaces, leading, trailing or inside ({}): browsers trim or rewrite "
        "them, so the text you read is not the address that opens",
        "control": "the URL contains control characters ({}), which can change what the terminal shows",
        "invisible": "the URL contains invisible or text-direction characters ({}): they can make the "
        "address read differently from what opens",
        "surrogate": "the URL contains invalid Unicode (an unpaired surrogate, {})",
        "private": "the URL contains private-use or unassigned characters ({})",
        "backslash": "the URL contains a backslash: browsers read it as '/', so the host may not be "
        "what it seems",
    }
    found.bad_characters = found.bad_characters or bool(kinds)
    for kind, ch in kinds.items():
        code = f"U+{ord(ch):04X}" if kind == "surrogate" else _u(ch)
        found.refuse(messages[kind].format(code))


def _assess(url: object, *, allow_loopback_http: bool, max_length: int) -> UrlAssessment:
    if not isinstance(url, str):
        return _bare("", f"the URL is not text (got a {type(url).__name__})")
    if not url:
        return _bare(url, "the URL is empty")

    found = _Findings()
    if len(url) > max_length:
        found.refuse(
            f"the URL is {len(url)} characters long, over the limit of {max_length}: a long URL can "
            "push the real host out of sight"
        )
    if url.startswith("-"):
        found.refuse(
            "the URL starts with '-', which a browser launched on the command line could take for "
            "an option (CVE-2026-4519)"
        )
    if len(url) > _PARSE_LIMIT:
        if len(url) <= max_length:  # a caller's higher limit: the refusal must still say why
            found.refuse(
                f"the URL is {len(url)} characters long, too long to be examined (at most {_PARSE_LIMIT})"
            )
        return _bare(url, *found.reasons)
    _scan_characters(url, found)
    if any(unicodedata.category(ch) == "Cs" for ch in url):
        return _bare(url, *found.reasons)

    from ada_url import URL

    try:
        parsed = URL(url)
    except ValueError:
        found.refuse("this is not a valid web address (a browser's URL parser rejects it)")
        return _bare(url, *found.reasons)

    href = parsed.href
    scheme = parsed.protocol[:-1]
    if len(href) > max_length >= len(url):
        found.refuse(
            f"the URL is {len(href)} characters long once written out in full, over the limit of {max_length}"
        )

    if scheme not in ("https", "http"):
        hint = _SCHEME_HINTS.get(scheme, "it would hand the address to another program")
        found.refuse(f"only https links can be opened, not '{scheme}:' links ({hint})")
        host_or_none = parsed.hostname or None
        return UrlAssessment(
            verdict="refuse",
            original=url,
            href=href,
            scheme=scheme,
            host=host_or_none,
            unicode_host=host_or_none,
            registrable_domain=None,
            parts=(("scheme", parsed.protocol), ("rest", href[len(parsed.protocol) :])),
            reasons=found.reasons,
        )
    return _assess_web(url, parsed, found, allow_loopback_http=allow_loopback_http)


def _assess_web(url: str, parsed: URL, found: _Findings, *, allow_loopback_http: bool) -> UrlAssessment:
    from ada_url import HostType

    href = parsed.href
    scheme = parsed.protocol[:-1]
    host = parsed.hostname
    port = parsed.port
    host_type = parsed.host_type
    username = parsed.username
    password = parsed.password

    if username or password:
        found.refuse(_userinfo_reason(host))

    loopback = is_loopback_host(host)  # the canonical host: odd notations are refused below
    development = allow_loopback_http and loopback
    unicode_host = host
    registrable: str | None = None

    if host_type in (HostType.IPV4, HostType.IPV6):
        if development:
            found.warn(f"the host is this computer ({host}); allowed because {_LOOPBACK_ALLOWED}")
        else:
            found.refuse(
                f"the host is an IP address ({host}), not a domain name: there is no site name to check"
            )
    elif host == "localhost":
        if development:
            found.warn(f"the host is this computer (localhost); allowed because {_LOOPBACK_ALLOWED}")
        else:
            found.refuse(
                f"the host is this computer (localhost), which is allowed only when {_LOOPBACK_ALLOWED}"
            )
    else:
        unicode_host, registrable = _check_domain(host, found)

    if scheme == "http" and not development:
        if loopback:
            found.refuse(f"plain http is allowed only for this computer, and only when {_LOOPBACK_ALLOWED}")
        else:
            found.refuse(f"only https links can be opened, not 'http:' links ({_SCHEME_HINTS['http']})")
    if port and not development:
        found.warn(f"the URL uses an unusual port ({port}) instead of the standard one")

    _check_rewrites(url, href, scheme, host, unicode_host, port, found)

    parts = _split(href, parsed.protocol, username, password, host, registrable, port)
    return UrlAssessment(
        verdict=found.verdict,
        original=url,
        href=href,
        scheme=scheme,
        host=host,
        unicode_host=unicode_host,
        registrable_domain=registrable,
        parts=parts,
        reasons=found.reasons,
    )


def _userinfo_reason(host: str) -> str:
    real = f" ({host})" if host else ""
    return (
        "the URL contains a user name or password before the host ('...@'): anything before '@' "
        f"is only a login name, and the real host is the part after it{real}"
    )


def _check_domain(host: str, found: _Findings) -> tuple[str, str | None]:
    """Checks on a domain-name host (ASCII, lower case). Returns (unicode host, registrable)."""
    from ada_url import idna

    bare = host[:-1] if host.endswith(".") else host
    if host.endswith("."):
        found.warn(f"the host ends with a dot ({host}): a rare spelling that can dodge name checks")
    labels = bare.split(".")
    if "" in labels:
        found.refuse(f"the host {host} has an empty label (two dots in a row, or a leading dot)")
    if len(bare) > _MAX_HOST:
        found.refuse(f"the host is {len(bare)} characters long, over the {_MAX_HOST} a domain name can have")
    long_labels = [label for label in labels if len(label) > _MAX_LABEL]
    if long_labels:
        found.refuse(
            f"the host has a label of {len(long_labels[0])} characters, over the {_MAX_LABEL} a domain "
            "name label can have"
        )
    odd = sorted(set(bare) - _HOST_CHARS - {"_"})
    if odd:
        found.refuse(
            f"the host {host} contains characters that have no place in a domain name ({' '.join(odd)})"
        )
    elif "_" in bare:
        found.warn(f"the host {host} contains '_', which ordinary domain names do not use")

    unicode_labels: list[str] = []
    idn_labels: list[tuple[str, str]] = []
    for label in labels:
        if not label.startswith("xn--"):
            unicode_labels.append(label)
            continue
        decoded = idna.decode(label)
        if decoded == label or decoded.isascii() or idna.encode(decoded) != label.encode():
            found.refuse(f"the host label {label} is not valid Punycode")
            unicode_labels.append(label)
            continue
        unicode_labels.append(decoded)
        idn_labels.append((label, decoded))
    unicode_host = ".".join(unicode_labels) + ("." if host.endswith(".") else "")

    if idn_labels or any(label.startswith("xn--") for label in labels):
        shown = _printable(unicode_host)
        found.warn(
            f"the host is written in Punycode ({host}): it may imitate another domain. It displays as "
            f"'{shown}', but the xn-- form is the real address"
        )
        tld_ascii = labels[-1]
        tld = unicode_labels[-1]
        for ascii_label, decoded in idn_labels:
            label_findings = _idn.check_label(decoded, ascii_label, tld, tld_ascii)
            for reason in label_findings.refusals:
                found.refuse(reason)
            for reason in label_findings.warnings:
                found.warn(reason)

    elsewhere = _NOT_THE_WEB.get(labels[-1])
    if elsewhere is not None:
        found.refuse(f"the host {host} is {elsewhere}: it is not a public web site")
        return unicode_host, None
    registrable = _psl.registrable_domain(bare) if "" not in labels else None
    if registrable is None:
        if "" in labels:
            pass
        elif _psl.is_public_suffix(bare):
            found.refuse(f"the host {host} is a public suffix (like 'com' or 'co.uk'), not a site")
        else:
            found.refuse(
                f"the host {host} has no registrable domain (a single name, a local or internal name, "
                "or an unknown top-level domain): it is not a public web site"
            )
        return unicode_host, None

    if len(bare) > len(registrable):
        subdomain = bare[: -len(registrable) - 1]
        sub_labels = subdomain.split(".")
        if len(sub_labels) > _MAX_SUBDOMAIN_LABELS:
            found.warn(
                f"the host has a long chain of {len(sub_labels)} subdomains in front of {registrable}; "
                f"only {registrable} says whose site this is"
            )
        if len(sub_labels) > 1 and _psl.registrable_domain(subdomain) is not None:
            found.warn(
                f"the address starts with '{subdomain}', which looks like a domain, but the site is "
                f"{registrable}"
            )
    return unicode_host, registrable


def _ascii_lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def _printable(text: str) -> str:
    out = []
    for ch in text:
        if unicodedata.category(ch)[0] in "CZ" and ch != " ":
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    return "".join(out)


def _check_rewrites(
    url: str, href: str, scheme: str, host: str, unicode_host: str, port: str, found: _Findings
) -> None:
    """Compare the raw string with the canonical one, part by part.

    A host or scheme the parser had to rewrite is refused (that is the parser-differential trap:
    a human, or another parser, reads something else); a rewritten path/query/fragment is only
    warned about, since the canonical form is the one shown and opened.
    """
    if found.bad_characters:
        return  # already refused for characters that browsers strip; more detail would be noise
    prefix = f"{scheme}://"
    head = url[: len(prefix)]
    if not (head.isascii() and head.lower() == prefix):
        found.refuse(
            f"the URL is not written in the usual '{prefix}host/...' form; browsers read it as {href}"
        )
        return
    rest = url[len(prefix) :]
    end = len(rest)
    for stop in "/?#":
        index = rest.find(stop)
        if index != -1:
            end = min(end, index)
    authority, raw_tail = rest[:end], rest[end:]
    if "@" in authority:
        found.refuse(_userinfo_reason(host))  # also an empty one ("https://@host"), which the parser drops
        return
    if authority.startswith("["):
        raw_host = authority[: authority.find("]") + 1]
    else:
        colon = authority.rfind(":")
        raw_host = authority if colon == -1 else authority[:colon]
    # A non-ASCII host must be written exactly as it decodes, but for the case of ASCII letters
    # ("WWW.bücher.de"): no Unicode case folding, since "\u212a" (Kelvin sign) lowers to "k".
    same_host = raw_host.lower() == host if raw_host.isascii() else _ascii_lower(raw_host) == unicode_host
    if not raw_host:
        found.refuse(
            f"the URL is not written in the usual '{prefix}host/...' form; browsers read it as {href}"
        )
        return
    if not same_host:
        found.refuse(
            f"the host is written in a disguised form ('{_printable(raw_host)}') that browsers rewrite "
            f"to {host}"
        )
        return
    canonical_prefix = f"{prefix}{host}" + (f":{port}" if port else "")
    if not href.startswith(canonical_prefix):
        return
    canonical_tail = href[len(canonical_prefix) :]
    tail = raw_tail if raw_tail.startswith("/") else "/" + raw_tail
    if tail != canonical_tail:
        found.warn(
            "the path or query was rewritten by the browser's URL parser (percent-encoding, '..' "
            "segments...); the rewritten form is what is shown and what opens"
        )


def _split(
    href: str,
    protocol: str,
    username: str,
    password: str,
    host: str,
    registrable: str | None,
    port: str,
) -> tuple[tuple[str, str], ...]:
    parts: list[tuple[str, str]] = [("scheme", f"{protocol}//")]
    if username or password:
        userinfo = username + (f":{password}" if password else "") + "@"
        parts.append(("userinfo", userinfo))
    if registrable is not None:
        bare = host[:-1] if host.endswith(".") else host
        if len(bare) > len(registrable):
            parts.append(("subdomain", bare[: -len(registrable)]))
        parts.append(("domain", registrable + ("." if host.endswith(".") else "")))
    else:
        parts.append(("host", host))
    if port:
        parts.append(("port", f":{port}"))
    consumed = sum(len(text) for _, text in parts)
    parts.append(("rest", href[consumed:]))
    if "".join(text for _, text in parts) != href:
        return (("rest", href),)
    return tuple(parts)
