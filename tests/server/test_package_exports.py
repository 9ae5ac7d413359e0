"""What ``from mcp_elicit import ...`` offers a server author: every listed name resolves, and the
form markers a guide's first form needs come from the top-level package (they were only in
``mcp_elicit.schema``, so ``from mcp_elicit import Choices`` was an ImportError)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Annotated, Literal

import pytest

import mcp_elicit
from mcp_elicit import Choices, Description, Email, Title
from mcp_elicit.schema import form_spec


def test_every_listed_name_resolves_and_the_list_is_sorted() -> None:
    assert mcp_elicit.__all__ == sorted(mcp_elicit.__all__)
    for name in mcp_elicit.__all__:
        assert getattr(mcp_elicit, name) is not None


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'Choice'"):
        _ = mcp_elicit.Choice  # type: ignore[attr-defined]


def test_a_form_built_from_the_top_level_markers() -> None:
    @dataclass
    class Trip:
        destination: Annotated[str, Choices({"lis": "Lisbon", "osl": "Oslo"}), Title("Where to")]
        email: Annotated[Email, Description("For the tickets")]
        seats: Literal["aisle", "window"] = "aisle"
        leaving: date | None = None

    schema = form_spec(Trip).schema
    props = schema["properties"]
    assert props["destination"]["title"] == "Where to"
    assert props["destination"]["oneOf"] == [
        {"const": "lis", "title": "Lisbon"},
        {"const": "osl", "title": "Oslo"},
    ]
    assert props["email"] == {"type": "string", "format": "email", "description": "For the tickets"}
    assert props["seats"]["default"] == "aisle"
    assert props["leaving"]["format"] == "date"
    assert schema["required"] == ["destination", "email"]
