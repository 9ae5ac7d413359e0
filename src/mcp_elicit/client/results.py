"""Final results of calls, typed lightly: the fields people use, and ``raw`` for the rest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.errors import MalformedMessageError
from mcp_elicit.client.questions import ServerIdentity
from mcp_elicit.schema.text import describe, quote
from mcp_elicit.wire.meta import SERVER_INFO_KEY


def _list(result: dict[str, Any], key: str, method: str, *, required: bool = False) -> list[Any]:
    value = result.get(key)
    if value is None:
        if required:
            raise MalformedMessageError(f"the result of {method} has no {key!r} array")
        return []
    if not isinstance(value, list):
        raise MalformedMessageError(f"the result of {method} must have {key!r} as an array")
    return value


# The members each content block type the spec names must have, as strings (ContentBlock in the
# schema of 2025-11-25 and of 2026-07-28). A type it does not name is passed on as it came: a
# newer server's block is shown as unknown, not allowed to fail the whole result.
_BLOCK_STRINGS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
}


def _block_problem(block: Any) -> str | None:
    """What makes ``block`` no content block, in words that follow "content[N]"; or None."""
    if not isinstance(block, dict):
        return f"that is {describe(block)}, not an object with a string 'type'"
    kind = block.get("type")
    if not isinstance(kind, str):
        return f"whose 'type' is {describe(kind)}, not a string" if "type" in block else "with no 'type'"
    for name in _BLOCK_STRINGS.get(kind, ()):
        if name not in block:
            return f"of type {quote(kind)} with no {name!r}"
        if not isinstance(block[name], str):
            return f"of type {quote(kind)} whose {name!r} is {describe(block[name])}, not a string"
    if kind == "resource":  # an EmbeddedResource: TextResourceContents | BlobResourceContents
        resource = block.get("resource")
        if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
            return "of type 'resource' with no 'resource' object holding a string 'uri'"
        if not isinstance(resource.get("text"), str) and not isinstance(resource.get("blob"), str):
            return "of type 'resource' whose 'resource' has neither a string 'text' nor a string 'blob'"
    return None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The final result of ``tools/call``: ``content`` blocks, ``structured`` content (any JSON
    value since 2026-07-28, an object before; None when there is none), ``is_error`` (the tool
    failed: its message is in ``content``) and the ``raw`` result."""

    content: list[dict[str, Any]]
    structured: Any
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
        """Read a ``CallToolResult``; ``MalformedMessageError`` when ``content`` is missing or not
        an array, one of its blocks is not an object with a string ``type`` (or lacks what its
        type needs: ``text`` for text, ...) or ``isError`` is there and not a boolean. A block of
        a type the spec does not name is kept as it came."""
        content = _list(result, "content", "tools/call", required=True)
        for index, block in enumerate(content):
            problem = _block_problem(block)
            if problem is not None:
                raise MalformedMessageError(f"the result of tools/call has content[{index}] {problem}")
        is_error = result.get("isError")
        if is_error is not None and not isinstance(is_error, bool):  # null is taken as absent
            raise MalformedMessageError(
                f"the result of tools/call must have 'isError' as a boolean, not {describe(is_error)}"
            )
        return cls(
            content=content,
            structured=result.get("structuredContent"),
            is_error=is_error is True,
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
