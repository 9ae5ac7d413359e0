"""Reading the report a Node driver of the TypeScript SDK prints (``ts_v1_client.mjs``,
``ts_v2_client.mjs``): ``wire`` lists every message each way as ``{"sent": ...}`` or
``{"received": ...}`` in order (``driver_support.mjs`` records them), ``results`` the outcome of
each call as ``{"result": ...}`` or ``{"error": ...}``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.interop.legacy_support import REPO, node24


def run_driver(driver: Path, plan: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Run ``driver`` (a Node script) on ``plan`` with the SDK it needs (``env``); its report.
    A stdio server it spawns writes its stderr into the driver's, where no traceback may be."""
    done = subprocess.run(
        [str(node24()), str(driver), json.dumps(plan)],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def sent(report: dict[str, Any], method: str | None = None) -> list[dict[str, Any]]:
    """What the SDK sent (of ``method``, or everything), in order."""
    return [
        m["sent"]
        for m in report["wire"]
        if "sent" in m and (method is None or m["sent"].get("method") == method)
    ]


def received(report: dict[str, Any], method: str) -> list[dict[str, Any]]:
    """The requests and notifications of ``method`` the SDK received, in order."""
    return [
        m["received"] for m in report["wire"] if "received" in m and m["received"].get("method") == method
    ]


def text(outcome: dict[str, Any]) -> str:
    """The one text item of a call's result (an error fails the test, showing it)."""
    assert "result" in outcome, outcome
    (content,) = outcome["result"]["content"]
    return str(content["text"])


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}
