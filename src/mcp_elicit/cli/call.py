"""``mcp-elicit call`` and ``mcp-elicit tools``: talk to any MCP server, 2026-07-28 or 2025-11-25.

The tool's result goes to stdout (its text as it is, its other content as lines that say what
it is: :mod:`mcp_elicit.cli.tool_output`); everything else (the questions, errors) to stderr, so
the output can be piped. Without ``--answers`` the questions are asked in the terminal; with no
terminal and no answers file the command refuses to start rather than hang.

Which era the server speaks is found out when connecting (``--legacy`` / ``--modern`` force
one); it is named with every question and in the first line of ``tools``, a ``#`` comment.

A stdio server's stderr is captured: under a tool error or a protocol error the end of it is
shown (:mod:`mcp_elicit.cli.server_stderr`), all of it as it comes with ``--verbose``, and a
server whose Python cannot import its modules is said to be so in one sentence
(:mod:`mcp_elicit.cli.import_failure`). A URL that answers 404 is said to be wrong, with the
usual path to try.

Connecting has its own bound (``--connect-timeout``, :data:`CONNECT_TIMEOUT` seconds): a target
that is no MCP server (an HTTP server started as a stdio one, ``python`` waiting for a script, a
socket that never answers) fails with what it is likely to be, not after the call's ``--timeout``.
The call itself is bounded by ``--timeout`` only: it may wait on a person. Errors are one line,
``mcp-elicit: <what happened>``, with a hint where a common mistake explains them (a ``.py`` file
given as a command, a URL without ``http://``, a tool the server does not have); ``--verbose``
adds the client's error class.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shlex
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_elicit._tty import isatty
from mcp_elicit.cli import (
    CONNECT_TIMEOUT,
    EXIT_DECLINED,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_TOOL_ERROR,
    write_output,
)
from mcp_elicit.cli.recording import Recording
from mcp_elicit.cli.server_stderr import ServerStderr
from mcp_elicit.cli.tool_output import result_text
from mcp_elicit.client.text import clean
from mcp_elicit.wire.errors import INVALID_PARAMS, METHOD_NOT_FOUND

if TYPE_CHECKING:
    from mcp_elicit.client import (
        Client,
        ClientError,
        McpClientError,
        MissingCapabilityError,
        ServerExitedError,
    )
    from mcp_elicit.client.era import ProtocolChoice
    from mcp_elicit.client.errors import HttpStatusError, RequestTimeoutError, TransportError

_LISTING_SECONDS = 5.0  # to list the tools under an unknown tool's error; then it is left out
_TOOLS_SHOWN = 20


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
    connect_timeout: float = CONNECT_TIMEOUT,
) -> AsyncIterator[Any]:
    """A connected ``Client`` for TARGET (a command line through ``server``, which captures its
    stderr); a URL or command line it cannot use is a :class:`_BadTarget` with the reason, not
    a ValueError traceback, a URL where nothing answers is an
    :class:`~mcp_elicit.client.errors.EndpointNotFoundError`, and one that answers HTTP but not
    MCP a :class:`_BadTarget` saying so."""
    from mcp_elicit.client import Client
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
            connect_timeout=connect_timeout,
            **options,
        )
    except ValueError as exc:  # the URL's parts, shell quoting, or an empty command line
        raise _BadTarget(f"TARGET {target!r} is not a server URL or command line: {exc}") from None
    try:
        client = await connecting
    except HttpStatusError as exc:
        raise _no_era(exc, target) from None
    async with client:
        yield client


def _no_era(exc: HttpStatusError, target: str) -> Exception:
    """The error to report for an HTTP status that ended connecting to ``target``: the client
    has found no era there. A 404 is then the URL's fault; a status no MCP server answers its
    requests with (405, 501, ...) says that it is no MCP server. Credentials refused, and a
    server (or a proxy before it) that failed, are reported as they are."""
    from mcp_elicit.client.era import not_found
    from mcp_elicit.client.errors import AuthorizationRequiredError, EndpointNotFoundError

    missing = not_found(exc, target)
    if missing is not None:
        return missing
    if isinstance(exc, AuthorizationRequiredError | EndpointNotFoundError):
        return exc
    if exc.status >= 500 and exc.status != 501:  # it may be an MCP server that failed
        return exc
    return _BadTarget(f"{target} is not an MCP server: it answered {exc}")


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
    connect_timeout: float = CONNECT_TIMEOUT,
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
        check_not_cut(target, tool)
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
    work = _call(target, tool, arguments, recording, (timeout, connect_timeout), extra, protocol, server)
    return _run(
        work, modes, answers is not None, server=server, target=target, protocol=protocol, verbose=verbose
    )


def _server_stderr(target: str, verbose: bool) -> ServerStderr | None:
    """For a command line: what the server writes on stderr, kept to explain a failure."""
    return None if _SCHEME.match(target) else ServerStderr(verbose=verbose)


async def _call(
    target: str,
    tool: str,
    arguments: dict[str, Any],
    recording: Recording | None,
    limits: tuple[float, float],
    headers: dict[str, str],
    protocol: ProtocolChoice = "auto",
    server: ServerStderr | None = None,
) -> int:
    """``limits``: the whole run's (``--timeout``), and connecting's (``--connect-timeout``)."""
    from mcp_elicit.client import McpClientError

    limit, connect_timeout = limits
    async with asyncio.timeout(limit):
        async with _connect(target, recording, headers, protocol, server, connect_timeout) as client:
            try:
                result = await client.call_tool(tool, arguments)
            except McpClientError as exc:
                modes = recording.modes if recording is not None else frozenset()
                known = _what_to_do(exc, modes, protocol, client.protocol_version)
                if known is not None:
                    return _fail(f"{exc}; {known}")
                if exc.code != INVALID_PARAMS:  # the spec's code for an unknown tool, or bad arguments
                    raise
                missing = await _missing_tool(client, tool, target)
                return _fail(missing or f"{exc} (the tool and its arguments: {_tools_command(target)})")
            if result.is_error and "unknown tool" in result.text.lower():  # the Python SDK's way
                missing = await _missing_tool(client, tool, target)
                if missing is not None:
                    return _fail(missing)
    # Every block, cleaned of what a terminal would interpret (the server wrote it): text as
    # it is, an image or a resource as a line that says what it is.
    shown = result_text(result)
    if result.is_error:
        code = _fail(f"the tool reported an error: {shown or '(no content)'}", EXIT_TOOL_ERROR)
        if server is not None:
            server.show_tail()  # the server has exited: what it wrote last is there
        return code
    if shown:
        write_output(shown)
    else:  # stdout stays empty, as the result is; the person is told it is not lost
        print("(the tool returned no content)", file=sys.stderr)
    if recording is not None and recording.refused:
        action, message = recording.refused[0]
        done = "declined" if action == "decline" else "cancelled"
        return _fail(f"{done}: the question {message!r} was {done}", EXIT_DECLINED)
    return EXIT_OK


def _what_to_do(
    exc: McpClientError, modes: frozenset[str], protocol: ProtocolChoice, spoken: str
) -> str | None:
    """What a server error means for this run, when it is not about the tool or its arguments
    (the usual -32602): None for the others."""
    data = exc.data if isinstance(exc.data, dict) else {}
    said = exc.message.lower()
    if exc.code == METHOD_NOT_FOUND:
        return NO_TOOLS
    if exc.code == INVALID_PARAMS and data.get("reason") == "invalid_request_state":
        return (
            "the server no longer accepts this call's state: the question waited longer than it "
            "keeps a call open (or the server restarted); call the tool again"
        )
    if not modes and "elicit" in said and "not declared" in said:
        return _no_elicitation()  # a 2025-11-25 server's refusal, worded its own way
    if protocol == "auto" and spoken != "2025-11-25" and "elicitation/create" in said:
        # The official SDK's own ctx.elicit(), reached over 2026-07-28: it can only send the
        # question as a request, which 2025-11-25 has.
        return "the server asks its questions the 2025-11-25 way: try again with --legacy"
    return None


async def _missing_tool(client: Client, tool: str, target: str) -> str | None:
    """If the server does not list ``tool``: that, with the tools it has. None when it lists
    it, or does not answer ``tools/list`` quickly (then nothing is known)."""
    from mcp_elicit.client import ClientError

    try:
        async with asyncio.timeout(_LISTING_SECONDS):
            tools = await client.list_tools()
    except (ClientError, TimeoutError):
        return None
    names = [name for t in tools if isinstance(name := t.get("name"), str)]
    if tool in names:
        return None
    shown = ", ".join(clean(name, single_line=True, max_length=80) for name in names[:_TOOLS_SHOWN])
    more = f" and {len(names) - _TOOLS_SHOWN} more" if len(names) > _TOOLS_SHOWN else ""
    has = f"its tools: {shown}{more}" if names else "it lists no tools"
    asked = clean(tool, single_line=True, max_length=200)
    return f"the server has no tool {asked!r}; {has} (see {_tools_command(target)})"


def _tools_command(target: str) -> str:
    return f"mcp-elicit tools {shlex.quote(target)}"


def run_tools(
    target: str,
    *,
    headers: list[str] | None = None,
    protocol: ProtocolChoice = "auto",
    verbose: bool = False,
    as_json: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> int:
    try:
        extra = parse_headers(headers or [])
        target = check_target(target, extra)
    except (ValueError, _BadTarget) as exc:
        return _fail(str(exc))
    server = _server_stderr(target, verbose)
    work = _tools(target, extra, protocol, server, as_json, connect_timeout)
    return _run(work, server=server, target=target, protocol=protocol, verbose=verbose)


async def _tools(
    target: str,
    headers: dict[str, str],
    protocol: ProtocolChoice = "auto",
    server: ServerStderr | None = None,
    as_json: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> int:
    from mcp_elicit.cli.tool_listing import listing_json, tool_lines
    from mcp_elicit.client import McpClientError

    connecting = _connect(target, None, headers, protocol, server, connect_timeout)
    async with asyncio.timeout(60), connecting as client:
        identity = client.server_identity
        try:
            tools = await client.list_tools()
        except McpClientError as exc:
            if exc.code != METHOD_NOT_FOUND:
                raise
            tools = None  # a server with no tools need not know tools/list (it has no capability)
    if as_json:
        about = {"name": identity.name, "title": identity.title, "version": identity.version}
        write_output(listing_json({**about, "protocolVersion": identity.protocol_version}, tools or []))
        return EXIT_OK
    name = clean(identity.name, single_line=True, max_length=200)
    version = f" {clean(identity.version, single_line=True, max_length=40)}" if identity.version else ""
    lines = [f"# {name}{version}, speaking {identity.era}"]
    if tools is None:
        lines.append(f"({NO_TOOLS})")
    for tool in tools or []:
        lines.extend(tool_lines(tool))
    write_output("\n".join(lines))
    return EXIT_OK


NO_TOOLS = "the server offers no tools: it answers tools/list and tools/call with 'Method not found'"
NO_ELICITATION = (
    "this client declared no elicitation, as it has no terminal and no --answers: run in a "
    "terminal to answer, or pass --answers FILE"
)
NO_ELICITATION_STDERR = (
    "this client declared no elicitation: its form is drawn on stderr, which is redirected (not "
    "the terminal); run without redirecting stderr (no 2> or 2>&1) to answer, or pass --answers FILE"
)


def _no_elicitation() -> str:
    """Why nothing could be asked: no terminal at all, or one whose stderr (where the form is
    drawn) goes elsewhere."""
    if isatty(sys.stdin) and not isatty(sys.stderr):
        return NO_ELICITATION_STDERR
    return NO_ELICITATION


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
        hints.append(_no_elicitation())
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
    verbose: bool = False,
) -> int:
    """Run ``work``, and turn what it raised into one line on stderr (the error's class at its
    end with ``verbose``) and the exit code."""
    from mcp_elicit.client import ClientError, MissingCapabilityError, ServerExitedError
    from mcp_elicit.client.answerers import AnswererError
    from mcp_elicit.client.errors import AuthorizationRequiredError, EndpointNotFoundError

    show_tail = True  # under the error line, when a stdio server's stderr may explain it
    try:
        try:
            with _client_warnings_as_lines():
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
        advice = "(pass --header 'Authorization: Bearer ...')"
        return _fail(f"HTTP {exc.status}: {exc.reason} {advice}{_named(exc, verbose)}")
    except EndpointNotFoundError as exc:
        modern = " (or a 2025-11-25 server that answers 404 before initialize: try without --modern)"
        return _fail(f"{exc}{modern if protocol == '2026-07-28' else ''}{_named(exc, verbose)}")
    except ServerExitedError as exc:
        code = _fail(_exited(exc, target, server) + _named(exc, verbose))
    except AnswererError as exc:
        return _fail(f"{exc}{_named(exc, verbose)}")
    except ClientError as exc:
        show_tail = _server_may_explain(exc)
        code = _fail(_client_error(exc, target, server) + _named(exc, verbose))
    except OSError as exc:
        return _fail(f"cannot reach the server: {exc}")
    else:
        return code
    if show_tail and server is not None:
        server.show_tail()
    return code


@contextlib.contextmanager
def _client_warnings_as_lines() -> Iterator[None]:
    """The client library's warnings (a server's question this client refused, say) as lines of
    the CLI's own, ``mcp-elicit: ...``: with no handler configured, Python printed them bare."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("mcp-elicit: %(message)s"))
    log = logging.getLogger("mcp_elicit.client")
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)


def _named(exc: Exception, verbose: bool) -> str:
    """With ``--verbose``, the client's error class, after the message (for a bug report)."""
    return f" ({type(exc).__name__})" if verbose else ""


def _client_error(exc: ClientError, target: str, server: ServerStderr | None) -> str:
    """A client error in the words of the command line: what it likely means for this TARGET."""
    from mcp_elicit.client.errors import RequestTimeoutError, TransportError

    if isinstance(exc, RequestTimeoutError) and exc.setting == "connect_timeout":
        return _no_answer(exc, target, server)
    if isinstance(exc, TransportError) and isinstance(exc.__cause__, OSError) and server is not None:
        return _not_started(exc, target)
    if target.startswith("https://") and "WRONG_VERSION_NUMBER" in str(exc):
        # The TLS handshake got plain HTTP back: a server without a certificate (run_http's).
        return f"{exc} (the server answers plain http, not https: try http://{target[len('https://') :]})"
    return str(exc)


# Where a server says it serves MCP over HTTP (run_http's banner: "... at http://127.0.0.1:8000/mcp").
_SERVES_AT = re.compile(r"https?://[^\s'\"<>]+/mcp\b/?")


def _no_answer(exc: RequestTimeoutError, target: str, server: ServerStderr | None) -> str:
    """Connecting got no answer within ``--connect-timeout``: what TARGET likely is instead."""
    waited = f"{exc.seconds:g} s"
    if server is None:
        return (
            f"{target} did not answer within {waited}: is an MCP server listening there? "
            "(--connect-timeout SECONDS waits longer)"
        )
    longer = "if it is slow to start, give it longer with --connect-timeout SECONDS"
    said = clean(server.captured, single_line=True)
    serves = _SERVES_AT.search(said)
    if serves is not None:
        clue = f"It says it serves {serves.group(0)}: give that URL as TARGET instead."
    elif said.strip():
        clue = f"({longer})"
    else:
        clue = f"It wrote nothing to stderr ({longer})."
    return f"the server did not answer within {waited}: is {target!r} an MCP server on stdio? {clue}"


# TARGET written as a URL without its scheme: host:port, then a path or nothing.
_HOST_PORT = re.compile(r"(localhost|[\w.-]+\.[\w.-]+|\[[0-9A-Fa-f:.]+\]):\d{1,5}(/\S*)?")


def _not_started(exc: TransportError, target: str) -> str:
    """The server's command could not be started: what was probably meant, when it shows."""
    first = shlex.split(target)[0]  # it was split to be started, so this works
    if _HOST_PORT.fullmatch(target):
        return f"cannot start the server {target!r}: there is no such command; did you mean http://{target}?"
    if not Path(first).is_file():
        return str(exc)
    if first.endswith(".py"):
        python = "python" if shutil.which("python") else "python3"
        meant = shlex.quote(f"{python} {target}")
        said = f"{first} is a Python file, not a command"
        return f"cannot start the server {target!r}: {said}; did you mean {meant}?"
    if not os.access(first, os.X_OK):
        return (
            f"cannot start the server {target!r}: {first} is not executable; run it with its "
            "interpreter, or make it executable (chmod +x)"
        )
    return str(exc)


def check_not_cut(target: str, tool: str) -> None:
    """:class:`_BadTarget` for ``call python server.py``: the server's command line, unquoted,
    taken for TARGET and TOOL (``python`` would then wait for a script on its stdin)."""
    try:
        words = shlex.split(target)
    except ValueError:  # unclosed quotes: said when connecting
        return
    if _SCHEME.match(target) or len(words) != 1 or not Path(tool).is_file():
        return
    whole = shlex.quote(f"{target} {tool}")
    raise _BadTarget(
        f"TARGET {target!r} and TOOL {tool!r} look like one command line cut in two: quote the "
        f"server's command line, then name the tool: mcp-elicit call {whole} TOOL"
    )


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
    return exc.summary


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is too large for a number")
    return value
