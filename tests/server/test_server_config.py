"""A server built or run with a wrong option, or a handler it cannot serve, fails where the
author wrote it, naming what to fix: not on the first request, and never on the wire."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.transport.http_app import HttpApp
from mcp_elicit.transport.uvicorn_runner import serve
from tests.helpers import request

KEYS = ["server-config-tests-secret-0123456789abcdef"]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_answer_attempts", "3"),
        ("max_answer_attempts", 0),
        ("max_answer_attempts", 2.5),
        ("max_answer_attempts", True),
        ("replay_grace", "2"),
        ("replay_grace", float("nan")),
        ("replay_grace", -1),
        ("max_message_bytes", "4096"),
        ("max_message_bytes", 0),
        ("cache_ttl_ms", -1),
        ("cache_ttl_ms", "x"),
        ("title", " "),
        ("instructions", 5),
        ("audience", "  "),
    ],
)
def test_a_bad_option_is_refused_by_name(option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=option):
        Server("config", state_keys=KEYS, **{option: value})


@pytest.mark.parametrize(("name", "version"), [(None, "1"), ("", "1"), ("ok", None), ("ok", " ")])
def test_name_and_version_are_text(name: Any, version: Any) -> None:
    with pytest.raises(ValueError, match=r"name|version"):
        Server(name, version, state_keys=KEYS)


def test_empty_optional_texts_mean_unset() -> None:
    """``Server(title=os.environ.get("TITLE", ""))`` is a common way to write "maybe"."""
    app = Server("config", state_keys=KEYS, title="", instructions="", audience="")
    assert (app.title, app.instructions, app.audience) == (None, None, "mcp-elicit:config")


def test_single_use_must_be_a_store() -> None:
    with pytest.raises(TypeError, match="single_use must be a single-use store"):
        Server("config", state_keys=KEYS, single_use="notastore")  # type: ignore[arg-type]


def test_decorators_without_parentheses_say_how_to_write_them() -> None:
    app = Server("config", state_keys=KEYS)

    async def bare() -> str:
        return "x"

    for decorator in (app.tool, app.prompt):
        with pytest.raises(TypeError, match=r"with parentheses"):
            decorator(bare)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs the resource's URI"):
        app.resource(bare)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("default", "named"),
    [(2**70, "Integer exceeds 64-bit range"), ({1, 2}, "Type is not JSON serializable: set")],
)
def test_a_default_json_cannot_carry_is_refused_at_registration(default: Any, named: str) -> None:
    """tools/list sends every input schema as it is: one default it cannot write would fail the
    listing of every tool (-32603), so the tool is refused when it is registered, by name."""
    app = Server("config", state_keys=KEYS)

    async def count(n: int = default) -> str:
        return str(n)

    with pytest.raises(TypeError) as refused:
        app.tool()(count)
    assert str(refused.value) == (
        f"{count.__qualname__}: the schema of argument 'n' cannot be sent as JSON ({named}): "
        "give the argument a default JSON can carry"
    )
    assert app.describe_tools() == []


def test_handlers_must_be_async_and_take_arguments_by_name() -> None:
    app = Server("config", state_keys=KEYS)

    def sync_tool() -> str:
        return "x"

    async def positional_only(a: int, /) -> str:
        return str(a)

    with pytest.raises(TypeError, match="must be an async function"):
        app.tool()(sync_tool)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="'a' is positional-only"):
        app.tool()(positional_only)

    async def context_first(ctx: Context, /, name: str) -> str:
        return name

    with pytest.raises(TypeError, match="'ctx' is positional-only"):
        app.tool()(context_first)


async def test_an_async_handler_behind_an_ordinary_decorator_is_served() -> None:
    app = Server("config", state_keys=KEYS)

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)  # the coroutine, awaited by the engine

        return wrapper

    @app.tool()
    @logged
    async def greet(name: str) -> str:
        return f"hi {name}"

    result = await app.dispatch(request("tools/call", {"name": "greet", "arguments": {"name": "a"}}))
    assert result["content"][0]["text"] == "hi a"


def test_resource_handlers_must_match_their_uri() -> None:
    app = Server("config", state_keys=KEYS)

    async def by_id(id: str) -> str:
        return id

    async def needs_id(id: str) -> str:
        return id

    async def nothing() -> str:
        return "x"

    with pytest.raises(ValueError, match=r"no parameter for the field \{slug\}"):
        app.resource("notes://{slug}")(by_id)
    with pytest.raises(ValueError, match="'id' is not a field of the URI"):
        app.resource("notes://all")(needs_id)
    with pytest.raises(ValueError, match=r"the field \{id\} appears more than once"):
        app.resource("notes://{id}/{id}")(by_id)
    app.resource("notes://{id}")(by_id)
    with pytest.raises(ValueError, match="already registered"):
        app.resource("notes://{id}")(by_id)
    app.resource("notes://all")(nothing)


def test_run_with_http_options_does_not_silently_serve_stdio() -> None:
    with pytest.raises(TypeError, match="run\\('http'"):
        Server("config", state_keys=KEYS).run(port=8123)


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"host": ""}, "host must be an address"),
        ({"port": 70000}, r"port must be a whole number from 0 \(any free port\) to 65535"),
        ({"port": -1}, r"port must be a whole number from 0 \(any free port\) to 65535"),
        ({"port": "8000"}, "port must be a whole number"),
        ({"port": 8123.7}, "port must be a whole number"),
        ({"head_timeout": "x"}, "head_timeout must be a number of seconds"),
        ({"head_timeout": 5, "http": object}, "head_timeout works with http='httptools' or 'h11'"),
    ],
)
def test_serve_refuses_bad_settings_before_starting(options: dict[str, Any], complaint: str) -> None:
    app = Server("config", state_keys=KEYS)
    with pytest.raises(ValueError, match=complaint):
        serve(app.asgi(), **options)


@pytest.mark.parametrize(
    ("options", "error", "complaint"),
    [
        ({"path": "mcp"}, ValueError, "path must start with '/'"),
        ({"allowed_origins": "https://app.example"}, TypeError, "must be a list of origins"),
        ({"body_timeout": 0}, ValueError, "body_timeout"),
        ({"sse_hold": -1}, ValueError, "sse_hold"),
    ],
)
def test_the_http_app_refuses_bad_settings(
    options: dict[str, Any], error: type[Exception], complaint: str
) -> None:
    with pytest.raises(error, match=complaint):
        HttpApp(Server("config", state_keys=KEYS), **options)
