from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input

from ._harness import Harness


@pytest.fixture
def term() -> Iterator[Harness]:
    with create_pipe_input() as pipe:
        yield Harness(pipe)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answerer must never fetch, resolve or prefetch anything (a URL least of all)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the answerer touched the network")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
