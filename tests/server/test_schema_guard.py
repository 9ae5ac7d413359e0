"""``server/schema_guard.py``: a tool read by pydantic takes what its ``inputSchema`` allows and
nothing more, where the schema nests (models in models, a model inside itself) and where the
way through it is not certain (``anyOf`` of two objects: pydantic decides).

The property over every signature is ``test_any_tool_signature.py``; these are the shapes it
does not draw, through the real client in this process."""

from __future__ import annotations

import enum
from typing import Any

import pydantic
import pytest

from mcp_elicit import Server
from mcp_elicit.client import Client
from mcp_elicit.server.schema_guard import misfit

KEYS = ["schema-guard-tests-secret-0123456789abcdef"]


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


class Node(pydantic.BaseModel):
    level: Level
    children: list[Node] = []


class Cat(pydantic.BaseModel):
    kind: Level
    lives: int


class Dog(pydantic.BaseModel):
    kind: bool
    name: str


app = Server("guard", state_keys=KEYS)
received: list[Any] = []


@app.tool()
async def tree(root: Node) -> str:
    received.append(root)
    return "ok"


@app.tool()
async def pet(animal: Cat | Dog) -> str:
    received.append(animal)
    return type(animal).__name__


async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    received.clear()
    async with Client.connect(app) as client:
        result = await client.call_tool(tool, arguments)
    assert bool(received) != result.is_error  # a refused call never runs the handler
    return not result.is_error, result.text


async def test_a_model_inside_itself_is_walked_to_the_bottom() -> None:
    deep: dict[str, Any] = {"level": 1, "children": []}
    node = deep
    for _ in range(30):
        child: dict[str, Any] = {"level": 2, "children": []}
        node["children"].append(child)
        node = child
    assert await call("tree", {"root": deep}) == (True, "ok")
    node["level"] = True  # 30 levels down: still a boolean where the schema wants 1 or 2
    ok, text = await call("tree", {"root": deep})
    assert not ok
    assert text.startswith("Invalid arguments for tool 'tree': argument 'root.children[0].children[0]")
    assert text.endswith("must be one of 1, 2, not true")


async def test_an_object_of_either_of_two_shapes_is_left_to_pydantic() -> None:
    assert await call("pet", {"animal": {"kind": 2, "lives": 9}}) == (True, "Cat")
    assert await call("pet", {"animal": {"kind": True, "name": "Rex"}}) == (True, "Dog")
    # Neither shape takes it: pydantic says so, naming the argument.
    ok, text = await call("pet", {"animal": {"kind": "x", "lives": 9}})
    assert not ok
    assert "animal" in text


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"a": True}, "argument 'a' must be one of 1, 2, not true"),
        ({"a": 1}, None),
        ({"b": 0}, "argument 'b' must be true, not 0"),
        ({"c": [True]}, "argument 'c[0]' must be an integer or null, not true"),
        ({"c": [None, 3]}, None),
        ({"d": ["x", "x"]}, "argument 'd' must not hold the same item twice"),
        ({"d": ["x", "y"]}, None),
        ({"e": {"k": True}}, "argument 'e.k' must be a number, not true"),
        ({"f": True}, None),  # an unconstrained schema: anything goes
        ({"g": True}, None),  # a $ref this cannot follow: pydantic decides
        ({"unknown": True}, None),  # not in the schema: pydantic refuses it (extra="forbid")
    ],
)
def test_what_misfit_finds(arguments: dict[str, Any], expected: str | None) -> None:
    assert misfit(arguments, SCHEMA, DEFS) == ({} if expected is None else {next(iter(arguments)): expected})


SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"$ref": "#/$defs/Level"},
        "b": {"const": True},
        "c": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        "d": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "e": {"type": "object", "additionalProperties": {"type": "number"}},
        "f": {},
        "g": {"$ref": "https://example.com/elsewhere.json"},
    },
}
DEFS = {"Level": {"enum": [1, 2], "type": "integer"}}


def test_a_reference_cycle_ends() -> None:
    defs = {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}
    assert misfit({"x": True}, {"properties": {"x": {"$ref": "#/$defs/A"}}}, defs) == {}


def test_each_argument_is_named_once_with_its_first_misfit() -> None:
    found = misfit({"a": True, "b": 0, "c": [True, "x", True], "d": ["x"]}, SCHEMA, DEFS)
    assert found == {
        "a": "argument 'a' must be one of 1, 2, not true",
        "b": "argument 'b' must be true, not 0",
        "c": "argument 'c[0]' must be an integer or null, not true",
    }


@app.tool()
async def book(level: Level, name: str) -> str:
    received.append((level, name))
    return "booked"


async def test_the_guard_and_pydantic_name_every_argument_once() -> None:
    ok, text = await call("book", {"level": True, "name": 5, "extra": 1})
    assert not ok
    problems = text.removeprefix("Invalid arguments for tool 'book': ").split("; ")
    assert problems == [
        "argument 'level' must be one of 1, 2, not true",  # the guard
        "argument 'name' must be a string, not 5",  # the guard (pydantic's own is left out)
        "argument extra: Extra inputs are not permitted",  # pydantic
    ]
