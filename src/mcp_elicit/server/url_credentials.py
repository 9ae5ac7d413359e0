"""What in a URL lets whoever holds it in: the credential part of the server's URL check.

A URL-mode question's URL ends up in browser history, server logs, referrers and chat messages,
so it must not carry a credential or be pre-authenticated. :func:`find_credential` says where a
URL does; :func:`mcp_elicit.server.urls.check_elicitation_url` refuses it then. It looks for:

* **A parameter named like a credential**, read by the form lint's own recogniser
  (:func:`mcp_elicit.schema.secret_words.is_credential_name`): the spellings the lint refuses
  in a form are refused in a URL (``accessToken``, ``client-secret``, ``refresh_token[]``,
  ``X-Api-Key``, ``__token__``, ``auth_key``), and the names it reads as *about* a secret pass
  here too (``session_name``, ``max_tokens``, ``api_key_id``). Parameters are those of the query
  and the fragment, ``;name=value`` path parameters (``;jsessionid=``), and path segments written
  as ``name=value&...`` (BunnyCDN's path tokens).
* **A parameter named like a session id or a link signature** (``PHPSESSID``, ``session_id``,
  ``X-Amz-Signature``, ``sig``, ``Key-Pair-Id``, ``hmac``): in a URL they make the link
  pre-authenticated (S3, GCS and CloudFront presigned URLs, Azure SAS), though a form field so
  named asks for nothing secret (an e-mail signature), so they are words of this check only.
  They count as the name's last words: ``signature_version`` and ``session_name`` pass. So
  do SAML's ``SAMLResponse`` and ``SAMLart``: opening the link signs its holder in.
* **An ``Authorization`` header's value** as any parameter's: ``Bearer`` and a token (long,
  with a digit: "bearer bonds" passes), ``Basic`` and a base64 ``user:password``.
* **A URL in a value** (a redirect target: ``?next=https://app/cb%3Faccess_token%3D…``) is read
  the same way, to three levels: the browser, then the app, follow it with all it carries.
* **A JWT anywhere** in the path, query or fragment, whatever it is called: three base64url
  segments joined by dots whose first decodes to a JSON object with an ``alg`` (a JWS, or the
  start of a JWE).
* **A key in a format its issuer made recognisable**, anywhere, whatever it is called: a fixed
  prefix, then random characters, so that secret scanners find leaked ones (GitHub ``ghp_…``,
  GitLab ``glpat-…``, Slack ``xoxb-…``, Stripe ``sk_live_…``, OpenAI and Anthropic ``sk-…``,
  Google OAuth ``ya29.…``, npm, PyPI, Hugging Face, Shopify, DigitalOcean, SendGrid). Keys meant
  to be public (Stripe's ``pk_live_…``, Google's ``AIza…`` browser keys) pass.
* **CDN token links**, recognised by their shape: Akamai (a value of ``~``-joined fields with
  ``exp=`` and ``hmac=``; ``hdnts``/``hdnea``/``hdntl``), Cloudflare (``verify=<time>-<mac>``),
  Wowza SecureToken (``wowzatoken*``, or a ``<prefix>hash`` beside ``<prefix>endtime``) and the
  hash-plus-expiry pairs of nginx ``secure_link`` and others (``st``/``md5``/``h``/``hash`` with
  ``e``/``expires``). Fastly, BunnyCDN and KeyCDN use ``token=``, a credential name already.
* **A sign-in response**, by its shape: an OAuth authorization response (a random ``code`` beside
  a random ``state``: opening it finishes somebody's sign-in) and a CAS ticket
  (``ticket=ST-1-…``). A promotion code, or a ``state`` that is a region, passes.

What passes: credential words in the path itself (``/settings/tokens``, ``/docs/api-keys``) or
in a value (``?q=password+manager``), and a name that carries no value (an anchor such as
``#password`` or ``#secrets.token_urlsafe``, a bare flag ``?token``): a page about tokens holds
none. Opaque blobs (a Stripe Checkout fragment) are not read as names either: they hold no
``=``, or only base64 padding after it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from typing import Final
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from mcp_elicit.schema.secret_words import is_credential_name, name_words

__all__ = ["find_credential", "url_parameters"]

# Written as people spell them; read through ``name_words`` like any parameter name, and
# matched against the name's last words.
_LINK_NAMES: Final = {
    "a session id": (
        "session",
        "session_id",
        "sessionid",
        "sessid",
        "sid",
        "jsessionid",
        "phpsessid",
        "aspsessionid",
    ),
    "a link signature": ("signature", "sig", "hmac", "key_pair_id"),
    "credentials": ("auth", "authorization"),
    # SAML's HTTP-Redirect and artifact bindings: whoever opens the link is signed in.
    "a sign-in assertion": ("SAMLResponse", "saml_response", "SAMLart", "samlart", "saml_art"),
    "an Akamai edge token": ("hdnts", "hdnea", "hdntl"),
}
_LINK_WORDS: Final = {
    name_words(spelling): what for what, spellings in _LINK_NAMES.items() for spelling in spellings
}

# (what, the key's shape): documented prefixes and the shortest random part seen in the wild.
_KEY_FORMATS: Final = (
    ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}"),
    ("a GitLab token", r"gl(?:pat|dt|rt|ptt|oas|cbt)-[A-Za-z0-9_-]{20,}"),
    ("a Slack token", r"xox[abeoprs]-[A-Za-z0-9-]{10,}"),
    ("a Stripe secret key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9+/=]{24,}"),
    # Random keys hold a digit: a long hyphenated slug after "sk-" (a page name) does not.
    ("an OpenAI or Anthropic API key", r"sk-(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{32,}"),
    ("a Google OAuth token", r"ya29\.[A-Za-z0-9_-]{20,}"),
    ("an npm token", r"npm_[A-Za-z0-9]{36,}"),
    ("a PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("a Hugging Face token", r"hf_[A-Za-z0-9]{30,}"),
    ("a Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}"),
    ("a DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("a SendGrid API key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}"),
)
# One pattern, each format a named group; a key stands alone (no word character or '-' around).
_KEYS: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    + "|".join(f"(?P<k{i}>{shape})" for i, (_, shape) in enumerate(_KEY_FORMATS))
    + r")(?![A-Za-z0-9_-])"
)
_JWT_CHUNK: Final = re.compile(r"[A-Za-z0-9_.-]+")
_HEX: Final = re.compile(r"[0-9A-Fa-f]{16,}")
_DIGITS: Final = re.compile(r"[0-9]+")
_CLOUDFLARE_VERIFY: Final = re.compile(r"[0-9]{9,11}-[A-Za-z0-9+/=_ -]{20,}")  # '+' may arrive as ' '
_HASH_VALUE: Final = re.compile(r"[A-Za-z0-9_-]{16,}={0,2}")
_EXPIRY_VALUE: Final = re.compile(r"[0-9]{9,11}")
_BEARER_TOKEN: Final = re.compile(r"(?=[^0-9]*[0-9])[A-Za-z0-9._~+/-]{16,}=*")  # RFC 6750's token68
_BASIC_CREDENTIALS: Final = re.compile(r"[A-Za-z0-9+/]{4,}={0,2}")
# A value no person typed: long, token characters only, with a digit.
_RANDOM: Final = re.compile(r"(?=[^0-9]*[0-9])[A-Za-z0-9._~/+-]{16,}")
_CAS_TICKET: Final = re.compile(r"(?:ST|PT|PGT)-[0-9]+-[A-Za-z0-9._-]{10,}")
_HASH_NAMES: Final = ("st", "md5", "h", "hash")
_EXPIRY_NAMES: Final = ("e", "expires", "expire")
_WOWZA_PREFIX: Final = "wowzatoken"


def find_credential(parts: SplitResult) -> str | None:
    """Where ``parts`` carries something that lets its holder in, as a message says it
    (``"'accessToken' in its query (it names an access token)"``), or None."""
    return _find(parts, _MAX_NESTED_URLS)


# A redirect parameter's URL may hold one of its own (``?next=/login?return=/cb%3F...``).
_MAX_NESTED_URLS: Final = 3


def _find(parts: SplitResult, nesting: int) -> str | None:
    params = list(url_parameters(parts))
    for where, name, value in params:
        if not value.strip("="):  # carries nothing: an anchor (#password), a flag, base64 padding
            continue
        reason = _credential_name(name) or _authorization_value(value)
        if reason is not None:
            return f"{name!r} in its {where} ({reason})"
    for where in ("query", "fragment", "path"):
        here = [(name, value) for w, name, value in params if w == where]
        found = _cdn_token(here) or _sign_in_response(here)
        if found is not None:
            return f"{found[0]} in its {where} ({found[1]})"
    found_key = _known_key(parts) or _jwt(parts)
    if found_key is not None or nesting == 0:
        return found_key
    # A URL in a value (``?next=https://app/cb?access_token=...``, decoded once already): the
    # browser, then the app, follow it with everything it carries. Keys and JWTs in it were
    # found above, in the whole text; the names of its own parameters are read here.
    for where, name, value in params:
        if "=" in value and ("?" in value or "#" in value or ";" in value):
            try:
                nested = urlsplit(value)
            except ValueError:  # "http://[x?a=b": no URL, so nothing a browser would follow
                continue
            inner = _find(nested, nesting - 1)
            if inner is not None:
                return f"a URL in {name!r} in its {where}, with {inner}"
    return None


def url_parameters(parts: SplitResult) -> Iterator[tuple[str, str, str]]:
    """(where, name, value) of every parameter: query, fragment, then path (``;name=value``
    path parameters, and segments written as ``name=value&...``)."""
    for where, text in (("query", parts.query), ("fragment", parts.fragment)):
        for name, value in parse_qsl(text, keep_blank_values=True):
            yield where, name, value
    for segment in parts.path.split("/"):
        main, *path_params = segment.split(";")
        pieces = list(path_params)
        if "=" in main and not main.endswith("="):  # "bcdn_token=...&expires=...", not base64 padding
            pieces.append(main)
        for piece in pieces:
            for name, value in parse_qsl(piece, keep_blank_values=True):
                yield "path", name, value


def _credential_name(name: str) -> str | None:
    what = is_credential_name(name)
    if what is not None:
        return f"it names {what}"
    words = name_words(name)
    for end in range(len(words)):
        link = _LINK_WORDS.get(words[end:])
        if link is not None:
            return link
    if name.lower().startswith(_WOWZA_PREFIX):
        return "a Wowza SecureToken"
    return None


def _authorization_value(value: str) -> str | None:
    """An ``Authorization`` header's value sent as a parameter's (``?auth=Bearer%20…``): a bearer
    token (long, with a digit, so "bearer bonds" is no token) or Basic's base64 ``user:password``."""
    scheme, _, credentials = value.strip().partition(" ")
    scheme, credentials = scheme.lower(), credentials.strip()
    if scheme == "bearer" and _BEARER_TOKEN.fullmatch(credentials):
        return "its value is a bearer token"
    if scheme == "basic" and _BASIC_CREDENTIALS.fullmatch(credentials):
        try:
            decoded = base64.b64decode(credentials, validate=True)
        except (binascii.Error, ValueError):
            return None
        if b":" in decoded:
            return "its value is a user name and password"
    return None


def _cdn_token(params: list[tuple[str, str]]) -> tuple[str, str] | None:
    """A CDN token among one place's parameters: (what, which parameters), or None."""
    names = {name.lower(): value for name, value in params}
    for name, value in params:
        lowered = name.lower()
        if _akamai(value):
            return "an Akamai edge token", f"the value of {name!r}"
        if lowered == "verify" and _CLOUDFLARE_VERIFY.fullmatch(value):
            return "a Cloudflare signed-URL token", repr(name)
        if lowered.endswith("hash") and len(lowered) > 4:
            prefix = lowered[:-4]
            if f"{prefix}endtime" in names or f"{prefix}starttime" in names:
                return "a Wowza SecureToken", repr(name)
    hashes = [n for n in _HASH_NAMES if n in names and _HASH_VALUE.fullmatch(names[n])]
    expiries = [n for n in _EXPIRY_NAMES if n in names and _EXPIRY_VALUE.fullmatch(names[n])]
    if hashes and expiries:
        return "a signed CDN link", f"{hashes[0]!r} with {expiries[0]!r}"
    return None


def _sign_in_response(params: list[tuple[str, str]]) -> tuple[str, str] | None:
    """An OAuth authorization response or a CAS ticket among one place's parameters: (what,
    which parameters), or None."""
    names = {name.lower(): value for name, value in params}
    if _RANDOM.fullmatch(names.get("code", "")) and _RANDOM.fullmatch(names.get("state", "")):
        return "an OAuth authorization response", "'code' with 'state'"
    if _CAS_TICKET.fullmatch(names.get("ticket", "")):
        return "a CAS ticket", "'ticket'"
    return None


def _akamai(value: str) -> bool:
    """``[st=…~]exp=…~acl=…~hmac=…``: Akamai's token format, whatever the parameter is called."""
    if "~" not in value:
        return False
    fields = dict(field.partition("=")[::2] for field in value.split("~"))
    return bool(_DIGITS.fullmatch(fields.get("exp", "")) and _HEX.fullmatch(fields.get("hmac", "")))


def _known_key(parts: SplitResult) -> str | None:
    for where, text in (("query", parts.query), ("fragment", parts.fragment), ("path", parts.path)):
        found = _KEYS.search(unquote(text))
        if found is not None:
            return f"{_KEY_FORMATS[int(str(found.lastgroup)[1:])][0]} in its {where}"
    return None


def _jwt(parts: SplitResult) -> str | None:
    for where, text in (("query", parts.query), ("fragment", parts.fragment)):
        for name, value in parse_qsl(text, keep_blank_values=True):
            if _has_jwt(value):
                return f"a JWT in its {where} (the value of {name!r})"
            if _has_jwt(name):
                return f"a JWT in its {where}"
    if _has_jwt(unquote(parts.path)):
        return "a JWT in its path"
    return None


def _has_jwt(text: str) -> bool:
    """Whether ``text`` holds ``<header>.<x>.<y>`` with a base64url JSON header naming an ``alg``."""
    if "." not in text:
        return False
    for chunk in _JWT_CHUNK.findall(text):
        segments = chunk.split(".")
        if any(_jose_header(segment) for segment in segments[:-2]):
            return True
    return False


def _jose_header(segment: str) -> bool:
    if len(segment) < 4 or len(segment) % 4 == 1:
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (binascii.Error, ValueError, RecursionError):  # not base64, UTF-8 or JSON; too deep
        return False
    return isinstance(header, dict) and isinstance(header.get("alg"), str)
