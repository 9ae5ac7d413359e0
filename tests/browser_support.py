"""Real-browser support for tests: Debian's Chromium driven by Playwright's **async** API.

Style: async everywhere. pytest-asyncio runs in ``asyncio_mode = "auto"`` with a new event loop
per test, and Playwright objects belong to the loop that made them, so the browser is
function-scoped: :func:`launch_browser` in each test's own loop (~0.5 s). A test makes one
``await browser.new_context()`` per simulated user: separate cookies and storage, like separate
people on separate machines.

Chromium comes from Debian (``/usr/bin/chromium``, installed by ``bash scripts/setup.sh``); never
``playwright install``, nothing is downloaded. The browser is kept offline: every host name
except 127.0.0.1 and localhost fails to resolve, so a page that would fetch something from the
internet breaks visibly instead of quietly needing the network.

Also here: :class:`CallbackServer`, a tiny loopback HTTP server that records the requests sent to
it, as the ``redirect_uri`` of a client in browser tests.
"""

from __future__ import annotations

import asyncio
import http.server
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = [
    "CHROMIUM",
    "CHROMIUM_SETUP_HINT",
    "CallbackServer",
    "ReceivedRequest",
    "chromium_path",
    "launch_browser",
]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_SETUP_HINT = "run bash scripts/setup.sh (installs Debian chromium)"
# Only loopback resolves: the tests must never reach the internet from the browser.
OFFLINE_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",)


def chromium_path() -> Path:
    """Debian's Chromium, or a failure (not a skip: browser tests are part of the suite)."""
    if not CHROMIUM.is_file():
        raise RuntimeError(f"{CHROMIUM} is missing: {CHROMIUM_SETUP_HINT}")
    return CHROMIUM


async def launch_browser(playwright: Playwright) -> Browser:
    """Headless Debian Chromium, offline except for loopback."""
    return await playwright.chromium.launch(
        executable_path=str(chromium_path()), headless=True, args=list(OFFLINE_ARGS)
    )


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    query: dict[str, str]

    @property
    def url_path(self) -> str:
        return urlsplit(self.path).path


class CallbackServer:
    """A loopback HTTP server (own thread) answering every GET with a small HTML page
    ``<h1 id="callback">Callback received</h1>`` and recording it. Use :meth:`url` as a client's
    redirect URI and :meth:`wait_for` to get the request the browser made."""

    def __init__(self) -> None:
        self.requests: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                with outer._lock:
                    outer.requests.append(ReceivedRequest("GET", self.path, query))
                body = b'<!DOCTYPE html><title>Callback</title><h1 id="callback">Callback received</h1>'
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # quiet test output
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str = "/callback") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> CallbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> CallbackServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def wait_for(self, path: str = "/callback", *, within: float = 10.0) -> ReceivedRequest:
        """The first recorded request to ``path`` (polls; the server runs in its own thread)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            with self._lock:
                for request in self.requests:
                    if request.url_path == path:
                        return request
            await asyncio.sleep(0.02)
        raise TimeoutError(f"no request to {path} within {within}s (got {self.requests})")
