"""The server-side check of a URL before it goes out in a URL-mode elicitation.

The spec: the URL must be valid, should be https outside development, must not carry
credentials or personal data about the user, and must not be pre-authenticated. We refuse
anything else before it reaches a client (fail closed): a URL a WHATWG parser (what browsers use)
refuses, userinfo, a percent-encoded host, a query, fragment or path parameter named like a
credential, session or signature (signed links are pre-authenticated), and an email address
anywhere in it.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, unquote, urlsplit

_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_URL_LENGTH = 2048
# Parameter names that carry a credential or make the URL pre-authenticated (compared in lower
# case, with '-' read as '_').
_CREDENTIAL_PARAMS = frozenset(
    {
        "access_token",
        "id_token",
        "refresh_token",
        "auth_token",
        "token",
        "api_key",
        "apikey",
        "password",
        "passwd",
        "pwd",
        "secret",
        "client_secret",
        "session",
        "session_id",
        "sessionid",
        "sid",
        "authorization",
        # Servlet and PHP session ids (in the query, or as a ;jsessionid= path parameter).
        "jsessionid",
        "phpsessid",
        # Signed links: the signature alone grants access to whoever holds the URL (S3 and
        # GCS presigned URLs, CloudFront signed URLs, Azure SAS).
        "signature",
        "sig",
        "x_amz_signature",
        "x_amz_credential",
        "x_amz_security_token",
        "x_goog_signature",
        "x_goog_credential",
        "key_pair_id",
    }
)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    if scheme == "http" and not _is_loopback(host):
        raise ValueError(
            "the elicitation URL must use https; plain http is allowed only for localhost in development"
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
    _check_no_user_data(parts.query, parts.fragment, parts.path)
    return url


def _path_parameters(path: str) -> str:
    """``;name=value`` parameters of the path's segments (``/account;jsessionid=0F3A``), joined
    as a query string."""
    return "&".join(param for segment in path.split("/") for param in segment.split(";")[1:])


def _check_no_user_data(query: str, fragment: str, path: str) -> None:
    for where, text in (("query", query), ("fragment", fragment), ("path", _path_parameters(path))):
        for name, _ in parse_qsl(text, keep_blank_values=True):
            if name.strip().lower().replace("-", "_") in _CREDENTIAL_PARAMS:
                raise ValueError(
                    f"the elicitation URL carries {name!r} in its {where}: a URL must not hold "
                    "credentials or be pre-authenticated; identify the flow with an opaque id and "
                    "check who opens it on the page"
                )
    if _EMAIL.search(unquote(f"{path}?{query}#{fragment}")):
        raise ValueError(
            "the elicitation URL contains an email address: a URL must not carry personal data "
            "about the user (it ends up in browser history and server logs)"
        )
