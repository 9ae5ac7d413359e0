"""The MCP client engine: connect, call, and answer the server's questions, in both eras
(2026-07-28 and the ``initialize``-era 2025-11-25, detected when connecting).

::

    from mcp_elicit.client import Client

    async with Client.connect("python examples/tickets.py", answerer=my_answerer) as client:
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})

It comes with the ``[cli]`` extra (``pip install 'mcp-elicit[cli]'``); importing it without that
extra says so.

Names load on first use (PEP 562): ``import mcp_elicit.client`` imports nothing heavy, and httpx
is imported only when an HTTP connection starts. To export a name from a submodule, add
``"Name": "mcp_elicit.client.module"`` to ``_EXPORTS`` (and to ``__all__`` and the
``TYPE_CHECKING`` block, for type checkers).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcp_elicit._extras import require

require("cli", part="the MCP client (mcp_elicit.client)")

_EXPORTS: dict[str, str] = {
    # the engine
    "Client": "mcp_elicit.client.client",
    "ClientOptions": "mcp_elicit.client.client",
    "Connecting": "mcp_elicit.client.client",
    "Backoff": "mcp_elicit.client.rounds",
    "Progress": "mcp_elicit.client.progress",
    "ToolResult": "mcp_elicit.client.results",
    "PromptResult": "mcp_elicit.client.results",
    "ResourceResult": "mcp_elicit.client.results",
    "DiscoverResult": "mcp_elicit.client.results",
    "Sampler": "mcp_elicit.client.providers",
    "RootsProvider": "mcp_elicit.client.providers",
    "Transport": "mcp_elicit.client.transport",
    # the contract with answerers
    "Answer": "mcp_elicit.client.questions",
    "Answerer": "mcp_elicit.client.questions",
    "FormQuestion": "mcp_elicit.client.questions",
    "UrlQuestion": "mcp_elicit.client.questions",
    "ServerIdentity": "mcp_elicit.client.questions",
    # answerers and URL safety
    "TerminalAnswerer": "mcp_elicit.client.answerers.terminal",
    "ScriptedAnswerer": "mcp_elicit.client.answerers.scripted",
    "AutoDecline": "mcp_elicit.client.answerers.auto",
    "AnswererError": "mcp_elicit.client.answerers.errors",
    "assess_url": "mcp_elicit.client.urls",
    "UrlAssessment": "mcp_elicit.client.urls",
    "open_in_browser": "mcp_elicit.client.urls",
    # errors
    "ClientError": "mcp_elicit.client.errors",
    "McpClientError": "mcp_elicit.client.errors",
    "MissingCapabilityError": "mcp_elicit.client.errors",
    "UnsupportedVersionError": "mcp_elicit.client.errors",
    "ProtocolViolation": "mcp_elicit.client.errors",
    "UndeclaredRequestError": "mcp_elicit.client.errors",
    "InvalidSchemaError": "mcp_elicit.client.errors",
    "MalformedMessageError": "mcp_elicit.client.errors",
    "LocalError": "mcp_elicit.client.errors",
    "RoundLimitError": "mcp_elicit.client.errors",
    "TimeLimitError": "mcp_elicit.client.errors",
    "RequestTimeoutError": "mcp_elicit.client.errors",
    "InvalidAnswerError": "mcp_elicit.client.errors",
    "TransportError": "mcp_elicit.client.errors",
    "ServerExitedError": "mcp_elicit.client.errors",
    "NotMcpServerError": "mcp_elicit.client.errors",
    "AuthorizationRequiredError": "mcp_elicit.client.errors",
    "HttpStatusError": "mcp_elicit.client.errors",
    "SessionExpiredError": "mcp_elicit.client.errors",
    "UnspokenVersionError": "mcp_elicit.client.errors",
    "UrlElicitationRequiredError": "mcp_elicit.client.errors",
}

if TYPE_CHECKING:
    from mcp_elicit.client.answerers.auto import AutoDecline
    from mcp_elicit.client.answerers.errors import AnswererError
    from mcp_elicit.client.answerers.scripted import ScriptedAnswerer
    from mcp_elicit.client.answerers.terminal import TerminalAnswerer
    from mcp_elicit.client.client import Client, ClientOptions, Connecting
    from mcp_elicit.client.errors import (
        AuthorizationRequiredError,
        ClientError,
        HttpStatusError,
        InvalidAnswerError,
        InvalidSchemaError,
        LocalError,
        MalformedMessageError,
        McpClientError,
        MissingCapabilityError,
        NotMcpServerError,
        ProtocolViolation,
        RequestTimeoutError,
        RoundLimitError,
        ServerExitedError,
        SessionExpiredError,
        TimeLimitError,
        TransportError,
        UndeclaredRequestError,
        UnspokenVersionError,
        UnsupportedVersionError,
        UrlElicitationRequiredError,
    )
    from mcp_elicit.client.progress import Progress
    from mcp_elicit.client.providers import RootsProvider, Sampler
    from mcp_elicit.client.questions import Answer, Answerer, FormQuestion, ServerIdentity, UrlQuestion
    from mcp_elicit.client.results import DiscoverResult, PromptResult, ResourceResult, ToolResult
    from mcp_elicit.client.rounds import Backoff
    from mcp_elicit.client.transport import Transport
    from mcp_elicit.client.urls import UrlAssessment, assess_url, open_in_browser


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_elicit.client' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "Answer",
    "Answerer",
    "AnswererError",
    "AuthorizationRequiredError",
    "AutoDecline",
    "Backoff",
    "Client",
    "ClientError",
    "ClientOptions",
    "Connecting",
    "DiscoverResult",
    "FormQuestion",
    "HttpStatusError",
    "InvalidAnswerError",
    "InvalidSchemaError",
    "LocalError",
    "MalformedMessageError",
    "McpClientError",
    "MissingCapabilityError",
    "NotMcpServerError",
    "Progress",
    "PromptResult",
    "ProtocolViolation",
    "RequestTimeoutError",
    "ResourceResult",
    "RootsProvider",
    "RoundLimitError",
    "Sampler",
    "ScriptedAnswerer",
    "ServerExitedError",
    "ServerIdentity",
    "SessionExpiredError",
    "TerminalAnswerer",
    "TimeLimitError",
    "ToolResult",
    "Transport",
    "TransportError",
    "UndeclaredRequestError",
    "UnspokenVersionError",
    "UnsupportedVersionError",
    "UrlAssessment",
    "UrlElicitationRequiredError",
    "UrlQuestion",
    "assess_url",
    "open_in_browser",
]
