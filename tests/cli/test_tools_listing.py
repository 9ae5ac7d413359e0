"""``mcp-elicit tools`` explains each tool (issue 20, point 10): title, description and arguments
(name, type, required or optional, default), at 80 columns, one line per tool name for scripts;
``--json`` for scripts that want it all. Real servers, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.cli.tool_listing import type_of
from tests.cli.cli_support import cli

TRIPS = textwrap.dedent(
    '''
    from datetime import date
    from enum import Enum
    from typing import Annotated, Literal

    from pydantic import Field

    from mcp_elicit import Context, Server

    app = Server("trips", version="1.2.0", state_keys=["tools-listing-tests-secret-0123456789abcdef"])


    class Cabin(Enum):
        ECONOMY = "economy"
        BUSINESS = "business"


    @app.tool(title="Book a trip")
    async def book_trip(
        ctx: Context,
        city: Annotated[str, Field(description="The city to fly to, by its English name (Oslo, Lisbon).")],
        nights: int = 3,
        cabin: Cabin = Cabin.ECONOMY,
        leaving: date | None = None,
        seat: Literal["aisle", "window"] = "aisle",
        travellers: list[str] = [],
    ) -> str:
        """Books a trip to a city, asking the traveller for anything that is missing before it pays
        for the flight and the hotel. See https://trips.example.com/help/booking-a-trip-in-detail.

        The rest of the docstring is not the description."""
        return "booked"


    @app.tool()
    async def ping() -> str:
        return "pong"


    app.run_stdio()
    '''
)

LISTING = """\
# trips 1.2.0, speaking MCP 2026-07-28
book_trip\tBook a trip
    Books a trip to a city, asking the traveller for anything that is missing
    before it pays for the flight and the hotel. See
    https://trips.example.com/help/booking-a-trip-in-detail.
    - city: string, required
        The city to fly to, by its English name (Oslo, Lisbon).
    - nights: integer, optional, default 3
    - cabin: "economy" | "business", optional, default "economy"
    - leaving: string (date) | null, optional, default null
    - seat: "aisle" | "window", optional, default "aisle"
    - travellers: array of string, optional, default []
ping
    (no arguments)
"""


@pytest.fixture
def trips(tmp_path: Path) -> str:
    path = tmp_path / "trips.py"
    path.write_text(TRIPS)
    return f"{sys.executable} {path}"


def test_tools_shows_title_description_and_arguments(trips: str) -> None:
    done = cli("tools", trips)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == LISTING
    assert max(len(line.expandtabs()) for line in done.stdout.splitlines()) <= 80


def test_each_tool_name_starts_a_line_for_scripts(trips: str) -> None:
    out = cli("tools", trips).stdout
    names = [line.split("\t")[0] for line in out.splitlines() if line[:1] not in ("#", " ")]
    assert names == ["book_trip", "ping"]
    cut = subprocess.run(["cut", "-f1"], input=out, capture_output=True, text=True, check=True).stdout
    assert [line for line in cut.splitlines() if not line.startswith((" ", "#"))] == ["book_trip", "ping"]


def test_tools_takes_the_loopback_flag_of_call(http_target: str) -> None:
    # A `call URL ... --allow-loopback-http` line turned into `tools URL ...` was refused
    # ("unrecognized arguments"). Listing opens no link: the flag is taken, changes nothing,
    # and --help says so.
    plain = cli("tools", http_target)
    flagged = cli("tools", http_target, "--allow-loopback-http")
    assert (flagged.returncode, flagged.stderr) == (0, "")
    assert flagged.stdout == plain.stdout
    assert "changes nothing here" in " ".join(cli("tools", "--help").stdout.split())


def test_json_gives_the_server_and_its_tools_as_sent(trips: str) -> None:
    done = cli("tools", trips, "--json")
    assert done.returncode == 0
    listing = json.loads(done.stdout)
    assert listing["server"] == {
        "name": "trips",
        "title": None,
        "version": "1.2.0",
        "protocolVersion": "2026-07-28",
    }
    book, ping = listing["tools"]
    assert (book["name"], book["title"], ping["name"]) == ("book_trip", "Book a trip", "ping")
    assert book["inputSchema"]["required"] == ["city"]
    assert done.stdout.isascii()


# -- a server that sends what it likes -----------------------------------------------------------
RAW = textwrap.dedent(
    """
    import json, os, sys

    TOOLS = json.loads(os.environ["RAW_TOOLS"])
    INFO = {"io.modelcontextprotocol/serverInfo": {"name": "raw\\u001b[2J", "version": "0"}}
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
        else:
            result = {"tools": TOOLS}
        result.update(resultType="complete", _meta=INFO)
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\\n")
        sys.stdout.flush()
    """
)


def raw_tools(tmp_path: Path, tools: list[dict[str, Any]], *extra: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "raw.py"
    path.write_text(RAW)
    return subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", "tools", f"{sys.executable} {path}", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "RAW_TOOLS": json.dumps(tools)},
    )


ESCAPES = "\x1b]0;PWNED\x07\x1b[31m"


def test_the_servers_text_is_cleaned_and_bounded(tmp_path: Path) -> None:
    tools = [
        {
            "name": f"evil{ESCAPES}\tname\nnext",
            "title": f"Title{ESCAPES}",
            "description": "Line one \x1b[2J\rline two \u202eevil " + "word " * 2000,
            "inputSchema": {
                "type": "object",
                "properties": {
                    f"arg{ESCAPES}": {"type": f"str{ESCAPES}ing", "description": "\x07beep"},
                    **{f"a{n}": {"type": "integer"} for n in range(60)},
                },
            },
        }
    ]
    done = raw_tools(tmp_path, tools)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "# raw 0, speaking MCP 2026-07-28"
    assert lines[1] == "evil name next\tTitle"
    assert lines[2] == "    Line one line two evil word word word word word word word word word word"
    for control in ("\x1b", "\x07", "\r", "\u202e", "PWNED"):
        assert control not in done.stdout
    described = [line for line in lines if line.startswith("    ") and not line.startswith("    -")]
    assert sum(len(line) for line in described) < 1200  # the description is cut
    assert "    - arg: string, optional" in lines
    assert "        beep" in lines
    assert lines[-1] == "    - ... and 11 more"  # 50 arguments shown of 61
    assert max(len(line) for line in lines) <= 80


def test_odd_schemas_are_described_without_failing(tmp_path: Path) -> None:
    looped = {"$ref": "#/$defs/Loop"}
    tools = [
        {"name": "no_schema"},
        {"name": "not_an_object", "inputSchema": [1, 2]},
        {
            "name": "odd",
            "inputSchema": {
                "type": "object",
                "$defs": {"Loop": {"anyOf": [looped, {"type": "null"}]}},
                "properties": {
                    "loop": looped,
                    "types": {"type": ["string", "null"]},
                    "const": {"const": "fixed"},
                    "many": {"enum": list(range(20))},
                    "nested": {"type": "array", "items": {"type": "array", "items": {"type": "object"}}},
                    "nothing": {},
                    "remote": {"$ref": "https://example.com/schema"},
                    "odd_default": {"type": "string", "default": {"x" * 100: 1}},
                },
                "required": "not a list",
            },
        },
    ]
    done = raw_tools(tmp_path, tools)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        "no_schema",
        "    (no arguments)",
        "not_an_object",
        "    (no arguments)",
        "odd",
        "    - loop: ... | null, optional",
        "    - types: string | null, optional",
        '    - const: "fixed", optional',
        "    - many: 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | ..., optional",
        "    - nested: array of array of object, optional",
        "    - nothing: any, optional",
        "    - remote: object, optional",
        "    - odd_default: string, optional, default",  # a hanging indent for what does not fit
        '      {"' + "x" * 57 + "\u2026",
    ]


def test_json_escapes_what_a_terminal_would_run(tmp_path: Path) -> None:
    done = raw_tools(tmp_path, [{"name": f"t{ESCAPES}", "inputSchema": {"type": "object"}}], "--json")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert json.loads(done.stdout)["tools"][0]["name"] == f"t{ESCAPES}"  # exact, for a script


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        ({"type": "string", "format": "email"}, "string (email)"),
        ({"anyOf": [{"type": "integer"}, {"type": "integer"}]}, "integer"),
        ({"oneOf": [{"type": "string"}, {"type": "boolean"}]}, "string | boolean"),
        ({"type": "array"}, "array"),
        ({"properties": {}}, "object"),
        ("not a schema", "any"),
    ],
)
def test_type_of(schema: Any, shown: str) -> None:
    assert type_of(schema, {}) == shown


NO_TOOLS = textwrap.dedent(
    """
    from mcp_elicit import Server

    app = Server("empty", version="1", state_keys=["tools-listing-tests-secret-0123456789abcdef"])


    @app.prompt()
    async def greet() -> str:
        return "hello"


    app.run_stdio()
    """
)


@pytest.mark.parametrize("protocol", [[], ["--legacy"]], ids=["2026-07-28", "2025-11-25"])
def test_a_server_without_tools_is_said_to_have_none(tmp_path: Path, protocol: list[str]) -> None:
    """A server with no tools does not offer the capability, so it answers tools/list and
    tools/call with 'Method not found': `tools` says it has none, `call` why nothing ran."""
    script = tmp_path / "empty.py"
    script.write_text(NO_TOOLS, encoding="utf-8")
    target = f"{sys.executable} {script}"
    listed = cli("tools", target, *protocol)
    assert listed.returncode == 0, listed.stderr
    assert (
        listed.stdout.splitlines()[1]
        == "(the server offers no tools: it answers tools/list and tools/call with 'Method not found')"
    )
    as_json = cli("tools", target, "--json", *protocol)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["tools"] == []
    called = cli("call", target, "greet", *protocol)
    assert called.returncode == 2  # failed: no tool ran
    assert called.stderr.rstrip().endswith(
        "; the server offers no tools: it answers tools/list and tools/call with 'Method not found'"
    )
    assert "Traceback" not in called.stderr + listed.stderr
