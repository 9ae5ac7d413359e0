"""A ``Description`` on an argument reaches ``tools/list`` and ``prompts/list`` whichever way the
signature is read: also when another argument (a date, a model) hands the whole signature to
pydantic, which leaves markers it does not know out of its schema (docs/cli.md's listing)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field

from mcp_elicit import Description, Server
from tests.helpers import request


def make_server() -> Server:
    app = Server("described", state_keys=["argument-descriptions-tests-0123456789abcdef"])

    @app.tool()
    async def plain(city: Annotated[str, Description("The city")], nights: int = 3) -> str:
        return city

    @app.tool()
    async def through_pydantic(
        city: Annotated[str, Description("The city"), "by its English name"],
        leaving: date | None = None,
        note: Annotated[str, Field(description="Pydantic's own")] = "",
    ) -> str:
        return city

    @app.prompt()
    async def brief(topic: Annotated[str, Description("What to write about")], due: date) -> str:
        return topic

    return app


def test_descriptions_survive_the_pydantic_path() -> None:
    tools = {tool["name"]: tool["inputSchema"]["properties"] for tool in make_server().describe_tools()}
    assert tools["plain"]["city"]["description"] == "The city"
    assert tools["through_pydantic"]["city"]["description"] == "The city by its English name"
    assert tools["through_pydantic"]["note"]["description"] == "Pydantic's own"
    assert "description" not in tools["through_pydantic"]["leaving"]


async def test_a_prompt_argument_keeps_its_description_too() -> None:
    listed = await make_server().dispatch(request("prompts/list"))
    (prompt,) = listed["prompts"]
    assert prompt["arguments"][0] == {"name": "topic", "required": True, "description": "What to write about"}
