from __future__ import annotations

from collections.abc import Iterator

import pytest
from prompt_toolkit.input import create_pipe_input

from ._harness import Harness


@pytest.fixture
def term() -> Iterator[Harness]:
    with create_pipe_input() as pipe:
        yield Harness(pipe)
