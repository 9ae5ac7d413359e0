"""open_in_browser with Python's real ``webbrowser`` launching a real program (§4.1-§4.3).

``BROWSER`` names a small recorder script, so ``webbrowser`` really starts a process; the
recorder writes down the arguments it received. Each case runs in a fresh interpreter, because
``webbrowser`` reads ``BROWSER`` once per process. What must hold: exactly the displayed href is
the one argument (no shell: ``$(...)``, ``;``, ``&``, ``|`` stay text), the ``webbrowser.open``
audit event names the same string, and refused URLs never reach the launcher.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.client.urls import assess_url

SHELLISH = [
    "https://example.com/a;touch$(id)&b|c'd;rm",
    "https://example.com/x?q=$(touch%20pwned);a&b=|c",
]
REFUSED = [
    "-https://example.com/",
    "--remote-debugging-port=9222",
    "javascript:alert(1)",
    "file:///etc/passwd",
]

_CHILD = """
import json, sys
events = []
sys.addaudithook(lambda event, args: events.append(args[0]) if event == "webbrowser.open" else None)
from mcp_elicit.client.urls import assess_url, open_in_browser
results = []
for url in json.loads(sys.argv[1]):
    assessment = assess_url(url)
    result = open_in_browser(assessment)
    results.append([assessment.verdict, assessment.href, result.opened, result.print_url])
print(json.dumps({"results": results, "events": events}))
"""

_RECORDER = """#!{python}
import json, os, sys
with open(os.environ["URL_RECORD"], "a") as out:
    out.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def _launch(tmp_path: Path, urls: list[str], browser: str) -> tuple[dict[str, Any], list[list[str]]]:
    record = tmp_path / "record.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY")}
    env.update(DISPLAY=":0", BROWSER=browser, URL_RECORD=str(record))
    env.pop("WAYLAND_DISPLAY", None)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(urls)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return json.loads(done.stdout), calls


@pytest.fixture
def recorder(tmp_path: Path) -> Path:
    script = tmp_path / "record-browser"
    script.write_text(_RECORDER.format(python=sys.executable))
    script.chmod(0o755)
    return script


@pytest.mark.skipif(sys.platform.startswith("win"), reason="BROWSER commands are a Unix convention")
@pytest.mark.parametrize("with_args", [False, True], ids=["BROWSER=program", "BROWSER=program %s"])
def test_the_href_is_one_argument_and_no_shell_runs(tmp_path: Path, recorder: Path, with_args: bool) -> None:
    for url in SHELLISH:
        assert assess_url(url).verdict == "ok"
        assert assess_url(url).href == url
    browser = f"{recorder} --new-tab %s" if with_args else str(recorder)
    out, calls = _launch(tmp_path, SHELLISH + REFUSED, browser)
    assert out["results"] == [["ok", url, True, False] for url in SHELLISH] + [
        [assess_url(url).verdict, assess_url(url).href, False, False] for url in REFUSED
    ]
    expected_args = [["--new-tab", url] if with_args else [url] for url in SHELLISH]
    assert calls == expected_args  # refused URLs never reached the program
    assert out["events"] == SHELLISH  # the audit event names exactly what was shown
    assert not (tmp_path / "pwned").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record-browser", "record.jsonl"]


@pytest.mark.skipif(sys.platform.startswith("win"), reason="BROWSER commands are a Unix convention")
def test_a_console_browser_in_browser_is_not_started(tmp_path: Path) -> None:
    lynx = tmp_path / "lynx"
    lynx.write_text(_RECORDER.format(python=sys.executable))
    lynx.chmod(0o755)
    out, calls = _launch(tmp_path, ["https://example.com/"], str(lynx))
    assert out["results"] == [["ok", "https://example.com/", False, True]]
    assert calls == []
    assert out["events"] == []
