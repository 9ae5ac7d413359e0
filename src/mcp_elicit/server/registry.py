"""What a server offers: tools, prompts and resources, each a handler plus its description.

Each kind also shapes its own outcomes, in one place: the result a handler's return value becomes
(:meth:`~Tool.complete`), and what arguments that do not fit (:meth:`~Tool.refused_arguments`)
and a failing handler (:meth:`~Tool.failed`) become. A tool reports both as a tool result with
``isError`` (the model reads it); a prompt or a resource as a JSON-RPC error.

An unexpected exception is logged with its traceback and reported to the client as a generic
failure; with ``debug`` (``Server(debug=True)`` or ``MCP_ELICIT_DEBUG=1``, for development)
the report also names the exception, its message and where it was raised.
"""

from __future__ import annotations

import base64
import inspect
import logging
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit.server.call import Call
from mcp_elicit.server.errors import ToolError, TooManyInvalidAnswers
from mcp_elicit.server.result_checks import (
    check_content_blocks,
    check_prompt_messages,
    check_resource_contents,
)
from mcp_elicit.server.signature import ArgumentError, Signature
from mcp_elicit.wire import codec
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError, internal_error, invalid_params

Handler = Callable[..., Any]

logger = logging.getLogger("mcp_elicit.server")


def first_paragraph(fn: Handler) -> str | None:
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip() or None


@dataclass(frozen=True)
class Tool:
    name: str
    fn: Handler
    signature: Signature
    title: str | None = None
    description: str | None = None
    annotations: dict[str, Any] | None = None
    debug: bool = False  # failures name their exception (development only)

    def refused_arguments(self, exc: ArgumentError, call: Call) -> dict[str, Any]:
        return tool_error(f"Invalid arguments for tool {self.name!r}: {exc}")

    def complete(self, value: Any, call: Call) -> dict[str, Any]:
        return tool_result(value)

    def failed(self, exc: Exception, call: Call) -> dict[str, Any]:
        if isinstance(exc, ToolError):
            return tool_error(str(exc))
        logger.error("tool %r failed", self.name, exc_info=exc)
        if self.debug:
            return tool_error(f"Tool {self.name!r} failed: {exception_report(exc)}")
        return tool_error(f"Tool {self.name!r} failed with an unexpected error; the server log has details")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "inputSchema": self.signature.input_schema}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        if self.annotations:
            out["annotations"] = self.annotations
        return out


@dataclass(frozen=True)
class Prompt:
    name: str
    fn: Handler
    signature: Signature
    title: str | None = None
    description: str | None = None
    debug: bool = False  # failures name their exception (development only)

    def refused_arguments(self, exc: ArgumentError, call: Call) -> dict[str, Any]:
        raise invalid_params(f"arguments for prompt {self.name!r}: {exc}")

    def complete(self, value: Any, call: Call) -> dict[str, Any]:
        return prompt_result(value, self.description)

    def failed(self, exc: Exception, call: Call) -> dict[str, Any]:
        raise _handler_failure(exc, call, debug=self.debug)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        # From the input schema, which either signature path (plain or pydantic) fills.
        schema = self.signature.input_schema
        required = set(schema.get("required", ()))
        arguments = []
        for name, prop in schema.get("properties", {}).items():
            arg: dict[str, Any] = {"name": name, "required": name in required}
            description = prop.get("description") if isinstance(prop, dict) else None
            if isinstance(description, str):
                arg["description"] = description
            arguments.append(arg)
        if arguments:
            out["arguments"] = arguments
        return out


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Resource:
    """A fixed resource (``uri``) or a template (``tickets://{id}``) whose fields the handler takes."""

    uri: str
    name: str
    fn: Handler
    signature: Signature
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    ttl_ms: int = 0
    cache_scope: str = "private"
    debug: bool = False  # failures name their exception (development only)
    _pattern: re.Pattern[str] | None = field(default=None, repr=False)

    @classmethod
    def create(cls, uri: str, name: str, fn: Handler, signature: Signature, **info: Any) -> Resource:
        fields = _PLACEHOLDER.findall(uri)
        # Checked here, where the author can fix it: a mismatch would otherwise answer every read
        # with an error that blames the client.
        repeated = sorted({field for field in fields if fields.count(field) > 1})
        if repeated:
            raise ValueError(f"resource {uri!r}: the field {{{repeated[0]}}} appears more than once")
        schema = signature.input_schema
        params = set(schema.get("properties", {}))
        if set(fields) - params:
            missing = sorted(set(fields) - params)[0]
            raise ValueError(f"resource {uri!r}: the handler has no parameter for the field {{{missing}}}")
        required = set(schema.get("required", ()))
        if required - set(fields):
            extra = sorted(required - set(fields))[0]
            raise ValueError(
                f"resource {uri!r}: the handler's parameter {extra!r} is not a field of the URI "
                f"(write it as {{{extra}}}) and has no default"
            )
        pattern = None
        if fields:
            parts = _PLACEHOLDER.split(uri)
            regex = "".join(
                re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/?#]+)" for i, part in enumerate(parts)
            )
            pattern = re.compile(f"^{regex}$")
        return cls(uri, name, fn, signature, _pattern=pattern, **info)

    def refused_arguments(self, exc: ArgumentError, call: Call) -> dict[str, Any]:
        raise invalid_params(f"resource {call.target!r}: {exc}", {"uri": call.target})

    def complete(self, value: Any, call: Call) -> dict[str, Any]:
        result = resource_result(call.target, value, self.mime_type)
        # A read that went through input rounds is about one user: never cache it for others.
        result.setdefault("ttlMs", self.ttl_ms if call.first_round else 0)
        result.setdefault("cacheScope", self.cache_scope if call.first_round else "private")
        return result

    def failed(self, exc: Exception, call: Call) -> dict[str, Any]:
        raise _handler_failure(exc, call, debug=self.debug)

    @property
    def is_template(self) -> bool:
        return self._pattern is not None

    def match(self, uri: str) -> dict[str, str] | None:
        if self._pattern is None:
            return {} if uri == self.uri else None
        found = self._pattern.match(uri)
        return found.groupdict() if found else None

    def describe(self) -> dict[str, Any]:
        key = "uriTemplate" if self.is_template else "uri"
        out: dict[str, Any] = {key: self.uri, "name": self.name}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        if self.mime_type:
            out["mimeType"] = self.mime_type
        return out


Entry = Tool | Prompt | Resource


def _handler_failure(exc: Exception, call: Call, *, debug: bool = False) -> McpError:
    """What a failing prompt or resource handler becomes: a JSON-RPC error."""
    if isinstance(exc, TooManyInvalidAnswers):
        # The client kept sending answers that fail validation: its request is at fault.
        return invalid_params(str(exc))
    if isinstance(exc, ToolError):
        return McpError(INTERNAL_ERROR, str(exc))
    logger.error("handler for %s %r failed", call.method, call.target, exc_info=exc)
    if debug:
        return McpError(INTERNAL_ERROR, f"Internal error: the handler failed: {exception_report(exc)}")
    return internal_error()


_REPORT_MESSAGE_CHARS = 500


def exception_report(exc: BaseException) -> str:
    """``exc`` for a developer reading the client's side (debug only: it shows the server's
    internals): its type, its message and the line that raised it.

    ``AttributeError: 'coroutine' object has no attribute 'data' (/srv/trip.py:15, in
    book_trip; an await is missing before the call that returned the coroutine)``
    """
    group = ""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        # A TaskGroup's failure: the first real exception says more than "unhandled errors".
        group = f" (the first of {len(exc.exceptions)} in an exception group)"
        exc = exc.exceptions[0]
    try:
        message = str(exc)
    except Exception:  # an exception whose __str__ fails: its type still says something
        message = "(its str() failed)"
    if len(message) > _REPORT_MESSAGE_CHARS:
        message = message[: _REPORT_MESSAGE_CHARS - 1] + "\u2026"
    report = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    where: list[str] = []
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where.append(f"{last.filename}:{last.lineno}, in {last.name}")
    if isinstance(exc, AttributeError | TypeError) and "'coroutine' object" in message:
        where.append("an await is missing before the call that returned the coroutine")
    return f"{report}{group} ({'; '.join(where)})" if where else f"{report}{group}"


# -- the results' shapes ------------------------------------------------------------------------


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _is_content_block(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str)


def tool_result(value: Any) -> dict[str, Any]:
    """str -> text; dict -> structuredContent plus its JSON as text; a list of content blocks
    as is, once each is checked (TypeError naming the first wrong one); None -> no content;
    other JSON -> its JSON as text."""
    if isinstance(value, str):
        return {"content": [_text(value)], "isError": False}
    if value is None:
        return {"content": [], "isError": False}
    if isinstance(value, dict):
        return {
            "content": [_text(codec.dumps(value).decode())],
            "structuredContent": value,
            "isError": False,
        }
    if isinstance(value, list) and value and all(_is_content_block(v) for v in value):
        # Every item a dict with a str "type": the author meant content blocks, so an unknown type
        # is a wrong block (a typo fails loudly) rather than a reason to send the list as JSON text.
        check_content_blocks(value)
        return {"content": value, "isError": False}
    return {"content": [_text(codec.dumps(value).decode())], "isError": False}


def tool_error(message: str) -> dict[str, Any]:
    return {"content": [_text(message)], "isError": True}


def prompt_result(value: Any, description: str | None) -> dict[str, Any]:
    """str -> one user message; a list of str or {role, content} messages; a dict with
    ``messages`` as is."""
    if isinstance(value, dict) and "messages" in value:
        check_prompt_messages(value["messages"])
        return dict(value)  # a copy: the handler's own dict (a constant, say) stays as it was
    items = value if isinstance(value, list) else [value]
    messages = []
    for item in items:
        if isinstance(item, str):
            messages.append({"role": "user", "content": _text(item)})
        elif isinstance(item, dict) and "role" in item and "content" in item:
            content = item["content"]
            messages.append(
                {"role": item["role"], "content": _text(content) if isinstance(content, str) else content}
            )
        else:
            raise TypeError(
                "a prompt handler must return a str, a list of str or {role, content} messages, "
                f"or a dict with 'messages'; got {type(item).__name__}"
            )
    check_prompt_messages(messages)  # the roles, and the contents that are not text
    result: dict[str, Any] = {"messages": messages}
    if description:
        result["description"] = description
    return result


def resource_result(uri: str, value: Any, mime_type: str | None) -> dict[str, Any]:
    """str -> text contents; bytes -> base64 blob; a dict with ``contents`` as is."""
    if isinstance(value, dict) and "contents" in value:
        check_resource_contents(value["contents"])
        return dict(value)  # a copy: ttlMs and cacheScope are added to it
    entry: dict[str, Any] = {"uri": uri}
    if isinstance(value, (bytes, bytearray)):
        entry["blob"] = base64.b64encode(bytes(value)).decode("ascii")
        entry["mimeType"] = mime_type or "application/octet-stream"
    else:
        entry["text"] = value if isinstance(value, str) else codec.dumps(value).decode()
        entry["mimeType"] = mime_type or ("text/plain" if isinstance(value, str) else "application/json")
    return {"contents": [entry]}
