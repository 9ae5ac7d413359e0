"""``call --answers`` with a file keyed by keys the server did not ask: the one error line says
which keys the round asked, each with its message, so that the file can be fixed. Real servers
in real processes: the project's example tracker (its questions have generated keys) and the
client tests' server (a round of two questions with stable keys)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests.cli.cli_support import cli, one_clear_line

REPO = Path(__file__).resolve().parents[2]
TICKETS = f"{sys.executable} {REPO / 'examples' / 'tickets.py'}"
OURS = f"{sys.executable} {REPO / 'tests' / 'client' / 'engine' / 'ours_server.py'} --stdio"


def answers(tmp_path: Path, script: object) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(script))
    return str(path)


def test_a_generated_key_is_listed_with_its_question(tmp_path: Path) -> None:
    script = answers(tmp_path, {"details": {"action": "decline"}})
    done = cli("call", TICKETS, "create_ticket", "--args", '{"title": "Printer jam"}', "--answers", script)
    assert done.returncode == 2
    line = one_clear_line(done)
    found = re.search(r"no scripted answer for input request '(elicit-[0-9a-f]{12})'", line)
    assert found is not None, line
    key = found.group(1)
    assert f"the round asked for \"{key}\" (form: “Details for the ticket 'Printer jam'”)" in line
    assert 'the script has answers for: "details"' in line
    assert f"a key like {key} is made from the question itself and changes when its text does" in line
    assert 'a server sets a stable one with ctx.elicit(..., key="...")' in line
    # With the key the error named, the same file works.
    fixed = answers(tmp_path, {key: {"action": "decline"}})
    done = cli("call", TICKETS, "create_ticket", "--args", '{"title": "Printer jam"}', "--answers", fixed)
    assert (done.returncode, done.stdout.strip()) == (3, "No ticket created (decline).")  # 3: declined


def test_every_question_of_the_round_is_listed(tmp_path: Path) -> None:
    script = answers(tmp_path, {"left": {"action": "accept", "content": {"name": "Ada"}}})
    done = cli("call", OURS, "pair", "--answers", script)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    # The round's questions are answered together: the one the script has is shown answered
    # (as every scripted answer is), then the error, last.
    *shown, line = done.stderr.strip().splitlines()
    assert line.startswith("mcp-elicit: ")
    assert "ScriptedAnswerMissing" not in line  # no class name: the message says it all
    assert "asks: Left?" in "\n".join(shown)
    assert "no scripted answer for input request 'right'" in line
    assert 'the round asked for "left" (form: “Left?”), "right" (form: “Right?”)' in line
    assert "ctx.elicit" not in line  # stable keys: nothing to say about generated ones
