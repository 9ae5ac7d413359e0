"""``mcp-elicit call`` and ``mcp-elicit tools``: talk to any MCP 2026-07-28 server.

The tool's text goes to stdout; everything else (the questions, errors) to stderr, so the
output can be piped. Without ``--answers`` the questions are asked in the terminal; with no
terminal and no answers file the command refuses to start rather than hang.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp_elicit.cli import EXIT_DECLINED, EXIT_FAILURE, EXIT_OK, EXIT_TOOL_ERROR
from mcp_elicit.cli.recording import Recording
from mcp_elicit.client.text import clean


def _fail(message: str, code: int = EXIT_FAILURE) -> int:
    print(f"mcp-elicit: {clean(message, single_line=True, max_length=2000)}", file=sys.stderr)
    return code


def parse_headers(values: list[str]) -> dict[str, str]:
    """``--header 'Name: value'`` options as a mapping; ValueError says which one is wrong.

    The characters are checked by the client's own header check (nothing that could break the
    request head)."""
    from mcp_elicit.client.http import check_header_values

    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        name, content = name.strip(), content.strip()
        try:
            if not sep or not name:
                raise ValueError(value)
            check_header_values({name: content})
        except ValueError:
            raise ValueError(f"--header {value!r} is not 'Name: value'") from None
        headers[name] = content
    return headers


def _answerer(answers: str | None, allow_loopback_http: bool = False) -> Any:
    """From the file, else the terminal; with neither, no answerer: the client then declares no
    elicitation capability (never more than it can do), and a tool that must ask fails with
    -32021 instead of hanging."""
    from mcp_elicit.client.answerers import ScriptedAnswerer, TerminalAnswerer

    if answers is not None:
        return ScriptedAnswerer.from_file(answers)
    if TerminalAnswerer.available():
        return TerminalAnswerer(allow_loopback_http=allow_loopback_http)
    return None


def run_call(
    target: str,
    tool: str,
    args_json: str,
    answers: str | None,
    timeout: float,
    *,
    headers: list[str] | None = None,
    allow_loopback_http: bool = False,
) -> int:
    try:
        arguments = json.loads(args_json)
    except json.JSONDecodeError as exc:
        return _fail(f"--args is not JSON: {exc}")
    if not isinstance(arguments, dict):
        return _fail('--args must be a JSON object, e.g. --args \'{"title": "x"}\'')
    try:
        extra = parse_headers(headers or [])
    except ValueError as exc:
        return _fail(str(exc))
    from mcp_elicit.client.answerers import AnswererError

    try:
        answerer = _answerer(answers, allow_loopback_http)
    except AnswererError as exc:
        return _fail(str(exc))
    recording = Recording(answerer) if answerer is not None else None
    return _run(_call(target, tool, arguments, recording, timeout, extra))


async def _call(
    target: str,
    tool: str,
    arguments: dict[str, Any],
    recording: Recording | None,
    limit: float,
    headers: dict[str, str],
) -> int:
    from mcp_elicit.client import Client

    async with asyncio.timeout(limit):
        options: dict[str, Any] = {"headers": headers} if headers else {}
        async with Client.connect(target, answerer=recording, stderr="capture", **options) as client:
            result = await client.call_tool(tool, arguments)
    text = result.text
    if result.is_error:
        return _fail(f"the tool reported an error: {text or '(no text)'}", EXIT_TOOL_ERROR)
    if text:
        print(text)
    if recording is not None and recording.refused:
        action, message = recording.refused[0]
        done = "declined" if action == "decline" else "cancelled"
        return _fail(f"{done}: the question {message!r} was {done}", EXIT_DECLINED)
    return EXIT_OK


def run_tools(target: str, *, headers: list[str] | None = None) -> int:
    try:
        extra = parse_headers(headers or [])
    except ValueError as exc:
        return _fail(str(exc))
    return _run(_tools(target, extra))


async def _tools(target: str, headers: dict[str, str]) -> int:
    from mcp_elicit.client import Client

    options: dict[str, Any] = {"headers": headers} if headers else {}
    async with asyncio.timeout(60), Client.connect(target, stderr="capture", **options) as client:
        tools = await client.list_tools()
    for tool in tools:
        name = clean(str(tool.get("name", "?")), single_line=True, max_length=200)
        description = clean(str(tool.get("description") or ""), single_line=True, max_length=300)
        print(f"{name}\t{description}" if description else name)
    return EXIT_OK


def _run(work: Any) -> int:
    from mcp_elicit.client import ClientError, MissingCapabilityError
    from mcp_elicit.client.answerers import AnswererError

    try:
        code: int = asyncio.run(work)
    except MissingCapabilityError as exc:
        return _fail(f"{exc}; run in a terminal to answer, or pass --answers FILE")
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except TimeoutError:
        return _fail("gave up: the call took longer than --timeout")
    except (ClientError, AnswererError) as exc:
        return _fail(f"{type(exc).__name__}: {exc}")
    except OSError as exc:
        return _fail(f"cannot reach the server: {exc}")
    return code
