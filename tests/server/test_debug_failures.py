"""A handler that fails unexpectedly: in production the client learns nothing of the server's
internals; with ``debug`` (``Server(debug=True)``, ``MCP_ELICIT_DEBUG=1``) the error names the
exception, its message and the line that raised it (issue 20, point 1)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Client, McpClientError
from mcp_elicit.server.app import EPHEMERAL_KEY_WARNING
from mcp_elicit.wire.errors import INTERNAL_ERROR
from tests.helpers import Script

KEYS = ["debug-failure-tests-secret-0123456789abcdef"]
# The handler that forgets its await leaves the coroutine behind, on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:coroutine 'Context.elicit' was never awaited:RuntimeWarning")

GENERIC = "Tool 'book_trip' failed with an unexpected error; the server log has details"
SECRET = "postgres://admin:hunter2@db.internal/trips"


@pytest.fixture(autouse=True)
def _collect_the_forgotten_coroutine() -> Iterator[None]:
    """The forgotten coroutine lives as long as the traceback that holds it; collect it here,
    where its warning is expected, not in whichever test runs next."""
    yield
    gc.collect()


@dataclass
class City:
    city: str


def make_server(*, debug: bool | None) -> Server:
    app = Server("trips", state_keys=KEYS, debug=debug)

    @app.tool()
    async def book_trip(ctx: Context) -> str:
        answer = ctx.elicit("Where to?", City, key="city")  # the await forgotten
        return f"Booked {answer.data.city}"  # type: ignore[attr-defined]

    @app.tool()
    async def connects() -> str:
        raise ConnectionError(f"cannot reach {SECRET}")

    @app.tool()
    async def in_a_group() -> str:
        async def fails() -> None:
            raise LookupError("no such flight")

        async with asyncio.TaskGroup() as group:
            group.create_task(fails())
        return "unreachable"

    @app.prompt()
    async def summary() -> str:
        raise KeyError("the template")

    @app.resource("trips://{trip_id}")
    async def trip(trip_id: str) -> str:
        raise RuntimeError(f"trip {trip_id} is corrupt")

    return app


async def tool_text(app: Server, tool: str) -> str:
    async with Client.connect(app, answerer=Script()) as client:
        result = await client.call_tool(tool)
    assert result.is_error is True
    return str(result.content[0]["text"])


async def refusals(app: Server) -> tuple[McpClientError, McpClientError]:
    """The errors of the failing prompt and of the failing resource."""
    async with Client.connect(app, answerer=Script()) as client:
        with pytest.raises(McpClientError) as prompt:
            await client.get_prompt("summary")
        with pytest.raises(McpClientError) as resource:
            await client.read_resource("trips://T-1")
    return prompt.value, resource.value


async def test_without_debug_a_failure_says_nothing_of_the_exception() -> None:
    app = make_server(debug=False)
    assert await tool_text(app, "book_trip") == GENERIC
    said = await tool_text(app, "connects")
    assert said == "Tool 'connects' failed with an unexpected error; the server log has details"
    for leak in ("ConnectionError", "hunter2", "db.internal", ".py", "line"):
        assert leak not in said
    prompt, resource = await refusals(app)
    assert (prompt.code, prompt.message) == (
        INTERNAL_ERROR,
        "Internal error: the server failed while handling the request",
    )
    assert resource.message == "Internal error: the server failed while handling the request"
    assert "corrupt" not in str(resource.data)


async def test_with_debug_the_tool_error_names_the_exception_and_where() -> None:
    app = make_server(debug=True)
    said = await tool_text(app, "book_trip")
    assert said.startswith(
        "Tool 'book_trip' failed: AttributeError: 'coroutine' object has no attribute 'data' ("
    )
    assert f"{__file__}:" in said
    assert ", in book_trip" in said
    assert said.endswith("; an await is missing before the call that returned the coroutine)")
    connects = await tool_text(app, "connects")
    assert connects.startswith(f"Tool 'connects' failed: ConnectionError: cannot reach {SECRET} (")


async def test_with_debug_an_exception_group_shows_its_first_exception() -> None:
    said = await tool_text(make_server(debug=True), "in_a_group")
    assert said.startswith(
        "Tool 'in_a_group' failed: LookupError: no such flight (the first of 1 in an exception group) ("
    )
    assert ", in fails)" in said


async def test_with_debug_prompts_and_resources_name_it_in_the_json_rpc_error() -> None:
    app = make_server(debug=True)
    prompt, resource = await refusals(app)
    assert prompt.code == INTERNAL_ERROR
    assert prompt.message.startswith("Internal error: the handler failed: KeyError: 'the template' (")
    assert resource.message.startswith(
        "Internal error: the handler failed: RuntimeError: trip T-1 is corrupt ("
    )


@pytest.mark.parametrize(
    ("value", "debug"), [("1", True), ("TRUE", True), ("on", True), ("0", False), ("", False)]
)
async def test_the_environment_variable_turns_it_on(
    monkeypatch: pytest.MonkeyPatch, value: str, debug: bool
) -> None:
    monkeypatch.setenv("MCP_ELICIT_DEBUG", value)
    app = make_server(debug=None)
    assert app.debug is debug
    said = await tool_text(app, "connects")
    assert ("ConnectionError" in said) is debug


def test_an_explicit_setting_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ELICIT_DEBUG", "1")
    assert make_server(debug=False).debug is False


@pytest.mark.parametrize("value", ["maybe", "2", "debug"])
def test_a_value_that_is_neither_on_nor_off_fails_at_start(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MCP_ELICIT_DEBUG", value)
    with pytest.raises(ValueError, match=f"MCP_ELICIT_DEBUG must be 1 or 0 .*not '{value}'"):
        Server("x", state_keys=KEYS)


def test_debug_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="debug must be True, False or None"):
        Server("x", state_keys=KEYS, debug="yes")  # type: ignore[arg-type]


def test_the_ephemeral_key_warning_is_one_short_line_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS_FILE", raising=False)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.state"):
        server = Server("x")
        # Over stdio and in process the process that sealed a state is the one that opens it:
        # nothing to warn about until the server is served over HTTP (and then once).
        assert caplog.records == []
        server.asgi()
        server.asgi()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.getMessage()) for r in warnings] == [("mcp_elicit.state", EPHEMERAL_KEY_WARNING)]
    assert "\n" not in EPHEMERAL_KEY_WARNING
    assert len(EPHEMERAL_KEY_WARNING) <= 160
    assert "mcp-elicit keygen" in EPHEMERAL_KEY_WARNING
    assert "MCP_ELICIT_STATE_KEYS" in EPHEMERAL_KEY_WARNING


@pytest.mark.parametrize(
    ("variable", "fix"),
    [
        ("MCP_ELICIT_STATE_KEYS", "run `mcp-elicit keygen` for one"),
        ("MCP_ELICIT_STATE_KEYS_FILE", "set it to a key file's path"),
    ],
)
@pytest.mark.parametrize("blank", ["", "   "])
def test_a_key_variable_set_but_empty_is_named_in_the_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, variable: str, fix: str, blank: str
) -> None:
    """Empty counts as unset (an ephemeral key, as for every variable of the package), but the
    warning used to tell the operator to set a variable that is set."""
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS_FILE", raising=False)
    monkeypatch.setenv(variable, blank)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.state"):
        Server("x").asgi()
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning == (
        f"{variable} is set but empty, so requestState uses an ephemeral key (lost on restart, "
        f"unknown to other instances): {fix}"
    )
    assert len(warning) <= 160


def test_configured_keys_give_no_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", KEYS[0])
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.state"):
        Server("x").asgi()
        Server("y", state_keys=KEYS).asgi()
    assert caplog.records == []
