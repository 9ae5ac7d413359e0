"""Final results of calls, typed lightly: the fields people use, and ``raw`` for the rest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.errors import MalformedMessageError
from mcp_elicit.client.questions import ServerIdentity
from mcp_elicit.wire.meta import SERVER_INFO_KEY


def _list(result: dict[str, Any], key: str, method: str, *, required: bool = False) -> list[Any]:
    value = result.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise MalformedMessageError(f"the result of {method} must have {key!r} as an array")
    return value


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The final result of ``tools/call``: ``content`` blocks, ``structured`` content (a dict, or
    None), ``is_error`` (the tool failed: its message is in ``content``) and the ``raw`` result."""

    content: list[dict[str, Any]]
    structured: dict[str, Any] | None
    is_error: bool
    raw: dict[str, Any]

    @property
    def text(self) -> str:
        """The text blocks of ``content``, joined by newlines."""
        return "\n".join(
            b["text"] for b in self.content if b.get("type") == "text" and isinstance(b.get("text"), str)
        )

    @classmethod
    def parse(cls, result: dict[str, Any]) -> ToolResult:
        """Read a ``CallToolResult``; ``MalformedMessageError`` when ``content`` is there and not an
        array."""
        content = _list(result, "content", "tools/call")
        structured = result.get("structuredContent")
        return cls(
            content=[block for block in content if isinstance(block, dict)],
            structured=structured if isinstance(structured, dict) else None,
            is_error=result.get("isError") is True,
            raw=result,
        )


@dataclass(frozen=True, slots=True)
class PromptResult:
    """The final result of ``prompts/get``: its ``messages``, ``description`` and ``raw`` result."""

    messages: list[dict[str, Any]]
    description: str | None
    raw: dict[str, Any]

    @classmethod
    def parse(cls, result: dict[str, Any]) -> PromptResult:
        """Read a ``GetPromptResult``; ``MalformedMessageError`` when ``messages`` is not an array."""
        messages = _list(result, "messages", "prompts/get", required=True)
        description = result.get("description")
        return cls(
            [m for m in messages if isinstance(m, dict)],
            description if isinstance(description, str) else None,
            result,
        )


@dataclass(frozen=True, slots=True)
class ResourceResult:
    """The final result of ``resources/read``: its ``contents`` items and the ``raw`` result."""

    contents: list[dict[str, Any]]
    raw: dict[str, Any]

    @property
    def text(self) -> str:
        """The ``text`` of each content item, joined by newlines."""
        return "\n".join(c["text"] for c in self.contents if isinstance(c.get("text"), str))

    @classmethod
    def parse(cls, result: dict[str, Any]) -> ResourceResult:
        """Read a ``ReadResourceResult``; ``MalformedMessageError`` when ``contents`` is not an
        array."""
        contents = _list(result, "contents", "resources/read", required=True)
        return cls([c for c in contents if isinstance(c, dict)], result)


@dataclass(frozen=True, slots=True)
class DiscoverResult:
    """``server/discover``: cached by the client for ``ttl_ms``."""

    supported_versions: tuple[str, ...]
    capabilities: dict[str, Any]
    instructions: str | None
    server_info: dict[str, Any]
    ttl_ms: int
    raw: dict[str, Any]

    @classmethod
    def parse(cls, result: dict[str, Any]) -> DiscoverResult:
        """Read a ``server/discover`` result; ``MalformedMessageError`` when ``supportedVersions``
        is not an array or ``capabilities`` not an object. A missing or invalid ``ttlMs`` is 0."""
        versions = _list(result, "supportedVersions", "server/discover", required=True)
        capabilities = result.get("capabilities")
        if not isinstance(capabilities, dict):
            raise MalformedMessageError("the result of server/discover must have 'capabilities' as an object")
        meta = result.get("_meta")
        info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
        if not isinstance(info, dict):
            # SEP-2575 put serverInfo in the body; the released schema moved it to _meta.
            info = result.get("serverInfo")
        ttl = result.get("ttlMs")
        instructions = result.get("instructions")
        return cls(
            supported_versions=tuple(v for v in versions if isinstance(v, str)),
            capabilities=capabilities,
            instructions=instructions if isinstance(instructions, str) else None,
            server_info=info if isinstance(info, dict) else {},
            ttl_ms=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else 0,
            raw=result,
        )

    def identity(self, reached_via: str, protocol_version: str | None = None) -> ServerIdentity:
        """The :class:`ServerIdentity` shown with each question: ``serverInfo``'s name, title and
        version, ``reached_via`` (how this client reached the server) and the protocol version
        the client speaks with it."""
        return ServerIdentity.of(self.server_info, reached_via, protocol_version)
