"""Fixtures for the CLI tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cli.cli_support import http_server


@pytest.fixture(scope="module")
def http_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test server over HTTP on 127.0.0.1: its URL."""
    with http_server(tmp_path_factory.mktemp("cli-server") / "server.log") as url:
        yield url
