"""Input requests that are not plain ``ctx.elicit`` forms, in both wire eras: a property test of
the low-level style (a handler returning its own ``InputRequired``) and of ``ctx.sample``,
``ctx.list_roots`` and ``ctx.elicit_url``, against clients that declare any capabilities and answer
anything.

Hypothesis draws

* low-level handlers that return ``InputRequired`` for one to three rounds, then a text: input
  requests of any shape (good form, URL, sampling and roots requests, some written the 2025 way
  with ``jsonrpc``/``id`` and an ``elicitationId``; unknown methods and modes, entries that are no
  object, forms with no message or schema, forms outside the subset or asking for secrets, with
  and without ``allow_secrets``; URLs good and bad), under odd keys (empty, NUL, very long,
  non-ASCII, up to 20 of them), with any ``state`` (None, empty, text, a large one, one over the
  server's limit, one that is no UTF-8);
* high-level handlers calling ``ctx.sample`` (odd messages, ``max_tokens``, ``tools``,
  ``includeContext``), ``ctx.list_roots`` and ``ctx.elicit_url`` (good and bad URLs, a message that
  is no text) one after another;
* client capabilities (form, URL, sampling with or without tools and context, roots) and answers:
  any JSON at 2026-07-28 (keys left out, valid results and junk), and at 2025-11-25 a result or a
  JSON-RPC error for each server→client request.

Every example runs on two connections: 2026-07-28 played by hand (:class:`tests.helpers.RawCall`,
the ASGI app in this process), and a 2025-11-25 session played by hand over Streamable HTTP on
127.0.0.1 (:class:`tests.http_session_support.Session`; the server on a thread of its own). What
each must give is worked out from the documentation (server/lowlevel.py, server/gating.py,
server/engine.py, server/legacy/bridge.py, docs/protocol.md, docs/server-guide.md, the wire specs):

* a round whose requests include an entry that is no input request (unknown method or mode, no
  object) or an elicitation that fails the checks ``ctx.elicit``/``ctx.elicit_url`` make (the
  client declaring its mode) ends with -32603 naming the key; else one the client did not declare
  a capability for with -32021 whose ``requiredCapabilities`` names everything missing; a state
  over the limit or with no JSON form with -32603;
* otherwise the client is asked exactly what the handler wrote: at 2026-07-28 ``{method, params}``
  without the 2025 envelope and ``elicitationId``; at 2025-11-25 one request each (``params`` ``{}``
  when absent; a URL elicitation with a fresh 32-hex ``elicitationId``; a URL already accepted in
  the call is not asked again but answered ``accept`` by the bridge);
* on the retry the handler sees exactly the answers (2026-07-28: the raw ``inputResponses``;
  2025-11-25: the results, an ElicitResult without its ``_meta``) and the ``state`` it returned;
  a 2025 answer that is a JSON-RPC error or no object ends a tool call with a tool error saying so,
  an ElicitResult that is not one with -32602;
* ``ctx.sample``/``ctx.list_roots``/``ctx.elicit_url`` answered well give the handler the answer,
  a malformed answer is -32602 naming the key, a missing capability -32021, an argument with no
  JSON form or a bad URL a tool error (the handler raised);
* nothing hangs, no traceback reaches the client, and the next call on the connection works.

The tests at the end each pin a bug found this way (their docstrings say what it is); they fail
until it is fixed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from mcp_elicit import Context, Server
from mcp_elicit.server.lowlevel import InputRequired
from mcp_elicit.wire.errors import McpError
from tests.helpers import InProcessServer, RawCall
from tests.http_session_support import Session, initialize, messages
from tests.strategies import fuzz_settings

KEYS = ["any-input-request-tests-secret-0123456789abcdef"]
# Two connections per example: the whole file runs in about 6 s on two cores.
# ANY_INPUT_REQUEST_EXAMPLES=1000 for a longer hunt.
EXAMPLES = int(os.environ.get("ANY_INPUT_REQUEST_EXAMPLES", "45"))
WITHIN = 15.0  # the longest a call may take (a state-only round at 2025-11-25 pauses 0.25 s)
INTERNAL, INVALID_PARAMS, MISSING_CAPABILITY = -32603, -32602, -32021
GENERIC_TOOL = "Tool 'high' failed with an unexpected error; the server log has details"
T = TypeVar("T")

ELICIT, SAMPLE, ROOTS = "elicitation/create", "sampling/createMessage", "roots/list"
GOOD_URLS = [
    "https://example.com/connect/abc",
    "https://mcp.example.org/p?flow=42#x",
    "http://localhost:8080/c",
]
BAD_URLS = [
    "http://example.com/plain",
    "javascript:alert(1)",
    "https://user:pw@example.com/",
    "",
    "https://example.com/a b",
    "https://example.com/?token=ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "https://example.com/?to=ada@example.com",
    "ftp://example.com/x",
]
FORM: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
SECRET_FORM: dict[str, Any] = {"type": "object", "properties": {"password": {"type": "string"}}}
NESTED_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}},
}


# -- the server ---------------------------------------------------------------------------------


@dataclass
class Plan:
    """What one call's handler does (by round), and what it saw: (round, inputResponses, state)."""

    rounds: list[InputRequired] = field(default_factory=list)
    steps: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    seen: list[tuple[int, dict[str, Any], str | None]] = field(default_factory=list)


PLANS: dict[str, Plan] = {}
_cases = itertools.count()


def new_case(plan: Plan) -> str:
    case = f"case-{next(_cases)}"
    PLANS[case] = plan
    return case


def make_server() -> Server:
    app = Server("any-input-request", version="1.0.0", state_keys=KEYS, legacy_leg_timeout=5.0)

    @app.tool()
    async def low(case: str, ctx: Context) -> Any:
        plan = PLANS[case]
        plan.seen.append((ctx.round, json.loads(json.dumps(dict(ctx.input_responses))), ctx.request_state))
        if ctx.round < len(plan.rounds):
            return plan.rounds[ctx.round]
        return f"done after {ctx.round} rounds"

    @app.tool()
    async def high(case: str, ctx: Context) -> Any:
        said: list[Any] = []
        for kind, args in PLANS[case].steps:
            if kind == "sample":
                message = await ctx.sample(**args)
                said.append([message.role, message.content, message.model, message.stop_reason])
            elif kind == "roots":
                said.append([[root.uri, root.name] for root in await ctx.list_roots()])
            else:
                said.append((await ctx.elicit_url(args["message"], args["url"])).action)
        return json.dumps(said)

    @app.tool()
    async def ping() -> str:
        return "pong"

    return app


# -- what a handler writes, and what it needs ------------------------------------------------------

# Capability atoms a client may declare ("tools" and "context" count only with "sampling").
ATOMS = ("form", "url", "sampling", "tools", "context", "roots")


def capabilities(declared: frozenset[str], bare_form: bool) -> dict[str, Any]:
    caps: dict[str, Any] = {}
    if "form" in declared or "url" in declared:
        modes: dict[str, Any] = {mode: {} for mode in ("form", "url") if mode in declared}
        caps["elicitation"] = {} if bare_form and modes.keys() == {"form"} else modes
    if "sampling" in declared:
        caps["sampling"] = {name: {} for name in ("tools", "context") if name in declared}
    if "roots" in declared:
        caps["roots"] = {}
    return caps


@dataclass(frozen=True)
class Need:
    atoms: frozenset[str]
    required: dict[str, Any]


FORM_NEED = Need(frozenset({"form"}), {"elicitation": {"form": {}}})
URL_NEED = Need(frozenset({"url"}), {"elicitation": {"url": {}}})
ROOTS_NEED = Need(frozenset({"roots"}), {"roots": {}})


def sampling_need(tools: bool, context: bool) -> Need:
    extra = [name for name, wanted in (("tools", tools), ("context", context)) if wanted]
    return Need(frozenset({"sampling", *extra}), {"sampling": {name: {} for name in extra}})


def merged(needs: list[Need]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for need in needs:
        for name, value in need.required.items():
            out.setdefault(name, {}).update(value)
    return out


@dataclass(frozen=True)
class Drawn:
    """One entry a low-level handler writes. ``need`` None: no input request at all (-32603
    whatever the client declares); ``vetted``: an elicitation passes the checks once its mode is
    declared; ``params``: what the client gets as params (``...``: none at 2026-07-28)."""

    entry: Any
    need: Need | None
    vetted: bool = True

    @property
    def method(self) -> Any:
        return self.entry.get("method") if isinstance(self.entry, dict) else None

    @property
    def params(self) -> Any:
        params = self.entry.get("params", ...) if isinstance(self.entry, dict) else ...
        if self.method == ELICIT and isinstance(params, dict):
            params = {k: v for k, v in params.items() if k != "elicitationId"}
        return ... if params is None else params

    def sent_2026(self) -> dict[str, Any]:
        params = self.params
        return {"method": self.method} if params is ... else {"method": self.method, "params": params}

    def sent_2025(self) -> dict[str, Any]:
        """The params of the 2025 request, an ``elicitationId`` left out."""
        params = self.params
        return {} if params is ... or not params else dict(params)

    @property
    def url_place(self) -> tuple[str, str] | None:
        params = self.params
        if self.method == ELICIT and isinstance(params, dict) and params.get("mode") == "url":
            return str(params.get("message")), str(params.get("url"))
        return None


texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=10)


def envelope(entry: dict[str, Any], legacy: bool) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, **entry} if legacy else entry


@st.composite
def entries(draw: st.DrawFn, key: str) -> Drawn:
    kind = draw(
        st.sampled_from(
            [
                *("form", "form", "url", "url", "sampling", "sampling", "roots", "roots", "bad-form"),
                *("bad-url", "unknown-method", "unknown-mode", "not-an-object"),
            ]
        )
    )
    legacy = draw(st.booleans())
    message = f"[{key}] " + draw(texts)  # the key in it: no two entries of a round are the same
    if kind == "form":
        params: dict[str, Any] = {"message": message, "requestedSchema": FORM}
        if draw(st.booleans()):
            params["mode"] = "form"
        return Drawn(envelope({"method": ELICIT, "params": params}, legacy), FORM_NEED)
    if kind == "bad-form":
        params = draw(
            st.sampled_from(
                [
                    {"message": message, "requestedSchema": SECRET_FORM},
                    {"message": message, "requestedSchema": NESTED_FORM},
                    {"message": message},
                    {"message": message, "requestedSchema": "object"},
                    {"requestedSchema": FORM},
                    {"message": 5, "requestedSchema": FORM},
                ]
            )
        )
        return Drawn({"method": ELICIT, "params": params}, FORM_NEED, vetted=False)
    if kind in ("url", "bad-url"):
        good = kind == "url"
        url = draw(st.sampled_from(GOOD_URLS if good else BAD_URLS))
        params = {"mode": "url", "message": message, "url": url}
        if legacy:
            params["elicitationId"] = "written-the-2025-way"
        return Drawn(envelope({"method": ELICIT, "params": params}, legacy), URL_NEED, vetted=good)
    if kind == "sampling":
        params = {
            "messages": [{"role": "user", "content": {"type": "text", "text": message}}],
            "maxTokens": draw(st.integers(1, 1000)),
        }
        tools = draw(st.sampled_from([None, "tools", "toolChoice"]))
        if tools == "tools":
            params["tools"] = [{"name": "t", "inputSchema": {"type": "object"}}]
        elif tools == "toolChoice":
            params["toolChoice"] = {"mode": "auto"}
        context = draw(st.sampled_from([None, "none", "thisServer", "allServers"]))
        if context is not None:
            params["includeContext"] = context
        need = sampling_need(tools is not None, context not in (None, "none"))
        return Drawn(envelope({"method": SAMPLE, "params": params}, legacy), need)
    if kind == "roots":
        # Roots requests have nothing to tell them apart: one per round (see ``rounds``).
        shape = draw(st.sampled_from(["none", "empty", "null"]))
        entry: dict[str, Any] = {"method": ROOTS}
        if shape == "empty":
            entry["params"] = {}
        elif shape == "null":
            entry["params"] = None
        return Drawn(envelope(entry, legacy), ROOTS_NEED)
    if kind == "unknown-method":
        method = draw(
            st.sampled_from(["tools/call", "ping", "", "elicitation/Create", None, 5, ["roots/list"]])
        )
        return Drawn({"method": method, "params": {"message": message}}, None)
    if kind == "unknown-mode":
        mode = draw(st.sampled_from(["URL", "other", None, 5, ""]))
        return Drawn(
            {"method": ELICIT, "params": {"mode": mode, "message": message, "url": GOOD_URLS[0]}}, None
        )
    return Drawn(draw(st.sampled_from(["roots/list", 5, None, [], [ROOTS]])), None)


odd_keys = st.sampled_from(["", " ", "\x00", "k" * 300, "é/ü", "inputRequests", "__proto__", "1"]) | texts


@st.composite
def rounds_of_requests(draw: st.DrawFn) -> dict[str, Drawn]:
    least = draw(st.sampled_from([1, 1, 1, 1, 0]))  # a state-only round now and then (it pauses at 2025)
    keys = draw(
        st.lists(odd_keys, unique=True, min_size=least, max_size=draw(st.sampled_from([3, 3, 3, 6, 20])))
    )
    drawn: dict[str, Drawn] = {}
    has_roots = False
    for key in keys:
        one = draw(entries(key))
        if one.method == ROOTS and one.need is not None:
            if has_roots:
                continue
            has_roots = True
        drawn[key] = one
    return drawn


states = st.one_of(
    st.none(),
    st.just(""),
    texts,
    st.sampled_from(["x" * 100_000, "y" * 300_000, "broken \udc80 state"]),
)


# -- what the client answers ---------------------------------------------------------------------

answer_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
elicit_results = st.one_of(
    st.just({"action": "accept", "content": {"name": "Ada"}}),
    st.sampled_from([{"action": "accept"}, {"action": "decline"}, {"action": "cancel"}]),
    st.just({"action": "accept", "content": {"name": "Ada"}, "_meta": {"trace": "t"}}),
    st.sampled_from(
        [
            {"action": "maybe"},
            {"action": "decline", "content": {"name": "x"}},
            {"action": "accept", "content": 5},
            {"action": ["accept"]},
            {},
            5,
            "accept",
            None,
        ]
    ),
)
sample_results = st.one_of(
    st.builds(
        lambda text, stop: {
            "role": "assistant",
            "content": {"type": "text", "text": text},
            "model": "m-1",
            **({} if stop is None else {"stopReason": stop}),
        },
        texts,
        st.none() | st.sampled_from(["endTurn", 5]),
    ),
    st.sampled_from(
        [{"role": "assistant", "content": []}, {"role": 1, "content": "x", "model": "m"}, [], "x"]
    ),
)
roots_results = st.one_of(
    st.builds(
        lambda roots: {"roots": roots},
        st.lists(
            st.fixed_dictionaries(
                {"uri": st.sampled_from(["file:///a", "file:///b/c"])}, optional={"name": texts}
            ),
            max_size=3,
        ),
    ),
    st.sampled_from([{"roots": [{"uri": 5}]}, {"roots": "file:///a"}, {"roots": [None]}, {}, [], 5]),
)
errors = st.builds(
    lambda code, message: {"code": code, "message": message},
    st.sampled_from([-1, -32601, -32602, -32603, 0]),
    texts,
)


def result_strategy(method: Any) -> st.SearchStrategy[Any]:
    if method == ELICIT:
        return elicit_results
    if method == SAMPLE:
        return sample_results
    if method == ROOTS:
        return roots_results
    return answer_json


@st.composite
def legacy_answers(draw: st.DrawFn, method: Any) -> dict[str, Any]:
    """A 2025 client's reply to one request: ``{"result": ...}`` or ``{"error": ...}``."""
    if draw(st.integers(0, 7)) == 0:
        return {"error": draw(errors)}
    return {"result": draw(result_strategy(method))}


# -- outcomes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Error:
    code: int
    message: str
    data: Any = None


def leak_free(got: Any) -> None:
    """No traceback or Python repr of an exception reaches the client."""
    said = json.dumps(got.__dict__ if isinstance(got, Error) else got, default=str)
    assert "Traceback" not in said, said
    assert 'File "' not in said, said


def first_problem(requests: dict[str, Drawn], declared: frozenset[str]) -> Error | None:
    """What the engine must refuse this round with (server/gating.py ``gate``): the first entry
    that is no input request, or an elicitation of a declared mode that fails its checks
    (-32603 naming the key); else everything the client did not declare (-32021)."""
    missing: list[Need] = []
    for key, drawn in requests.items():
        if drawn.need is None:
            return Error(INTERNAL, f"input request {key!r}")
        if not drawn.need.atoms <= declared:
            missing.append(drawn.need)
        elif not drawn.vetted:
            return Error(INTERNAL, f"input request {key!r}")
    if missing:
        return Error(MISSING_CAPABILITY, "This request needs ", {"requiredCapabilities": merged(missing)})
    return None


def state_problem(state: str | None) -> Error | None:
    if state is None:
        return None
    try:
        state.encode()
    except UnicodeEncodeError:
        return Error(INTERNAL, "cannot be sent as JSON")
    if len(state) > 200_000:
        return Error(INTERNAL, "the handler keeps more in requestState than the server allows")
    return None


def matches(expect: Error, got: Any) -> bool:
    return (
        isinstance(got, Error)
        and got.code == expect.code
        and expect.message in got.message
        and (expect.data is None or got.data == expect.data)
    )


# -- the two connections -------------------------------------------------------------------------


@dataclass
class Served:
    app: Server
    url: str
    http: httpx.AsyncClient


async def modern_call(
    served: Served,
    tool: str,
    case: str,
    declared: frozenset[str],
    bare_form: bool,
    answer: Callable[[str, dict[str, Any]], Any],
) -> tuple[list[dict[str, Any]], Any]:
    """A 2026-07-28 call played by hand: each InputRequiredResult answered with ``answer(key,
    request)`` (``...`` leaves the key out). The results of every round, and the last outcome (a
    result or an :class:`Error`)."""
    call = RawCall(served.app, tool, {"case": case}, capabilities=capabilities(declared, bare_form))
    rounds: list[dict[str, Any]] = []
    responses: dict[str, Any] | None = None
    for _ in range(6):
        try:
            async with asyncio.timeout(WITHIN):
                result = await call.send(responses)
        except McpError as exc:
            return rounds, Error(exc.code, exc.message, exc.data)
        rounds.append(result)
        if result.get("resultType") != "input_required":
            return rounds, result
        asked = result.get("inputRequests") or {}
        responses = {key: answer(key, request) for key, request in asked.items()}
        responses = {key: value for key, value in responses.items() if value is not ...}
    raise AssertionError(f"more rounds than the handler has: {rounds}")


@dataclass
class LegacyOutcome:
    requests: list[dict[str, Any]]  # the server's requests, in order
    final: Any  # the result, or an Error


async def legacy_call(
    served: Served,
    tool: str,
    case: str,
    declared: frozenset[str],
    bare_form: bool,
    answer: Callable[[dict[str, Any]], dict[str, Any]],
) -> LegacyOutcome:
    """A 2025-11-25 session played by hand: each server request answered with ``answer(request)``
    (a ``result`` or ``error`` member); then a ``ping`` tool call on the same session works."""
    session = Session(served.http, served.url)
    await session.open(initialize(capabilities=capabilities(declared, bare_form)))
    call = session.request("tools/call", {"name": tool, "arguments": {"case": case}})
    requests: list[dict[str, Any]] = []
    final: Any = None
    async with asyncio.timeout(WITHIN), session.stream(call) as response:
        assert response.status_code == 200, await response.aread()
        async for message in messages(response):
            if "method" in message and "id" in message:
                requests.append(message)
                reply = {"jsonrpc": "2.0", "id": message["id"], **answer(message)}
                posted = await served.http.post(served.url, json=reply, headers=session.headers())
                # 400: the call already ended with another leg's failure, and this one was withdrawn.
                assert posted.status_code in (202, 400), posted.text
            elif message.get("id") == call["id"] and "method" not in message:
                final = message
    assert final is not None, requests
    assert "result" in final or "error" in final, final
    error = final.get("error")
    outcome = final["result"] if error is None else Error(error["code"], error["message"], error.get("data"))
    async with asyncio.timeout(WITHIN):
        ping = await session.post(session.request("tools/call", {"name": "ping", "arguments": {}}))
    assert "pong" in ping.text, ping.text
    return LegacyOutcome(requests, outcome)


async def still_works(served: Served) -> None:
    async with asyncio.timeout(WITHIN):
        result = await RawCall(served.app, "ping").send()
    assert result["content"][0]["text"] == "pong", result


@contextmanager
def running() -> Iterator[tuple[Served, Callable[[Coroutine[Any, Any, T]], T]]]:
    """The server over HTTP on its own thread, and an event loop for the test's side."""
    app = make_server()
    with InProcessServer(app.asgi()) as http, asyncio.Runner() as runner:
        client = httpx.AsyncClient(timeout=WITHIN)
        try:
            yield Served(app, http.base + "/mcp", client), runner.run
        finally:
            runner.run(client.aclose())


def tool_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result.get("content", []))


# -- the 2025 bridge's reading of an answer (server/legacy/bridge.py, wire/legacy.py) --------------


@dataclass(frozen=True)
class Leg:
    """What a 2025 answer makes of its leg: the inputResponses entry, or the failure it ends the
    call with (a tool error's text, or an Error)."""

    value: Any = None
    failure: str | Error | None = None


def read_leg(method: Any, reply: dict[str, Any]) -> Leg:
    if "error" in reply:
        error = reply["error"]
        return Leg(failure=f"the client answered {method} with error {error['code']}: {error['message']}")
    result = reply["result"]
    if method != ELICIT:
        return Leg(result) if isinstance(result, dict) else Leg(failure=f"the client's answer to {method}")
    bad = Error(INVALID_PARAMS, "the client's ElicitResult")
    if not isinstance(result, dict):
        return Leg(failure=bad)
    action = result.get("action")
    if not isinstance(action, str) or action not in ("accept", "decline", "cancel"):
        return Leg(failure=bad)
    content = result.get("content")
    if action != "accept":
        # A decline or cancel is one whatever content it carries (dropped), as at 2026-07-28.
        return Leg({"action": action})
    if content is not None and not isinstance(content, dict):
        return Leg(failure=bad)
    return Leg({"action": "accept"} if content is None else {"action": "accept", "content": content})


def failed_as(failure: str | Error, got: Any, tool: str) -> bool:
    if isinstance(failure, Error):
        return matches(failure, got)
    return (
        isinstance(got, dict)
        and got.get("isError") is True
        and tool_text(got).startswith(f"Tool '{tool}' could not finish: ")
        and failure in tool_text(got)
    )


# -- the property: low-level handlers ----------------------------------------------------------------


@dataclass
class LowExample:
    rounds: list[tuple[dict[str, Drawn], str | None, bool]]  # requests, state, allow_secrets=("password",)
    declared: frozenset[str]
    bare_form: bool
    modern_answers: dict[str, Any]  # by key (a key left out when absent), each round alike
    legacy_answers: dict[str, dict[str, Any]]  # by key: the reply to that key's request

    def plan(self) -> Plan:
        return Plan(
            [
                InputRequired(
                    {key: d.entry for key, d in requests.items()}, state, ("password",) if allow else ()
                )
                for requests, state, allow in self.rounds
            ]
        )


@st.composite
def low_examples(draw: st.DrawFn) -> LowExample:
    rounds = draw(
        st.lists(
            st.tuples(rounds_of_requests(), states, st.integers(0, 4).map(lambda n: n == 0)),
            min_size=1,
            max_size=3,
        )
    )
    declared = frozenset(draw(st.sets(st.sampled_from(ATOMS))))
    if "sampling" not in declared:
        declared -= {"tools", "context"}
    keys = {key: d for requests, _, _ in rounds for key, d in requests.items()}
    modern: dict[str, Any] = {}
    legacy: dict[str, dict[str, Any]] = {}
    for key, d in keys.items():
        if draw(st.integers(0, 5)):
            modern[key] = draw(result_strategy(d.method) | answer_json)
        legacy[key] = draw(legacy_answers(d.method))
    return LowExample(rounds, declared, draw(st.booleans()), modern, legacy)


def allowed(requests: dict[str, Drawn], allow: bool) -> dict[str, Drawn]:
    """With ``allow_secrets=("password",)`` the secret form passes, and every other form fails:
    ``allow_secrets`` naming a field the form does not have is a defect too (as in ctx.elicit)."""
    if not allow:
        return requests
    out = {}
    for key, d in requests.items():
        params = d.entry.get("params") if isinstance(d.entry, dict) else None
        if d.need is FORM_NEED and isinstance(params, dict) and isinstance(params.get("message"), str):
            d = Drawn(d.entry, d.need, params.get("requestedSchema") == SECRET_FORM)
        out[key] = d
    return out


async def check_low_modern(served: Served, example: LowExample) -> None:
    plan = example.plan()
    case = new_case(plan)

    def answer(key: str, request: dict[str, Any]) -> Any:
        return example.modern_answers.get(key, ...)

    rounds, got = await modern_call(served, "low", case, example.declared, example.bare_form, answer)
    leak_free(got)
    previous_state: str | None = None
    sent: dict[str, Any] | None = None
    for index, (requests, state, allow) in enumerate(example.rounds):
        requests = allowed(requests, allow)
        # What the handler saw on this round: the answers of the last, and its state.
        assert plan.seen[index][0] == index, plan.seen
        assert plan.seen[index][1] == (sent or {}), (plan.seen[index], sent)
        assert plan.seen[index][2] == previous_state, plan.seen[index]
        problem = first_problem(requests, example.declared) or state_problem(state)
        if problem is not None:
            assert matches(problem, got), (problem, got)
            assert len(rounds) == index, rounds
            event(f"low 2026: refused {problem.code}")
            return
        result = rounds[index]
        assert result.get("inputRequests", {}) == {key: d.sent_2026() for key, d in requests.items()}, result
        assert isinstance(result.get("requestState"), str), result
        sent = {key: example.modern_answers[key] for key in requests if key in example.modern_answers}
        previous_state = state
    assert isinstance(got, dict), got
    assert got.get("isError") is False, got
    assert tool_text(got) == f"done after {len(example.rounds)} rounds", got
    assert plan.seen[-1][1] == (sent or {}), plan.seen
    assert plan.seen[-1][2] == previous_state, plan.seen
    event("low 2026: done")


async def check_low_legacy(served: Served, example: LowExample) -> None:
    plan = example.plan()
    case = new_case(plan)
    # Which key a request answers: each entry's params are its own (its key in the message). A
    # roots request has no params to tell: there is at most one a round, and the rounds come in
    # turn, so the n-th roots/list asked is that of the n-th round that has one (another round's
    # key may well hold one too, with an answer of its own).
    by_params: dict[str, str] = {}
    roots_keys: list[str] = []
    for requests, _, _ in example.rounds:
        for key, d in requests.items():
            if d.need is not None and d.method == ROOTS:
                roots_keys.append(key)
            elif d.need is not None:
                by_params.setdefault(json.dumps(d.sent_2025(), sort_keys=True) + str(d.method), key)
    roots_in_turn = iter(roots_keys)

    def key_of(request: dict[str, Any]) -> str:
        if request["method"] == ROOTS:
            return next(roots_in_turn)
        params = {k: v for k, v in request["params"].items() if k != "elicitationId"}
        return by_params[json.dumps(params, sort_keys=True) + str(request["method"])]

    got = await legacy_call(
        served,
        "low",
        case,
        example.declared,
        example.bare_form,
        lambda request: example.legacy_answers[key_of(request)],
    )
    leak_free(got.final)
    previous_state: str | None = None
    answers: dict[str, Any] = {}
    consented: set[tuple[str, str]] = set()
    asked = iter(got.requests)
    for index, (requests, state, allow) in enumerate(example.rounds):
        requests = allowed(requests, allow)
        assert plan.seen[index][0] == index, plan.seen
        assert plan.seen[index][1] == answers, (plan.seen[index], answers)
        assert plan.seen[index][2] == previous_state, plan.seen[index]
        problem = first_problem(requests, example.declared) or state_problem(state)
        if problem is not None:
            assert matches(problem, got.final), (problem, got.final)
            assert next(asked, None) is None, got.requests
            event(f"low 2025: refused {problem.code}")
            return
        answers = {}
        failures: list[str | Error] = []
        for key, d in requests.items():
            place = d.url_place
            if place is not None and place in consented:
                answers[key] = {"action": "accept"}  # the bridge answers for the user
                continue
            request = next(asked, None)
            if request is None:
                break  # the round ended with an earlier leg's failure
            assert request["method"] == d.method, (request, d)
            params = dict(request["params"])
            if place is not None:
                assert re.fullmatch("[0-9a-f]{32}", params.pop("elicitationId")), request
            assert params == d.sent_2025(), (request, d)
            leg = read_leg(d.method, example.legacy_answers[key])
            if leg.failure is not None:
                failures.append(leg.failure)
                break
            answers[key] = leg.value
            if place is not None and leg.value.get("action") == "accept":
                consented.add(place)
        if failures:
            others = [
                read_leg(d.method, example.legacy_answers[k]).failure
                for k, d in requests.items()
                if d.url_place not in consented
            ]
            candidates = [f for f in others if f is not None]
            assert any(failed_as(f, got.final, "low") for f in candidates), (candidates, got.final)
            event("low 2025: a leg failed")
            return
        previous_state = state
    assert next(asked, None) is None, got.requests
    assert isinstance(got.final, dict), got.final
    assert got.final.get("isError") is False, got.final
    assert tool_text(got.final) == f"done after {len(example.rounds)} rounds", got.final
    assert plan.seen[-1][1] == answers, plan.seen
    assert plan.seen[-1][2] == previous_state, plan.seen
    event("low 2025: done")


def test_low_level_input_requests_are_checked_sent_as_written_and_answered_in_both_eras() -> None:
    with running() as (served, run):

        @fuzz_settings(EXAMPLES)
        @given(example=low_examples())
        def check(example: LowExample) -> None:
            run(check_low_modern(served, example))
            run(check_low_legacy(served, example))
            run(still_works(served))

        check()


# -- the property: ctx.sample, ctx.list_roots and ctx.elicit_url ----------------------------------------

BIG = 2**70  # no JSON form: ctx.sample fails in the handler (a tool error)


@dataclass(frozen=True)
class Step:
    """One question a high-level handler asks: ``kind`` and the arguments, the answers each era's
    client gives it."""

    kind: str  # "sample", "roots" or "url"
    args: dict[str, Any]
    modern: Any
    legacy: dict[str, Any]

    def need(self) -> Need:
        if self.kind == "roots":
            return ROOTS_NEED
        if self.kind == "url":
            return URL_NEED
        extra = self.args.get("extra", {})
        context = extra.get("includeContext", "none")
        return sampling_need(
            "tools" in extra or "toolChoice" in extra, context is not None and context != "none"
        )

    def failure(self) -> str | None:
        """Why the handler itself fails once its capability is there (a tool error), if it does."""
        if self.kind == "url" and (
            not isinstance(self.args["message"], str) or self.args["url"] not in GOOD_URLS
        ):
            return GENERIC_TOOL
        if self.kind == "sample" and BIG in (
            self.args["max_tokens"],
            self.args.get("extra", {}).get("temperature"),
        ):
            return GENERIC_TOOL
        return None

    def request(self) -> dict[str, Any]:
        """What the client is asked."""
        if self.kind == "roots":
            return {"method": ROOTS, "params": {}}
        if self.kind == "url":
            return {"method": ELICIT, "params": {"mode": "url", **self.args}}
        messages = self.args["messages"]
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params = {"messages": messages, "maxTokens": self.args["max_tokens"], **self.args.get("extra", {})}
        if "system_prompt" in self.args:
            params["systemPrompt"] = self.args["system_prompt"]
        return {"method": SAMPLE, "params": params}

    def call_args(self) -> dict[str, Any]:
        if self.kind != "sample":
            return self.args
        args = {k: v for k, v in self.args.items() if k != "extra"}
        return {**args, **self.args.get("extra", {})}


def read_answer(kind: str, value: Any) -> Any:
    """What the handler gets from a (2026 or 2025, once read) answer; Error for a malformed one."""
    if not isinstance(value, dict):
        return Error(
            INVALID_PARAMS, "must be an object (an ElicitResult, CreateMessageResult or ListRootsResult)"
        )
    if kind == "sample":
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("role"), str)
            or "content" not in value
            or not isinstance(value.get("model"), str)
        ):
            return Error(INVALID_PARAMS, "must be a CreateMessageResult with role, content and model")
        stop = value.get("stopReason")
        return [value["role"], value["content"], value["model"], stop if isinstance(stop, str) else None]
    if kind == "roots":
        roots = value.get("roots") if isinstance(value, dict) else None
        if not isinstance(roots, list):
            return Error(INVALID_PARAMS, "must be a ListRootsResult with a roots list")
        out = []
        for index, root in enumerate(roots):
            if not isinstance(root, dict) or not isinstance(root.get("uri"), str):
                return Error(INVALID_PARAMS, f".roots[{index}] must have a string uri")
            name = root.get("name")
            out.append([root["uri"], name if isinstance(name, str) else None])
        return out
    if not isinstance(value, dict):
        return Error(INVALID_PARAMS, "must be an object")
    action = value.get("action")
    if not isinstance(action, str) or action not in ("accept", "decline", "cancel"):
        return Error(INVALID_PARAMS, "action must be one of accept, decline, cancel")
    content = value.get("content")
    if action == "accept" and content is not None and not isinstance(content, dict):
        return Error(INVALID_PARAMS, "content must be an object")
    return action


sample_args = st.fixed_dictionaries(
    {
        "messages": texts | st.lists(answer_json, max_size=2),
        "max_tokens": st.integers(-5, 5000) | st.sampled_from([BIG, "5"]),
    },
    optional={
        "system_prompt": texts,
        "extra": st.fixed_dictionaries(
            {},
            optional={
                "includeContext": st.sampled_from(["none", "thisServer", "allServers", None]),
                "tools": st.just([{"name": "t", "inputSchema": {"type": "object"}}]),
                "toolChoice": st.just({"mode": "none"}),
                "temperature": st.sampled_from([0.5, BIG]),
                "stopSequences": st.lists(texts, max_size=2),
            },
        ),
    },
)
url_args = st.fixed_dictionaries(
    {"message": texts | st.sampled_from([5, None]), "url": st.sampled_from(GOOD_URLS + BAD_URLS)}
)


@st.composite
def steps(draw: st.DrawFn) -> Step:
    kind = draw(st.sampled_from(["sample", "roots", "url"]))
    args: dict[str, Any] = draw(
        sample_args if kind == "sample" else url_args if kind == "url" else st.just({})
    )
    strategy = result_strategy({"sample": SAMPLE, "roots": ROOTS, "url": ELICIT}[kind])
    legacy_method = {"sample": SAMPLE, "roots": ROOTS, "url": ELICIT}[kind]
    # (A null answer counts as none: the question is asked again, which this client would do forever.)
    return Step(
        kind, args, draw(strategy.filter(lambda v: v is not None)), draw(legacy_answers(legacy_method))
    )


@st.composite
def high_examples(draw: st.DrawFn) -> tuple[list[Step], frozenset[str], bool]:
    declared = frozenset(draw(st.sets(st.sampled_from(ATOMS))))
    if "sampling" not in declared:
        declared -= {"tools", "context"}
    return draw(st.lists(steps(), min_size=1, max_size=3)), declared, draw(st.booleans())


def high_expected(
    plan: list[Step], declared: frozenset[str], answers: list[Any]
) -> tuple[int, Error | str | list[Any]]:
    """How many questions go out, and the outcome: an Error, a tool error's text, or what the
    handler returns. ``answers``: what each question's answer reads as (Error when malformed)."""
    said: list[Any] = []
    for index, step in enumerate(plan):
        need = step.need()
        if not need.atoms <= declared:
            return index, Error(
                MISSING_CAPABILITY, "This request needs ", {"requiredCapabilities": need.required}
            )
        failure = step.failure()
        if failure is not None:
            return index, failure
        answer = answers[index]
        if isinstance(answer, Error) or (step.kind != "url" and isinstance(answer, str)):
            return index + 1, answer  # a malformed answer, or (a string) a 2025 leg's failure
        if step.kind == "url" and answer not in ("accept", "decline", "cancel"):
            return index + 1, answer
        said.append(answer)
    return len(plan), said


def outcome_is(expect: Error | str | list[Any], got: Any) -> bool:
    if isinstance(expect, Error):
        return matches(expect, got)
    if not isinstance(got, dict):
        return False
    if isinstance(expect, str):
        return got.get("isError") is True and tool_text(got) == expect
    return got.get("isError") is False and json.loads(tool_text(got)) == json.loads(json.dumps(expect))


async def check_high(served: Served, plan: list[Step], declared: frozenset[str], bare_form: bool) -> None:
    case = new_case(Plan(steps=[(step.kind, step.call_args()) for step in plan]))
    # 2026-07-28: one question a round, answered with what the step says.
    asked: list[tuple[str, dict[str, Any]]] = []

    def answer(key: str, request: dict[str, Any]) -> Any:
        asked.append((key, request))
        return plan[len(asked) - 1].modern

    _, got = await modern_call(served, "high", case, declared, bare_form, answer)
    leak_free(got)
    count, expect = high_expected(plan, declared, [read_answer(step.kind, step.modern) for step in plan])
    assert [request for _, request in asked] == [step.request() for step in plan[:count]], asked
    assert outcome_is(expect, got), (expect, got)
    if isinstance(expect, Error) and expect.code == INVALID_PARAMS:
        assert f"inputResponses[{asked[-1][0]!r}]" in got.message, got
    event(f"high 2026: {type(expect).__name__}")

    # 2025-11-25: each question a request; a URL the user accepted is not asked again (the
    # bridge answers accept for the user).
    consented: set[tuple[Any, Any]] = set()
    legs: list[Any] = []
    to_send: list[Step] = []
    for step in plan:
        place = (step.args["message"], step.args["url"]) if step.kind == "url" else None
        if place is not None and place in consented:
            legs.append("accept")
            continue
        to_send.append(step)
        leg = read_leg(step.request()["method"], step.legacy)
        legs.append(read_answer(step.kind, leg.value) if leg.failure is None else leg.failure)
        if place is not None and legs[-1] == "accept":
            consented.add(place)
    _, expect = high_expected(plan, declared, legs)
    received: list[dict[str, Any]] = []

    def legacy_answer(request: dict[str, Any]) -> dict[str, Any]:
        received.append(request)
        return to_send[len(received) - 1].legacy

    outcome = await legacy_call(served, "high", case, declared, bare_form, legacy_answer)
    leak_free(outcome.final)
    for request, step in zip(received, to_send, strict=False):
        params = dict(request["params"])
        if step.kind == "url":
            assert re.fullmatch("[0-9a-f]{32}", params.pop("elicitationId")), request
        assert {"method": request["method"], "params": params} == step.request(), (request, step)
    if isinstance(expect, str) and expect != GENERIC_TOOL:
        assert failed_as(expect, outcome.final, "high"), (expect, outcome.final)
    else:
        assert outcome_is(expect, outcome.final), (expect, outcome.final)
    event(f"high 2025: {type(expect).__name__}")


def test_sampling_roots_and_url_questions_are_gated_sent_and_read_alike_in_both_eras() -> None:
    with running() as (served, run):

        @fuzz_settings(EXAMPLES)
        @given(example=high_examples())
        def check(example: tuple[list[Step], frozenset[str], bool]) -> None:
            plan, declared, bare_form = example
            run(check_high(served, plan, declared, bare_form))
            run(still_works(served))

        check()


# -- the bugs -------------------------------------------------------------------------------------------


def outcomes_of(rounds: list[InputRequired], caps: frozenset[str]) -> tuple[Any, Any]:
    """The outcome of a low-level handler returning ``rounds`` (then a text), at 2026-07-28 and
    at 2025-11-25 (every question answered with an empty object; ``roots`` answered as such)."""
    with running() as (served, run):
        modern_case = new_case(Plan(list(rounds)))
        _, modern = run(
            modern_call(served, "low", modern_case, caps, False, lambda key, request: {"roots": []})
        )
        legacy_case = new_case(Plan(list(rounds)))
        legacy = run(
            legacy_call(served, "low", legacy_case, caps, False, lambda request: {"result": {"roots": []}})
        )
        run(still_works(served))
        return modern, legacy.final


@pytest.mark.parametrize("method", [ELICIT, SAMPLE, ROOTS])
@pytest.mark.parametrize("params", [["a", "list"], "a string", 5.0], ids=["list", "str", "float"])
def test_bug_1_an_elicitation_whose_params_is_no_object_is_a_defect_naming_its_key(
    method: str, params: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Bug 1: ``gating.gate`` (server/gating.py) vets a declared elicitation with
    ``vet_elicitation(key, ..., entry.get("params") or {}, ...)``: params that are truthy but no
    object (a list, a string, a number) reach ``params.get("message")``, which raises
    AttributeError. It escapes the engine as an unexpected failure: the server logs a traceback
    ("unexpected failure handling tools/call") and the client, in both eras, gets the generic
    ``-32603 Internal error: the server failed while handling the request``, which says nothing
    of the handler's mistake, where every other defective input request is a -32603 naming its
    key ("input request 'k' has no message (a string)"), as server/lowlevel.py and need_of
    promise. (Sampling and roots requests with such params were sent as written: an
    ``inputRequests`` entry the schema does not allow, a JSON-RPC request with params of no
    object; they are the same defect now.)"""
    request = {"method": method, "params": params}
    modern, legacy = outcomes_of([InputRequired({"k": request})], frozenset({"form", "sampling", "roots"}))
    for got in (modern, legacy):
        assert isinstance(got, Error), got
        assert got.code == INTERNAL, got
        assert "input request 'k'" in got.message, got
    assert "unexpected failure" not in caplog.text, caplog.text


def test_bug_2_a_key_that_is_no_text_fails_alike_in_both_eras() -> None:
    """Bug 2: ``InputRequired`` (server/lowlevel.py) checks that ``input_requests`` is a dict but
    not that its keys are text, as the wire's ``inputRequests`` map needs. At 2025-11-25 the
    bridge never writes the keys, so a handler keyed by ``1`` works (it reads its answer under
    ``1``); at 2026-07-28 the same handler fails only when the result is encoded, with ``-32603
    the handler of tools/call 'low' returned a value that cannot be sent as JSON`` and a
    traceback in the log. A handler tested on one era breaks on the other; the mistake should
    be refused where it is made, in both (a TypeError from ``InputRequired``, as for ``state``)."""
    with pytest.raises(TypeError, match=r"^InputRequired.input_requests keys must be str, not int$"):
        InputRequired({1: {"method": ROOTS}})  # type: ignore[dict-item]
