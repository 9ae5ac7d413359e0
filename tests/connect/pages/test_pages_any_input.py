"""Whatever a browser sends, the pages answer it: a property test over the whole ConnectPages app.

Hypothesis writes the requests a browser (or anything that pretends to be one) can send: any
method, on every route :mod:`mcp_elicit.connect.pages.paths` lists and on paths near them (a
trailing slash, an extra segment, an encoded slash, upper case, non-ASCII, too long); any query
string (repeated, empty, huge, badly percent-encoded parameters, the ones the pages read with real
or random values); any cookies (malformed, duplicated, huge, a real session or sign-in cookie with
one character changed); any body under any Content-Type and Content-Length, sent whole or in
chunks; ``Origin``, ``Sec-Fetch-*``, ``Referer`` and ``Host`` of other sites. Each example gets a
fresh owner with a pending connect flow and a pending secret flow, and its request may carry that
owner's real session cookie and CSRF tokens, so that examples get past the first checks to the
handlers. A second property follows a real "Continue" to the OAuth callback with any answer; a
third drives the DEMO ONLY sign-in; a fourth sends raw ASGI input that httpx cannot produce.

Every answer must come in time, with a status the pages document (never a 5xx, but for the
provider's own failure on a callback that reached it), the security headers, a page that says what
happened (or a 303 to our own page or a pinned authorize URL), no input reflected on the page (a
marker drawn into any input never comes back, escaped or not; a ``<script>`` never comes back
unescaped), nothing logged at error level, and the flows unchanged unless the request was their
owner's own form (a refused request changes nothing). ``pytest --hypothesis-show-statistics``
shows which routes and outcomes the examples reached.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, MutableMapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jar_support import BrowserJar
from pages_support import (
    SECURITY_HEADERS,
    Harness,
    cookie_pair,
    development_pages,
    form_value,
    query_of,
    set_cookies,
)
from tests.helpers import no_errors_logged

from mcp_elicit.connect.flows import PendingFlow, SQLiteFlowStore
from mcp_elicit.connect.identity import DevelopmentIdentity
from mcp_elicit.connect.pages import ConnectPages, DevelopmentLogin
from mcp_elicit.connect.pages import paths as paths_module
from mcp_elicit.connect.pages.request import MAX_BODY
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing

# What the pages answer (app.py, request.py, views.py): a page (200), a 303 to our own page or a
# pinned authorize URL, and the refusals: 400 unreadable, 403 other site / not signed in / bad
# CSRF token / another account's link, 404 unknown, 405 method, 409 flow no longer pending, 413
# body too large, 414 address too long, 415 not our form. Never a 5xx: nothing a browser sends
# makes the pages unable to answer. The one exception, PROVIDER_FAILED: a callback that carried a
# real transaction cookie and its state reaches the provider's answer, and a failure there is the
# 502 "Something went wrong" (test_pages_oauth.py asserts it for forged answers too).
DOCUMENTED = {200, 303, 400, 403, 404, 405, 409, 413, 414, 415}
PROVIDER_FAILED = 502
WITHIN = 5.0  # seconds; every page answers at once, so a request that takes this long hangs
MARK = "Zq9Mark"  # drawn into inputs; no page ever shows request input, so it never comes back
SCRIPT = "<script>alert(1)</script>"
FORM = "application/x-www-form-urlencoded"
UNKNOWN_ID = "B" * 43  # the shape of a flow id, and no flow's
# Longest request target sent: httpx refuses a URL past 64 KiB, and a server in front refuses far
# less (uvicorn's h11: 16 KiB of request head); the pages' own limits are 1 KiB and 8 KiB.
MAX_TARGET = 60_000
SECRET_NAME = "openai_api_key"  # Harness.secret_flow's


def served_routes() -> list[str]:
    """The routes :mod:`mcp_elicit.connect.pages.paths` lists (``/connect/<id>``, ...)."""
    listed = (paths_module.__doc__ or "").split("Routes", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"``(/[^`]*)``", listed)


ROUTES = served_routes()

_serial = itertools.count(1)


def client_address(n: int) -> tuple[str, int]:
    """A client address of its own for each example: the default rate limit stays on, and a budget
    spent by earlier examples never answers for a later one."""
    return f"198.18.{n // 250 % 250}.{n % 250 + 1}", 40000 + n % 20000


# -- what hypothesis writes --------------------------------------------------------------------

CHARS = st.characters(codec="utf-8")  # any character a URL or a form can carry (no lone surrogates)
SPECIAL = [SCRIPT, MARK, "", " ", "%", "%00", "\x00", "\u202e", "\u200b", "é", "😀", "'\"<>&", "\\", "+"]
# Base64url and a few characters a cookie or a token must not hold.
REPLACEMENTS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/. é"


def texts(max_size: int = 30) -> st.SearchStrategy[str]:
    marked = st.builds(
        lambda before, after: f"{before}{MARK}{after}",
        st.text(CHARS, max_size=5),
        st.text(CHARS, max_size=5),
    )
    return st.text(CHARS, max_size=max_size) | st.sampled_from(SPECIAL) | marked


huge = st.integers(1_000, 12_000).map(lambda n: "x" * n)  # past the 8 KiB query limit, often


@st.composite
def changed(draw: st.DrawFn, values: Sequence[str], keep: str = "") -> str:
    """One of ``values`` with one character replaced, dropped or added (after its first ``keep``:
    ``=`` changes a cookie's value, not its name)."""
    value = draw(st.sampled_from(list(values)))
    start = value.index(keep) + 1 if keep and keep in value else 0
    # Drawn without the value's length, which varies from example to example (sealed values).
    offset = draw(st.integers(0, 2**16), label="at")
    how = draw(st.sampled_from(["replace", "drop", "add"]), label="how")
    if start >= len(value):
        return value + "A"
    at = start + offset % (len(value) - start)
    if how == "drop":
        return value[:at] + value[at + 1 :]
    replacement = draw(st.sampled_from(REPLACEMENTS), label="replacement")
    if how == "add":
        return value[:at] + replacement + value[at:]
    if replacement == value[at]:
        replacement = "A" if value[at] != "A" else "B"
    return value[:at] + replacement + value[at + 1 :]


@dataclass(frozen=True)
class Honest:
    """A request as the pages' own links and forms make it (``label`` names it in the statistics)."""

    label: str
    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    cookies: tuple[str, ...] = ()
    form: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class Menu:
    """What a request is drawn from: ``honest`` requests, and the real values an arbitrary one may
    carry so that it gets past the first checks: flow ids, provider ids, cookies
    (``name=value``), CSRF tokens, values of parameters (``next`` paths, ``state``s, issuers)."""

    honest: tuple[Honest, ...]
    origin: str
    ids: tuple[str, ...]
    providers: tuple[str, ...]
    cookies: tuple[str, ...]
    tokens: tuple[str, ...]
    values: tuple[str, ...]
    cookie_names: tuple[str, ...]


def values_of(menu: Menu) -> st.SearchStrategy[str]:
    """A parameter's value: a real one, one changed, any text, rarely a huge one."""
    real = st.sampled_from(menu.values)
    return st.one_of(real, real, changed(menu.values), texts(), texts(), huge)


def path_mutations() -> dict[str, Callable[[str], str]]:
    def encoded_slash(path: str) -> str:
        at = path.rfind("/")
        return path[:at] + "%2F" + path[at + 1 :]  # the app sees "%2F" itself (sent as %252F)

    return {
        "trailing slash": lambda path: path + "/",
        "extra segment": lambda path: path + "/extra",
        "double slash": lambda path: "/" + path,
        "upper case": str.upper,
        "encoded slash": encoded_slash,
        "non-ASCII": lambda path: path + "é",
        "bidi override": lambda path: path + "\u202e",
        "NUL": lambda path: path + "\x00",
        "dot segments": lambda path: path + "/%2e%2e",
        "backslashes": lambda path: "/" + path[1:].replace("/", "\\"),
        "parameter": lambda path: path + ";jsessionid=1",
        "long": lambda path: path + "a" * 1_100,
        "very long": lambda path: path + "é" * 2_000,
    }


MUTATIONS = path_mutations()


@st.composite
def paths(draw: st.DrawFn, menu: Menu) -> tuple[str, str]:
    """``(label, path)``: a route with its placeholders filled, maybe changed; or any path."""
    route = draw(st.sampled_from([*ROUTES, "any"]), label="route")
    if route == "any":
        return "any path", "/" + draw(st.text(CHARS, max_size=40))
    ids = (
        st.sampled_from(menu.ids)
        | changed(menu.ids)
        | st.from_regex(r"[A-Za-z0-9_-]{43}", fullmatch=True)
        | st.text(CHARS, max_size=50)
    )
    providers = st.sampled_from(menu.providers) | st.text(CHARS, max_size=20)

    def fill(match: re.Match[str]) -> str:
        what = match.group(1)
        return draw(ids if what == "id" else providers if what == "provider" else texts(), label=what)

    path = re.sub(r"<(\w+)>", fill, route)
    count = draw(st.sampled_from([0, 0, 1, 1, 2]), label="mutations")
    mutations = [draw(st.sampled_from(sorted(MUTATIONS)), label="mutation") for _ in range(count)]
    for name in mutations:
        path = MUTATIONS[name](path)
    return (f"near {route}" if mutations else route), path


QUERY_NAMES = ["next", "state", "code", "iss", "error", "error_description", "session_state", "csrf"]
QUERY_JUNK = ["%", "%zz", "%FF", "%C3%28", "%ED%A0%80", "&&", "=", "a=%00", "&=&", "%26"]


@st.composite
def queries(draw: st.DrawFn, menu: Menu) -> str:
    names = st.sampled_from(QUERY_NAMES) | texts(12)
    pairs = draw(st.lists(st.tuples(names, values_of(menu)), max_size=4), label="query")
    # error_description is the provider's text: a failed callback shows it (escaped, see the
    # SCRIPT check), so the marker stays out of it.
    pairs = [(n, v.replace(MARK, "") if n == "error_description" else v) for n, v in pairs]
    repeat: bool = draw(st.booleans(), label="repeat a parameter")
    if pairs and repeat:
        pairs.append(pairs[0])
    if draw(st.booleans(), label="percent-encoded"):
        text = "&".join(f"{quote(n, safe='')}={quote(v, safe='')}" for n, v in pairs)
    else:  # as typed: "&", "=", "%" and "+" in names and values mean what they mean
        text = "&".join(f"{n}={v}" for n, v in pairs)
        # What a browser escapes even so (httpx refuses ASCII controls in a URL).
        text = re.sub(r"[\x00-\x20\x7f#]", lambda m: quote(m.group(0), safe=""), text)
    junk = draw(st.lists(st.sampled_from(QUERY_JUNK), max_size=2), label="junk")
    return "&".join([text, *junk]) if junk else text


@st.composite
def cookie_headers(draw: st.DrawFn, menu: Menu) -> list[str]:
    ours = st.builds(lambda name, value: f"{name}={value}", st.sampled_from(menu.cookie_names), texts(60))
    pair = (
        st.sampled_from(menu.cookies)
        | changed(menu.cookies, keep="=")
        | ours
        | texts()
        | st.just("other=" + "x" * 70_000)  # past the 64 KiB the pages read
    )
    pairs = draw(st.lists(pair, max_size=5), label="cookies")
    duplicate: bool = draw(st.booleans(), label="duplicate a cookie")
    if pairs and duplicate:
        pairs.append(pairs[0])
    separator = draw(st.sampled_from(["; ", ";", " ; ", ", "]), label="separator")
    two: bool = draw(st.booleans(), label="two Cookie headers")
    if len(pairs) > 1 and two:
        return [separator.join(pairs[:1]), separator.join(pairs[1:])]
    return [separator.join(pairs)] if pairs else []


CONTENT_TYPES = [
    FORM,
    FORM,
    FORM + "; charset=UTF-8",
    FORM + '; charset="utf-8"',
    FORM + "; charset=latin-1",
    FORM.upper(),
    "multipart/form-data; boundary=B0undary",
    "application/json",
    "text/plain",
    "text/html",
    "",
]


@st.composite
def bodies(draw: st.DrawFn, menu: Menu) -> tuple[bytes, dict[str, str] | None, str]:
    """``(body, fields, label)``: ``fields`` when ``body`` is exactly their form encoding."""
    fields: dict[str, str] = draw(st.dictionaries(texts(10), texts(), max_size=2), label="extra fields")
    known = st.fixed_dictionaries(
        {},
        optional={
            "csrf": st.sampled_from(menu.tokens) | changed(menu.tokens) | texts(),
            "choice": st.sampled_from(["continue", "decline", "Decline", "", "cancel"]) | texts(),
            "value": texts() | st.sampled_from(["sk-live-123", "  padded  ", "a\tb", "\u2028", "x" * 5_000]),
            "next": st.sampled_from(menu.values) | texts(),
        },
    )
    fields.update(draw(known, label="fields"))
    kind = draw(
        st.sampled_from(
            ["form", "form", "form", "repeated", "as typed", "multipart", "json", "bytes", "oversize"]
        ),
        label="body",
    )
    if kind == "form":
        return urlencode(fields).encode("ascii"), fields, "form"
    if kind == "repeated":
        encoded = urlencode(fields)
        return f"{encoded}&{encoded}".encode("ascii"), None, kind
    if kind == "as typed":
        return "&".join(f"{n}={v}" for n, v in fields.items()).encode("utf-8"), None, kind
    if kind == "multipart":
        parts = [
            f'--B0undary\r\nContent-Disposition: form-data; name="{n}"\r\n\r\n{v}\r\n'
            for n, v in fields.items()
        ]
        return ("".join(parts) + "--B0undary--\r\n").encode("utf-8"), None, kind
    if kind == "json":
        return json.dumps(fields).encode("utf-8"), None, kind
    if kind == "bytes":
        return draw(st.binary(max_size=200), label="bytes"), None, kind
    extra = draw(st.integers(1, 3 * MAX_BODY), label="oversize by")
    return b"csrf=" + b"A" * (MAX_BODY + extra), None, kind


def header_value(text: str) -> bytes:
    """What a server would hand the app: no CR, LF or NUL in a header."""
    return re.sub("[\r\n\x00]", "", text).encode("utf-8")


@dataclass
class Visit:
    """One drawn request, and what the checks need to know of it."""

    route: str
    method: str
    target: str
    headers: list[tuple[bytes, bytes]]
    body: bytes
    chunks: int  # 0: sent whole (with a Content-Length); else in this many chunks, without
    fields: dict[str, str] | None
    cookies: list[str]

    def carries(self, cookie: str, token: str) -> bool:
        """Whether the request holds ``cookie`` (a ``name=value`` pair) and ``token`` at all."""
        return any(cookie in header for header in self.cookies) and token.encode() in self.body


ASPECTS = ("method", "path", "query", "cookies", "headers", "body", "content-length")
METHODS = ["GET", "POST", "HEAD", "PUT", "OPTIONS", "DELETE", "PATCH", "post", "TRACE", "CONNECT", "M-SEARCH"]
TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&'*+-.^_`|~0123456789"


def other_headers(menu: Menu) -> dict[str, st.SearchStrategy[str]]:
    """The headers a request may carry besides its cookies, each with its usual values."""
    return {
        "origin": st.sampled_from([menu.origin, "null", "https://evil.example", menu.origin.upper()]),
        "sec-fetch-site": st.sampled_from(["same-origin", "same-site", "cross-site", "none"]),
        "sec-fetch-mode": st.sampled_from(["navigate", "cors", "no-cors"]),
        "referer": st.sampled_from([f"{menu.origin}/done", "https://evil.example/page"]),
        "host": st.sampled_from(["evil.example", "127.0.0.1:1", "", "[::1]", "xn--e1awd7f.example"]),
        "content-type": st.sampled_from(CONTENT_TYPES),
        "x-forwarded-for": st.sampled_from(["10.0.0.1", "unknown"]),
    }


@st.composite
def visits(draw: st.DrawFn, menu: Menu) -> Visit:
    """One of ``menu.honest`` with none, some or all of its aspects (:data:`ASPECTS`) replaced by
    arbitrary ones: mostly requests that get past the first checks, and what breaks each one."""
    honest = draw(st.sampled_from(menu.honest), label="honest request")
    mode = draw(st.sampled_from(["as is", "some changed", "some changed", "all arbitrary"]), label="mode")
    changes: set[str] = set()
    if mode == "all arbitrary":
        changes = set(ASPECTS)
    elif mode == "some changed":
        changes = draw(st.sets(st.sampled_from(ASPECTS), min_size=1, max_size=2), label="changed")
    event(f"{honest.label}: {mode}")
    for aspect in sorted(changes) if mode == "some changed" else ():
        event(f"changed: {aspect}")

    method = honest.method
    if "method" in changes:
        methods = st.sampled_from(METHODS) | st.text(TOKEN_CHARS, min_size=1, max_size=12)
        method = draw(methods, label="method")
    route, path = honest.label, honest.path
    if "path" in changes:
        route, path = draw(paths(menu))
        event(f"path: {route}")
    target = quote(path, safe="/")
    if "query" in changes:
        if draw(st.booleans(), label="with a query"):
            target += "?" + draw(queries(menu))
    elif honest.query:
        target += "?" + urlencode(honest.query)
    target = target[:MAX_TARGET]
    if "cookies" in changes:
        cookies = draw(cookie_headers(menu))
    else:
        cookies = ["; ".join(honest.cookies)] if honest.cookies else []
    headers = [(b"cookie", header_value(cookie)) for cookie in cookies]
    if "headers" in changes:
        for name, usual in other_headers(menu).items():
            value = draw(st.none() | usual | texts(), label=name)
            if value is not None:
                headers.append((name.encode(), header_value(value)))
    else:  # what a browser sends with our own forms (Referrer-Policy: no-referrer: Origin null)
        origin = draw(st.sampled_from([menu.origin, "null"]), label="origin")
        headers += [(b"origin", origin.encode()), (b"sec-fetch-site", b"same-origin")]
        if honest.form is not None:
            headers.append((b"content-type", FORM.encode()))
    if "body" in changes:
        body, fields, kind = draw(bodies(menu))
        event(f"body: {kind}")
    elif honest.form is not None:
        fields = dict(honest.form)
        body = urlencode(fields).encode("ascii")
    else:
        body, fields = b"", None
    chunks = 0
    length = "honest"
    if "content-length" in changes:
        length = draw(st.sampled_from(["chunked", "short", "long", "junk", "twice"]), label="content-length")
        event(f"content-length: {length}")
    if length == "chunked":
        chunks = draw(st.integers(1, 4), label="chunks")
    elif length != "honest":
        declared = {
            "short": str(max(0, len(body) - 3)),
            "long": str(len(body) + 1000),
            "junk": draw(
                st.sampled_from(["abc", "-1", "²", "1e3", " 5", "9" * 30, "0x10", ""]), label="junk"
            ),
            "twice": f"{len(body)}, {len(body)}",
        }[length]
        headers.append((b"content-length", declared.encode("utf-8")))
    return Visit(route, method, target, headers, body, chunks, fields, cookies)


# -- sending and checking ----------------------------------------------------------------------


async def _in_chunks(body: bytes, count: int) -> AsyncIterator[bytes]:
    size = max(1, -(-len(body) // count))
    for start in range(0, len(body), size):
        yield body[start : start + size]


@asynccontextmanager
async def browser(app: ConnectPages, base: str) -> AsyncIterator[httpx.AsyncClient]:
    """A browser of its own (its own address) talking to ``app`` in this process: no socket, and
    the client keeps no cookies (every request says which it sends)."""
    transport = httpx.ASGITransport(app=app, client=client_address(next(_serial)))
    async with httpx.AsyncClient(
        transport=transport, base_url=base, cookies=BrowserJar.no_jar(), follow_redirects=False
    ) as http:
        yield http


async def send(app: ConnectPages, base: str, visit: Visit) -> httpx.Response:
    content: bytes | AsyncIterator[bytes] = (
        visit.body if not visit.chunks else _in_chunks(visit.body, visit.chunks)
    )
    async with browser(app, base) as http:
        return await asyncio.wait_for(
            http.request(visit.method, visit.target, headers=visit.headers, content=content), WITHIN
        )


def check(response: httpx.Response, *, method: str, allowed: set[int], destinations: Sequence[str]) -> None:
    """What every answer of the pages must be, whatever was asked."""
    status = response.status_code
    event(f"HTTP {status}")
    assert status in allowed, (status, response.text[:2000])
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, (name, status)
    csp = response.headers["content-security-policy"]
    for directive in ("default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"):
        assert directive in csp, csp
    assert "unsafe-inline" not in csp, csp
    for name, value in response.headers.multi_items():
        assert MARK not in value, (name, value)
    text = response.content.decode("utf-8")
    assert "<script" not in text.lower(), text
    assert MARK not in text, text
    assert "Traceback" not in text, text
    if status == 405:
        assert response.headers["allow"], response.headers
    if status == 303:
        location = response.headers["location"]
        ours = location.startswith("/") and not location.startswith(("//", "/\\"))
        assert ours or location.startswith(tuple(f"{url}?" for url in destinations)), location
        return
    assert response.headers["content-type"] == "text/html; charset=utf-8", response.headers
    if method != "HEAD":  # a page that says what happened, for a person to act on
        assert re.search(r"<h1>[^<]+</h1>", text), text
        assert re.search(r"<p>[^<]+</p>", text), text


# -- the pages signing in at the real IdP ------------------------------------------------------


@dataclass
class World:
    """One example's owner with a pending flow of each kind, and another account."""

    pages: Harness
    owner: str
    stranger: str
    connect: PendingFlow
    secret: PendingFlow
    owner_cookie: str
    menu: Menu

    def token(self, kind: str) -> str:
        flow = self.connect if kind == "connect" else self.secret
        return self.pages.token(self.owner, kind, flow.id)


class Site:
    """The running pages (``pages``) and a sign-in this browser started at the IdP: its cookie
    (``name=value``) and ``state``."""

    def __init__(self, pages: Harness, sign_in_cookie: str, sign_in_state: str) -> None:
        self.pages = pages
        self.sign_in_cookie = sign_in_cookie
        self.sign_in_state = sign_in_state

    def __repr__(self) -> str:  # what hypothesis prints of a failing example's fixture
        return f"Site({self.pages.base})"


@pytest.fixture
async def site(pages: Harness) -> Site:
    async with browser(pages.app, pages.base) as http:
        started = await http.get("/login", params={"next": f"/connect/{UNKNOWN_ID}"})
    assert started.status_code == 303, started.text
    (line,) = set_cookies(started).values()
    return Site(pages, cookie_pair(line), query_of(started.headers["location"])["state"])


async def new_world(site: Site) -> World:
    pages = site.pages
    n = next(_serial)
    owner, stranger = f"owner{n}", f"stranger{n}"  # new accounts: no cap on pending flows is reached
    connect = await pages.connect_flow(owner, client=f"Claude {SCRIPT}", description="To file issues")
    secret = await pages.secret_flow(owner)
    owner_cookie, stranger_cookie = pages.cookie(owner), pages.cookie(stranger)
    c, s = f"/connect/{connect.id}", f"/secret/{secret.id}"
    connect_token = pages.token(owner, "connect", connect.id)
    secret_token = pages.token(owner, "secret", secret.id)
    logout_token = pages.token(owner, "logout", "")
    tokens = [
        connect_token,
        secret_token,
        logout_token,
        pages.token(owner, "connect", secret.id),  # a real token, for the other flow
        pages.token(stranger, "connect", connect.id),
        pages.token(stranger, "logout", ""),
    ]
    me, signing_in = (owner_cookie,), (site.sign_in_cookie,)
    honest = (
        Honest("owner's connect page", "GET", c, cookies=me),
        Honest("owner's secret page", "GET", s, cookies=me),
        Honest("signed-out connect page", "GET", c),
        Honest("stranger's view", "GET", c, cookies=(stranger_cookie,)),
        Honest("Continue", "POST", c, cookies=me, form=(("csrf", connect_token), ("choice", "continue"))),
        Honest("Decline", "POST", c, cookies=me, form=(("csrf", connect_token), ("choice", "decline"))),
        Honest("Save", "POST", s, cookies=me, form=(("csrf", secret_token), ("value", f"sk-{SCRIPT}{MARK}"))),
        Honest("Save blank", "POST", s, cookies=me, form=(("csrf", secret_token), ("value", "  "))),
        Honest("Decline secret", "POST", s, cookies=me, form=(("csrf", secret_token), ("choice", "decline"))),
        Honest("stranger's Continue", "POST", c, cookies=(stranger_cookie,), form=(("csrf", tokens[4]),)),
        Honest("sign out", "POST", "/logout", cookies=me, form=(("csrf", logout_token), ("next", c))),
        Honest("sign in", "GET", "/login", query=(("next", c),)),
        Honest(
            "sign-in callback",
            "GET",
            "/login/callback",
            query=(("state", site.sign_in_state), ("code", "a-code"), ("iss", pages.idp.issuer)),
            cookies=signing_in,
        ),
        Honest(
            "sign-in cancelled",
            "GET",
            "/login/callback",
            query=(("error", "access_denied"), ("state", site.sign_in_state), ("iss", pages.idp.issuer)),
            cookies=signing_in,
        ),
        Honest(
            "stale callback",
            "GET",
            "/oauth/github/callback",
            query=(("state", "x"), ("code", "y")),
            cookies=me,
        ),
        Honest("done", "GET", "/done"),
    )
    menu = Menu(
        honest=honest,
        origin=pages.base,
        ids=(connect.id, secret.id, UNKNOWN_ID),
        providers=("github", "login", "ci", "GitHub"),
        cookies=(owner_cookie, stranger_cookie, site.sign_in_cookie),
        tokens=tuple(tokens),
        values=(
            f"/connect/{connect.id}",
            f"/secret/{secret.id}",
            f"/connect/{UNKNOWN_ID}",
            f"{pages.base}/connect/{connect.id}",
            "//evil.example/connect/x",
            "https://evil.example/",
            site.sign_in_state,
            pages.idp.issuer,
            pages.third_party.issuer,
            "access_denied",
            "server_error",
        ),
        cookie_names=(
            "mcp-elicit-session",
            "__Host-mcp-elicit-session",
            site.sign_in_cookie.split("=", 1)[0],
            "mcp-elicit-tx-0123456789abcdef01234567",
        ),
    )
    return World(pages, owner, stranger, connect, secret, owner_cookie, menu)


def destinations(pages: Harness) -> list[str]:
    """Where a 303 may send the browser besides our own pages: the pinned authorize URLs."""
    return [pages.idp.endpoint("authorization"), pages.third_party.endpoint("authorization")]


SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)


@SETTINGS
@given(data=st.data())
async def test_any_request_gets_a_clear_answer_and_changes_nothing_it_may_not(
    site: Site, data: st.DataObject
) -> None:
    pages = site.pages
    world = await new_world(site)
    visit = data.draw(visits(world.menu), label="request")
    event(f"route {visit.route}")
    reached_provider = (
        "callback" in visit.target.split("?", 1)[0]
        and site.sign_in_cookie in " ".join(visit.cookies)
        and site.sign_in_state in visit.target
    )
    allowed = DOCUMENTED | ({PROVIDER_FAILED} if reached_provider else set())
    with no_errors_logged():
        response = await send(pages.app, pages.base, visit)
        check(response, method=visit.method, allowed=allowed, destinations=destinations(pages))

    # A flow changes only for its owner's own form (the owner's session and its CSRF token), with
    # a 303 (Continue, Save) or the "Declined" page; a refused request changes nothing.
    flows = {
        kind: await pages.flows.get(flow.id)
        for kind, flow in (("connect", world.connect), ("secret", world.secret))
    }
    for kind, flow in flows.items():
        if flow.status == "pending":
            continue
        event(f"{kind} flow {flow.status}")
        assert visit.method.upper() == "POST", (kind, flow.status)
        assert visit.carries(world.owner_cookie, world.token(kind)), (kind, flow.status)
        assert response.status_code in (200, 303), (kind, flow.status, response.status_code)
    stored = await pages.vault.get_secret(pages.principal(world.owner).key, SECRET_NAME)
    assert (stored is not None) == (flows["secret"].status == "completed"), (stored, flows["secret"])
    if stored is not None and visit.fields is not None:
        assert stored.value == visit.fields.get("value", "").strip()  # what was typed, nothing lost or added


# -- a real "Continue", then any answer at the callback ----------------------------------------


@SETTINGS
@given(data=st.data())
async def test_any_callback_after_a_real_continue_ends_the_flow_cleanly(
    site: Site, data: st.DataObject
) -> None:
    pages = site.pages
    world = await new_world(site)
    flow = world.connect
    async with browser(pages.app, pages.base) as http:
        started = await http.post(
            f"/connect/{flow.id}",
            data={"csrf": world.token("connect"), "choice": "continue"},
            headers={"cookie": world.owner_cookie, "origin": pages.base, "sec-fetch-site": "same-origin"},
        )
    assert started.status_code == 303, started.text
    tx = next(
        cookie_pair(line) for name, line in set_cookies(started).items() if name.startswith("mcp-elicit-tx-")
    )
    state = query_of(started.headers["location"])["state"]

    issuer = pages.third_party.issuer
    # What the provider sends back (a code, a refusal, an error with its text), with the cookies
    # of the browser that pressed Continue; then some or all of it replaced.
    answers = [
        (("state", state), ("code", "a-code"), ("iss", issuer)),
        (("state", state), ("error", "access_denied"), ("iss", issuer)),
        (
            ("state", state),
            ("error", "server_error"),
            ("error_description", f"{SCRIPT} later"),
            ("iss", issuer),
        ),
    ]
    pairs = list(data.draw(st.sampled_from(answers), label="answer"))
    cookies = [tx, world.owner_cookie]
    path = "/oauth/github/callback"
    mode = data.draw(st.sampled_from(["as is", "one changed", "one changed", "all arbitrary"]), label="mode")
    changes = {"answer", "cookies", "path"} if mode == "all arbitrary" else set()
    if mode == "one changed":
        aspect = data.draw(st.sampled_from(["answer", "answer", "answer", "cookies", "cookies", "path"]))
        changes = {aspect}
        event(f"changed: {aspect}")
    event(f"callback: {mode}")
    if "answer" in changes:
        names = st.sampled_from(
            ["state", "code", "iss", "error", "error_description", "session_state"]
        ) | texts(12)
        values = (
            st.sampled_from([state, issuer, "access_denied", "server_error", "a-code", "", " "])
            | changed([state, issuer])
            | texts()
            | huge
        )
        how = data.draw(st.sampled_from(["add", "drop", "replace a value", "all new"]), label="how")
        event(f"answer: {how}")
        at = data.draw(st.integers(0, 10), label="at") % len(pairs)
        if how == "add":
            pairs += data.draw(st.lists(st.tuples(names, values), min_size=1, max_size=3), label="added")
        elif how == "drop":
            del pairs[at]
        elif how == "replace a value":
            pairs[at] = (pairs[at][0], data.draw(values, label="value"))
        else:
            pairs = data.draw(st.lists(st.tuples(names, values), max_size=6), label="pairs")
        # error_description is shown (escaped: the SCRIPT check), so the marker stays out of it.
        pairs = [(n, v.replace(MARK, "") if n == "error_description" else v) for n, v in pairs]
    if "cookies" in changes:
        cookies = data.draw(
            st.lists(
                st.sampled_from([tx, world.owner_cookie, pages.cookie(world.stranger)])
                | changed([tx], keep="="),
                max_size=4,
            ),
            label="cookies",
        )
    if "path" in changes:
        path = data.draw(
            st.sampled_from(
                [
                    "/oauth/login/callback",
                    "/login/callback",
                    "/oauth/github/callback/",
                    "/oauth/GitHub/callback",
                ]
            ),
            label="path",
        )
    visit = Visit(
        route=f"callback {path}",
        method="GET",
        target=f"{path}?{urlencode(pairs)}",
        headers=[(b"cookie", "; ".join(cookies).encode())] if cookies else [],
        body=b"",
        chunks=0,
        fields=None,
        cookies=["; ".join(cookies)],
    )
    with no_errors_logged():
        response = await send(pages.app, pages.base, visit)
        check(
            response, method="GET", allowed=DOCUMENTED | {PROVIDER_FAILED}, destinations=destinations(pages)
        )

    after = await pages.flows.get(flow.id)
    event(f"flow {after.status}")
    # Never left taken ("redeeming") by an answer that failed, never completed without a real code.
    assert after.status in ("in_progress", "failed", "declined"), after
    assert await pages.vault.get_connection(pages.principal(world.owner).key, "github") is None
    if response.status_code == PROVIDER_FAILED:
        assert after.status == "failed", after


# -- the DEMO ONLY sign-in (DevelopmentLogin): POST /login ----------------------------------------


@dataclass
class DevelopmentSite:
    app: ConnectPages
    base: str
    flows: SQLiteFlowStore
    flow: PendingFlow
    menu: Menu


@pytest.fixture
async def development(tmp_path: Path) -> AsyncIterator[DevelopmentSite]:
    keys = KeyRing.from_secrets([KeyRing.generate_secret()])
    flows = SQLiteFlowStore(tmp_path / "flows.db")
    vault = Vault.sqlite(tmp_path / "vault.db", keys=keys)
    identity = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    base = "http://127.0.0.1:8765"  # in process only: nothing listens there
    app = development_pages(base, DevelopmentLogin(identity), flows=flows, vault=vault, keys=keys)
    try:
        flow = await flows.create(identity.principal, "connect", "ci", ["builds:read"])
        async with browser(app, base) as http:
            page = await http.get("/login", params={"next": f"/connect/{flow.id}"})
        assert page.status_code == 200, page.text
        (line,) = set_cookies(page).values()
        token = form_value(page.text, "csrf")
        c, signing_in, form = f"/connect/{flow.id}", (cookie_pair(line),), (("csrf", token),)
        honest = (
            Honest("sign-in page", "GET", "/login", query=(("next", c),)),
            Honest("sign in", "POST", "/login", cookies=signing_in, form=form),
            Honest("sign in, no cookie", "POST", "/login", form=form),
            Honest("signed-out connect page", "GET", c),
            Honest("done", "GET", "/done"),
        )
        menu = Menu(
            honest=honest,
            origin=base,
            ids=(flow.id, UNKNOWN_ID),
            providers=("ci", "github"),
            cookies=(cookie_pair(line),),
            tokens=(token,),
            values=(f"/connect/{flow.id}", f"/secret/{flow.id}", "https://evil.example/"),
            cookie_names=(cookie_pair(line).split("=", 1)[0], "mcp-elicit-session"),
        )
        yield DevelopmentSite(app, base, flows, flow, menu)
    finally:
        await vault.close()
        await flows.close()


@SETTINGS
@given(data=st.data())
async def test_any_request_to_the_development_sign_in_gets_a_clear_answer(
    development: DevelopmentSite, data: st.DataObject
) -> None:
    visit = data.draw(visits(development.menu), label="request")
    event(f"route {visit.route}")
    with no_errors_logged():
        response = await send(development.app, development.base, visit)
        check(response, method=visit.method, allowed=DOCUMENTED, destinations=())
    assert (await development.flows.get(development.flow.id)).status == "pending"


# -- raw ASGI: what httpx cannot send ----------------------------------------------------------


@SETTINGS
@given(
    method=st.sampled_from(["GET", "POST", "POST"]) | st.text(CHARS, max_size=8),
    route=st.sampled_from([*ROUTES, "/"]),
    query=st.binary(max_size=100),
    headers=st.lists(st.tuples(st.binary(max_size=20), st.binary(max_size=60)), max_size=4),
    form=st.sampled_from([True, True, False]),
    chunks=st.lists(st.binary(max_size=MAX_BODY // 2), max_size=4),
    disconnect=st.booleans(),
)
async def test_raw_asgi_input_gets_a_clear_answer(
    site: Site,
    method: str,
    route: str,
    query: bytes,
    headers: list[tuple[bytes, bytes]],
    form: bool,
    chunks: list[bytes],
    disconnect: bool,
) -> None:
    """Query bytes that are not ASCII, header names and values of any bytes, a body in many
    chunks, a client that goes away mid-body."""
    pages = site.pages
    if form:
        headers = [*headers, (b"content-type", FORM.encode()), (b"origin", pages.base.encode())]
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": chunk, "more_body": True} for chunk in chunks
    ]
    messages.append({"type": "http.disconnect"} if disconnect else {"type": "http.request", "body": b""})
    sent: list[dict[str, Any]] = []
    read_past_the_end = False

    async def receive() -> dict[str, Any]:
        nonlocal read_past_the_end
        if not messages:
            read_past_the_end = True
            return {"type": "http.disconnect"}
        return messages.pop(0)

    async def asgi_send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": route.replace("<id>", UNKNOWN_ID).replace("<provider>", "github"),
        "raw_path": b"",
        "query_string": query,
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in headers],
        "client": client_address(next(_serial)),
        "server": ("127.0.0.1", 80),
    }
    with no_errors_logged():
        await asyncio.wait_for(pages.app(scope, receive, asgi_send), WITHIN)
    assert not read_past_the_end
    start, *body = sent
    assert start["type"] == "http.response.start"
    event(f"HTTP {start['status']}")
    assert start["status"] in DOCUMENTED, start
    names = {bytes(name).decode("latin-1") for name, _ in start["headers"]}
    assert set(SECURITY_HEADERS) <= names, names
    assert body, sent
    assert body[-1]["type"] == "http.response.body", sent
    assert not body[-1].get("more_body", False), sent


def test_the_routes_come_from_the_paths_module() -> None:
    """The properties draw their paths from ROUTES: a docstring that stops listing them must fail
    here, not leave the properties probing made-up paths only."""
    expected = {"/connect/<id>", "/secret/<id>", "/login", "/login/callback", "/logout", "/done"}
    assert expected | {"/oauth/<provider>/callback"} <= set(ROUTES), ROUTES


# -- regression tests for what the properties found ----------------------------------------------


@pytest.mark.parametrize("path", ["/login", "/login/callback", "/oauth/github/callback"])
async def test_a_repeated_parameter_is_refused_without_showing_it(
    pages: Harness, http: httpx.AsyncClient, path: str
) -> None:
    """Found by the callback property: the 400 for a repeated parameter named the parameter, so
    a link could put any sentence on the pages' own error page ("Call 555 0100 ...")."""
    said = "Your account is locked. Call 555 0100"
    response = await http.get(path, params=[(said, "1"), (said, "2")])
    assert response.status_code == 400
    assert "repeats a parameter" in response.text
    assert "555 0100" not in response.text
    flow = await pages.connect_flow()
    posted = await http.post(
        f"/connect/{flow.id}",
        content=urlencode([(said, "1"), (said, "2")]),
        headers={"content-type": FORM, "origin": pages.base, "cookie": pages.cookie("alice")},
    )
    assert posted.status_code == 400
    assert "555 0100" not in posted.text
    assert (await pages.flows.get(flow.id)).status == "pending"
