"""A parameter named ``ctx`` or ``context`` that is not annotated ``Context`` is refused when the
handler is registered (before, it became an argument the client fills in, ``"ctx": {}`` in the
input schema, and the call failed later on ``'int' object has no attribute 'elicit'``).

No ``from __future__ import annotations`` here: the annotations below are objects, and the
string ones are written as strings on purpose (a module with the future import is tested too).
"""

import importlib.util
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest

import mcp_elicit
from mcp_elicit import Context, Server
from tests.helpers import request

KEYS = ["context-parameter-tests-secret-0123456789abcdef"]


async def untyped(ctx):  # type: ignore[no-untyped-def]
    return "x"


async def untyped_with_default(ctx=None):  # type: ignore[no-untyped-def]
    return "x"


async def typed_int(ctx: int) -> str:
    return "x"


async def typed_dict(ctx: dict[str, Any]) -> str:
    return "x"


async def context_untyped(context):  # type: ignore[no-untyped-def]
    return "x"


async def context_as_text(context: str) -> str:
    return context


async def typed_any(ctx: Any) -> str:
    return "x"


BAD = [untyped, untyped_with_default, typed_int, typed_dict, context_untyped, context_as_text, typed_any]


def register(app: Server, kind: str, fn: Callable[..., Any]) -> None:
    if kind == "tool":
        app.tool()(fn)
    elif kind == "prompt":
        app.prompt()(fn)
    else:
        app.resource(f"notes://{fn.__name__}")(fn)


@pytest.mark.parametrize("kind", ["tool", "prompt", "resource"])
@pytest.mark.parametrize("fn", BAD, ids=lambda fn: fn.__name__)
def test_a_context_parameter_without_the_context_type_is_refused(kind: str, fn: Callable[..., Any]) -> None:
    app = Server("ctx", state_keys=KEYS)
    name = next(iter(fn.__code__.co_varnames))
    with pytest.raises(TypeError) as refused:
        register(app, kind, fn)
    message = str(refused.value)
    assert message.startswith(f"{fn.__name__}: the parameter {name!r} ")
    assert f"annotate it `{name}: Context` (from mcp_elicit import Context)" in message
    assert app.capabilities() == {"logging": {}}  # nothing registered


def test_the_messages_say_what_is_wrong_and_how_to_rename_an_argument() -> None:
    app = Server("ctx", state_keys=KEYS)
    with pytest.raises(TypeError) as untyped_refusal:
        app.tool()(untyped)
    assert str(untyped_refusal.value) == (
        "untyped: the parameter 'ctx' has no annotation, so it would be an argument the client "
        "fills in, not the request's Context: annotate it `ctx: Context` (from mcp_elicit import Context)"
    )
    with pytest.raises(TypeError) as text_refusal:
        app.tool()(context_as_text)
    assert str(text_refusal.value) == (
        "context_as_text: the parameter 'context' is annotated str, not Context: annotate it "
        "`context: Context` (from mcp_elicit import Context); for an argument of type str, rename it "
        "(`context_value: str`, say): the names ctx and context are kept for the Context"
    )
    with pytest.raises(TypeError, match=r"is annotated dict\[str, typing.Any\], not Context"):
        app.tool()(typed_dict)


def test_two_context_parameters_are_refused() -> None:
    async def twice(a: Context, b: Context) -> str:
        return "x"

    with pytest.raises(TypeError, match="'a' and 'b' are both annotated Context; a handler receives one"):
        Server("ctx", state_keys=KEYS).tool()(twice)


def test_an_annotation_that_does_not_resolve_is_named() -> None:
    async def later(ctx: "Undefined") -> str:  # type: ignore[name-defined]  # noqa: F821
        return "x"

    with pytest.raises(TypeError, match="its annotations name 'Undefined', which its module does not define"):
        Server("ctx", state_keys=KEYS).tool()(later)


async def plain(ctx: Context, name: str) -> str:
    return f"{type(ctx).__name__} {name}"


async def as_string(ctx: "Context", name: str) -> str:
    return f"{type(ctx).__name__} {name}"


async def through_the_package(ctx: mcp_elicit.Context, name: str) -> str:
    return f"{type(ctx).__name__} {name}"


async def as_dotted_string(ctx: "mcp_elicit.Context", name: str) -> str:
    return f"{type(ctx).__name__} {name}"


async def optional(name: str, ctx: Context | None = None) -> str:
    return f"{type(ctx).__name__} {name}"


async def annotated(context: Annotated[Context, "the request"], name: str) -> str:
    return f"{type(context).__name__} {name}"


async def other_name(c: Context, name: str) -> str:
    return f"{type(c).__name__} {name}"


async def no_context(name: str, count: int = 1) -> str:
    return f"none {name}"


GOOD = [plain, as_string, through_the_package, as_dotted_string, optional, annotated, other_name]


@pytest.mark.parametrize("fn", GOOD, ids=lambda fn: fn.__name__)
async def test_the_context_shapes_are_accepted_and_receive_the_context(fn: Callable[..., Any]) -> None:
    app = Server("ctx", state_keys=KEYS)
    app.tool()(fn)
    app.prompt()(fn)
    app.resource("notes://{name}")(fn)
    (tool,) = app.describe_tools()
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    called = await app.dispatch(request("tools/call", {"name": fn.__name__, "arguments": {"name": "a"}}))
    assert called["content"][0]["text"] == "Context a"
    prompt = await app.dispatch(request("prompts/get", {"name": fn.__name__, "arguments": {"name": "b"}}))
    assert prompt["messages"][0]["content"]["text"] == "Context b"
    read = await app.dispatch(request("resources/read", {"uri": "notes://c"}))
    assert read["contents"][0]["text"] == "Context c"


def test_other_parameters_may_have_no_annotation() -> None:
    async def loose(name, count=1):  # type: ignore[no-untyped-def]
        return name

    app = Server("ctx", state_keys=KEYS)
    app.tool()(loose)
    app.tool()(no_context)
    assert [t["name"] for t in app.describe_tools()] == ["loose", "no_context"]


FUTURE_MODULE = """
from __future__ import annotations

from mcp_elicit import Context, Server

app = Server("future", state_keys={keys!r})


@app.tool()
async def greet(ctx: Context, name: str) -> str:
    return f"{{type(ctx).__name__}} {{name}}"


def register_untyped() -> None:
    @app.tool()
    async def broken(ctx, name: str) -> str:
        return name


def register_int() -> None:
    @app.tool()
    async def broken(ctx: int, name: str) -> str:
        return name
"""


async def test_string_annotations_of_the_future_import_keep_working(tmp_path: Path) -> None:
    path = tmp_path / "future_server.py"
    path.write_text(textwrap.dedent(FUTURE_MODULE.format(keys=KEYS)))
    spec = importlib.util.spec_from_file_location("future_server", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["future_server"] = module
    try:
        spec.loader.exec_module(module)
        app: Server = module.app
        called = await app.dispatch(request("tools/call", {"name": "greet", "arguments": {"name": "a"}}))
        assert called["content"][0]["text"] == "Context a"
        with pytest.raises(TypeError, match="the parameter 'ctx' has no annotation"):
            module.register_untyped()
        with pytest.raises(TypeError, match="the parameter 'ctx' is annotated int, not Context"):
            module.register_int()
    finally:
        del sys.modules["future_server"]
