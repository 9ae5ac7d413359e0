"""A PostgreSQL connection attempt cut short (the caller cancelled, or the operation timed out)
leaves no backend behind once the vault is closed, even while its caller keeps the exception.

Found by ``test_the_vault_keeps_what_it_acknowledged_under_failures[postgres-uvloop]`` ("1
connections left open after every instance was closed"), once, under load: psycopg's
``AsyncConnection.connect`` keeps the half-open libpq connection in the frames of its own
coroutines; when the attempt is cancelled, the ``CancelledError`` carries those frames in its
traceback and nothing closes the connection. The server has already started a backend for it,
which then lives as long as anybody holds the exception: the caller that records it, or the
abandoned task that keeps it (:meth:`PgConnection._abandon` cancels an operation still
connecting), through the ``task`` the caller's own traceback holds. ``close()`` did not reach it.
``PgConnection.connect`` now clears those frames, which closes the connection at once.

Deterministic here: a small TCP relay in front of the server passes the client's start-up
packet on and holds back the server's answer, so the attempt is cut short while the backend
exists (it shows up in ``pg_stat_activity`` under the test's ``application_name``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from psycopg import AsyncConnection
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from tests.helpers import find_pg_dsn

from mcp_elicit.connect.vault import Vault, VaultUnavailable
from mcp_elicit.state import KeyRing


@pytest.fixture(scope="module")
def dsn() -> str:
    return find_pg_dsn("closing the vault during a connection attempt")


class HoldingRelay:
    """Relays clients to the server, but never passes the server's bytes back: a client stays in
    its connection handshake while its backend exists. Closes the server side when a client's
    side closes (so a closed client connection ends its backend)."""

    def __init__(self, dsn: str) -> None:
        params = conninfo_to_dict(dsn)
        self.host = str(params.get("host") or "127.0.0.1")
        self.port = int(params.get("port") or 5432)
        self.answered = asyncio.Event()  # the server has answered a start-up packet
        self.streams: list[asyncio.StreamWriter] = []

    async def _upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.host.startswith("/"):
            return await asyncio.open_unix_connection(f"{self.host}/.s.PGSQL.{self.port}")
        return await asyncio.open_connection(self.host, self.port)

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await self._upstream()
        self.streams += [client_w, server_w]

        async def held() -> None:
            while await server_r.read(65536):
                self.answered.set()

        holding = asyncio.ensure_future(held())
        try:
            while data := await client_r.read(65536):
                server_w.write(data)
                await server_w.drain()
        except OSError:
            pass
        finally:
            holding.cancel()
            server_w.close()
            client_w.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[int]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            server.close()
            for stream in self.streams:
                stream.close()


async def backends(dsn: str, application_name: str, *, until: int, within: float) -> int:
    """How many backends ``application_name`` has once that is ``until`` (or ``within`` s passed)."""
    deadline = time.monotonic() + within
    async with await AsyncConnection.connect(dsn, autocommit=True) as admin:
        while True:
            cursor = await admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application_name,)
            )
            row = await cursor.fetchone()
            count = 0 if row is None else int(row[0])
            if count == until or time.monotonic() > deadline:
                return count
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("cut", ["cancelled", "timed out"])
async def test_a_connection_attempt_cut_short_leaves_no_backend_after_close(dsn: str, cut: str) -> None:
    app = f"close_race_{uuid.uuid4().hex[:12]}"
    relay = HoldingRelay(dsn)
    async with relay.running() as port:
        through_relay = make_conninfo(
            dsn,
            host="127.0.0.1",
            hostaddr="127.0.0.1",
            port=port,
            sslmode="disable",
            gssencmode="disable",
            application_name=app,
        )
        vault = Vault.postgres(
            through_relay,
            keys=KeyRing.from_secrets([KeyRing.generate_secret()]),
            table_prefix=f"close_race_{uuid.uuid4().hex[:10]}_",
            timeout=0.5,
        )
        caller = asyncio.ensure_future(vault.put_secret("owner", "name", "value"))
        await asyncio.wait_for(relay.answered.wait(), 3)
        # The backend exists, its client still in the handshake.
        assert await backends(dsn, app, until=1, within=2) == 1
        if cut == "cancelled":
            caller.cancel()
        kept: BaseException | None = None  # kept like a caller that records its failure
        try:
            await caller
        except (asyncio.CancelledError, VaultUnavailable) as exc:
            kept = exc
        assert isinstance(kept, asyncio.CancelledError if cut == "cancelled" else VaultUnavailable)
        await vault.close()
        left = await backends(dsn, app, until=0, within=1.5)
        assert left == 0, f"{left} backend(s) of a {cut} connection attempt left after close()"
        del kept
