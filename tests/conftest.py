"""Fixtures for every test folder.

* ``browser`` (function, async): headless Debian Chromium via Playwright's async API (see
  :mod:`tests.browser_support`). Function-scoped on purpose: each test has its own event loop and
  Playwright objects cannot cross loops. Make one ``await browser.new_context()`` per user.
* The event loops: the async tests of the stores and of the servers that run in the test's own
  process (:data:`BOTH_LOOPS`) run twice, on asyncio's loop and on uvloop, which production uses
  (``run_http()`` and the stdio server take it whenever it is installed): a crash that only one
  loop has cannot hide behind pytest's default one (issue 17: closing a socket the loop still
  watched aborted uvloop, while asyncio shrugged). A :class:`tests.helpers.InProcessServer` started
  by such a test runs on the same kind of loop (in its thread, or in the test's loop). The
  transports' end-to-end servers, which run in processes of their own
  (:mod:`tests.server_process`), are run on both loops by ``tests/e2e/conftest.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import uvloop

from tests.browser_support import launch_browser

if TYPE_CHECKING:
    from playwright.async_api import Browser

ROOT = Path(__file__).resolve().parent
BOTH_LOOPS = ("transport", "state", "storage", "connect/flows", "connect/vault", "connect/kit", "reliability")
"""Folders (under tests/) whose async tests run on asyncio and on uvloop."""

_ASYNCIO: Mapping[str, Callable[[], asyncio.AbstractEventLoop]] = {"asyncio": asyncio.new_event_loop}
_BOTH: Mapping[str, Callable[[], asyncio.AbstractEventLoop]] = {**_ASYNCIO, "uvloop": uvloop.new_event_loop}


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, object]:
    try:
        where = item.path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return _ASYNCIO
    return _BOTH if any(where.startswith(folder + "/") for folder in BOTH_LOOPS) else _ASYNCIO


@pytest.fixture(autouse=True)
def _no_era_remembered_from_another_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client remembers each server's protocol era by its URL (``client/era.py``); a test's
    server on a port an earlier test's server had must not inherit that verdict (a 2025-11-25
    one made the client open with initialize, which a 2026-07-28 test server may not take)."""
    from mcp_elicit.client import era

    monkeypatch.setattr(era, "_verdicts", {})


@pytest.fixture(autouse=True)
def _short_waits_for_other_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pauses meant for people and databases, cut short in this process: the client's before
    sending again a request refused as retryable (about 8 s in all), and a redelivery claim's wait
    for another attempt's answer (3 s). Tests of an outage or a crash would each spend them; the
    tests of these waits set their own (``test_rogue.py``, ``reliability/test_redelivery.py``),
    and servers run as processes keep the defaults."""
    from mcp_elicit.client import client
    from mcp_elicit.state import seal

    monkeypatch.setattr(client, "RETRYABLE_DELAYS", (0.01, 0.02, 0.04, 0.08, 0.16))
    monkeypatch.setattr(seal, "CLAIM_WAIT", 0.5)


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await launch_browser(playwright)
        try:
            yield launched
        finally:
            await launched.close()
