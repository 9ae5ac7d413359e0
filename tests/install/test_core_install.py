"""``pip install mcp-elicit`` (no extra): a stdio server with dataclass forms runs, the command is
there, and every part that needs an extra says which one (one line from the command)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import accept, free_port, meta, only_key, text
from tests.install.installs import EXTRA_DISTRIBUTIONS, ROOT, SERVER, Venv, clean_env


def test_the_core_installs_no_package_of_an_extra(core: Venv) -> None:
    installed = core.installed()
    assert "mcp-elicit" in installed
    assert installed & EXTRA_DISTRIBUTIONS == set()


CORE = {"_closing", "_extras", "schema", "wire", "storage", "state", "server", "transport"}
IMPORT_EVERY_CORE_MODULE = """
import importlib, json, pkgutil, sys, mcp_elicit
core = set(sys.argv[1:])
names = [m.name for m in pkgutil.walk_packages(mcp_elicit.__path__, "mcp_elicit.")]
failed = {}
for name in names:
    if name.split(".")[1] in core:
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed[name] = repr(exc)
print(json.dumps({"imported": sum(n.split(".")[1] in core for n in names), "failed": failed}))
"""


def test_every_module_of_the_core_parts_imports(core: Venv, tmp_path: Path) -> None:
    done = core.run(core.python, "-c", IMPORT_EVERY_CORE_MODULE, *sorted(CORE), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["failed"] == {}
    package = ROOT / "src" / "mcp_elicit"
    parts = [path.relative_to(package).parts[0].split(".")[0] for path in package.rglob("*.py")]
    assert report["imported"] == sum(part in CORE for part in parts)  # the walk found every one


class StdioServer:
    """A server as a real subprocess of an environment, one JSON line each way."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = 0

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": {"_meta": meta(), **params}}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), 30)
        assert line, "the server closed stdout"
        reply = json.loads(line)
        assert reply["id"] == self.ids
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result


@asynccontextmanager
async def stdio_server(venv: Venv, script: Path, cwd: Path) -> AsyncIterator[StdioServer]:
    """``script`` served over stdio by ``venv``'s Python; it must exit 0 when stdin closes."""
    process = await asyncio.create_subprocess_exec(
        str(venv.python),
        str(script),
        cwd=cwd,
        env=clean_env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        yield StdioServer(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert process.returncode == 0


async def test_a_stdio_server_with_a_dataclass_form_answers_a_round_trip(core: Venv, tmp_path: Path) -> None:
    async with stdio_server(core, SERVER, tmp_path) as server:
        listed = await server.call("tools/list", {})
        assert [tool["name"] for tool in listed["tools"]] == ["book"]

        call = {"name": "book", "arguments": {"flight": "LH 123"}}
        first = await server.call("tools/call", call)
        key = only_key(first)
        schema = first["inputRequests"][key]["params"]["requestedSchema"]
        assert schema["properties"]["seats"] == {"type": "integer", "title": "Seats"}
        assert schema["properties"]["contact"]["format"] == "email"
        assert schema["properties"]["cabin"]["enum"] == ["economy", "business"]
        assert schema["required"] == ["seats", "contact"]

        answer = accept({"seats": 2, "contact": "ada@example.com", "cabin": "business"})
        retry = {**call, "inputResponses": {key: answer}, "requestState": first["requestState"]}
        done = await server.call("tools/call", retry)
        assert text(done) == "booked LH 123: 2 business seat(s) for ada@example.com"


async def test_the_tickets_example_runs_with_the_core(core: Venv, tmp_path: Path) -> None:
    # Its docstring says `pip install mcp-elicit` is enough for stdio.
    example = ROOT / "examples" / "tickets.py"
    assert "pip install mcp-elicit " in example.read_text()
    async with stdio_server(core, example, tmp_path) as server:
        call = {"name": "create_ticket", "arguments": {"title": "Printer on fire"}}
        first = await server.call("tools/call", call)
        key = only_key(first)
        schema = first["inputRequests"][key]["params"]["requestedSchema"]
        assert list(schema["properties"]) == ["priority", "due", "watchers", "reporter"]
        assert schema["properties"]["reporter"]["format"] == "email"


def test_the_asgi_app_needs_no_extra(core: Venv, tmp_path: Path) -> None:
    # Server.asgi() is for any ASGI server: the core builds and answers it; only run_http()
    # (uvicorn) needs [http].
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": meta(), "name": "book", "arguments": {"flight": "BA 1"}},
    }
    done = core.run(core.python, SERVER.with_name("asgi_post.py"), json.dumps(message), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["status"] == 200
    first = answer["reply"]["result"]
    key = only_key(first)
    assert first["inputRequests"][key]["params"]["message"] == "Book BA 1?"


@pytest.mark.parametrize(
    ("argv", "extras", "missing"),
    [
        (["call", "python3 server.py", "book"], "cli", "httpx"),
        (["tools", "python3 server.py"], "cli", "httpx"),
        (["demo", "--script"], "cli,connect", "httpx"),
    ],
)
def test_a_subcommand_without_its_extra_says_which_in_one_line(
    core: Venv, tmp_path: Path, argv: list[str], extras: str, missing: str
) -> None:
    done = core.run(core.script("mcp-elicit"), *argv, cwd=tmp_path)
    noun = "extras" if "," in extras else "extra"
    assert done.stderr == (
        f"mcp-elicit: the {argv[0]} command needs the [{extras}] {noun} ({missing} is not installed): "
        f"pip install 'mcp-elicit[{extras}]'\n"
    )
    assert (done.returncode, done.stdout) == (2, "")


def test_the_help_names_the_extra_of_each_subcommand(core: Venv, tmp_path: Path) -> None:
    done = core.run(core.script("mcp-elicit"), "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    words = " ".join(done.stdout.split())  # argparse wraps the help to the terminal
    for command, extras in (
        ("demo", "[cli,connect] extras"),
        ("call", "[cli] extra"),
        ("tools", "[cli] extra"),
    ):
        assert re.search(rf"\b{command} .*?\(needs the {re.escape(extras)}\)", words), (command, words)


def test_the_subcommands_of_the_core_run(core: Venv, tmp_path: Path) -> None:
    command = core.script("mcp-elicit")
    checked = core.run(command, "check", SERVER, cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (0, "1 tool, 1 form: no problems\n"), checked.stderr

    schema = tmp_path / "form.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"name": {"type": "string"}}}))
    linted = core.run(command, "schema", "lint", schema, cwd=tmp_path)
    assert (linted.returncode, linted.stdout) == (0, f"{schema}: inside the subset\n"), linted.stderr

    key = core.run(command, "keygen", cwd=tmp_path)
    assert key.returncode == 0, key.stderr
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}\n", key.stdout)


# Each snippet uses one part without its extra; it must fail with an ImportError naming the extra.
PARTS = {
    "http": "from mcp_elicit import Server\nServer('web').run_http(host='127.0.0.1', port={port})",
    "cli": "from mcp_elicit.client import Client",
    "connect": "from mcp_elicit.connect.kit import ConnectKit",
    "postgres": (
        "from mcp_elicit.state.postgres_store import PostgresSingleUseStore\n"
        "PostgresSingleUseStore('postgresql://postgres@127.0.0.1:5432/test')"
    ),
    # A dataclass as a tool argument is read by pydantic (a form from one is not).
    "pydantic": (
        "from dataclasses import dataclass\nfrom mcp_elicit import Server\napp = Server('p')\n"
        "@dataclass\nclass Point:\n    x: int\n"
        "@app.tool()\nasync def move(to: Point) -> str:\n    return 'moved'"
    ),
}
WHAT = {
    "http": "Server.run_http() needs the [http] extra (uvicorn is not installed)",
    "cli": "the MCP client (mcp_elicit.client) needs the [cli] extra (httpx is not installed)",
    "connect": "the URL-mode kit (mcp_elicit.connect) needs the [connect] extra (authlib is not installed)",
    "postgres": "the PostgreSQL single-use store needs the [postgres] extra (psycopg is not installed)",
    "pydantic": "move: the argument 'to' (Point) needs the [pydantic] extra (pydantic is not installed)",
}


@pytest.mark.parametrize("extra", sorted(PARTS))
def test_a_part_without_its_extra_raises_an_import_error_naming_it(
    core: Venv, tmp_path: Path, extra: str
) -> None:
    snippet = PARTS[extra].replace("{port}", str(free_port()))
    # A traceback shows only the error itself: no internal exception it was raised while handling.
    probe = (
        "try:\n" + "".join(f"    {line}\n" for line in snippet.splitlines()) + "except ImportError as exc:\n"
        "    print(exc)\n    print(exc.__suppress_context__ or exc.__context__ is None)\n"
        "else:\n    print('no error')\n"
    )
    done = core.run(core.python, "-c", probe, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{WHAT[extra]}: pip install 'mcp-elicit[{extra}]'\nTrue\n"
    assert done.stderr == ""  # nothing said before it (run_http's key warning came first)


# docs/install.md and the server guide's table: these argument types need no extra, a set does.
PLAIN_ARGUMENTS = """
import enum
from typing import Any, Literal
from mcp_elicit import Server
app = Server('plain')
class Colour(enum.Enum):
    RED = 'red'
@app.tool()
async def plain(a: str, b: int, c: float, d: bool, e: Any, f: Literal['x', 'y'], g: Colour,
                h: list[str], i: dict[str, int], j: int | None = None) -> str:
    return 'ok'
try:
    @app.tool()
    async def tags(t: set[str]) -> str:
        return 'ok'
except ImportError as exc:
    print(exc)
"""


def test_the_argument_types_read_without_pydantic_are_the_documented_ones(core: Venv, tmp_path: Path) -> None:
    done = core.run(core.python, "-c", PLAIN_ARGUMENTS, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tags: the argument 't' (set[str]) needs the [pydantic] extra")
