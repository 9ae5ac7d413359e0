"""The official SDK's server (``mcp==2.3.0`` ``MCPServer``) for the interop tests; test-only.

    python sdk_server.py stdio
    python sdk_server.py PORT    (127.0.0.1; streamable_http_app(stateless_http=True, json_response=True))

Elicitation through resolvers (``Annotated[T, Resolve(fn)]`` with ``Elicit(msg, Model)``);
``requestState`` is sealed with AES-256-GCM (``RequestStateSecurity(keys=[...])``), so a client
that alters it in any way gets the SDK's -32602.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    RequestStateSecurity,
    Resolve,
)
from pydantic import BaseModel, Field

app = MCPServer(
    "sdk-interop",
    version="9.9.9",
    log_level="WARNING",
    request_state_security=RequestStateSecurity(keys=["sdk-interop-tests-only-key-0123456789abcdefghij"]),
)


class Confirm(BaseModel):
    ok: bool


class Name(BaseModel):
    name: str


class Details(BaseModel):
    priority: str = Field(default="normal", json_schema_extra={"enum": ["low", "normal", "high"]})
    count: int = Field(default=1, ge=1, le=10)


class Order(BaseModel):
    """What pydantic writes for common constraints goes beyond the elicitation subset:
    exclusiveMinimum, multipleOf, pattern and a numeric enum."""

    quantity: int = Field(gt=0)
    pack: int = Field(default=6, multiple_of=6)
    code: str = Field(pattern=r"^[A-Z]{3}$")
    size: Literal[1, 2, 3] = 2


def ask_confirm(title: str) -> Elicit[Confirm]:
    return Elicit(f"Create ticket {title!r}?", Confirm)


def ask_first() -> Elicit[Name]:
    return Elicit("First name?", Name)


def ask_last(first: Annotated[Name, Resolve(ask_first)]) -> Elicit[Name]:
    # Depends on the first answer: asked in the round after it.
    return Elicit(f"Last name of {first.name}?", Name)


def ask_left() -> Elicit[Name]:
    return Elicit("Left?", Name)


def ask_right() -> Elicit[Name]:
    return Elicit("Right?", Name)


def ask_details() -> Elicit[Details]:
    return Elicit("Details?", Details)


def ask_order() -> Elicit[Order]:
    return Elicit("Order?", Order)


class Terms(BaseModel):
    """pydantic writes Literal[True] as "const": true and set[Literal] with "uniqueItems": true."""

    agree: Literal[True]
    toppings: set[Literal["cheese", "ham", "olives"]] = set()
    level: Literal[5] = 5


def ask_terms() -> Elicit[Terms]:
    return Elicit("Agree to the terms?", Terms)


@app.tool()
async def create_ticket(title: str, answer: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
    return f"Created {title}" if answer.ok else "Not created"


@app.tool()
async def greet(first: Annotated[Name, Resolve(ask_first)], last: Annotated[Name, Resolve(ask_last)]) -> str:
    return f"Hello, {first.name} {last.name}!"


@app.tool()
async def pair(left: Annotated[Name, Resolve(ask_left)], right: Annotated[Name, Resolve(ask_right)]) -> str:
    return f"{left.name}+{right.name}"


@app.tool()
async def maybe(answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)], title: str) -> str:
    if isinstance(answer, AcceptedElicitation):
        return f"accepted ok={answer.data.ok}"
    return f"outcome {answer.action}"


@app.tool()
async def details(value: Annotated[Details, Resolve(ask_details)]) -> str:
    return f"priority={value.priority} count={value.count}"


@app.tool()
async def order(value: Annotated[Order, Resolve(ask_order)]) -> str:
    return f"quantity={value.quantity} pack={value.pack} code={value.code} size={value.size!r}"


@app.tool()
async def terms(value: Annotated[Terms, Resolve(ask_terms)]) -> str:
    return f"agree={value.agree} toppings={sorted(value.toppings)} level={value.level}"


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: sdk_server.py stdio|PORT")
    if sys.argv[1] == "stdio":
        app.run("stdio")
        return
    import uvicorn

    uvicorn.run(
        app.streamable_http_app(stateless_http=True, json_response=True),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
    )


if __name__ == "__main__":
    main()
