"""PostgreSQL store specifics: failures are quick and clear, dropped connections come back."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator

import psycopg
import psycopg.conninfo
import psycopg.sql
import pytest
from state_support import StoreSpec
from tests.store_support import drop_pg_table, until_server_hung_up

from mcp_elicit.state import PostgresSingleUseStore, StateStoreUnavailable

FAR = time.time() + 3600


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def pg_table(pg_dsn: str) -> Iterator[str]:
    table = StoreSpec.new_table()
    yield table
    drop_pg_table(pg_dsn, table)


async def test_table_is_created_on_first_use(pg_dsn: str, pg_table: str) -> None:
    async with PostgresSingleUseStore(pg_dsn, table=pg_table) as store:
        assert store.table == pg_table
        assert await store.consume("x", 12.5)
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(f'SELECT token_id, expires_at FROM "{pg_table}"').fetchall()
    assert rows == [("x", 12.5)]


async def test_concurrent_first_use_by_many_stores(pg_dsn: str, pg_table: str) -> None:
    stores = [PostgresSingleUseStore(pg_dsn, table=pg_table) for _ in range(6)]
    try:
        results = await asyncio.gather(*(s.consume("same", FAR) for s in stores * 3))
        assert results.count(True) == 1
    finally:
        for s in stores:
            await s.close()


@pytest.mark.parametrize("may_create", [False, True], ids=["dml-only", "create-on-schema"])
async def test_a_role_with_only_read_write_rights_uses_a_table_an_administrator_made(
    pg_dsn: str, pg_table: str, may_create: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Least privilege: the application's role neither owns the table (CREATE INDEX IF NOT EXISTS
    needs that) nor, maybe, may create anything in the schema (CREATE TABLE IF NOT EXISTS needs
    that). It must still work on the table the administrator made."""
    role = f"{pg_table}_app"
    async with PostgresSingleUseStore(pg_dsn, table=pg_table) as admin_store:  # the admin's run
        assert await admin_store.consume("made-by-admin", FAR)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN").format(psycopg.sql.Identifier(role)))
        grants = ["GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {role}"]
        if may_create:
            grants.append("GRANT CREATE ON SCHEMA public TO {role}")
        for grant in grants:
            conn.execute(
                psycopg.sql.SQL(grant).format(
                    table=psycopg.sql.Identifier(pg_table), role=psycopg.sql.Identifier(role)
                )
            )
    try:
        app_dsn = psycopg.conninfo.make_conninfo(pg_dsn, user=role)
        async with PostgresSingleUseStore(app_dsn, table=pg_table) as store:
            assert await store.consume("first", FAR) is True
            assert await store.consume("first", FAR) is False
            assert await store.consume("made-by-admin", FAR) is False
        # CREATE TABLE IF NOT EXISTS needs CREATE on the schema even for an existing table; the
        # index and the columns are looked up first, so a role that may create is not warned.
        warned = any("not allowed to create or update the schema" in r.getMessage() for r in caplog.records)
        assert warned is not may_create
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            ident = psycopg.sql.Identifier(role)
            conn.execute(psycopg.sql.SQL("REVOKE ALL ON SCHEMA public FROM {}").format(ident))
            conn.execute(psycopg.sql.SQL("DROP OWNED BY {}").format(ident))
            conn.execute(psycopg.sql.SQL("DROP ROLE {}").format(ident))


async def test_schema_qualified_table(pg_dsn: str, pg_table: str) -> None:
    async with PostgresSingleUseStore(pg_dsn, table=f"public.{pg_table}") as store:
        assert await store.consume("q", FAR)
        assert not await store.consume("q", FAR)


async def test_unreachable_server_fails_fast_and_clearly() -> None:
    dsn = f"host=127.0.0.1 port={_closed_port()} dbname=test user=postgres password=hunter2secret"
    store = PostgresSingleUseStore(dsn, timeout=3)
    started = time.perf_counter()
    with pytest.raises(StateStoreUnavailable, match="PostgreSQL single-use store") as info:
        await store.consume("x", FAR)
    assert time.perf_counter() - started < 4
    assert "hunter2secret" not in str(info.value)
    assert "hunter2secret" not in repr(store)
    await store.close()


async def test_a_failure_keeps_the_first_line_of_the_error() -> None:
    """psycopg's text may go on with hints and DETAIL lines (which can quote a row's values): the
    message keeps its first line, as the vault's always did."""
    store = PostgresSingleUseStore(
        f"host=127.0.0.1 port={_closed_port()} dbname=test user=postgres", timeout=3
    )
    with pytest.raises(StateStoreUnavailable) as info:
        await store.consume("x", FAR)
    assert str(info.value).startswith("PostgreSQL single-use store: consume failed: OperationalError: ")
    assert "\n" not in str(info.value)
    await store.close()


async def test_silent_server_times_out_instead_of_hanging() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # the kernel completes TCP handshakes; nobody ever answers
    port = listener.getsockname()[1]
    try:
        store = PostgresSingleUseStore(f"host=127.0.0.1 port={port} dbname=test", timeout=0.5)
        started = time.perf_counter()
        with pytest.raises(StateStoreUnavailable, match=r"no answer to consume within 0\.5 s"):
            await store.consume("x", FAR)
        assert time.perf_counter() - started < 2
        await store.close()
    finally:
        listener.close()


async def test_connection_terminated_while_idle_is_replaced(pg_dsn: str, pg_table: str) -> None:
    async with PostgresSingleUseStore(pg_dsn, table=pg_table) as store:
        assert await store.consume("before", FAR)
        pid = store._db._pg._conn.info.backend_pid  # type: ignore[union-attr]
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        await until_server_hung_up(store._db._pg)  # type: ignore[attr-defined]
        assert await store.consume("after", FAR) is True
        assert store._db._pg._conn.info.backend_pid != pid  # type: ignore[union-attr]
        assert await store.consume("before", FAR) is False


class _Proxy:
    """A TCP proxy to PostgreSQL that can stop forwarding (a network that silently drops)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.forwarding = True
        self.tasks: set[asyncio.Task[None]] = set()
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while data := await reader.read(65536):
                if self.forwarding:
                    writer.write(data)
                    await writer.drain()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]
        for task in (
            asyncio.create_task(self._pump(reader, up_writer)),
            asyncio.create_task(self._pump(up_reader, writer)),
        ):
            self.tasks.add(task)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for writer in self.writers:
            writer.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def test_hung_connection_times_out_then_reconnects(pg_dsn: str, pg_table: str) -> None:
    params = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    proxy = _Proxy(int(params.get("port") or 5432))
    port = await proxy.start()
    params["port"] = str(port)
    dsn = psycopg.conninfo.make_conninfo("", **params)
    store = PostgresSingleUseStore(dsn, table=pg_table, timeout=1.0)
    try:
        assert await store.consume("one", FAR)
        proxy.forwarding = False  # the network now swallows everything
        started = time.perf_counter()
        with pytest.raises(StateStoreUnavailable, match="no answer to consume"):
            await store.consume("two", FAR)
        assert time.perf_counter() - started < 2.5
        proxy.forwarding = True  # the old connection stays broken; a new one must be made
        assert await store.consume("three", FAR) is True
        assert await store.consume("one", FAR) is False
    finally:
        await store.close()
        await proxy.close()


async def test_caller_cancellation_leaves_the_store_usable(pg_dsn: str, pg_table: str) -> None:
    params = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    proxy = _Proxy(int(params.get("port") or 5432))
    params["port"] = str(await proxy.start())
    store = PostgresSingleUseStore(psycopg.conninfo.make_conninfo("", **params), table=pg_table, timeout=5)
    try:
        assert await store.consume("one", FAR)
        proxy.forwarding = False
        task = asyncio.create_task(store.consume("two", FAR))
        await asyncio.sleep(0.3)
        started = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.perf_counter() - started < 1.5  # no waiting for psycopg's cancel dance
        proxy.forwarding = True
        assert await store.consume("three", FAR) is True
    finally:
        await store.close()
        await proxy.close()


async def test_longest_table_name(pg_dsn: str) -> None:
    table = (StoreSpec.new_table() + "_" + "x" * 63)[:63]
    try:
        async with PostgresSingleUseStore(pg_dsn, table=table) as store:
            assert await store.consume("x", FAR)
        with psycopg.connect(pg_dsn) as conn:
            indexes = conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = %s ORDER BY indexname", (table,)
            ).fetchall()
        assert len(indexes) == 2  # primary key + expires_at
        assert all(len(name) <= 63 for (name,) in indexes)
    finally:
        drop_pg_table(pg_dsn, table)


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="table"):
        PostgresSingleUseStore("dbname=test", table="bad-name; DROP TABLE x")
    with pytest.raises(ValueError, match="table"):
        PostgresSingleUseStore("dbname=test", table="a.b.c")
    with pytest.raises(ValueError, match="table"):
        PostgresSingleUseStore("dbname=test", table="x" * 64)
    with pytest.raises(ValueError, match="not a valid libpq connection string") as info:
        PostgresSingleUseStore("host=127.0.0.1 password=s3cret-value bogus")
    assert "s3cret-value" not in str(info.value)
    with pytest.raises(ValueError, match="timeout"):
        PostgresSingleUseStore("dbname=test", timeout=0)
    assert repr(PostgresSingleUseStore("postgresql://u:pw-in-uri@h/db")) == (
        "PostgresSingleUseStore(table='mcp_elicit_used_state')"
    )
