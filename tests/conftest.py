"""Fixtures for every test folder.

* ``browser`` (function, async): headless Debian Chromium via Playwright's async API (see
  :mod:`tests.browser_support`). Function-scoped on purpose: each test has its own event loop and
  Playwright objects cannot cross loops. Make one ``await browser.new_context()`` per user.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from tests.browser_support import launch_browser

if TYPE_CHECKING:
    from playwright.async_api import Browser


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await launch_browser(playwright)
        try:
            yield launched
        finally:
            await launched.close()
