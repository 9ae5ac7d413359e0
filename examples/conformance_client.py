"""Our client as the official conformance harness's client under test (pip install 'mcp-elicit[cli]').

    conformance client --command "python examples/conformance_client.py" \\
        --scenario sep-2322-client-request-state --spec-version 2026-07-28
    conformance client --command "python examples/conformance_client.py" \\
        --scenario elicitation-sep1034-client-defaults --spec-version 2025-11-25

The harness starts a mock server, appends its URL as the last argument and names the scenario in
``MCP_CONFORMANCE_SCENARIO``. The person is a script: every form is accepted with values made
from its schema (``{"confirmed": true}`` for the harness's confirmation form), and the engine
checks them against the schema before they are sent, like any other answer. Exit status 0 means
the scenario's client steps all completed. ``SCENARIOS`` lists the scenarios it plays: state
(SEP-2322), request metadata (SEP-2575), tool calls, the standard and ``Mcp-Param-*`` headers
(SEP-2243) and the JSON Schema of tools kept as the server wrote it -- and, at 2025-11-25, the
``initialize`` handshake, schema defaults applied to an ``elicitation/create`` request, and a
reply stream resumed after the server's ``retry``. The client finds out the era itself
(``server/discover`` first, then ``initialize``), as it does against any server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_elicit.client import Answer, Client, ClientError, FormQuestion, UrlQuestion

CLIENT_INFO = {"name": "mcp-elicit-conformance-client", "version": "0.1.0"}


class ScriptedAcceptor:
    """Accepts every form with a value for each field that has no default; declares form mode only."""

    @property
    def modes(self) -> frozenset[str]:
        return frozenset({"form"})

    async def answer_form(self, question: FormQuestion) -> Answer:
        content: dict[str, Any] = {}
        for name, prop in question.schema.get("properties", {}).items():
            if "default" not in prop:  # the engine fills in defaults
                content[name] = _value_for(prop)
        return Answer("accept", content)

    async def answer_url(self, question: UrlQuestion) -> Answer:
        return Answer("decline")  # never called: URL mode is not declared


def _value_for(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return prop.get("minimum", 0)
    if kind == "array":
        items = prop.get("items", {})
        options = items.get("enum") or [o["const"] for o in items.get("anyOf", [])]
        return options[: max(prop.get("minItems", 0), 0)]
    if "enum" in prop:
        return prop["enum"][0]
    if "oneOf" in prop:
        return prop["oneOf"][0]["const"]
    return "conformance"[: prop.get("maxLength", 11)].ljust(prop.get("minLength", 0), "x")


async def request_state(client: Client) -> None:
    """SEP-2322: state echoed byte for byte, new ids, no state leaking into another call, and a
    result without ``resultType`` taken as complete."""
    await client.list_tools()
    tools = ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type")
    for tool in tools:
        result = await client.call_tool(tool, {})
        print(f"{tool}: {result.text}")


async def request_metadata(client: Client) -> None:
    """SEP-2575: every request carries its _meta and the version header (the engine does it; the
    first request's -32022 was already answered by retrying with a supported version)."""
    tools = await client.list_tools()
    print(f"protocol version {client.protocol_version}; {len(tools)} tools")


async def tools_call(client: Client) -> None:
    """A plain tool call: ``add_numbers`` with two numbers."""
    await client.list_tools()
    print((await client.call_tool("add_numbers", {"a": 2, "b": 3})).text)


async def standard_headers(client: Client) -> None:
    """SEP-2243: every request carries Mcp-Method (and Mcp-Name where it names a target)."""
    for tool in await client.list_tools():
        print(tool["name"], (await client.call_tool(tool["name"], {})).text)
    for resource in await client.list_resources():
        print(resource["uri"], (await client.read_resource(resource["uri"])).text)
    for prompt in await client.list_prompts():
        print(prompt["name"], len((await client.get_prompt(prompt["name"])).messages))


async def custom_headers(client: Client) -> None:
    """x-mcp-header arguments mirrored in Mcp-Param-* headers; the calls come from the harness."""
    await client.list_tools()
    for call in _context().get("toolCalls", []):
        print(call["name"], (await client.call_tool(call["name"], call["arguments"])).text)


async def invalid_tool_headers(client: Client) -> None:
    """Tools whose x-mcp-header annotations are invalid are left out of the listing; the valid
    one is called with its header."""
    for tool in await client.list_tools():
        arguments = {"region": "us-west1"} if tool["name"] == "valid_tool" else {}
        print(tool["name"], (await client.call_tool(tool["name"], arguments)).text)


async def schema_preservation(client: Client) -> None:
    """JSON Schema 2020-12 keywords of an inputSchema reach the caller as the server wrote them."""
    tools = await client.list_tools()
    focal = next(tool for tool in tools if tool["name"] != "json_schema_echo")
    print((await client.call_tool("json_schema_echo", {"schema": focal["inputSchema"]})).text)


async def schema_listing(client: Client) -> None:
    """$ref in an inputSchema is kept, never dereferenced (the harness checks the listing)."""
    print(f"{len(await client.list_tools())} tools listed")


async def initialize(client: Client) -> None:
    """The 2025-11-25 handshake (done when connecting), then a request in the session."""
    tools = await client.list_tools()
    print(f"protocol version {client.protocol_version} ({client.era}); {len(tools)} tools")


async def elicitation_defaults(client: Client) -> None:
    """SEP-1034 on a 2025-11-25 session: the server's elicitation/create has five optional fields
    with defaults; the acceptor leaves them out and the engine fills them in before sending."""
    await client.list_tools()
    print((await client.call_tool("test_client_elicitation_defaults", {})).text)


async def sse_retry(client: Client) -> None:
    """SEP-1699: the server closes the tool call's event stream after a priming event; the
    engine waits its ``retry`` and resumes with GET and Last-Event-ID."""
    await client.list_tools()
    print((await client.call_tool("test_reconnection", {})).text)


def _context() -> dict[str, Any]:
    """What the harness passes about the scenario (``MCP_CONFORMANCE_CONTEXT``, JSON)."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"
    context = json.loads(raw)
    return context if isinstance(context, dict) else {}


SCENARIOS: dict[str, Callable[[Client], Awaitable[None]]] = {
    "sep-2322-client-request-state": request_state,
    "request-metadata": request_metadata,
    "tools_call": tools_call,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-2020-12-preservation": schema_preservation,
    "json-schema-ref-no-deref": schema_listing,
    "initialize": initialize,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
}


async def main() -> int:
    if len(sys.argv) < 2:
        print("usage: conformance_client.py [...] SERVER_URL", file=sys.stderr)
        return 2
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    run = SCENARIOS.get(scenario)
    if run is None:
        print(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 1
    async with Client.connect(
        url, answerer=ScriptedAcceptor(), client_info=CLIENT_INFO, max_total_seconds=60
    ) as client:
        print(f"connected to {client.server_identity.name} via {client.reached_via}")
        await run(client)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except ClientError as exc:
        print(f"conformance client: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
