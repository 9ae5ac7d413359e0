"""The ``mcp-elicit`` command line.

    mcp-elicit demo [--script]                      the whole thing end to end, on this machine
    mcp-elicit call TARGET TOOL [--args JSON] [--answers FILE] [--header "NAME: VALUE"]
                    [--allow-loopback-http] [--legacy | --modern] [--verbose]
                    [--timeout SECONDS] [--connect-timeout SECONDS]
    mcp-elicit tools TARGET [--header "NAME: VALUE"] [--legacy | --modern] [--verbose] [--json]
                    [--connect-timeout SECONDS] [--allow-loopback-http (changes nothing)]
    mcp-elicit --version
    mcp-elicit schema lint FILE
    mcp-elicit check module:app | path/to/server.py   build every form the handlers name
    mcp-elicit keygen                               a new requestState key for MCP_ELICIT_STATE_KEYS

TARGET is an ``http(s)://`` URL or a command line that starts a stdio server. Each subcommand
imports what it needs when it runs, so that start-up stays fast. The command comes with the core
install; ``call``, ``tools`` and ``demo`` need extras (:data:`COMMAND_EXTRAS`), and without them
say which in one line.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from mcp_elicit._extras import MissingExtra, require

# Exit codes: 0 success; 1 the tool reported an error; 2 usage, protocol or transport error;
# 3 the person declined or cancelled a question; 4 the command's own output could not be
# written; 141 the output pipe was closed (128 + SIGPIPE, as a shell reports a tool it killed).
EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_FAILURE = 2
EXIT_DECLINED = 3
EXIT_OUTPUT = 4
EXIT_BROKEN_PIPE = 141

CONNECT_TIMEOUT = 10.0  # seconds: --connect-timeout's default (a tool call is not bounded by it)

# The extras a subcommand needs beyond the core (docs/install.md); the others need none.
COMMAND_EXTRAS: dict[str, tuple[str, ...]] = {"call": ("cli",), "tools": ("cli",), "demo": ("cli", "connect")}

_EPILOG = """exit status:
  0    success
  1    the tool reported an error (schema lint, check: the schema or a form has problems)
  2    usage, protocol or transport error
  3    a question was declined or cancelled
  4    the output could not be written (a full disk, ...)
  130  interrupted
  141  the output pipe was closed (e.g. `| head`): the command ends quietly"""


class OutputError(Exception):
    """Writing the command's own output (stdout) failed: a local problem, never the server's."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def write_output(text: str) -> None:
    """Print ``text`` to stdout, flushed at once so that a full disk or a closed pipe shows up
    here as an :class:`OutputError` (not later, or as another error such as a server one)."""
    try:
        print(text, flush=True)
    except OSError as exc:
        raise OutputError(exc) from exc


def _output_failed(error: OSError) -> int:
    # What is still buffered would fail again when Python flushes stdout at exit ("Exception
    # ignored ..."): send it to /dev/null instead.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no descriptor behind stdout (captured in a test): nothing to do
        pass
    if isinstance(error, BrokenPipeError):
        return EXIT_BROKEN_PIPE  # the reader has gone (`| head`): nothing to say, nobody to say it to
    print(f"mcp-elicit: cannot write the output: {error.strerror or error}", file=sys.stderr)
    return EXIT_OUTPUT


def _positive_seconds(text: str) -> float:
    """A ``--timeout``: a positive, finite number (NaN, 0 or less would give up at once)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive, finite number of seconds")
    return value


class _Version(argparse.Action):
    """``--version``: the installed distribution's version, looked up only when asked for (the
    lookup reads the installed metadata: start-up stays fast)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version of mcp-elicit and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> NoReturn:
        from importlib import metadata

        try:
            version = metadata.version("mcp-elicit")
        except metadata.PackageNotFoundError:  # run from a source tree that was never installed
            from mcp_elicit import __version__ as version
        print(f"mcp-elicit {version}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-elicit",
        description="MCP elicitation from the terminal.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser(
        "demo", help="run the bundled issue-tracker demo end to end (needs the [cli,connect] extras)"
    )
    demo.add_argument("--script", action="store_true", help="play the scripted walk-through (no TTY needed)")

    call = commands.add_parser(
        "call", help="call a tool, answering its questions in the terminal (needs the [cli] extra)"
    )
    call.add_argument("target", help="an http(s):// URL, or the command line of a stdio server")
    call.add_argument("tool")
    call.add_argument("--args", default="{}", help="the tool's arguments as a JSON object")
    call.add_argument("--answers", metavar="FILE", help="answer from a JSON file instead of the terminal")
    call.add_argument(
        "--timeout", type=_positive_seconds, default=1800.0, help="give up after this many seconds"
    )
    call.add_argument(
        "--allow-loopback-http",
        action="store_true",
        help="offer to open http://127.0.0.1 links (a server on this machine, in development)",
    )

    tools = commands.add_parser(
        "tools", help="list a server's tools, with their arguments (needs the [cli] extra)"
    )
    tools.add_argument("target")
    tools.add_argument(
        "--json", action="store_true", help="print the server and its tools as JSON, as the server sent them"
    )
    # Accepted so that a `call` command line can become a `tools` one by changing the word:
    # listing asks no question, so there is no link to open and the flag changes nothing.
    tools.add_argument(
        "--allow-loopback-http",
        action="store_true",
        help="accepted as for call, and changes nothing here: tools asks no question, so opens no link",
    )
    for command in (call, tools):
        command.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="show a stdio server's stderr as it is written, each line prefixed with [server] "
            "(without it, the end of it is shown under an error), and the class of an error",
        )
        command.add_argument(
            "--connect-timeout",
            type=_positive_seconds,
            default=CONNECT_TIMEOUT,
            metavar="SECONDS",
            help="give up if the server has not answered the opening exchange (server/discover or "
            "initialize) by then (default: 10); the tool call itself is not bounded by it",
        )
        command.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="'NAME: VALUE'",
            help="an HTTP header for every request, e.g. 'Authorization: Bearer ...' (repeatable)",
        )
        era = command.add_mutually_exclusive_group()
        era.add_argument(
            "--legacy",
            dest="protocol",
            action="store_const",
            const="2025-11-25",
            default="auto",
            help="speak MCP 2025-11-25 (the initialize handshake) without asking the server first; "
            "for servers that speak both eras and keep their questions for the old one",
        )
        era.add_argument(
            "--modern",
            dest="protocol",
            action="store_const",
            const="2026-07-28",
            help="speak MCP 2026-07-28 only (no fallback to the initialize handshake)",
        )

    schema = commands.add_parser("schema", help="requestedSchema utilities")
    schema_commands = schema.add_subparsers(dest="schema_command", required=True, metavar="SUBCOMMAND")
    lint = schema_commands.add_parser("lint", help="check a hand-written requestedSchema")
    lint.add_argument("file", help="a JSON file holding the schema ('-' for stdin)")
    lint.add_argument("--message", default="", help="the message the form is sent with, to lint it too")

    check = commands.add_parser("check", help="build every form a server's handlers ask with, without a call")
    check.add_argument("target", help="module:app, path/to/server.py or path/to/server.py:app")

    commands.add_parser("keygen", help="print a new requestState key")
    return parser


def _fill_closed_streams() -> bool:
    """Started with ``<&-``, ``>&-`` or ``2>&-``: Python leaves that stream None (``print`` then
    drops text, or writes errors to stdout; reading it is an AttributeError). Put /dev/null
    there, on its own descriptor too, so that no pipe or file opened later takes the number and
    gets written to as stdout or stderr. Returns whether stdout was closed."""
    stdout_closed = sys.stdout is None
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:  # really closed (not an embedding that left sys.stdout unset)
            null = os.open(os.devnull, os.O_RDONLY if mode == "r" else os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115 - for the whole run
    return stdout_closed


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; words left over are an error, with a hint when they look like the rest
    of a server's command line that was not quoted (``call python server.py book_trip``)."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}{_unquoted_hint(args, extra)}")
    return args


def _unquoted_hint(args: argparse.Namespace, extra: list[str]) -> str:
    """For ``call``/``tools``, words after TARGET that are no options: the command line of the
    server, unquoted. The hint gives it quoted (the last word is then the tool, for ``call``)."""
    if args.command not in ("call", "tools") or any(word.startswith("-") for word in extra):
        return ""
    said = "; quote the server's command line: mcp-elicit"
    if args.command == "tools":
        return f"{said} tools {shlex.quote(' '.join([args.target, *extra]))}"
    words: list[str] = [args.target, args.tool, *extra]
    return f"{said} call {shlex.quote(' '.join(words[:-1]))} {shlex.quote(words[-1])}"


def main(argv: Sequence[str] | None = None) -> int:
    stdout_closed = _fill_closed_streams()
    args = _parse(argv)
    if stdout_closed:
        # Every command's result goes to stdout: running one (a tool call has effects) whose
        # result nobody can see would end "successfully" with nothing shown.
        print("mcp-elicit: cannot write the output: stdout is closed", file=sys.stderr)
        return EXIT_OUTPUT
    try:
        # Before anything runs: a tool call must not be made, then fail at its first question.
        require(*COMMAND_EXTRAS.get(args.command, ()), part=f"the {args.command} command")
        return _run_command(args)
    except MissingExtra as exc:
        print(f"mcp-elicit: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except OutputError as exc:
        return _output_failed(exc.error)


def _run_command(args: argparse.Namespace) -> int:
    if args.command == "schema":
        from mcp_elicit.cli.schema_lint import run_lint

        return run_lint(args.file, args.message)
    if args.command == "check":
        from mcp_elicit.cli.check import run_check

        return run_check(args.target)
    if args.command == "keygen":
        from mcp_elicit.state.keys import KeyRing

        write_output(KeyRing.generate_secret())
        return EXIT_OK
    if args.command in ("call", "tools"):
        from mcp_elicit.cli.call import run_call, run_tools

        # What both take: how to reach the server, and how to report.
        reach = {
            "headers": args.header,
            "protocol": args.protocol,
            "verbose": args.verbose,
            "connect_timeout": args.connect_timeout,
        }
        if args.command == "tools":
            return run_tools(args.target, as_json=args.json, **reach)
        return run_call(
            args.target,
            args.tool,
            args.args,
            args.answers,
            args.timeout,
            allow_loopback_http=args.allow_loopback_http,
            **reach,
        )
    from mcp_elicit.cli.demo import run_demo

    return run_demo(script=args.script or not sys.stdin.isatty())


def entry() -> None:
    sys.exit(main())
