"""``pip install 'mcp-elicit[http]'`` serves HTTP; ``pip install 'mcp-elicit[cli]'`` runs
``mcp-elicit call`` against a server of the core install. Each extra brings its own packages only."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import accept, free_port, meta, only_key, text
from tests.install.installs import EXTRA_DISTRIBUTIONS, SERVER, Venv, clean_env
from tests.server_process import running_server

HTTP_ONLY = {"uvicorn"}
CLI_ONLY = {"httpx", "prompt-toolkit", "rich", "publicsuffixlist"}


@pytest.fixture(scope="module")
def http_venv(venv_with: Callable[..., Venv]) -> Venv:
    return venv_with("http")


@pytest.fixture(scope="module")
def cli_venv(venv_with: Callable[..., Venv]) -> Venv:
    return venv_with("cli")


@pytest.fixture
def http_server(http_venv: Venv, tmp_path: Path) -> Iterator[str]:
    """The booking server on HTTP, run by the venv's Python in the venv's own environment (no
    loop is chosen for it: the venv holds no uvloop to choose)."""
    port = free_port()
    argv = [str(http_venv.python), str(SERVER), "--http", str(port)]
    with running_server(
        argv, log=tmp_path / "server.log", port=port, env=clean_env(), cwd=tmp_path, within=30
    ):
        yield f"http://127.0.0.1:{port}/mcp"


def test_the_http_extra_brings_uvicorn_and_no_other_extra(http_venv: Venv) -> None:
    assert http_venv.installed() & EXTRA_DISTRIBUTIONS == HTTP_ONLY


def test_the_cli_extra_brings_the_client_packages_and_no_other_extra(cli_venv: Venv) -> None:
    assert cli_venv.installed() & EXTRA_DISTRIBUTIONS == CLI_ONLY


def _post(url: str, params: dict[str, Any], request_id: int) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"_meta": meta(), **params},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": params["name"],
    }
    response = httpx.post(url, content=json.dumps(message), headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def test_run_http_serves_a_round_trip_with_the_http_extra(http_server: str) -> None:
    call = {"name": "book", "arguments": {"flight": "AF 7"}}
    first = _post(http_server, call, 1)
    key = only_key(first)
    answer = accept({"seats": 1, "contact": "grace@example.com"})
    done = _post(
        http_server, {**call, "inputResponses": {key: answer}, "requestState": first["requestState"]}, 2
    )
    assert text(done) == "booked AF 7: 1 economy seat(s) for grace@example.com"


def test_the_httptools_parser_without_the_fast_extra_names_it(http_venv: Venv, tmp_path: Path) -> None:
    probe = (
        "from mcp_elicit import Server\n"
        "try:\n"
        f"    Server('web').run_http(host='127.0.0.1', port={free_port()}, http='httptools')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = http_venv.run(http_venv.python, "-c", probe, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        0,
        "run_http(http='httptools') needs the [fast] extra (httptools is not installed): "
        "pip install 'mcp-elicit[fast]'\n",
    ), done.stderr


def test_call_with_the_cli_extra_answers_a_server_of_the_core_install(
    cli_venv: Venv, core: Venv, tmp_path: Path
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps([{"action": "accept", "content": {"seats": 3, "contact": "ada@example.com"}}])
    )
    server = shlex.join([str(core.python), str(SERVER)])
    done = cli_venv.run(
        cli_venv.script("mcp-elicit"),
        "call",
        server,
        "book",
        "--args",
        '{"flight": "LH 123"}',
        "--answers",
        answers,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (0, "booked LH 123: 3 economy seat(s) for ada@example.com\n"), (
        done.stderr
    )
    assert "answered from the script: accept (seats, contact, cabin)" in done.stderr


def test_the_demo_with_the_cli_extra_only_names_the_connect_extra(cli_venv: Venv, tmp_path: Path) -> None:
    done = cli_venv.run(cli_venv.script("mcp-elicit"), "demo", "--script", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "mcp-elicit: the demo command needs the [cli,connect] extras (authlib is not installed): "
        "pip install 'mcp-elicit[cli,connect]'\n"
    )
