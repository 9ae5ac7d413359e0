"""Our client as the official conformance harness's client under test.

    conformance client --command "python examples/conformance_client.py" \\
        --scenario sep-2322-client-request-state --spec-version 2026-07-28

The harness starts a mock server, appends its URL as the last argument and names the scenario in
``MCP_CONFORMANCE_SCENARIO``. The person is a script: every form is accepted with values made
from its schema (``{"confirmed": true}`` for the harness's confirmation form), and the engine
checks them against the schema before they are sent, like any other answer. Exit status 0 means
the scenario's client steps all completed.
"""

from __future__ import annotations

import asyncio
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


SCENARIOS: dict[str, Callable[[Client], Awaitable[None]]] = {
    "sep-2322-client-request-state": request_state,
    "request-metadata": request_metadata,
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
