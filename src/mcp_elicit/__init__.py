"""mcp-elicit: MCP elicitation, form and URL mode, for MCP 2026-07-28 and 2025-11-25.

Server authors need two names::

    from mcp_elicit import Server, Context

and, to shape a form's fields, the markers that go inside ``typing.Annotated``::

    from mcp_elicit import Choices, Description, Email, Format, NotSecret, Title, Url

Names are imported on first use so that ``import mcp_elicit`` stays cheap (cold start matters
for stdio servers that are spawned per session).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Server": "mcp_elicit.server.app",
    "Context": "mcp_elicit.server.context",
    "ElicitAnswer": "mcp_elicit.server.answers",
    "ToolError": "mcp_elicit.server.errors",
    "InputRequired": "mcp_elicit.server.lowlevel",
    "McpError": "mcp_elicit.wire.errors",
    "ParamHeader": "mcp_elicit.server.param_header",
    "Caller": "mcp_elicit.server.auth",
    "Unauthorized": "mcp_elicit.server.auth",
    "Authenticate": "mcp_elicit.server.auth",
    "Choices": "mcp_elicit.schema.markers",
    "Description": "mcp_elicit.schema.markers",
    "Email": "mcp_elicit.schema.markers",
    "Format": "mcp_elicit.schema.markers",
    "NotSecret": "mcp_elicit.schema.markers",
    "Title": "mcp_elicit.schema.markers",
    "Url": "mcp_elicit.schema.markers",
}

if TYPE_CHECKING:
    from mcp_elicit.schema.markers import Choices, Description, Email, Format, NotSecret, Title, Url
    from mcp_elicit.server.answers import ElicitAnswer
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.auth import Authenticate, Caller, Unauthorized
    from mcp_elicit.server.context import Context
    from mcp_elicit.server.errors import ToolError
    from mcp_elicit.server.lowlevel import InputRequired
    from mcp_elicit.server.param_header import ParamHeader
    from mcp_elicit.wire.errors import McpError


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_elicit' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "Authenticate",
    "Caller",
    "Choices",
    "Context",
    "Description",
    "ElicitAnswer",
    "Email",
    "Format",
    "InputRequired",
    "McpError",
    "NotSecret",
    "ParamHeader",
    "Server",
    "Title",
    "ToolError",
    "Unauthorized",
    "Url",
]
