"""The hostile cases: hand-written ones with exact expectations, and hypothesis-generated ones.

See :mod:`hostile` for how each exchange is judged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hostile import (
    INVALID_STATE,
    Case,
    StdioPeer,
    Tally,
    body_of,
    chunked_bytes,
    deep_text,
    exchange,
    flip,
    foreign_token,
    http_bytes,
    judge_http,
    judge_stdio,
    nested,
    order_params,
    reencode_standard,
)
from httpclient import META, Instance
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

PARSE, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
HEADER_MISMATCH, MISSING_CAPABILITY, BAD_VERSION = -32020, -32021, -32022
MIB = 1024 * 1024


@dataclass
class Live:
    """States from real flows on the server under attack, gathered before the cases run."""

    plain: str  # first round of order(item="h-plain"), anonymous
    alice: str  # first round of order(item="h-alice") by Bearer alice
    done: str  # the state of order(item="h-done") whose retry completed with value "V1"
    done_result: dict[str, Any]
    kid: str  # the sealing key id now


async def gather_live(instance: Instance) -> Live:
    import orjson

    async def call(params: dict[str, Any], extra: list[tuple[str, str]] | None = None) -> dict[str, Any]:
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        response = await instance.post(body, name=str(params["name"]), extra=extra or [], timeout=10)
        result = response.json()["result"]
        assert isinstance(result, dict)
        return result

    plain = (await call(order_params("h-plain")))["requestState"]
    alice = (await call(order_params("h-alice"), [("Authorization", "Bearer alice")]))["requestState"]
    done = (await call(order_params("h-done")))["requestState"]
    done_result = await call(order_params("h-done", inputResponses=answer("V1"), requestState=done))
    import base64

    kid = base64.urlsafe_b64decode(plain[3:] + "=" * (-len(plain[3:]) % 4))[:4].hex()
    return Live(plain, alice, done, done_result, kid)


def answer(value: str) -> dict[str, Any]:
    return {"pick": {"action": "accept", "content": {"value": value}}}


def _same_result(expected: dict[str, Any]) -> Callable[[Any], str]:
    def check(result: Any) -> str:
        if not isinstance(result, dict):
            return "not a result object"
        strip = {k: v for k, v in result.items() if k != "_meta"}
        want = {k: v for k, v in expected.items() if k != "_meta"}
        return "" if strip == want else "a different answer than the first time"

    return check


def _tool_error(result: Any) -> str:
    return (
        "" if isinstance(result, dict) and result.get("isError") is True else "expected a tool error result"
    )


def _input_required(result: Any) -> str:
    ok = isinstance(result, dict) and result.get("resultType") == "input_required"
    return "" if ok else "expected input_required"


def hand_cases(port: int, live: Live) -> list[Case]:
    cases: list[Case] = []

    def add(
        group: str, name: str, raw: bytes, status: int | None, code: int | None = None, **kw: Any
    ) -> None:
        cases.append(Case(group, name, raw, status, code, **kw))

    def req(params: Any, *, method: str = "tools/call", name: str | None = "order", **kw: Any) -> bytes:
        return http_bytes(port, body_of(method, params), method=method, name=name, **kw)

    # -- malformed JSON and wrong envelopes
    for label, body in [
        ("empty body", b""),
        ("truncated object", b'{"jsonrpc":"2.0","id":1,'),
        ("bare word", b"nul"),
        ("invalid UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}'),
        ("trailing garbage", b'{"jsonrpc":"2.0","id":1,"method":"server/discover"} xx'),
        ("NaN literal", b'{"jsonrpc":"2.0","id":NaN,"method":"x"}'),
        ("single quotes", b"{'jsonrpc':'2.0'}"),
        ("a BOM", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}'),
    ]:
        add("malformed JSON", label, http_bytes(port, body), 400, PARSE)
    for label, body in [
        ("batch", b'[{"jsonrpc":"2.0","id":1,"method":"server/discover"}]'),
        ("a string", b'"tools/call"'),
        ("a number", b"42"),
        ("null", b"null"),
        ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{}}'),
        ("no jsonrpc", b'{"id":1,"method":"tools/call","params":{}}'),
        ("method a number", b'{"jsonrpc":"2.0","id":1,"method":7,"params":{}}'),
        ("id a bool", b'{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{}}'),
        ("id a float", b'{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{}}'),
        ("id an object", b'{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{}}'),
        ("params an array", b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}'),
        ("params a string", b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}'),
        ("a response", b'{"jsonrpc":"2.0","id":1,"result":{}}'),
    ]:
        add("wrong types", label, http_bytes(port, body), 400, INVALID_REQUEST)

    # -- wrong types inside params
    add(
        "wrong types",
        "name a number",
        req({"_meta": META, "name": 5, "arguments": {}}, name=None),
        400,
        INVALID_PARAMS,
    )
    add(
        "wrong types",
        "arguments a list",
        req({"_meta": META, "name": "order", "arguments": [1]}),
        400,
        INVALID_PARAMS,
    )
    add(
        "wrong types",
        "item a number",
        req(order_params() | {"arguments": {"item": 5}}),
        200,
        check=_tool_error,
    )
    add(
        "wrong types",
        "unknown argument",
        req(order_params() | {"arguments": {"item": "x", "z": 1}}),
        200,
        check=_tool_error,
    )
    add(
        "wrong types",
        "_meta a list",
        req({"_meta": [1], "name": "order", "arguments": {"item": "x"}}),
        400,
        INVALID_PARAMS,
    )
    add("wrong types", "no _meta", req({"name": "order", "arguments": {"item": "x"}}), 400, INVALID_PARAMS)
    caps_wrong = dict(META) | {"io.modelcontextprotocol/clientCapabilities": "all"}
    add(
        "wrong types",
        "capabilities a string",
        req({"_meta": caps_wrong, "name": "order", "arguments": {"item": "x"}}),
        400,
        INVALID_PARAMS,
    )
    no_form = dict(META) | {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}}}
    add(
        "wrong types",
        "no form capability",
        req({"_meta": no_form, "name": "order", "arguments": {"item": "x"}}),
        400,
        MISSING_CAPABILITY,
    )
    add(
        "wrong types",
        "inputResponses a list",
        req(order_params(inputResponses=[1], requestState=live.plain)),
        400,
        INVALID_PARAMS,
    )
    add(
        "wrong types",
        "inputResponses entry a string",
        req(order_params(inputResponses={"pick": "yes"}, requestState=live.plain)),
        400,
        INVALID_PARAMS,
    )
    bad_action = {"pick": {"action": "maybe"}}
    add(
        "wrong types",
        "unknown action",
        req(order_params("h-plain", inputResponses=bad_action, requestState=live.plain)),
        400,
        INVALID_PARAMS,
    )
    add("wrong types", "requestState a number", req(order_params(requestState=42)), 400, INVALID_PARAMS)
    add(
        "wrong types", "requestState an object", req(order_params(requestState={"a": 1})), 400, INVALID_PARAMS
    )

    # -- deep nesting
    add("deep nesting", "100k brackets", http_bytes(port, deep_text(100_000)), 400, PARSE)
    add(
        "deep nesting",
        "arguments 300 deep (accepted)",
        req({"_meta": META, "name": "keep", "arguments": {"data": {"x": nested(300)}}}, name="keep"),
        200,
        check=_input_required,
    )
    add(
        "deep nesting",
        "arguments 900 deep",
        req({"_meta": META, "name": "keep", "arguments": {"data": {"x": nested(900)}}}, name="keep"),
        400,
        INVALID_PARAMS,
    )
    add(
        "deep nesting",
        "unknown _meta key 900 deep (ignored)",
        req({"_meta": dict(META) | {"x": nested(900)}, "name": "order", "arguments": {"item": "x"}}),
        200,
        check=_input_required,
    )
    deep_caps = dict(META) | {"io.modelcontextprotocol/clientCapabilities": {"elicitation": nested(900)}}
    add(
        "deep nesting",
        "capabilities 900 deep (declare nothing)",
        req({"_meta": deep_caps, "name": "order", "arguments": {"item": "x"}}),
        400,
        MISSING_CAPABILITY,
    )
    add(
        "deep nesting",
        "inputResponses 900 deep",
        req(
            order_params(
                "h-plain",
                inputResponses={"pick": {"action": "accept", "content": {"value": nested(900)}}},
                requestState=live.plain,
            )
        ),
        400,
        INVALID_PARAMS,
    )

    # -- huge strings and bodies
    add(
        "huge",
        "3.5 MiB item (under the limit)",
        req(order_params("i" * (7 * MIB // 2))),
        200,
        check=_input_required,
    )
    add("huge", "5 MiB body", req(order_params("i" * (5 * MIB))), 413, INVALID_REQUEST)
    add("huge", "20 MiB body with Content-Length", req(order_params("i" * (20 * MIB))), 413, INVALID_REQUEST)
    add("huge", "40 MiB chunked body", chunked_bytes(port, 40 * MIB), 413, INVALID_REQUEST)
    add(
        "huge",
        "Content-Length 10 GB declared",
        http_bytes(port, b"{}", content_length=10**10),
        413,
        INVALID_REQUEST,
    )
    add("huge", "60 KiB Mcp-Name header", req(order_params(), name="n" * 60_000), 400, HEADER_MISMATCH)
    add(
        "huge",
        "300 KiB requestState",
        req(order_params(requestState="v1." + "A" * 300_000)),
        400,
        INVALID_PARAMS,
        message=INVALID_STATE,
    )

    # -- unknown methods
    for method in ["tools/delete", "foo", "", "notifications/initialized", "rpc.discover", "x" * 5000]:
        add(
            "unknown methods",
            f"method {method[:24]!r}",
            req({"_meta": META}, method=method, name=None),
            404,
            NOT_FOUND,
        )

    # -- headers against the body
    add(
        "headers",
        "Mcp-Method differs",
        http_bytes(port, body_of("tools/call", order_params()), method="tools/list"),
        400,
        HEADER_MISMATCH,
    )
    add(
        "headers",
        "Mcp-Method missing",
        http_bytes(port, body_of("tools/call", order_params()), method=None),
        400,
        HEADER_MISMATCH,
    )
    add(
        "headers",
        "Mcp-Name differs",
        http_bytes(port, body_of("tools/call", order_params()), name="note"),
        400,
        HEADER_MISMATCH,
    )
    add(
        "headers",
        "Mcp-Name missing",
        http_bytes(port, body_of("tools/call", order_params()), name=None),
        400,
        HEADER_MISMATCH,
    )
    add(
        "headers",
        "Mcp-Name twice",
        http_bytes(port, body_of("tools/call", order_params()), headers=[("Mcp-Name", "order")]),
        400,
        HEADER_MISMATCH,
    )
    add(
        "headers",
        "bad base64 Mcp-Name",
        http_bytes(port, body_of("tools/call", order_params()), name="=?base64?***?="),
        400,
        HEADER_MISMATCH,
    )
    add(
        "headers",
        "version header differs",
        http_bytes(port, body_of("tools/call", order_params()), version="2025-11-25"),
        400,
        HEADER_MISMATCH,
    )
    old = dict(META) | {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    add(
        "headers",
        "unsupported version",
        http_bytes(port, body_of("tools/call", order_params() | {"_meta": old}), version="2099-01-01"),
        400,
        BAD_VERSION,
    )
    add(
        "headers",
        "Content-Type text/plain",
        http_bytes(port, body_of("tools/call", order_params()), content_type="text/plain"),
        415,
        INVALID_REQUEST,
    )
    add(
        "headers",
        "no Content-Type",
        http_bytes(port, body_of("tools/call", order_params()), content_type=""),
        415,
        INVALID_REQUEST,
    )
    add(
        "headers",
        "Accept text/html",
        http_bytes(port, body_of("tools/call", order_params()), accept="text/html"),
        406,
        INVALID_REQUEST,
    )
    add(
        "headers",
        "Origin elsewhere",
        http_bytes(port, body_of("tools/call", order_params()), headers=[("Origin", "https://evil.example")]),
        403,
        INVALID_REQUEST,
    )
    # GET and DELETE belong to 2025-11-25 sessions (the stream, the end of a session): without a
    # session id they are 400, with one the server never minted 404 (which makes clients
    # re-initialize). No other verb is served.
    for verb in ["GET", "DELETE"]:
        add("headers", f"{verb} without a session", http_bytes(port, b"", verb=verb), 400, INVALID_REQUEST)
        unknown = [("Mcp-Session-Id", "never-minted-0123456789abcdef")]
        add(
            "headers",
            f"{verb} of an unknown session",
            http_bytes(port, b"", verb=verb, headers=unknown),
            404,
            INVALID_REQUEST,
        )
    for verb in ["PUT", "OPTIONS"]:
        add("headers", f"{verb}", http_bytes(port, b"", verb=verb), 405, INVALID_REQUEST)
    add(
        "headers", "another path", http_bytes(port, body_of("tools/call", order_params()), path="/other"), 404
    )
    add(
        "headers",
        "a notification",
        http_bytes(
            port,
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}',
            method="notifications/cancelled",
            name=None,
        ),
        202,
    )

    # -- requestState abuse
    def state_case(
        name: str, params: dict[str, Any], *, tool: str = "order", extra: list[tuple[str, str]] | None = None
    ) -> None:
        add(
            "requestState",
            name,
            http_bytes(port, body_of("tools/call", params), name=tool, headers=extra),
            400,
            INVALID_PARAMS,
            message=INVALID_STATE,
        )

    v = answer("W")
    state_case("truncated by 8", order_params("h-plain", inputResponses=v, requestState=live.plain[:-8]))
    state_case("truncated to 12", order_params("h-plain", inputResponses=v, requestState=live.plain[:12]))
    state_case(
        "re-encoded as padded base64",
        order_params("h-plain", inputResponses=v, requestState=reencode_standard(live.plain)),
    )
    state_case(
        "one character changed", order_params("h-plain", inputResponses=v, requestState=flip(live.plain))
    )
    state_case("empty", order_params("h-plain", inputResponses=v, requestState=""))
    state_case("v2 prefix", order_params("h-plain", inputResponses=v, requestState="v2" + live.plain[2:]))
    note = {
        "_meta": META,
        "name": "note",
        "arguments": {"item": "h-plain"},
        "inputResponses": v,
        "requestState": live.plain,
    }
    state_case("swapped between tools", note, tool="note")
    state_case(
        "swapped between arguments", order_params("h-other", inputResponses=v, requestState=live.plain)
    )
    state_case(
        "swapped between users (bob)",
        order_params("h-alice", inputResponses=v, requestState=live.alice),
        extra=[("Authorization", "Bearer bob")],
    )
    state_case(
        "swapped between users (anonymous)",
        order_params("h-alice", inputResponses=v, requestState=live.alice),
    )
    state_case(
        "replayed with another answer after use",
        order_params("h-done", inputResponses=answer("V2"), requestState=live.done),
    )
    state_case(
        "from another key ring",
        order_params("h-plain", inputResponses=v, requestState=foreign_token("h-plain")),
    )
    state_case(
        "another ring, our key id",
        order_params(
            "h-plain", inputResponses=v, requestState=foreign_token("h-plain", same_kid_as=live.kid)
        ),
    )
    add(
        "requestState",
        "replayed with the same answer: the same answer back",
        http_bytes(
            port,
            body_of(
                "tools/call", order_params("h-done", inputResponses=answer("V1"), requestState=live.done)
            ),
        ),
        200,
        check=_same_result(live.done_result),
    )
    add(
        "requestState",
        "the owner still gets through",
        http_bytes(
            port,
            body_of(
                "tools/call", order_params("h-alice", inputResponses=answer("A1"), requestState=live.alice)
            ),
            headers=[("Authorization", "Bearer alice")],
        ),
        200,
    )
    return cases


def run_hand(port: int, cases: list[Case], tally: Tally) -> None:
    from hostile import run_case

    for case in cases:
        run_case(port, case, tally)


# ------------------------------------------------------------------------------ generated cases

_DELETE = object()
_PATHS: list[tuple[str, ...]] = [
    ("jsonrpc",),
    ("id",),
    ("method",),
    ("params",),
    ("params", "name"),
    ("params", "arguments"),
    ("params", "arguments", "item"),
    ("params", "_meta"),
    ("params", "_meta", "io.modelcontextprotocol/protocolVersion"),
    ("params", "_meta", "io.modelcontextprotocol/clientCapabilities"),
    ("params", "_meta", "io.modelcontextprotocol/clientCapabilities", "elicitation"),
    ("params", "inputResponses"),
    ("params", "inputResponses", "pick"),
    ("params", "inputResponses", "pick", "action"),
    ("params", "inputResponses", "pick", "content"),
    ("params", "inputResponses", "pick", "content", "value"),
    ("params", "requestState"),
    ("params", "cursor"),
]

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=16,
)


def _mutate(template: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(json.dumps(template))
    node = message
    for key in path[:-1]:
        child = node.get(key) if isinstance(node, dict) else None
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    if value is _DELETE:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return message


def _headers_for(message: Any) -> tuple[str, str | None]:
    if not isinstance(message, dict):
        return "tools/call", "order"
    method = message.get("method")
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    method_h = (
        method if isinstance(method, str) and method.isascii() and method.isprintable() else "tools/call"
    )
    name_h = (
        name
        if isinstance(name, str) and name.isascii() and name.isprintable() and name.strip() == name
        else None
    )
    return method_h, name_h


def generated_bodies() -> st.SearchStrategy[tuple[str, bytes]]:
    """(kind, body) pairs: random bytes, or a valid request with one part replaced or removed."""
    raw = st.binary(max_size=300).map(lambda b: ("random bytes", b))
    texts = st.text(max_size=200).map(lambda t: ("random text", t.encode("utf-8", "surrogatepass")))

    @st.composite
    def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
        retry = draw(st.booleans())
        template = {
            "jsonrpc": "2.0",
            "id": draw(st.integers(1, 10**6)),
            "method": "tools/call",
            "params": order_params(
                "g", **({"inputResponses": answer("x"), "requestState": "v1.AAAA"} if retry else {})
            ),
        }
        path = draw(st.sampled_from(_PATHS))
        value = draw(json_values | st.just(_DELETE))
        message = _mutate(template, path, value)
        return f"mutated {'.'.join(path)}", json.dumps(message).encode()

    return st.one_of(raw, texts, mutated(), mutated(), mutated())


def forged_state_accepted(body: bytes, result: Any) -> bool:
    """A generated request that carries a ``requestState`` carries a forged one (``v1.AAAA``, or
    whatever string replaced it): such a request must never complete a tool call."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return False
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict) or not isinstance(params.get("requestState"), str):
        return False
    return (
        isinstance(result, dict)
        and "content" in result  # a tools/call result (a mutated method may list tools instead)
        and result.get("resultType", "complete") == "complete"
        and not result.get("isError")
    )


def run_generated_http(port: int, examples: int, tally: Tally, seed_value: int) -> None:
    header_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(
        case=generated_bodies(),
        header=st.one_of(
            st.just(""), st.sampled_from(["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Accept"])
        ),
        header_value=header_text,
    )
    def probe(case: tuple[str, bytes], header: str, header_value: str) -> None:
        kind, body = case
        try:
            message = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            message = None
        method, name = _headers_for(message)
        headers: dict[str, Any] = {"method": method, "name": name}
        group = f"generated ({kind.split(' ')[0]})"
        if header == "MCP-Protocol-Version":
            headers["version"] = header_value
        elif header == "Mcp-Method":
            headers["method"] = header_value
        elif header == "Mcp-Name":
            headers["name"] = header_value
        elif header == "Accept":
            headers["accept"] = header_value
        if header:
            group = "generated (headers)"
        request_id = message.get("id") if isinstance(message, dict) else None
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            request_id = None
        outcome = exchange(port, http_bytes(port, body, **headers))
        verdict, problem, _, _, result = judge_http(outcome, request_id)
        if verdict == "accepted" and forged_state_accepted(body, result):
            verdict, problem = "unexpected", "a flow completed on a forged requestState"
        tally.add(group, verdict, f"{kind}: {problem}" if problem else "")

    seed(seed_value)(probe)()


# ---------------------------------------------------------------------------------- stdio cases


def stdio_hand_lines() -> list[tuple[str, bytes]]:
    lines: list[tuple[str, bytes]] = [
        ("empty line", b""),
        ("spaces", b"   "),
        ("truncated object", b'{"jsonrpc":"2.0","id":1,'),
        ("invalid UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"\xff"}'),
        ("batch", b'[{"jsonrpc":"2.0","id":1,"method":"server/discover"}]'),
        ("a number", b"42"),
        ("id a float", b'{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{}}'),
        ("a response", b'{"jsonrpc":"2.0","id":1,"result":{}}'),
        ("unknown method", body_of("foo/bar", {"_meta": META})),
        ("no _meta", body_of("tools/call", {"name": "order", "arguments": {"item": "x"}})),
        ("100k brackets", deep_text(100_000)),
        (
            "arguments 900 deep",
            body_of("tools/call", {"_meta": META, "name": "keep", "arguments": {"data": {"x": nested(900)}}}),
        ),
        (
            "truncated requestState",
            body_of("tools/call", order_params("x", inputResponses=answer("v"), requestState="v1.AAAA")),
        ),
        (
            "foreign requestState",
            body_of(
                "tools/call", order_params("x", inputResponses=answer("v"), requestState=foreign_token("x"))
            ),
        ),
        ("a notification", b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}'),
        ("3.5 MiB item", body_of("tools/call", order_params("i" * (7 * MIB // 2)))),
        ("5 MiB line (over the limit)", body_of("tools/call", order_params("i" * (5 * MIB)))),
        ("40 MiB line", b'{"x":"' + b"a" * (40 * MIB) + b'"}'),
        (
            "duplicate id in flight",
            body_of("tools/call", {"_meta": META, "name": "slow", "arguments": {"seconds": 0.2}}, rid="dup")
            + b"\n"
            + body_of(
                "tools/call", {"_meta": META, "name": "slow", "arguments": {"seconds": 0.2}}, rid="dup"
            ),
        ),
    ]
    return lines


def run_stdio(peer: StdioPeer, examples: int, tally: Tally, seed_value: int) -> None:
    for name, line in stdio_hand_lines():
        duplicate = name == "duplicate id in flight"
        answers, problem = peer.roundtrip(line, within=30.0)
        if duplicate and not problem:
            ok = len(answers) == 2 and sum(1 for a in answers if isinstance(a.get("error"), dict)) == 1
            tally.add(
                "stdio (hand-written)",
                "refused" if ok else "unexpected",
                "" if ok else f"{name}: {answers!r:.120}",
            )
            continue
        verdict, why = judge_stdio(line, answers, problem)
        tally.add("stdio (hand-written)", verdict, f"{name}: {why}" if why else "")

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=generated_bodies())
    def probe(case: tuple[str, bytes]) -> None:
        kind, body = case
        line = body.replace(b"\n", b" ").replace(b"\r", b" ")
        answers, problem = peer.roundtrip(line)
        verdict, why = judge_stdio(line, answers, problem)
        if verdict == "accepted" and answers and forged_state_accepted(line, answers[0].get("result")):
            verdict, why = "unexpected", "a flow completed on a forged requestState"
        tally.add(f"stdio generated ({kind.split(' ')[0]})", verdict, f"{kind}: {why}" if why else "")

    seed(seed_value)(probe)()
