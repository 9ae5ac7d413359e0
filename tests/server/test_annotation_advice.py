"""An annotation that does not resolve: the message says what is likeliest wrong (a typo, an
import under ``if TYPE_CHECKING:``, a class defined inside a function), and only what applies.

Each case is a module written to a file and imported, so that its source can be read (as the
advice reads it) and ``from __future__ import annotations`` makes its annotations strings."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.schema import SchemaBuildError, form_spec

KEYS = ["annotation-advice-tests-secret-0123456789abcdef"]
TYPE_CHECKING_HINT = "TYPE_CHECKING"
LOCALS_HINT = "defined inside a function"


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``module(source)``: the module of that source, imported from a file (and left in
    ``sys.modules`` for the test only)."""

    def load(source: str) -> ModuleType:
        name = f"advice_{len(list(tmp_path.iterdir()))}"
        path = tmp_path / f"{name}.py"
        path.write_text("from __future__ import annotations\n" + textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, loaded)
        spec.loader.exec_module(loaded)
        return loaded

    return load


def registration_error(module: ModuleType, handler: str = "book_trip") -> str:
    with pytest.raises(TypeError) as info:
        Server("advice", state_keys=KEYS).tool()(getattr(module, handler))
    return str(info.value)


def form_error(cls: type) -> str:
    with pytest.raises(SchemaBuildError) as info:
        form_spec(cls)
    return str(info.value)


def test_a_typo_in_a_module_level_dataclass_suggests_the_name_and_nothing_else(module: Any) -> None:
    """It used to say the class was defined inside a function (it is not)."""
    m = module(
        """
        from dataclasses import dataclass

        @dataclass
        class Trip:
            nights: itn
        """
    )
    message = form_error(m.Trip)
    assert message == (
        "form: cannot resolve the type annotations of Trip: name 'itn' is not defined "
        "(a typo? did you mean 'int'?)"
    )


def test_a_typo_in_a_tool_parameter_suggests_the_name_not_type_checking(module: Any) -> None:
    """It used to ask about ``if TYPE_CHECKING:`` in a module that has no such block."""
    m = module(
        """
        async def book_trip(city: srt) -> str:
            return city
        """
    )
    assert registration_error(m) == (
        "book_trip: its annotations name 'srt', which its module does not define when the handler "
        "is registered: a typo? did you mean 'str'?"
    )


def test_a_typo_of_a_module_class_is_suggested_too(module: Any) -> None:
    m = module(
        """
        from dataclasses import dataclass

        @dataclass
        class Hotel:
            name: str

        async def book_trip(hotel: Hotle) -> str:
            return "ok"
        """
    )
    assert registration_error(m).endswith("a typo? did you mean 'Hotel'?")


def test_a_name_imported_under_type_checking_says_so(module: Any) -> None:
    m = module(
        """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from datetime import date

        async def book_trip(leaving: date) -> str:
            return "ok"
        """
    )
    assert registration_error(m).endswith(
        "'date' is imported under `if TYPE_CHECKING:`, which does not run: import it at run time"
    )


def test_a_name_imported_nowhere_says_to_import_it_without_guessing(module: Any) -> None:
    m = module(
        """
        async def book_trip(where: Zorblax) -> str:
            return "ok"
        """
    )
    message = registration_error(m)
    assert message.endswith(f"import or define it at the top level of {m.__name__}")
    assert TYPE_CHECKING_HINT not in message
    assert "typo" not in message
    assert LOCALS_HINT not in message


def test_a_class_defined_inside_a_function_gets_the_local_names_hint(module: Any) -> None:
    m = module(
        """
        from dataclasses import dataclass

        def make():
            class Local:
                pass

            @dataclass
            class Trip:
                where: Local

            return Trip
        """
    )
    message = form_error(m.make())
    assert message.endswith(
        "(string annotations of a class defined inside a function cannot see that function's "
        "local names: define it at module level)"
    )
    assert TYPE_CHECKING_HINT not in message
    assert "typo" not in message
