"""The package itself: public names, lazy imports, no pydantic unless the user brings it, doctests."""

import doctest
import importlib
import subprocess
import sys

import pytest

import mcp_elicit.schema as schema_pkg

MODULES = [
    "mcp_elicit.schema",
    "mcp_elicit.schema.build",
    "mcp_elicit.schema.check",
    "mcp_elicit.schema.convert",
    "mcp_elicit.schema.errors",
    "mcp_elicit.schema.formats",
    "mcp_elicit.schema.limits",
    "mcp_elicit.schema.lint",
    "mcp_elicit.schema.lint_words",
    "mcp_elicit.schema.markers",
    "mcp_elicit.schema.problems",
    "mcp_elicit.schema.rules",
    "mcp_elicit.schema.secret_words",
    "mcp_elicit.schema.sources",
    "mcp_elicit.schema.spec",
    "mcp_elicit.schema.text",
    "mcp_elicit.schema.typemap",
    "mcp_elicit.schema.validate",
]


def test_public_names() -> None:
    for name in schema_pkg.__all__:
        assert getattr(schema_pkg, name) is not None
    assert set(schema_pkg.__all__) <= set(dir(schema_pkg))
    with pytest.raises(AttributeError):
        schema_pkg.nope  # noqa: B018


def test_error_hierarchy() -> None:
    from mcp_elicit.schema import (
        AnswerInvalid,
        SchemaBuildError,
        SchemaError,
        SchemaSubsetError,
        SecretFieldError,
    )

    for cls in (AnswerInvalid, SchemaBuildError, SchemaSubsetError, SecretFieldError):
        assert issubclass(cls, SchemaError)
    assert issubclass(SecretFieldError, SchemaBuildError)
    assert str(SchemaBuildError("", "x")) == "form: x"


CHILD = """
import sys
import mcp_elicit.schema as s
assert "pydantic" not in sys.modules and "annotated_types" not in sys.modules
assert "mcp_elicit.schema.lint" not in sys.modules
from dataclasses import dataclass
from typing import Annotated, Literal, TypedDict
@dataclass
class F:
    name: Annotated[str, s.Title("Name")]
    kind: Literal["a", "b"] = "a"
class T(TypedDict):
    n: int
spec = s.form_spec(F)
s.form_spec(T)
s.check_schema({"type": "object", "properties": {}})
s.validate_answer(spec.schema, {"name": "x"})
s.lint_form("m", spec.schema)
assert spec.parse({"name": "x"}) == F("x", "a")
bad = [m for m in ("pydantic", "annotated_types", "typing_extensions") if m in sys.modules]
assert not bad, bad
"""


def test_no_pydantic_unless_the_user_brings_it() -> None:
    subprocess.run([sys.executable, "-c", CHILD], check=True)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
