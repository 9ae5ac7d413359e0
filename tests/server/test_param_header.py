"""``ParamHeader``: a tool argument mirrored in ``Mcp-Param-<Name>`` (SEP-2243), declared without
pydantic, checked at registration and, over real HTTP on 127.0.0.1, against every call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import pytest
from pydantic import Field

from mcp_elicit import ParamHeader, Server
from tests.e2e.test_http import body, headers_for
from tests.helpers import InProcessServer


def build() -> Server:
    app = Server("headers", version="1", state_keys=["param-header-tests-only-key-0123456789abcdef"])

    @app.tool()
    async def route(region: Annotated[str, ParamHeader("Region"), "Where to run"], query: str) -> str:
        return f"{query} in {region}"

    @app.tool()
    async def shard(number: Annotated[int, Field(ge=0), ParamHeader("Shard")]) -> str:
        return f"shard {number}"  # pydantic reads this signature (Field)

    return app


@pytest.fixture(scope="module")
def server() -> Iterator[InProcessServer]:
    with InProcessServer(build().asgi()) as running:
        yield running


async def test_the_annotation_joins_the_input_schema_on_both_paths(server: InProcessServer) -> None:
    message = body("tools/list")
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            server.base + "/mcp", content=json.dumps(message), headers=headers_for(message)
        )
    tools = {tool["name"]: tool for tool in response.json()["result"]["tools"]}
    assert tools["route"]["inputSchema"]["properties"]["region"] == {
        "type": "string",
        "description": "Where to run",
        "x-mcp-header": "Region",
    }
    number = tools["shard"]["inputSchema"]["properties"]["number"]
    assert number["x-mcp-header"] == "Shard"
    assert number["minimum"] == 0


async def post(server: InProcessServer, name: str, arguments: dict[str, Any], **extra: str) -> httpx.Response:
    message = body("tools/call", {"name": name, "arguments": arguments})
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(
            server.base + "/mcp", content=json.dumps(message), headers={**headers_for(message), **extra}
        )


@pytest.mark.parametrize(
    ("name", "arguments", "header", "value"),
    [
        ("route", {"region": "eu", "query": "q"}, "Mcp-Param-Region", "eu"),
        ("shard", {"number": 3}, "Mcp-Param-Shard", "3"),
    ],
)
async def test_calls_are_checked_against_the_header(
    server: InProcessServer, name: str, arguments: dict[str, Any], header: str, value: str
) -> None:
    missing = await post(server, name, arguments)
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == -32020
    assert f"{header} header is required" in missing.json()["error"]["message"]
    matching = await post(server, name, arguments, **{header: value})
    assert matching.status_code == 200, matching.text
    assert matching.json()["result"]["isError"] is False


def test_bad_annotations_are_refused_when_the_tool_is_registered() -> None:
    app = Server("bad", version="1")
    with pytest.raises(
        ValueError, match=r"tool 'spaced': property region: x-mcp-header is not an HTTP token"
    ):

        @app.tool()
        async def spaced(region: Annotated[str, ParamHeader("Cloud Region")]) -> str:
            return region

    with pytest.raises(ValueError, match=r"tool 'listed': property regions: x-mcp-header needs an integer"):

        @app.tool()
        async def listed(regions: Annotated[list[str], ParamHeader("Regions")]) -> str:
            return ",".join(regions)

    with pytest.raises(ValueError, match=r"x-mcp-header 'region' is used twice"):

        @app.tool()
        async def twice(
            a: Annotated[str, ParamHeader("Region")], b: Annotated[str, ParamHeader("region")]
        ) -> str:
            return a + b

    with pytest.raises(TypeError, match="ParamHeader needs a header name"):
        ParamHeader(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ParamHeader needs a header name"):
        ParamHeader("")
