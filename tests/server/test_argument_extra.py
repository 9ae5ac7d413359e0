"""A tool argument only pydantic reads, without the [pydantic] extra: the error names the tool,
the argument and its type, and the pip command (it used to say only "an argument type other than
str, int, float, bool, Literal, Enum, list or dict", leaving the author to find which)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit._extras import MissingExtra

KEYS = ["argument-extra-tests-secret-0123456789abcdef"]


@dataclass
class Point:
    x: int


@pytest.fixture(autouse=True)
def _without_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """As with only the core (or [cli]) installed: pydantic is not found."""
    find_spec = importlib.util.find_spec

    def without(name: str, package: str | None = None) -> Any:
        return None if name == "pydantic" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without)


def refusal(handler: Any) -> str:
    with pytest.raises(MissingExtra) as info:
        Server("extra", state_keys=KEYS).tool()(handler)
    return str(info.value)


async def book_trip(city: str, nights: int, leaving: date | None = None) -> str:
    return city


def test_the_argument_and_its_type_as_written_are_named() -> None:
    assert refusal(book_trip) == (
        "book_trip: the argument 'leaving' (date | None) needs the [pydantic] extra (pydantic is not "
        "installed): pip install 'mcp-elicit[pydantic]'"
    )


def test_an_evaluated_annotation_names_a_class_of_the_module_by_its_name() -> None:
    namespace: dict[str, Any] = {"Point": Point, "__name__": __name__}
    exec("async def move(to: Point, speed: int = 1) -> str:\n    return 'moved'\n", namespace)
    assert refusal(namespace["move"]).startswith("move: the argument 'to' (Point) needs the [pydantic] extra")


def test_plain_arguments_need_no_extra() -> None:
    """The control: the plain path never asks for pydantic."""

    async def plain(city: str, nights: int | None = None, tags: list[str] | None = None) -> str:
        return city

    Server("extra", state_keys=KEYS).tool()(plain)
