"""What a server offers: tools, prompts and resources, each a handler plus its description."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit.server.signature import Signature

Handler = Callable[..., Any]


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
