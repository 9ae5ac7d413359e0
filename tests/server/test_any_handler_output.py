"""What handlers give back, in both protocol eras: a tool, a prompt and a resource handler that
return anything a Python author might return, or raise anything, after asking a question or not.

Hypothesis draws one behaviour per example (as JSON, so that a server in another process can play
it too): maybe a progress report, maybe a confirm-only ``ctx.elicit`` (its message possibly text
that JSON cannot carry, answered accept or decline), then a return value (text with NUL or a lone
surrogate, very long text, None, numbers with NaN, infinities and integers past 64 bits, bytes,
tuples, sets, dicts with keys that are not text, dataclasses, pydantic models, content blocks well
or ill formed, prompt messages, resource contents, nesting past what JSON writers take) or an
exception (``ToolError``, ``McpError`` with any code, message and data, unexpected exceptions
holding a secret, ``CancelledError``, exception groups, exceptions whose ``str()`` fails,
``sys.exit()``).

The same behaviour runs on three connections, each kept open for the whole test:

* 2026-07-28 through ``Client.connect(server)`` in this process (the ASGI app, no socket);
* 2025-11-25 over Streamable HTTP on 127.0.0.1 (the client's in-process transport cannot carry
  the ``initialize`` session), the server in this process on a thread of its own;
* 2025-11-25 over stdio, this module run as the server (``python -m ... serve``).

What each gives is worked out here from the documentation (the result shapes in
``mcp_elicit.server.registry``, the failure rules in its module docstring, ``ToolError``'s, the
``encoded`` docstring in ``server/app.py``, docs/cli.md "When something goes wrong", the
``codec.dumps`` note that NaN is written as ``null`` and dataclasses as objects):

* a value the library can carry comes back in the documented shape: a tool's text,
  ``structuredContent`` for a dict, well-formed content blocks as they are (a wrong one is
  ``-32603``), no content for None; a prompt's user messages; a resource's text, JSON or base64
  blob;
* a value it cannot carry is ``-32603``, never a traceback, a hang or a broken connection;
* ``ToolError`` shows its message (a tool error for a tool, ``-32603`` for the others), an
  ``McpError`` goes out as raised, any other failure is the fixed generic message, never the
  exception's text;
* the next call on the same connection works, and the three connections give the same outcome
  (results compared without the keys 2026-07-28 adds: ``resultType``, ``ttlMs``, ``cacheScope``,
  the ``serverInfo`` of ``_meta``).

The tests at the end each pin a bug found this way (their docstrings say what it was); each
failed before its fix.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import math
import os
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import pydantic
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from mcp_elicit import Context, Server, ToolError
from mcp_elicit.client import Answer, Client, FormQuestion, McpClientError
from mcp_elicit.wire.errors import McpError
from tests.helpers import InProcessServer, Script
from tests.strategies import fuzz_settings

ROOT = Path(__file__).resolve().parents[2]
KEYS = ["any-handler-output-tests-secret-0123456789abcdef"]
SECRET = "hunter2-s3cr3t"  # in every unexpected exception's message: it must never reach a client
# Three connections per example: the whole file runs in about 7 s on two cores (the property
# about 2.5 s of it).
# ANY_HANDLER_OUTPUT_EXAMPLES=2500 for a longer hunt.
EXAMPLES = int(os.environ.get("ANY_HANDLER_OUTPUT_EXAMPLES", "100"))
WITHIN = 15.0  # the longest any call may take
GENERIC_TOOL = "Tool 'act' failed with an unexpected error; the server log has details"
GENERIC_INTERNAL = "Internal error: the server failed while handling the request"
INTERNAL = -32603
# -32021 is read as more than an error (capabilities to declare): not what this file is about.
# The other codes MCP reserves are answered -32603 when a handler raises them
# (test_reserved_codes.py); drawn here now and then, they must be answered so.
SPECIAL_CODES = frozenset({-32021})
RESERVED_CODES = frozenset({-32002, *range(-32099, -32019)}) - SPECIAL_CODES
BIG = 2**70
T = TypeVar("T")
Protocol = Literal["2026-07-28", "2025-11-25"]


# -- the behaviours: JSON that says what a handler does --------------------------------------------


@dataclasses.dataclass
class Pair:
    a: int
    b: str


class Model(pydantic.BaseModel):
    a: int


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError(f"str() of this exception fails too ({SECRET})")


class Unwound(BaseException):
    """What a library's own BaseException looks like (as trio's ``Cancelled``, pytest's
    ``Failed``): neither an ``Exception`` nor ``SystemExit`` nor a cancellation."""


def build(spec: Any) -> Any:
    """The Python value a value spec describes: JSON as is, except dicts with a ``"$"`` key."""
    if isinstance(spec, list):
        return [build(item) for item in spec]
    if not isinstance(spec, dict):
        return spec
    kind = spec.get("$")
    if kind is None:
        return {key: build(value) for key, value in spec.items()}
    makers: dict[str, Callable[[], Any]] = {
        "nan": lambda: math.nan,
        "inf": lambda: math.inf,
        "-inf": lambda: -math.inf,
        "int": lambda: int(spec["digits"]),
        "bytes": lambda: bytes.fromhex(spec["hex"]),
        "tuple": lambda: tuple(build(item) for item in spec["items"]),
        "set": lambda: {1, 2},
        "object": object,
        "surrogate": lambda: spec["text"] + "\udc80",
        "dataclass": lambda: Pair(spec["a"], spec["b"]),
        "model": lambda: Model(a=spec["a"]),
        "intkeys": lambda: {1: "one"},
        "deep": lambda: nested(spec["n"]),
        "long": lambda: spec["ch"] * spec["n"],
    }
    return makers[kind]()


def nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


def failure(spec: dict[str, Any]) -> BaseException:
    """The exception an outcome spec raises."""
    if "tool_error" in spec:
        return ToolError(build(spec["tool_error"]))
    if "mcp_error" in spec:
        error = spec["mcp_error"]
        return McpError(error["code"], build(error["message"]), build(error.get("data")))
    if "exit" in spec:
        return SystemExit(spec["exit"])
    kind = spec["unexpected"]
    if kind == "value":
        return ValueError(f"password={SECRET}")
    if kind == "key":
        return KeyError(SECRET)
    if kind == "cancelled":
        return asyncio.CancelledError(SECRET)
    if kind == "group":
        return ExceptionGroup("two failed", [ValueError(SECRET), TypeError(SECRET)])
    if kind == "unprintable":
        return UnprintableError()
    if kind == "base":
        return Unwound(SECRET)
    raise AssertionError(f"unknown failure {spec!r}")


async def perform(spec_text: str, ctx: Context) -> Any:
    """What every handler here does: the behaviour ``spec_text`` describes."""
    spec = json.loads(spec_text)
    if "progress" in spec:
        await ctx.report_progress(build(spec["progress"]))
    if "ask" in spec:
        await ctx.elicit(build(spec["ask"]), None)
    outcome = spec["outcome"]
    if "return" in outcome:
        return build(outcome["return"])
    raise failure(outcome)


def make_server(*, debug: bool = False) -> Server:
    app = Server("any-output", version="1.0.0", state_keys=KEYS, debug=debug)

    @app.tool()
    async def act(spec: str, ctx: Context) -> Any:
        return await perform(spec, ctx)

    @app.tool()
    async def ping() -> str:
        return "pong"

    @app.prompt()
    async def act_prompt(spec: str, ctx: Context) -> Any:
        """Acts as told."""
        return await perform(spec, ctx)

    @app.resource("act://{spec}")
    async def act_resource(spec: str, ctx: Context) -> Any:
        return await perform(base64.urlsafe_b64decode(spec.encode()).decode(), ctx)

    @app.resource("const://prompt-and-resource")
    async def constant() -> Any:
        return CONSTANT_CONTENTS

    @app.prompt()
    async def constant_prompt() -> Any:
        return CONSTANT_MESSAGES

    return app


# Returned as they are by handlers (bug 3): module constants, as an author keeps them.
CONSTANT_MESSAGES: dict[str, Any] = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "_meta": {"com.example/trace": "t-1"},
}
CONSTANT_CONTENTS: dict[str, Any] = {
    "contents": [{"uri": "const://prompt-and-resource", "text": "hi"}],
    "_meta": {"com.example/trace": "t-1"},
}


# -- what a behaviour must give, from the documentation ---------------------------------------------


class Unsendable(Exception):
    """The value has no JSON form (codec.dumps: a lone surrogate, an integer past 64 bits, a set,
    bytes, an object, a pydantic model, a non-text key, nesting past 255 levels)."""


def json_of(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data, as the codec writes it (NaN and infinities as null, tuples as lists,
    dataclasses as objects); Unsendable when it has no JSON form."""
    if depth > 250:
        raise Unsendable("nested too deeply")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Unsendable("a lone surrogate") from None
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**64:
            raise Unsendable("an integer past 64 bits")
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        return [json_of(item, depth + 1) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise Unsendable("a key that is not text")
        return {json_of(key): json_of(item, depth + 1) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_of(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    raise Unsendable(type(value).__name__)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_shape(value: Any) -> dict[str, Any]:
    """registry.tool_result: str -> text; None -> no content; dict -> structuredContent and its
    JSON as text; a non-empty list of well-formed content blocks as is (a wrong one: -32603);
    other JSON -> its JSON as text."""
    if isinstance(value, str):
        return {"content": [text_block(json_of(value))], "isError": False}
    if value is None:
        return {"content": [], "isError": False}
    data = json_of(value)
    if isinstance(value, dict):
        return {"content": [{"type": "text", "json": data}], "structuredContent": data, "isError": False}
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) and isinstance(v.get("type"), str) for v in value)
    ):
        # Content blocks, each checked (server/result_checks.py): of those drawn here, only a
        # text block with a str text is whole.
        if not all(v["type"] == "text" and isinstance(v.get("text"), str) for v in value):
            raise WrongShape("a content block the spec refuses")
        return {"content": data, "isError": False}
    return {"content": [{"type": "text", "json": data}], "isError": False}


class WrongShape(Exception):
    """A handler's value that is no result of its kind (a prompt's, a tool's content blocks)."""


def prompt_shape(value: Any) -> dict[str, Any]:
    """registry.prompt_result: str -> one user message; a list of str or {role, content}; a dict
    with ``messages`` as is (no description added); anything else is refused."""
    if isinstance(value, dict) and "messages" in value:
        if not all(_whole_message(m) for m in value["messages"]):
            raise WrongShape("a prompt message the spec refuses")
        return dict(json_of(value))
    items = value if isinstance(value, list) else [value]
    messages = []
    for item in items:
        if isinstance(item, str):
            messages.append({"role": "user", "content": text_block(json_of(item))})
        elif isinstance(item, dict) and "role" in item and "content" in item:
            content = item["content"]
            shown = text_block(content) if isinstance(content, str) else content
            if not _whole_message({"role": item["role"], "content": shown}):
                raise WrongShape("a prompt message the spec refuses")
            messages.append({"role": json_of(item["role"]), "content": json_of(shown)})
        else:
            raise WrongShape(type(item).__name__)
    return {"messages": messages, "description": "Acts as told."}


def _whole_message(message: Any) -> bool:
    """A prompt message the server sends (server/result_checks.py): of those drawn here, only
    one with a role of the spec's and a text block with a str text is whole."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return False
    content = message.get("content")
    return (
        isinstance(content, dict) and content.get("type") == "text" and isinstance(content.get("text"), str)
    )


def resource_shape(uri: str, value: Any) -> dict[str, Any]:
    """registry.resource_result: str -> text; bytes -> base64 blob; a dict with ``contents`` as
    is; other JSON -> its JSON as text."""
    if isinstance(value, dict) and "contents" in value:
        # Each drawn item has a str uri; its text must be a str too (server/result_checks.py).
        if not all(isinstance(item["text"], str) for item in value["contents"]):
            raise WrongShape("resource contents the spec refuses")
        return dict(json_of(value))
    if isinstance(value, bytes | bytearray):
        blob = base64.b64encode(bytes(value)).decode()
        return {"contents": [{"uri": uri, "blob": blob, "mimeType": "application/octet-stream"}]}
    if isinstance(value, str):
        return {"contents": [{"uri": uri, "text": json_of(value), "mimeType": "text/plain"}]}
    data = json_of(value)
    return {"contents": [{"uri": uri, "json": data, "mimeType": "application/json"}]}


@dataclasses.dataclass(frozen=True)
class Error:
    """A JSON-RPC error; ``message`` None: any message (checked for leaks only)."""

    code: int
    message: str | None = None
    data: Any = None


Expected = dict[str, Any] | Error


def unexpected(kind: str) -> Expected:
    return (
        {"content": [text_block(GENERIC_TOOL)], "isError": True}
        if kind == "tool"
        else Error(INTERNAL, GENERIC_INTERNAL)
    )


def expected(kind: str, uri: str, spec: dict[str, Any]) -> Expected:
    """What the behaviour ``spec`` must give a ``kind`` handler (``uri``: the resource's)."""
    if "progress" in spec:
        progress = build(spec["progress"])
        if not (
            isinstance(progress, int | float) and math.isfinite(progress) and -(2**63) <= progress < 2**64
        ):
            return unexpected(kind)  # report_progress refused it (a finite number within 64 bits)
    if "ask" in spec:
        try:
            json_of(build(spec["ask"]))
        except Unsendable:
            return unexpected(kind)  # ctx.elicit raised in the handler: it failed
    outcome = spec["outcome"]
    try:
        if "return" in outcome:
            value = build(outcome["return"])
            if kind == "tool":
                return tool_shape(value)
            if kind == "prompt":
                return prompt_shape(value)
            return resource_shape(uri, value)
        if "tool_error" in outcome:
            message = json_of(build(outcome["tool_error"]))
            if kind == "tool":
                return {"content": [text_block(message)], "isError": True}
            return Error(INTERNAL, message)
        if "mcp_error" in outcome:
            error = outcome["mcp_error"]
            if error["code"] in RESERVED_CODES:
                return Error(INTERNAL)
            return Error(error["code"], json_of(build(error["message"])), json_of(build(error.get("data"))))
        if "exit" in outcome:
            return Error(INTERNAL, GENERIC_INTERNAL)  # sys.exit() fails this request only
        return unexpected(kind)
    except (Unsendable, WrongShape):
        return Error(INTERNAL)


# -- what a connection gave -------------------------------------------------------------------------

_MODERN_KEYS = ("resultType", "ttlMs", "cacheScope")


def normalized(raw: dict[str, Any]) -> dict[str, Any]:
    """A result without what 2026-07-28 adds to it, JSON text read back (its spelling is free)."""
    out = {key: value for key, value in raw.items() if key not in _MODERN_KEYS}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        rest = {key: value for key, value in meta.items() if key != "io.modelcontextprotocol/serverInfo"}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


def matches(expect: Expected, got: dict[str, Any] | Error) -> bool:
    if isinstance(expect, Error):
        return (
            isinstance(got, Error)
            and got.code == expect.code
            and (expect.message is None or got.message == expect.message)
            and (expect.message is None or got.data == expect.data)
        )
    return isinstance(got, dict) and _same(expect, got)


def _same(expect: Any, got: Any) -> bool:
    """Equal, where ``{"type": "text", "json": X}`` (resp. ``{..., "json": X}`` of a resource)
    matches a block whose ``text`` is JSON for X."""
    if isinstance(expect, dict):
        if "json" in expect and isinstance(got, dict) and isinstance(got.get("text"), str):
            rest = {k: v for k, v in expect.items() if k != "json"}
            return _same(rest, {k: v for k, v in got.items() if k != "text"}) and _json_equal(
                expect["json"], got["text"]
            )
        return (
            isinstance(got, dict)
            and expect.keys() == got.keys()
            and all(_same(value, got[key]) for key, value in expect.items())
        )
    if isinstance(expect, list):
        return isinstance(got, list) and len(expect) == len(got) and all(map(_same, expect, got))
    return type(expect) is type(got) and bool(expect == got)


def _json_equal(expect: Any, text: str) -> bool:
    try:
        return _same(expect, json.loads(text))
    except ValueError:
        return False


def texts(got: dict[str, Any] | Error) -> str:
    """Everything a person reads in an outcome."""
    if isinstance(got, Error):
        return f"{got.message} {json.dumps(got.data)}"
    return json.dumps(got, ensure_ascii=False)


# -- the connections --------------------------------------------------------------------------------


class Answers:
    """A confirm-only question's answer, set per example (every connection's answerer reads it)."""

    def __init__(self) -> None:
        self.action = "accept"

    def answer(self, question: FormQuestion) -> Answer:
        return Answer("accept", {}) if self.action == "accept" else Answer("decline")


@dataclasses.dataclass
class Connection:
    name: str
    client: Client
    progress: list[float]

    async def outcome(self, kind: str, spec_text: str, within: float = WITHIN) -> dict[str, Any] | Error:
        """The call's result (normalized) or JSON-RPC error, within ``within`` seconds; any other
        outcome (a transport failure, a malformed reply, a hang) fails the test."""
        try:
            async with asyncio.timeout(within):
                if kind == "tool":
                    raw = (await self.client.call_tool("act", {"spec": spec_text})).raw
                elif kind == "prompt":
                    raw = (await self.client.get_prompt("act_prompt", {"spec": spec_text})).raw
                else:
                    raw = (await self.client.read_resource(resource_uri(spec_text))).raw
        except McpClientError as exc:
            return Error(exc.code, exc.message, exc.data)
        return normalized(raw)

    async def still_works(self) -> None:
        async with asyncio.timeout(WITHIN):
            result = await self.client.call_tool("ping", {})
        assert result.text == "pong", (self.name, result.raw)


def resource_uri(spec_text: str) -> str:
    return "act://" + base64.urlsafe_b64encode(spec_text.encode()).decode()


async def open_connections(
    stack: AsyncExitStack, app: Server, answers: Answers, base: str
) -> list[Connection]:
    connections = []
    script = Script(form=answers.answer, mode_names=["form"])
    targets: list[tuple[str, Callable[..., Any]]] = [
        ("2026-07-28 in process", lambda **kw: Client.connect(app, protocol="2026-07-28", **kw)),
        ("2025-11-25 over HTTP", lambda **kw: Client.connect(base + "/mcp", protocol="2025-11-25", **kw)),
        (
            "2025-11-25 over stdio",
            lambda **kw: Client.connect(
                [sys.executable, "-m", "tests.server.test_any_handler_output", "serve"],
                protocol="2025-11-25",
                cwd=str(ROOT),
                stderr="devnull",
                **kw,
            ),
        ),
    ]
    for name, connect in targets:
        seen: list[float] = []
        client = await stack.enter_async_context(
            connect(answerer=script, on_progress=lambda p, seen=seen: seen.append(p.progress))
        )
        connections.append(Connection(name, client, seen))
    return connections


@contextmanager
def running(
    app: Server,
) -> Iterator[tuple[asyncio.Runner, Answers, list[Connection], Callable[[Coroutine[Any, Any, Any]], Any]]]:
    """Three connections to ``app`` (see the module docstring), on one event loop of their own
    (hypothesis runs each example through ``run``)."""
    answers = Answers()
    with InProcessServer(app.asgi()) as http, asyncio.Runner() as runner:
        stack = AsyncExitStack()
        try:
            connections = runner.run(open_connections(stack, app, answers, http.base))

            def run(work: Coroutine[Any, Any, T]) -> T:
                return runner.run(work)

            yield runner, answers, connections, run
        finally:
            runner.run(stack.aclose())


# -- the strategies ---------------------------------------------------------------------------------

# Text JSON carries (hypothesis' default alphabet has no surrogates), NUL and controls included.
texts_ = st.text(max_size=10) | st.sampled_from(["", "\x00", "a\x00b", "\u2028", "é€😀", "\r\n", "null"])
ints64 = st.integers(-(2**63), 2**64 - 1)
plain_scalars = st.none() | st.booleans() | ints64 | st.floats(allow_nan=False, allow_infinity=False) | texts_
odd_scalars: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(
        [{"$": "nan"}, {"$": "inf"}, {"$": "-inf"}, {"$": "set"}, {"$": "object"}, {"$": "intkeys"}]
    ),
    st.builds(
        lambda n: {"$": "int", "digits": str(n)},
        st.integers(2**64, 2**80) | st.integers(-(2**80), -(2**63) - 1),
    ),
    st.builds(lambda b: {"$": "bytes", "hex": b.hex()}, st.binary(max_size=8)),
    st.builds(lambda t: {"$": "surrogate", "text": t}, texts_),
    st.builds(lambda a, b: {"$": "dataclass", "a": a, "b": b}, st.integers(-5, 5), texts_),
    st.builds(lambda a: {"$": "model", "a": a}, st.integers(-5, 5)),
    st.builds(lambda n: {"$": "deep", "n": n}, st.sampled_from([3, 40, 300])),
    st.builds(
        lambda n, ch: {"$": "long", "n": n, "ch": ch},
        st.sampled_from([1, 70_000, 1_500_000]),
        st.sampled_from(["x", "é"]),
    ),
)
keys = texts_.filter(lambda key: key != "$")
values: st.SearchStrategy[Any] = st.recursive(
    plain_scalars | odd_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(keys, inner, max_size=3)
        | st.builds(lambda items: {"$": "tuple", "items": items}, st.lists(inner, max_size=3))
    ),
    max_leaves=6,
)
block_values = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image", "resource_link", "made-up"])},
        optional={"text": texts_ | odd_scalars, "data": values},
    ),
    min_size=1,
    max_size=3,
)
messages = st.lists(
    texts_
    | st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant"]), "content": texts_ | st.builds(text_block, texts_)}
    )
    | plain_scalars,
    max_size=3,
)
# As the protocol's own messages: whole ones, others with a role or content the spec refuses,
# and any JSON (no dict of it has a "role" key: the oracle reads only text blocks as whole).
own_messages = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "system"]),
        "content": texts_ | st.builds(text_block, texts_) | st.just({"type": "text"}),
    }
) | values.filter(lambda v: not (isinstance(v, dict) and "role" in v))
prompt_values = messages | st.builds(lambda m: {"messages": m}, st.lists(own_messages, max_size=2))
resource_values = st.builds(
    lambda c: {"contents": c},
    st.lists(st.fixed_dictionaries({"uri": texts_, "text": texts_ | odd_scalars}), max_size=2),
)
returns = st.one_of(values, block_values, prompt_values, resource_values).map(lambda v: {"return": v})
raises = st.one_of(
    st.builds(
        lambda m: {"tool_error": m}, texts_ | st.builds(lambda t: {"$": "surrogate", "text": t}, texts_)
    ),
    st.builds(
        lambda code, message, data: {"mcp_error": {"code": code, "message": message, "data": data}},
        ints64.filter(lambda c: c not in SPECIAL_CODES)
        | st.sampled_from([-32603, -32602, -32600, -32000, -32002, -32042, 0, 1]),
        texts_ | st.builds(lambda t: {"$": "surrogate", "text": t}, texts_),
        st.none() | values,
    ),
    st.builds(lambda c: {"exit": c}, st.none() | st.integers(0, 3)),
    st.sampled_from(["value", "key", "cancelled", "group", "unprintable"]).map(lambda k: {"unexpected": k}),
)
progress_values = (
    st.integers(0, 100)
    | st.floats(0, 1e6)
    | st.sampled_from([{"$": "nan"}, {"$": "int", "digits": str(BIG)}])
)


@st.composite
def behaviours(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        spec["progress"] = draw(progress_values)
    if draw(st.booleans()):
        spec["ask"] = draw(
            texts_.map(lambda t: f"Go on? {t}") | st.builds(lambda t: {"$": "surrogate", "text": t}, texts_)
        )
    spec["outcome"] = draw(st.one_of(returns, raises))
    return spec


# -- the property -------------------------------------------------------------------------------------


def test_every_handler_outcome_is_its_documented_shape_or_a_clean_error_the_same_in_both_eras() -> None:
    app = make_server()
    with running(app) as (_, answers, connections, run):

        @fuzz_settings(EXAMPLES)
        @given(kind=st.sampled_from(["tool", "prompt", "resource"]), spec=behaviours(), accept=st.booleans())
        def check(kind: str, spec: dict[str, Any], accept: bool) -> None:
            answers.action = "accept" if accept else "decline"
            spec_text = json.dumps(spec)
            expect = expected(kind, resource_uri(spec_text), spec)
            event(f"{kind}: {'error ' + str(expect.code) if isinstance(expect, Error) else 'result'}")
            outcomes = []
            for connection in connections:
                connection.progress.clear()
                got = run(connection.outcome(kind, spec_text))
                assert matches(expect, got), (connection.name, expect, got)
                said = texts(got)
                assert SECRET not in said, (connection.name, said)
                assert "Traceback" not in said, (connection.name, said)
                if isinstance(got, Error):
                    assert got.code == INTERNAL or "mcp_error" in spec["outcome"], (connection.name, got)
                    if isinstance(expect, Error) and expect.message is None:  # the library's own words
                        assert (got.message or "").startswith("Internal error: "), (connection.name, got)
                progress = spec.get("progress")
                # docs/server-guide.md: over HTTP, notifications held back for an error that comes
                # at once are dropped with it (the error keeps its own status).
                if isinstance(progress, int | float) and not isinstance(got, Error):
                    assert float(progress) in connection.progress, (connection.name, connection.progress)
                run(connection.still_works())
                outcomes.append(got)
            first = outcomes[0]
            for connection, got in zip(connections[1:], outcomes[1:], strict=True):
                assert got == first, ("the eras disagree", connections[0].name, first, connection.name, got)

        check()


# -- the bugs -----------------------------------------------------------------------------------------


async def outcome_in_process(
    app: Server, protocol: Protocol, kind: str, spec: dict[str, Any], within: float = WITHIN
) -> dict[str, Any] | Error:
    """One call in this process (2026-07-28: the ASGI app; 2025-11-25: HTTP on 127.0.0.1), and
    the check that the next call on the connection works."""
    script = Script(form=Answers().answer, mode_names=["form"])
    if protocol == "2026-07-28":
        async with Client.connect(app, protocol=protocol, answerer=script) as client:
            connection = Connection(protocol, client, [])
            got = await connection.outcome(kind, json.dumps(spec), within)
            await connection.still_works()
            return got
    async with (
        InProcessServer(app.asgi()) as http,
        Client.connect(http.base + "/mcp", protocol=protocol, answerer=script) as client,
    ):
        connection = Connection(protocol, client, [])
        got = await connection.outcome(kind, json.dumps(spec), within)
        await connection.still_works()
        return got


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize(
    ("kind", "returned", "names"),
    [
        ("prompt", None, ("'act_prompt'",)),
        ("prompt", {"text": "no messages key"}, ("'act_prompt'",)),
        ("tool", {"$": "set"}, ("'act'",)),
        ("resource", {"$": "surrogate", "text": "name"}, ("'act_resource'", "'act://")),
    ],
)
async def test_bug_1_a_result_that_cannot_be_shaped_is_reported_naming_the_handler_and_why(
    protocol: Protocol, kind: str, returned: Any, names: tuple[str, ...]
) -> None:
    """Bug 1: shaping a handler's value happens outside the engine's failure handling
    (server/engine.py ``_handle``: ``entry.complete(...)`` after the ``try``), so the TypeError it
    raises reaches ``encoded`` (server/app.py), which takes every TypeError for an encoding
    failure. A prompt returning None (or 42, or a dict without ``messages``) is told "the handler
    returned a value that cannot be sent as JSON", which is false (None is JSON), and the sentence
    registry.prompt_result wrote for the author ("a prompt handler must return a str, a list of
    str or {role, content} messages, or a dict with 'messages'; got NoneType") reaches nobody; the
    server log says "could not encode the result of prompts/get", naming no prompt either. No
    message, on the wire or in the log, says which tool, prompt or resource it was."""
    got = await outcome_in_process(make_server(), protocol, kind, {"outcome": {"return": returned}})
    assert isinstance(got, Error), got
    assert got.code == INTERNAL, got
    assert got.message is not None
    assert any(name in got.message for name in names), got.message
    if kind == "prompt":
        assert "must return" in got.message, got.message


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_bug_2_a_handler_raising_a_base_exception_gets_an_answer_in_process(protocol: Protocol) -> None:
    """Bug 2 (the HTTP side): ``encoded`` (server/app.py) answers ``Exception`` and ``SystemExit``
    only, so a handler's other BaseException (``GeneratorExit``, a library's own, such as trio's
    ``Cancelled`` or pytest's ``Failed``) escapes the request: at 2026-07-28 the client gets no
    JSON-RPC answer but a transport failure ("the in-process app failed: Unwound('hunter2-...')",
    the exception's text included); at 2025-11-25 the call's stream ends with no response (the
    client gives up on it after 3 s: "the server ended the event stream of tools/call without
    answering it"), and the server logs "Task exception was never retrieved"."""
    try:
        got = await outcome_in_process(
            make_server(), protocol, "tool", {"outcome": {"unexpected": "base"}}, 1.5
        )
    except TimeoutError:
        pytest.fail("no answer within 1.5 s (a tool answers in ms) to a tool that raised a BaseException")
    assert got == Error(INTERNAL, GENERIC_INTERNAL), got


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_bug_2_a_handler_raising_a_base_exception_gets_an_answer_over_stdio(protocol: Protocol) -> None:
    """Bug 2 (stdio): the same exception kills the request's task silently
    (transport/stdio_server.py ``handle``/``handle_legacy``: nothing writes a response), so the
    client waits for an answer that never comes: a hang, in both eras."""
    async with Client.connect(
        [sys.executable, "-m", "tests.server.test_any_handler_output", "serve"],
        protocol=protocol,
        cwd=str(ROOT),
        stderr="devnull",
    ) as client:
        connection = Connection(protocol, client, [])
        try:
            got = await connection.outcome(
                "tool", json.dumps({"outcome": {"unexpected": "base"}}), within=2.0
            )
        except TimeoutError:
            pytest.fail("no answer within 1.5 s (a tool answers in ms) to a tool that raised a BaseException")
        assert got == Error(INTERNAL, GENERIC_INTERNAL), got
        await connection.still_works()


async def test_bug_3_a_returned_result_keeps_its_meta_and_is_not_changed_in_either_era() -> None:
    """Bug 3: ``Server.dispatch`` (server/app.py) writes ``result["_meta"] = self._result_meta``
    and ``setdefault("resultType")`` into the very dict a prompt or resource handler returned
    (and Resource.complete, server/registry.py, its ``ttlMs``/``cacheScope``). A handler's own
    ``_meta`` is replaced at 2026-07-28, while a 2025-11-25 session gets it (``legacy_result``
    keeps it): the eras disagree. And the handler's dict is changed in place: after one 2026 call
    a module constant holds the server's ``_meta`` and 2026 keys, and from then on the 2025-11-25
    sessions lose the handler's ``_meta`` too."""
    before = json.loads(json.dumps([CONSTANT_MESSAGES, CONSTANT_CONTENTS]))
    app = make_server()
    seen: dict[str, list[dict[str, Any]]] = {}
    try:
        async with (
            InProcessServer(app.asgi()) as http,
            Client.connect(http.base + "/mcp", protocol="2025-11-25") as legacy,
        ):
            seen["2025-11-25"] = [
                (await legacy.get_prompt("constant_prompt")).raw,
                (await legacy.read_resource("const://prompt-and-resource")).raw,
            ]
        async with Client.connect(app, protocol="2026-07-28") as modern:
            seen["2026-07-28"] = [
                (await modern.get_prompt("constant_prompt")).raw,
                (await modern.read_resource("const://prompt-and-resource")).raw,
            ]
        after = json.loads(json.dumps([CONSTANT_MESSAGES, CONSTANT_CONTENTS]))  # before the restore
    finally:
        for constant, original in zip((CONSTANT_MESSAGES, CONSTANT_CONTENTS), before, strict=True):
            constant.clear()
            constant.update(original)
    traces = {
        era: [result.get("_meta", {}).get("com.example/trace") for result in got] for era, got in seen.items()
    }
    assert traces == {"2025-11-25": ["t-1", "t-1"], "2026-07-28": ["t-1", "t-1"]}, seen
    assert after == before, "the handler's own dicts were changed"


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_bug_4_in_debug_mode_an_exception_whose_str_fails_is_still_a_tool_error(
    protocol: Protocol,
) -> None:
    """Bug 4 (debug mode only): ``exception_report`` (server/registry.py) calls ``str(exc)``
    unguarded, so for an exception whose ``__str__`` raises, ``Tool.failed`` itself raises while
    reporting the failure; the tool's failure then becomes the generic JSON-RPC ``-32603`` of
    ``encoded`` instead of the tool error (``isError``) every other tool failure is, and the
    developer who turned debug on learns nothing (without debug it is the usual tool error: the
    logging module guards its own ``str()``)."""
    got = await outcome_in_process(
        make_server(debug=True), protocol, "tool", {"outcome": {"unexpected": "unprintable"}}
    )
    assert isinstance(got, dict), got
    assert got["isError"] is True, got
    assert got["content"][0]["text"].startswith("Tool 'act' failed: UnprintableError"), got


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            {"progress": {"$": "nan"}},
            "ValueError: report_progress: progress must be a finite number, not nan",
        ),
        (
            {"progress": {"$": "int", "digits": str(BIG)}},
            "ValueError: report_progress: progress is too large",
        ),
        ({"progress": "half"}, "TypeError: report_progress: progress must be a number, not str"),
        (
            {"progress": 1, "total": {"$": "inf"}},
            "ValueError: report_progress: total must be a finite number",
        ),
        ({"progress": 1, "message": 5}, "TypeError: report_progress: message must be a str, not int"),
    ],
)
async def test_progress_that_is_no_number_is_refused_where_it_is_reported(
    args: dict[str, Any], says: str
) -> None:
    """Was: NaN went out as ``"progress": null`` (the spec says number), an integer past 64 bits
    failed the handler with nothing saying it was the progress, and either only when the client
    had asked for progress. Now ``report_progress`` refuses them at once, saying what."""
    app = Server("progress", version="1.0.0", state_keys=KEYS, debug=True)

    @app.tool()
    async def report(ctx: Context) -> str:
        await ctx.report_progress(**{name: build(value) for name, value in args.items()})
        return "reported"

    async with Client.connect(app, protocol="2026-07-28") as client:  # (it asks for no progress)
        result = await client.call_tool("report", {})
    assert result.raw["isError"] is True, result.raw
    assert result.text.startswith(f"Tool 'report' failed: {says}"), result.text


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:
    make_server().run()
