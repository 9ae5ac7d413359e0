"""``mcp-elicit check``: a real process imports a server file from ``tmp_path`` and reports every
form its handlers would be refused, with file:line, before anyone calls a tool."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli.cli_support import one_clear_line

MODELS = """
from dataclasses import dataclass


@dataclass
class Address:
    city: str


@dataclass
class Account:
    user: str
    api_key: str  # at: Account.api_key
"""

PROBLEMS = """
from dataclasses import dataclass

import models
from mcp_elicit import Context, Server

app = Server("trips")


@dataclass
class Login:
    user: str
    password: str  # at: Login.password


@dataclass
class Trip:
    destination: str
    address: models.Address  # at: Trip.address
    nights: int = "two"  # at: Trip.nights


@app.tool()
async def sign_in(ctx: Context) -> str:
    await ctx.elicit("Sign in", Login)  # at: sign_in
    return "ok"


@app.tool()
async def book(ctx: Context, city: str) -> str:
    await ctx.elicit("Sure?")
    await ctx.elicit("Where to?", Trip)  # at: book.trip
    await ctx.elicit("Your account", schema=models.Account)  # at: book.account
    return city


@app.prompt()
async def count(ctx: Context) -> str:
    await ctx.elicit(
        "How many?",  # at: count
        {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}},
    )
    return "x"


if __name__ == "__main__":
    raise SystemExit("the check must not run this")
"""

CLEAN = """
from dataclasses import dataclass
from typing import Literal

from mcp_elicit import Context, Server

app = Server("clean")


@dataclass
class Booking:
    nights: int = 1
    room: Literal["single", "double"] = "double"


@app.tool()
async def book(ctx: Context) -> str:
    await ctx.elicit("Book?", Booking)
    await ctx.elicit("Sure?")
    return "ok"


@app.tool()
async def hello(name: str) -> str:
    return name


@app.resource("notes://{id}")
async def note(id: str, ctx: Context) -> str:
    await ctx.elicit("Show it?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    return id
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def at(path: Path, marker: str) -> int:
    lines = path.read_text().splitlines()
    (line,) = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# at: {marker}")]
    return line


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``mcp-elicit check ARGS`` as a real process in ``cwd`` (this checkout's sources first)."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src}
    env.pop("MCP_ELICIT_STATE_KEYS", None)
    return subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_every_problem_of_every_handler_in_one_run(tmp_path: Path) -> None:
    models = write(tmp_path, "models.py", MODELS)
    server = write(tmp_path, "server.py", PROBLEMS)
    done = check("server.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    starts = [line.split(": ", 2)[:2] for line in lines]
    assert starts == [
        [f"server.py:{at(server, 'sign_in')}", "tool 'sign_in'"],
        [f"server.py:{at(server, 'book.trip')}", "tool 'book'"],
        [f"server.py:{at(server, 'book.trip')}", "tool 'book'"],
        [f"server.py:{at(server, 'book.account')}", "tool 'book'"],
        [f"server.py:{at(server, 'count') - 1}", "prompt 'count'"],
    ]
    assert lines[0].split(": ", 2)[2].startswith("the form asks for secrets (field 'password'")
    assert lines[0].endswith(f"(declared at line {at(server, 'Login.password')})")
    assert lines[1].split(": ", 2)[2].startswith("field 'address': nested models are outside")
    assert lines[1].endswith(f"(declared at line {at(server, 'Trip.address')})")
    assert lines[2].split(": ", 2)[2] == (
        "field 'nights': default 'two' does not fit the field: must be a whole number, got the text "
        f"'two' (declared at line {at(server, 'Trip.nights')})"
    )
    assert "(field 'api_key': its name asks for an API key" in lines[3]
    assert lines[3].endswith(f"(declared at models.py:{at(models, 'Account.api_key')})")
    assert lines[4].split(": ", 2)[2] == (
        "/properties/n/default: default 'x' does not fit the field: must be a whole number, got the "
        f"text 'x' (declared at line {at(server, 'count') + 1})"
    )
    assert done.stderr == "2 tools, 1 prompt, 5 forms: 5 problems\n"


def test_a_module_and_its_attribute_are_found_from_the_current_directory(tmp_path: Path) -> None:
    write(tmp_path, "models.py", MODELS)
    write(tmp_path, "server.py", PROBLEMS)
    by_module = check("server:app", cwd=tmp_path)
    by_file = check("server.py:app", cwd=tmp_path)
    whole_module = check("server", cwd=tmp_path)
    assert by_module.returncode == by_file.returncode == whole_module.returncode == 1
    assert by_module.stdout == by_file.stdout == whole_module.stdout
    assert len(by_module.stdout.splitlines()) == 5


def test_a_clean_server_exits_0_with_one_line(tmp_path: Path) -> None:
    write(tmp_path, "clean.py", CLEAN)
    done = check("clean.py", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "2 tools, 1 resource, 3 forms: no problems\n",
        "",  # nor the warning about an ephemeral state key: the check seals nothing
    )


def test_a_server_in_another_directory_is_shown_by_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    write(folder, "models.py", MODELS)
    write(folder, "server.py", PROBLEMS)
    done = check(str(folder / "server.py"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith("app/server.py:")


def test_forms_it_cannot_build_are_named_and_do_not_fail(tmp_path: Path) -> None:
    server = write(
        tmp_path,
        "dynamic.py",
        """
        from mcp_elicit import Context, Server

        app = Server("dynamic")


        @app.tool()
        async def ask(ctx: Context, fields: list[str]) -> str:
            schema = {"type": "object", "properties": {f: {"type": "string"} for f in fields}}
            await ctx.elicit("Fill in", schema)  # at: ask
            return "ok"
        """,
    )
    done = check("dynamic.py", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout == "1 tool, 0 forms: no problems (1 form not checked: see above)\n"
    assert done.stderr == (
        f"note: dynamic.py:{at(server, 'ask')}: tool 'ask': not checked: the form is 'schema', a name "
        "the handler sets itself\n"
    )


def test_a_file_that_does_not_import_is_one_clear_line(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "import json\nimport no_such_module_here\n")
    done = check("broken.py", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert one_clear_line(done) == (
        "mcp-elicit: cannot import broken.py (broken.py:2): ModuleNotFoundError: No module named "
        "'no_such_module_here'"
    )
    write(tmp_path, "typo.py", "def f(:\n    pass\n")
    assert one_clear_line(check("typo.py", cwd=tmp_path)) == (
        "mcp-elicit: cannot import typo.py (typo.py:1): SyntaxError: invalid syntax"
    )
    write(tmp_path, "exits.py", "import sys\nsys.exit(3)\n")
    assert one_clear_line(check("exits.py", cwd=tmp_path)) == (
        "mcp-elicit: cannot import exits.py (exits.py:2): it called sys.exit(3) while being imported"
    )
    missing = check("nowhere.py", cwd=tmp_path)
    assert missing.returncode == 2
    assert one_clear_line(missing) == "mcp-elicit: cannot import nowhere.py: no such file"
    no_module = check("nowhere", cwd=tmp_path)
    assert one_clear_line(no_module) == (
        "mcp-elicit: cannot import nowhere: no module named 'nowhere' here (for a file, write its path: "
        "nowhere.py)"
    )


def test_a_file_that_serves_when_imported_is_refused_not_served(tmp_path: Path) -> None:
    """``app.run()`` with no ``__main__`` guard: imported, it would serve (on stdio, wait on the
    terminal for a client) instead of being checked."""
    for call in ("run()", "run_stdio()", "run_http(port=0)"):
        method = call.partition("(")[0]
        write(tmp_path, "serves.py", f"{CLEAN}\napp.{call}\n")
        line = len((tmp_path / "serves.py").read_text().splitlines())
        done = check("serves.py", cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert one_clear_line(done) == (
            f"mcp-elicit: cannot check serves.py (serves.py:{line}): it starts its server when imported "
            f'(.{method}() at module level); put that call under `if __name__ == "__main__":` '
            "(running the file then still serves)"
        )


def test_a_registration_refusal_names_the_line(tmp_path: Path) -> None:
    server = write(
        tmp_path,
        "untyped.py",
        """
        from mcp_elicit import Server

        app = Server("untyped")


        @app.tool()  # at: tool
        async def greet(ctx, name: str) -> str:
            return name
        """,
    )
    done = check("untyped.py", cwd=tmp_path)
    assert done.returncode == 2
    assert one_clear_line(done) == (
        f"mcp-elicit: cannot import untyped.py (untyped.py:{at(server, 'tool')}): TypeError: greet: the "
        "parameter 'ctx' has no annotation, so it would be an argument the client fills in, not the "
        "request's Context: annotate it `ctx: Context` (from mcp_elicit import Context)"
    )


def test_a_target_that_is_not_a_server_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, "models.py", MODELS)
    write(tmp_path, "server.py", PROBLEMS)
    cases = {
        "server:Trip": "mcp-elicit: server:Trip is a class, not a Server (mcp_elicit.Server)",
        "server:sign_in": "mcp-elicit: server:sign_in is a function, not a Server (mcp_elicit.Server)",
        "server.py:nope": "mcp-elicit: server.py has no attribute 'nope'",
        "models.py": (
            "mcp-elicit: models.py holds no Server (mcp_elicit.Server) at module level; name one as "
            "models.py:NAME"
        ),
    }
    for target, expected in cases.items():
        done = check(target, cwd=tmp_path)
        assert done.returncode == 2, target
        assert done.stdout == "", target
        assert one_clear_line(done) == expected
