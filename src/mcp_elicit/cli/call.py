"""``mcp-elicit call`` and ``mcp-elicit tools``: talk to any MCP server, 2026-07-28 or 2025-11-25.

The tool's text goes to stdout; everything else (the questions, errors) to stderr, so the
output can be piped. Without ``--answers`` the questions are asked in the terminal; with no
terminal and no answers file the command refuses to start rather than hang.

Which era the server speaks is found out when connecting (``--legacy`` / ``--modern`` force
one); it is named with every question and in the first line of ``tools``, a ``#`` comment.

A stdio server's stderr is captured: under a tool error or a protocol error the end of it is
shown (:mod:`mcp_elicit.cli.server_stderr`), all of it as it comes with ``--verbose``, and a
server whose Python cannot import its modules is said to be so in one sentence
(:mod:`mcp_elicit.cli.import_failure`). A URL that answers 404 is said to be wrong, with the
usual path to try.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mcp_elicit.cli import EXIT_DECLINED, EXIT_FAILURE, EXIT_OK, EXIT_TOOL_ERROR, write_output
from mcp_elicit.cli.recording import Recording
from mcp_elicit.cli.server_stderr import ServerStderr
from mcp_elicit.client.text import clean

if TYPE_CHECKING:
    from mcp_elicit.client import MissingCapabilityError, ServerExitedError
    from mcp_elicit.client.era import ProtocolChoice


def _fail(message: str, code: int = EXIT_FAILURE) -> int:
    print(f"mcp-elicit: {clean(message, single_line=True, max_length=2000)}", file=sys.stderr)
    return code


class _BadTarget(Exception):
    """TARGET is neither a usable URL nor a command line (a usage error, exit 2)."""


@contextlib.asynccontextmanager
async def _connect(
    target: str,
    answerer: Any,
    headers: dict[str, str],
    protocol: ProtocolChoice = "auto",
    server: ServerStderr | None = None,
) -> AsyncIterator[Any]:
    """A connected ``Client`` for TARGET (a command line through ``server``, which captures its
    stderr); a URL or command line it cannot use is a :class:`_BadTarget` with the reason, not
    a ValueError traceback, and a URL where nothing answers is an
    :class:`~mcp_elicit.client.errors.EndpointNotFoundError`."""
    from mcp_elicit.client import Client
    from mcp_elicit.client.era import not_found
    from mcp_elicit.client.errors import HttpStatusError

    options: dict[str, Any] = {"headers": headers} if headers else {}
    try:
        where: Any = target
        if server is not None:
            where = server.transport(shlex.split(target), display=target)
        connecting = Client.connect(
            where,
            answerer=answerer,
            protocol=protocol,
            on_url_complete=_say_url_complete,
            **options,
        )
    except ValueError as exc:  # the URL's parts, shell quoting, or an empty command line
        raise _BadTarget(f"TARGET {target!r} is not a server URL or command line: {exc}") from None
    try:
        client = await connecting
    except HttpStatusError as exc:
        # The client has found no era at this URL: a 404 is then the URL's fault.
        missing = not_found(exc, target)
        if missing is None:
            raise
        raise missing from None
    async with client:
        yield client


def _say_url_complete(done: Any) -> None:
    """A 2025-11-25 server says the browser step of a URL the person accepted is done."""
    server = clean(done.server.name, single_line=True, max_length=200)
    message = clean(done.message, single_line=True, max_length=300)
    print(f"{server} says the page you opened is done: {message}", file=sys.stderr, flush=True)


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def check_target(target: str, headers: dict[str, str]) -> str:
    """TARGET as the client should get it (a URL's scheme in lower case: ``HTTP://`` is a URL,
    not a command line), or :class:`_BadTarget` for what would go wrong silently: a URL of
    another scheme (it would be run as a command), credentials in the URL (never sent, yet
    repeated in every error message), ``--header`` with a command line (it has no HTTP)."""
    scheme = _SCHEME.match(target)
    if scheme is None:
        if headers:
            raise _BadTarget(
                "--header is sent with HTTP requests, and TARGET is the command line of a stdio "
                "server: give it what it needs in its arguments or environment instead"
            )
        return target
    name = scheme.group(1).lower()
    if name not in ("http", "https"):
        raise _BadTarget(
            f"TARGET {target!r} uses the {name}: scheme; a server is reached at an http:// or "
            "https:// URL, or started from a command line"
        )
    rest = target[scheme.end() :]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        host = authority.rpartition("@")[2]
        shown = f"{name}://\u2026@{host}{rest[len(authority) :]}"
        raise _BadTarget(
            f"TARGET {shown!r} holds credentials before the '@', which are not sent: pass them "
            "with --header 'Authorization: ...' instead"
        )
    return f"{name}://{rest}"


def parse_headers(values: list[str]) -> dict[str, str]:
    """``--header 'Name: value'`` options as a mapping; ValueError says which one is wrong.

    The client's own header checks decide: the name must be an HTTP field name, the value must
    hold nothing a request head cannot carry, and the headers the client writes itself are
    refused."""
    from mcp_elicit.client.http import header_value_problem, reserved_header
    from mcp_elicit.wire.http import is_token

    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        name, content = name.strip(), content.strip()
        if not sep or not is_token(name):
            raise ValueError(f"--header {value!r} is not 'Name: value'")
        reason = reserved_header(name)
        if reason is not None:
            raise ValueError(
                f"--header {value!r} cannot be sent: {reason} (others, such as Authorization, can be)"
            )
        problem = header_value_problem(content)
        if problem is not None:
            raise ValueError(f"--header {value!r} cannot be sent: {problem}")
        headers[name] = content
    return headers


def _answerer(answers: str | None, allow_loopback_http: bool = False) -> Any:
    """From the file, else the terminal; with neither, no answerer: the client then declares no
    elicitation capability (never more than it can do), and a tool that must ask fails with
    -32021 instead of hanging."""
    from mcp_elicit.client.answerers import ScriptedAnswerer, TerminalAnswerer

    if answers is not None:
        from mcp_elicit.cli.scripted_answers import ShowScriptedAnswers

        return ShowScriptedAnswers(ScriptedAnswerer.from_file(answers), allow_loopback_http)
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
    protocol: ProtocolChoice = "auto",
    verbose: bool = False,
) -> int:
    try:
        # NaN, Infinity and 1e400 are refused: they would go out as null, not what was typed.
        # (Not orjson: it would turn an integer past 64 bits into a float as silently.)
        arguments = json.loads(args_json, parse_constant=_not_a_number, parse_float=_finite)
    except ValueError as exc:  # json.JSONDecodeError is one
        return _fail(f"--args is not JSON: {exc}")
    except RecursionError:  # the decoder recurses once per level
        return _fail("--args is nested too deeply to read")
    if not isinstance(arguments, dict):
        return _fail('--args must be a JSON object, e.g. --args \'{"title": "x"}\'')
    try:
        extra = parse_headers(headers or [])
        target = check_target(target, extra)
    except (ValueError, _BadTarget) as exc:
        return _fail(str(exc))
    from mcp_elicit.client.answerers import AnswererError

    try:
        answerer = _answerer(answers, allow_loopback_http)
    except AnswererError as exc:
        return _fail(str(exc))
    recording = Recording(answerer) if answerer is not None else None
    modes = recording.modes if recording is not None else frozenset()
    server = _server_stderr(target, verbose)
    work = _call(target, tool, arguments, recording, timeout, extra, protocol, server)
    return _run(work, modes, answers is not None, server=server, target=target, protocol=protocol)


def _server_stderr(target: str, verbose: bool) -> ServerStderr | None:
    """For a command line: what the server writes on stderr, kept to explain a failure."""
    return None if _SCHEME.match(target) else ServerStderr(verbose=verbose)


async def _call(
    target: str,
    tool: str,
    arguments: dict[str, Any],
    recording: Recording | None,
    limit: float,
    headers: dict[str, str],
    protocol: ProtocolChoice = "auto",
    server: ServerStderr | None = None,
) -> int:
    async with asyncio.timeout(limit):
        async with _connect(target, recording, headers, protocol, server) as client:
            result = await client.call_tool(tool, arguments)
    text = result.text
    if result.is_error:
        code = _fail(f"the tool reported an error: {text or '(no text)'}", EXIT_TOOL_ERROR)
        if server is not None:
            server.show_tail()  # the server has exited: what it wrote last is there
        return code
    if text:
        # The server wrote this text: escape sequences (clipboard writes, window titles,
        # links, cursor moves) and bidi controls go; newlines and tabs stay readable.
        write_output(clean(text))
    if recording is not None and recording.refused:
        action, message = recording.refused[0]
        done = "declined" if action == "decline" else "cancelled"
        return _fail(f"{done}: the question {message!r} was {done}", EXIT_DECLINED)
    return EXIT_OK


def run_tools(
    target: str,
    *,
    headers: list[str] | None = None,
    protocol: ProtocolChoice = "auto",
    verbose: bool = False,
    as_json: bool = False,
) -> int:
    try:
        extra = parse_headers(headers or [])
        target = check_target(target, extra)
    except (ValueError, _BadTarget) as exc:
        return _fail(str(exc))
    server = _server_stderr(target, verbose)
    work = _tools(target, extra, protocol, server, as_json)
    return _run(work, server=server, target=target, protocol=protocol)


async def _tools(
    target: str,
    headers: dict[str, str],
    protocol: ProtocolChoice = "auto",
    server: ServerStderr | None = None,
    as_json: bool = False,
) -> int:
    from mcp_elicit.cli.tool_listing import listing_json, tool_lines

    async with asyncio.timeout(60), _connect(target, None, headers, protocol, server) as client:
        tools = await client.list_tools()
        identity = client.server_identity
    if as_json:
        about = {"name": identity.name, "title": identity.title, "version": identity.version}
        write_output(listing_json({**about, "protocolVersion": identity.protocol_version}, tools))
        return EXIT_OK
    name = clean(identity.name, single_line=True, max_length=200)
    version = f" {clean(identity.version, single_line=True, max_length=40)}" if identity.version else ""
    lines = [f"# {name}{version}, speaking {identity.era}"]
    for tool in tools:
        lines.extend(tool_lines(tool))
    write_output("\n".join(lines))
    return EXIT_OK


def _missing(exc: MissingCapabilityError, modes: frozenset[str], from_file: bool) -> str:
    """-32021 explained for this run: what the server wanted, whether this client declared
    it, and what (if anything) the person can do about it."""
    wanted = exc.missing
    said = f"the server says the call needs {', '.join(wanted) or 'a capability it did not name'}"
    said += f" ({exc.message})"
    elicitation = [n for n in wanted if n.split(".")[0] == "elicitation"]
    declared = [n for n in elicitation if _declares(n, modes)]
    undeclared = [n for n in elicitation if n not in declared]
    other = [n for n in wanted if n not in elicitation]
    if declared and not undeclared and not other:
        return (
            f"{said}, but this client declared {', '.join(declared)} on the request: the server "
            "did not take the declaration into account"
        )
    hints: list[str] = []
    if not modes and (undeclared or not wanted):
        hints.append(
            "this client declared no elicitation, as it has no terminal and no --answers: run in a "
            "terminal to answer, or pass --answers FILE"
        )
    elif undeclared:
        how = "an --answers file" if from_file else "this terminal"
        hints.append(f"this client did not declare {', '.join(undeclared)}: {how} cannot answer it")
    if other:
        hints.append(f"mcp-elicit call does not provide {', '.join(other)}")
    if not hints:
        hints.append(f"this client declared elicitation ({', '.join(sorted(modes))})")
    return f"{said}; {'; '.join(hints)}"


def _declares(name: str, modes: frozenset[str]) -> bool:
    """Whether declaring ``modes`` covers the dotted capability ``name`` ("elicitation" alone
    means form mode, as on the wire)."""
    _, _, mode = name.partition(".")
    return (mode or "form") in modes


def _run(
    work: Any,
    modes: frozenset[str] = frozenset(),
    from_file: bool = False,
    *,
    server: ServerStderr | None = None,
    target: str = "",
    protocol: ProtocolChoice = "auto",
) -> int:
    from mcp_elicit.client import ClientError, MissingCapabilityError, ServerExitedError
    from mcp_elicit.client.answerers import AnswererError
    from mcp_elicit.client.errors import AuthorizationRequiredError, EndpointNotFoundError

    show_tail = True  # under the error line, when a stdio server's stderr may explain it
    try:
        try:
            code: int = asyncio.run(work)
        finally:
            if server is not None:
                server.finish()
    except _BadTarget as exc:
        return _fail(str(exc))
    except MissingCapabilityError as exc:
        return _fail(_missing(exc, modes, from_file))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except TimeoutError:
        code = _fail("gave up: the call took longer than --timeout")
    except AuthorizationRequiredError as exc:
        name = type(exc).__name__
        return _fail(f"{name}: HTTP {exc.status}: {exc.reason} (pass --header 'Authorization: Bearer ...')")
    except EndpointNotFoundError as exc:
        modern = " (or a 2025-11-25 server that answers 404 before initialize: try without --modern)"
        return _fail(f"{exc}{modern if protocol == '2026-07-28' else ''}")
    except ServerExitedError as exc:
        code = _fail(_exited(exc, target, server))
    except AnswererError as exc:
        return _fail(f"{type(exc).__name__}: {exc}")
    except ClientError as exc:
        show_tail = _server_may_explain(exc)
        code = _fail(f"{type(exc).__name__}: {exc}")
    except OSError as exc:
        return _fail(f"cannot reach the server: {exc}")
    else:
        return code
    if show_tail and server is not None:
        server.show_tail()
    return code


def _server_may_explain(exc: Exception) -> bool:
    """Whether the server's stderr may say more about ``exc``: an error it answered, a message
    that broke the protocol, or it going away or not answering; not a failure of this side (an
    answer invalid three times, a round limit)."""
    from mcp_elicit.client.errors import LocalError, RequestTimeoutError, TransportError

    return not isinstance(exc, LocalError) or isinstance(exc, TransportError | RequestTimeoutError)


def _exited(exc: ServerExitedError, target: str, server: ServerStderr | None) -> str:
    """The server process ended: why, in one sentence when it could not import a module."""
    from mcp_elicit.cli.import_failure import explain, missing_module

    module = missing_module(server.captured) if server is not None else None
    if module is not None:
        return explain(shlex.split(target), module)
    return f"{type(exc).__name__}: {exc.summary}"


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is too large for a number")
    return value
