"""What the legacy interop tests share: the official SDKs' 2025-11-25 servers as real processes
(stdio, spawned by the client under test; Streamable HTTP on 127.0.0.1, one per module), and an
answerer driven by functions that records what it was asked."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp_elicit.client import Answer, FormQuestion
from tests.helpers import free_port
from tests.server_process import running_server

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PY_SERVER = HERE / "legacy_sdk_server.py"
TS_SERVER = HERE / "legacy_ts_server.mjs"
TS_MODULES = REPO / ".cache" / "ts-sdk-v1" / "node_modules"
TS_V2_MODULES = REPO / ".cache" / "ts-sdk-v2" / "node_modules"
NODE_SETUP_HINT = "run bash scripts/node.sh"
FLOW_TIMEOUT = 30.0


def node24() -> Path:
    """The Node 24 binary scripts/node.sh installs (with the TypeScript SDK v1), or a failure
    saying how to get them."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine()
    )
    node = REPO / ".cache" / "node24" / "node_modules" / f"node-linux-{arch}" / "bin" / "node"
    if not node.is_file():
        raise RuntimeError(f"Node 24 is missing ({node}): {NODE_SETUP_HINT}")
    if not (TS_MODULES / "@modelcontextprotocol" / "sdk" / "package.json").is_file():
        raise RuntimeError(f"the TypeScript SDK v1 is missing ({TS_MODULES}): {NODE_SETUP_HINT}")
    return node


def ts_env() -> dict[str, str]:
    return {"TS_SDK_V1_MODULES": str(TS_MODULES)}


def ts_v2_env() -> dict[str, str]:
    """Where the TypeScript SDK v2 (client and server) is, for the drivers that import it; or a
    failure saying how to get it."""
    for package in ("client", "server"):
        if not (TS_V2_MODULES / "@modelcontextprotocol" / package / "package.json").is_file():
            raise RuntimeError(f"the TypeScript SDK v2 is missing ({TS_V2_MODULES}): {NODE_SETUP_HINT}")
    return {"TS_SDK_V2_MODULES": str(TS_V2_MODULES)}


def py_stdio() -> list[str]:
    return [sys.executable, str(PY_SERVER), "stdio"]


def ts_stdio() -> list[str]:
    return [str(node24()), str(TS_SERVER), "stdio"]


@contextmanager
def http_server(argv: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """``argv`` plus a free port, serving on 127.0.0.1 (its output in ``log``): its URL; stopped
    after."""
    port = free_port()
    with running_server([*argv, str(port)], log=log, port=port, env={**os.environ, **(env or {})}) as server:
        yield server.url


FormFn = Callable[[FormQuestion], Answer | Awaitable[Answer]]


def answers(*content: dict[str, Any]) -> FormFn:
    """Accept each question in turn with the next content."""
    queue = list(content)
    return lambda _question: Answer("accept", queue.pop(0))
