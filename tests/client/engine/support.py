"""Helpers for the engine tests: answers, and reading the rogue server's log (the recording
answerer, ``Script``, is :class:`tests.helpers.Script`)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.client import Answer
from tests.helpers import Script, free_port
from tests.server_process import PY, ServerProcess, running_server

__all__ = ["META_INFO", "RogueLog", "Script", "accept", "marker_server", "unique_info"]


@contextmanager
def marker_server(
    script: Path, name: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, Path]]:
    """``script`` (a test server taking ``--port`` and ``--marker-dir``) over HTTP as a
    subprocess, and the folder its tools leave markers in; its log must hold no traceback."""
    markers = tmp_path_factory.mktemp(f"{name}-markers")
    port = free_port()
    argv = [PY, str(script), "--port", str(port), "--marker-dir", str(markers)]
    with running_server(argv, log=tmp_path_factory.mktemp(name) / "server.log", port=port) as server:
        yield server, markers
    assert "Traceback" not in server.log_text(), server.log_text()


def accept(**content: Any) -> Callable[[Any], Answer]:
    return lambda _question: Answer("accept", content)


def unique_info(prefix: str = "t") -> dict[str, str]:
    """A clientInfo whose name tells this test's requests apart in a shared server's log."""
    return {"name": f"{prefix}-{uuid.uuid4().hex[:12]}", "version": "1.0"}


META_INFO = "io.modelcontextprotocol/clientInfo"


@dataclass
class RogueLog:
    path: Path

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").split("\n") if line]

    def messages(self, client_name: str | None = None) -> list[dict[str, Any]]:
        """Messages received (with ``headers`` on HTTP), optionally only from one client."""
        out = []
        for entry in self.entries():
            if entry["kind"] != "message":
                continue
            meta = (entry["message"].get("params") or {}).get("_meta") or {}
            if client_name is None or (meta.get(META_INFO) or {}).get("name") == client_name:
                out.append(entry)
        return out

    def requests(self, client_name: str | None = None, method: str | None = None) -> list[dict[str, Any]]:
        return [
            e["message"]
            for e in self.messages(client_name)
            if "id" in e["message"] and (method is None or e["message"]["method"] == method)
        ]


def processes_left(folder: str) -> list[str]:
    """Processes whose command line names ``folder`` (the stdio servers a test started there), and
    zombies of this process's children (Linux: /proc; elsewhere nothing is found)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command_line = (entry / "cmdline").read_bytes()
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        state, parent = fields[0], int(fields[1])
        ours = folder.encode() in command_line and entry.name != str(os.getpid())
        if ours or (state == "Z" and parent == os.getpid()):
            found.append(f"{entry.name} ({state}): {command_line[:200]!r}")
    return found
