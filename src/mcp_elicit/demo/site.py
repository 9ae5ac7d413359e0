"""The demo, running: the issue tracker with its URL-mode kit, and the demo CI service.

Everything is on 127.0.0.1, on two free ports, and in memory (ephemeral keys, in-memory vault
and flow store): nothing survives the process.

* ``http://127.0.0.1:<port>``: the tracker's whole site (``server.asgi()``): ``/mcp`` behind a
  DEMO ONLY :class:`~mcp_elicit.connect.identity.DevelopmentIdentity` (a per-run bearer token for
  ``demo-user``), and the kit's real pages, signing the browser in with the DEMO ONLY
  :class:`~mcp_elicit.connect.pages.DevelopmentLogin` as that same ``demo-user``;
* ``http://127.0.0.1:<other port>``: :class:`~mcp_elicit.demo.ci_provider.DemoCIProvider`, the
  DEMO ONLY third party (its own origin), registered with ``kit.oauth_provider("ci", ...)``.

``python -m mcp_elicit.demo`` runs :func:`main`: it prints one JSON line on stdout when both are
ready (``mcp``, ``pages``, ``ci``, ``bearer``, ``principal``) and stops when its stdin pipe
closes (the parent went away), or on SIGTERM / SIGINT. Logs go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any, Final

import uvicorn

from mcp_elicit.connect.identity import DevelopmentIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.pages import DevelopmentLogin
from mcp_elicit.connect.vault import Vault
from mcp_elicit.demo.ci_provider import DemoCIProvider
from mcp_elicit.demo.server import CI_PROVIDER, build_tracker
from mcp_elicit.server.app import Server
from mcp_elicit.state import KeyRing

__all__ = ["DEMO_SUBJECT", "DemoSite", "main"]

DEMO_SUBJECT: Final = "demo-user"
_HOLD: Final = 20.0  # a person in a browser needs a moment; the client re-asks after this
_START_TIMEOUT: Final = 10.0


@dataclass
class DemoSite:
    """The tracker, its kit and the demo CI provider, on two reserved 127.0.0.1 sockets."""

    server: Server
    kit: ConnectKit
    provider: DemoCIProvider
    identity: DevelopmentIdentity
    bearer: str
    mcp_socket: socket.socket
    ci_socket: socket.socket

    @classmethod
    def create(cls, *, hold: float = _HOLD) -> DemoSite:
        mcp_socket, base = _bind()
        ci_socket, ci = _bind()
        bearer = secrets.token_urlsafe(32)
        # DEMO ONLY: trusts whoever holds this run's bearer token (and anyone signing in on the
        # pages on this machine) as demo-user. Both objects refuse to run outside development.
        identity = DevelopmentIdentity(
            DEMO_SUBJECT, tokens={bearer: DEMO_SUBJECT}, i_understand_this_is_not_secure=True
        )
        kit = ConnectKit(
            base_url=base,
            identity=identity,
            login=DevelopmentLogin(identity),
            vault=Vault.sqlite(":memory:", keys=[KeyRing.generate_secret()]),
            hold=hold,
            development=True,
        )
        provider = DemoCIProvider(ci)
        server = build_tracker(kit, f"{ci}/api/builds")
        # Registered under the tracker's own name: what the CI service's consent page calls it.
        client = provider.register(f"{base}/oauth/{CI_PROVIDER}/callback", name=server.title or server.name)
        kit.oauth_provider(
            CI_PROVIDER,
            authorize_url=f"{ci}/authorize",
            token_url=f"{ci}/token",
            revocation_url=f"{ci}/revoke",
            client_id=client.client_id,
            client_secret=client.client_secret,
            scopes=["builds:read"],
            issuer=ci,
            iss_parameter_supported=True,
            title="Demo CI service (demo only)",
        )
        return cls(server, kit, provider, identity, bearer, mcp_socket, ci_socket)

    @property
    def base_url(self) -> str:
        return self.kit.base_url

    @property
    def mcp_url(self) -> str:
        return self.kit.resource

    @property
    def ci_url(self) -> str:
        return self.provider.issuer

    def ready_line(self) -> str:
        """What :func:`main` prints once serving (the parent reads it)."""
        return json.dumps(
            {
                "mcp": self.mcp_url,
                "pages": self.base_url,
                "ci": self.ci_url,
                "bearer": self.bearer,
                "principal": self.identity.principal.key,
            }
        )

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[DemoSite]:
        """Serve both in this event loop until the block ends; then close the kit's stores."""
        servers = [
            (_Uvicorn(_config(self.server.asgi())), self.mcp_socket),
            (_Uvicorn(_config(self.provider)), self.ci_socket),
        ]
        tasks = [asyncio.create_task(s.serve(sockets=[sock])) for s, sock in servers]
        try:
            await _started([s for s, _ in servers], tasks)
            yield self
        finally:
            for s, _ in servers:
                s.should_exit = True
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.kit.aclose()
            self.close()

    def close(self) -> None:
        self.mcp_socket.close()
        self.ci_socket.close()


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: two servers share this process, and the site
    decides when both stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _config(app: Any) -> uvicorn.Config:
    return uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")


def _bind() -> tuple[socket.socket, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # loopback only, a free port
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


async def _started(servers: list[_Uvicorn], tasks: list[asyncio.Task[None]]) -> None:
    deadline = asyncio.get_running_loop().time() + _START_TIMEOUT
    while not all(s.started for s in servers):
        for task in tasks:
            if task.done():
                task.result()  # raises what stopped it
                raise RuntimeError("a demo server stopped while starting")
        if asyncio.get_running_loop().time() > deadline:
            raise RuntimeError("the demo servers did not start")
        await asyncio.sleep(0.01)


async def _until_stopped() -> None:
    """Until stdin reaches EOF (the parent closed it or went away) or SIGTERM / SIGINT."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if not _is_pipe(sys.stdin):  # a terminal, /dev/null, a file: only the signals stop the demo
        await stop.wait()
        return
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    eof = asyncio.create_task(_drain(reader))
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({eof, stopped}, return_when=asyncio.FIRST_COMPLETED)
    for task in (eof, stopped):
        task.cancel()


def _is_pipe(stream: Any) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _drain(reader: asyncio.StreamReader) -> None:
    while await reader.read(4096):
        pass


async def _serve() -> None:
    site = DemoSite.create()
    async with site.running():
        sys.stdout.write(site.ready_line() + "\n")
        sys.stdout.flush()
        await _until_stopped()


def main() -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(_serve())
    return 0
