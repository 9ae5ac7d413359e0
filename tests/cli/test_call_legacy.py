"""``mcp-elicit call`` and ``tools`` against 2025-11-25 servers: found out by themselves (or
forced with ``--legacy``), and the era named with every question and in ``tools``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.cli_support import STDIO_TARGET, cli

LEGACY_SDK = f"{sys.executable} {Path(__file__).parents[1] / 'interop' / 'legacy_sdk_server.py'} stdio"
ROGUE = f"{sys.executable} {Path(__file__).parents[1] / 'client' / 'engine' / 'legacy_rogue_server.py'}"


def test_call_with_legacy_answers_the_servers_questions_and_names_the_era(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps([{"action": "accept", "content": {"name": n}} for n in ("Ada", "Lovelace")])
    )
    done = cli("call", LEGACY_SDK, "full_name", "--legacy", "--answers", str(answers))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, Ada Lovelace!\n"
    asker = f"legacy-sdk (reached via {LEGACY_SDK}, MCP 2025-11-25 (initialize handshake)) asks:"
    assert done.stderr.splitlines()[0] == f"{asker} First name?"
    assert done.stderr.splitlines()[2] == f"{asker} Last name of Ada?"


def test_a_declined_question_on_a_legacy_server_exits_3(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"action": "decline"}]))
    done = cli("call", LEGACY_SDK, "file_ticket", "--legacy", "--answers", str(answers))
    assert done.returncode == 3, done.stderr
    assert done.stdout == "not filed (decline)\n"


def test_tools_names_the_era_it_found() -> None:
    legacy = cli("tools", ROGUE)
    assert legacy.returncode == 0, legacy.stderr
    assert (
        legacy.stdout.splitlines()[0]
        == "# legacy-rogue 0.0.1, speaking MCP 2025-11-25 (initialize handshake)"
    )
    assert "ask" in legacy.stdout.splitlines()
    modern = cli("tools", STDIO_TARGET)
    assert modern.returncode == 0, modern.stderr
    assert modern.stdout.splitlines()[0].endswith(", speaking MCP 2026-07-28")


def test_modern_refuses_to_fall_back() -> None:
    done = cli("tools", ROGUE, "--modern")
    assert done.returncode == 2
    assert "server/discover" in done.stderr
    assert "Traceback" not in done.stderr


def test_legacy_and_modern_cannot_both_be_given() -> None:
    done = cli("tools", ROGUE, "--legacy", "--modern")
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr


def test_call_and_tools_find_a_legacy_http_server_by_themselves(tmp_path: Path) -> None:
    """Over Streamable HTTP, with no flag: ``server/discover`` is refused, ``initialize`` opens a
    session, and the questions come as real requests on the call's stream -- named as 2025-11-25."""
    from tests.interop.legacy_support import TS_SERVER, http_server, node24, ts_env

    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps([{"action": "accept", "content": {"name": n}} for n in ("Grace", "Hopper")])
    )
    with http_server([str(node24()), str(TS_SERVER)], tmp_path / "server.log", ts_env()) as url:  # TS SDK v1
        done = cli("call", url, "full_name", "--answers", str(answers))
        listed = cli("tools", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, Grace Hopper!\n"
    asker = f"legacy-ts (reached via {url}, MCP 2025-11-25 (initialize handshake)) asks:"
    assert done.stderr.splitlines()[0] == f"{asker} First name?"
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0].startswith("# legacy-ts ")
    assert listed.stdout.splitlines()[0].endswith(", speaking MCP 2025-11-25 (initialize handshake)")
