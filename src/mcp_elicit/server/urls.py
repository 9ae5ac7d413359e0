"""The server-side check of a URL before it goes out in a URL-mode elicitation.

The spec: the URL must be valid, should be https outside development, must not carry
credentials or personal data about the user, and must not be pre-authenticated. We refuse
anything else before it reaches a client (fail closed): a URL a WHATWG parser (what browsers use)
refuses, plain http to anything but this computer (:func:`mcp_elicit.wire.hosts.is_loopback_host`),
userinfo, a percent-encoded host, a credential, session id, link signature, key of a known
format (``ghp_…``, ``sk_live_…``), JWT or CDN token anywhere in it
(:mod:`mcp_elicit.server.url_credentials`, which reads parameter names with the form lint's
recogniser), and personal data: an email address anywhere in it, a parameter named for a phone
number, a birth date, a person's name, a postal address... (:mod:`mcp_elicit.server.url_personal_data`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mcp_elicit.server.url_credentials import find_credential
from mcp_elicit.server.url_personal_data import find_personal_data
from mcp_elicit.wire.hosts import is_loopback_host

MAX_URL_LENGTH = 2048


def check_elicitation_url(url: str) -> str:
    """Return ``url`` if it may be sent; raise ValueError saying why not."""
    if not isinstance(url, str) or not url:
        raise ValueError("the elicitation URL must be a non-empty string")
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"the elicitation URL is longer than {MAX_URL_LENGTH} characters")
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url) or "\\" in url:
        raise ValueError("the elicitation URL contains spaces, control characters or backslashes")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("https", "http") or not parts.netloc or not host:
        raise ValueError(f"the elicitation URL must be an absolute https URL, not {url!r}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError("the elicitation URL must not carry credentials (user@host)")
    if scheme == "http" and not is_loopback_host(host):
        raise ValueError(
            "the elicitation URL must use https; plain http is allowed only to this computer "
            "(localhost, 127.0.0.0/8, [::1]), for development"
        )
    try:
        parts.port  # noqa: B018 - raises ValueError for an out-of-range port
    except ValueError:
        raise ValueError("the elicitation URL has an invalid port") from None
    if "%" in parts.netloc:
        raise ValueError("the elicitation URL has a percent-encoded host; write the host as it is")
    from ada_url import URL  # on first use: most servers never send a URL

    try:
        URL(url)
    except ValueError:
        raise ValueError(
            f"the elicitation URL is not a valid URL (browsers would refuse it): {url!r}"
        ) from None
    credential = find_credential(parts)
    if credential is not None:
        raise ValueError(
            f"the elicitation URL carries {credential}: a URL must not hold credentials or be "
            "pre-authenticated (whoever holds it gets in, and it ends up in browser history, logs "
            "and referrers); identify the flow with an opaque id and check who opens it on the page"
        )
    personal = find_personal_data(parts)
    if personal is not None:
        raise ValueError(
            f"the elicitation URL contains {personal}: a URL must not carry personal data about "
            "the user (it ends up in browser history, logs and referrers); identify the flow with "
            "an opaque id and show or ask for the data on the page"
        )
    return url
