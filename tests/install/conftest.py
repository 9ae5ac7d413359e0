"""One wheel and one virtual environment per set of extras, each made once per test session
(only when a test asks for it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.install.installs import Venv, build_wheel, make_venv


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def venv_with(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Callable[..., Venv]:
    made: dict[tuple[str, ...], Venv] = {}
    root = tmp_path_factory.mktemp("venvs")

    def get(*extras: str) -> Venv:
        if extras not in made:
            made[extras] = make_venv(root, wheel, extras)
        return made[extras]

    return get


@pytest.fixture(scope="session")
def core(venv_with: Callable[..., Venv]) -> Venv:
    """``pip install mcp-elicit``: the core only."""
    return venv_with()
