"""The stores' tests run on the event loop production uses (uvloop: ``run_http()`` and the stdio
server take it whenever it is installed) as well as on asyncio's (``tests/conftest.py``): a crash
only one loop has (issue 17) cannot hide behind pytest's default loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.conftest import BOTH_LOOPS, ROOT, pytest_asyncio_loop_factories


def running_loop_kind() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


async def test_each_async_test_runs_on_the_loop_its_id_names(request: pytest.FixtureRequest) -> None:
    kind = request.node.name.rpartition("[")[2].rstrip("]")
    assert kind in ("asyncio", "uvloop")
    assert running_loop_kind() == kind


class _Item:
    def __init__(self, path: Path) -> None:
        self.path = path


@pytest.mark.parametrize("folder", BOTH_LOOPS)
def test_the_store_and_server_folders_get_both_loops(folder: str, pytestconfig: pytest.Config) -> None:
    item = _Item(ROOT / folder / "test_any.py")
    assert set(pytest_asyncio_loop_factories(pytestconfig, item)) == {"asyncio", "uvloop"}  # type: ignore[arg-type]


def test_other_folders_keep_asyncio_only(pytestconfig: pytest.Config) -> None:
    item = _Item(ROOT / "wire" / "test_any.py")
    assert set(pytest_asyncio_loop_factories(pytestconfig, item)) == {"asyncio"}  # type: ignore[arg-type]
