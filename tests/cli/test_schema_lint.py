"""``mcp-elicit schema lint`` and ``keygen``, through ``main()`` and as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_elicit.cli import main
from mcp_elicit.state import KeyRing
from tests.cli.cli_support import cli


def write(tmp_path: Path, schema: object) -> str:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    return str(path)


def test_a_clean_schema_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = write(
        tmp_path, {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    )
    assert main(["schema", "lint", file]) == 0
    assert capsys.readouterr().out.strip() == f"{file}: inside the subset"


def test_problems_are_listed_with_pointers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = write(
        tmp_path,
        {
            "type": "object",
            "properties": {
                "age": {"type": "integer", "minimum": 5, "maximum": 1},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
    )
    assert main(["schema", "lint", file]) == 1
    out = capsys.readouterr()
    assert "/properties/age/minimum: minimum (5) is greater than maximum (1)" in out.out
    assert "/properties/tags" in out.out
    assert "outside the elicitation schema subset" in out.err


def test_secret_fields_and_links_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = write(tmp_path, {"type": "object", "properties": {"password": {"type": "string"}}})
    assert main(["schema", "lint", file, "--message", "see https://example.com"]) == 1
    out = capsys.readouterr().out
    assert "/properties/password: asks for a secret" in out
    assert "https://example.com" in out


@pytest.mark.parametrize(("content", "needle"), [(None, "cannot read"), ("{oops", "is not JSON")])
def test_unreadable_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, needle: str
) -> None:
    path = tmp_path / "s.json"
    if content is not None:
        path.write_text(content)
    assert main(["schema", "lint", str(path)]) == 2
    assert needle in capsys.readouterr().err


def test_keygen_prints_a_usable_key() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", "keygen"], capture_output=True, text=True, check=True
    )
    key = done.stdout.strip()
    assert len(key) == 43
    assert len(KeyRing.from_secrets([key]).kids) == 1


def test_a_deeply_nested_schema_is_unreadable_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit.cli", "schema", "lint", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2  # bad input, like a file that is not JSON (1 means "has problems")
    assert done.stderr == f"mcp-elicit: {path} is nested too deeply to read\n"
    assert done.stdout == ""


def test_names_are_shown_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A property name is anyone's text (a schema saved from a server): an escape sequence in
    it must not reach the terminal, and a '/' in it is a pointer token, not a path step."""
    file = write(
        tmp_path,
        {
            "type": "object",
            "properties": {
                "a\x1b[2Jb": {"type": "string", "pattern": "x"},
                "api/key": {"type": "string"},
            },
        },
    )
    assert main(["schema", "lint", file]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "/properties/a\\x1b[2Jb: property name contains the invisible or control character" in out
    secret = write(tmp_path, {"type": "object", "properties": {"api/key": {"type": "string"}}})
    assert main(["schema", "lint", secret]) == 1
    assert capsys.readouterr().out.startswith("/properties/api~1key: asks for a secret")


# The schema of issue 20: before, the first run showed 7 problems; the API key and the
# wrong-typed default appeared only once those were fixed.
NINE_PROBLEMS = {
    "type": "object",
    "title": "Sign up",
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z]+$", "default": 5},
        "api_key": {"type": "string"},
        "age": {"type": "integer", "minimum": "18"},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "email": {"type": "string", "format": "e-mail"},
        "plan": {"type": "string", "enum": ["free", "pro", "free"]},
    },
    "required": ["name", "phone"],
}


def test_every_problem_is_reported_in_one_pass(tmp_path: Path) -> None:
    file = write(tmp_path, NINE_PROBLEMS)
    done = cli("schema", "lint", file)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "/title: requestedSchema has no title; put the text in the elicitation message",
        "/required/1: 'phone' is not one of the properties",
        "/properties/name/pattern: pattern is not part of the elicitation schema subset (MCP removed "
        "it; clients ignore or refuse it); check the value on the server after the answer arrives",
        "/properties/name/default: default 5 does not fit the field: must be text, got the number 5",
        "/properties/age/minimum: must be a number, got the text '18'",
        "/properties/address/type: nested objects are outside the elicitation schema subset (a form "
        "is one flat object of text, numbers, booleans and choices); split it into separate fields",
        "/properties/email/format: unknown format 'e-mail'; use one of date, date-time, email, uri",
        "/properties/plan/enum/2: enum value 'free' is the same as enum value 0",
        "/properties/api_key: asks for a secret (API key, its name says 'api key'); forms must not "
        "collect secrets, use URL mode",
    ]
    assert done.stderr == (
        f"{file}: 9 problem(s): outside the elicitation schema subset, and asks for secrets in form mode\n"
    )


def test_only_secrets_still_say_so(tmp_path: Path) -> None:
    file = write(tmp_path, {"type": "object", "properties": {"password": {"type": "string"}}})
    done = cli("schema", "lint", file)
    assert done.returncode == 1
    assert done.stdout.startswith("/properties/password: asks for a secret (password")
    assert done.stderr == f"{file}: 1 problem(s): asks for secrets in form mode\n"
