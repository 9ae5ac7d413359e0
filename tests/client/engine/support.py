"""Helpers for the engine tests: a scripted answerer, and reading the rogue server's log."""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_elicit.client import Answer, FormQuestion, UrlQuestion

FormFn = Callable[[FormQuestion], Answer | Awaitable[Answer]]
UrlFn = Callable[[UrlQuestion], Answer | Awaitable[Answer]]


def _never(question: Any) -> Answer:
    raise AssertionError(f"this answerer was not supposed to be asked {question!r}")


@dataclass
class Script:
    """An answerer driven by functions; records every question it was shown."""

    form: FormFn = _never
    url: UrlFn = _never
    mode_names: Iterable[str] = ("form", "url")
    asked: list[FormQuestion | UrlQuestion] = field(default_factory=list)

    @property
    def modes(self) -> frozenset[str]:
        return frozenset(self.mode_names)

    async def answer_form(self, question: FormQuestion) -> Answer:
        self.asked.append(question)
        answer = self.form(question)
        return await answer if inspect.isawaitable(answer) else answer

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.asked.append(question)
        answer = self.url(question)
        return await answer if inspect.isawaitable(answer) else answer


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
