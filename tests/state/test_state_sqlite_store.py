"""SQLite store specifics: WAL, lock contention without stalling the loop, busy timeout, memory."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from tests.helpers import file_modes

from mcp_elicit.state import SQLiteSingleUseStore, StateStoreUnavailable

FAR = time.time() + 3600


async def test_file_is_in_wal_mode_with_the_expected_table(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with SQLiteSingleUseStore(path) as store:
        assert store.path == str(path)
        assert await store.consume("x", 123.5)
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert conn.execute("SELECT token_id, expires_at FROM used_state").fetchall() == [("x", 123.5)]


async def test_the_file_is_readable_by_this_user_only(tmp_path: Path) -> None:
    # In redelivery mode it keeps whole results, answers included.
    path = tmp_path / "state.db"
    async with SQLiteSingleUseStore(path) as store:
        assert await store.consume("x", FAR)
        modes = file_modes(tmp_path)
    assert modes["state.db"] == 0o600
    assert all(mode == 0o600 for mode in modes.values()), modes  # -wal and -shm too


async def test_default_path_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with SQLiteSingleUseStore() as store:
        assert await store.consume("x", FAR)
    assert (tmp_path / "mcp-elicit-state.db").is_file()


async def _ticker(gaps: list[float], stop: asyncio.Event) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now


async def test_waiting_for_another_writer_does_not_stall_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with SQLiteSingleUseStore(path, busy_timeout=5.0) as store:
        assert await store.consume("warm-up", FAR)
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # holds the write lock
        loop = asyncio.get_running_loop()
        loop.call_later(0.4, blocker.execute, "COMMIT")
        gaps: list[float] = []
        stop = asyncio.Event()
        ticker = asyncio.create_task(_ticker(gaps, stop))
        started = time.perf_counter()
        assert await store.consume("while-locked", FAR) is True
        waited = time.perf_counter() - started
        stop.set()
        await ticker
        blocker.close()
        assert waited >= 0.35  # it really had to wait for the other writer
        assert max(gaps) < 0.1  # ... without blocking the event loop meanwhile
        assert await store.consume("while-locked", FAR) is False


async def test_busy_timeout_gives_store_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with SQLiteSingleUseStore(path, busy_timeout=0.2) as store:
        assert await store.consume("warm-up", FAR)
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            started = time.perf_counter()
            with pytest.raises(StateStoreUnavailable, match="locked"):
                await store.consume("blocked", FAR)
            assert time.perf_counter() - started < 2.0
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        # The failed attempt recorded nothing: the id is still unused.
        assert await store.consume("blocked", FAR) is True


async def test_unopenable_path_gives_store_unavailable(tmp_path: Path) -> None:
    store = SQLiteSingleUseStore(tmp_path / "missing-dir" / "state.db")
    with pytest.raises(StateStoreUnavailable, match="cannot open"):
        await store.consume("x", FAR)
    await store.close()


async def test_many_inline_inserts_with_periodic_checkpoints(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with SQLiteSingleUseStore(path, purge_every=500) as store:
        for n in range(2100):  # passes the checkpoint interval (1000) twice
            assert await store.consume(f"id-{n}", FAR)
        assert await store.consume("id-0", FAR) is False
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM used_state").fetchone() == (2100,)


async def test_the_log_stays_bounded_under_concurrent_writers(tmp_path: Path) -> None:
    """A loaded server consumes from many requests at once: the periodic checkpoint must still
    reach the end of the write-ahead log (it grew by a gigabyte a minute when writers kept
    overtaking it)."""
    path = tmp_path / "used.db"
    store = SQLiteSingleUseStore(path)
    far = time.time() + 3600
    ids = iter(range(60_000))
    largest = 0

    async def writer() -> None:
        nonlocal largest
        for n in ids:
            assert await store.consume(f"id-{n}", far)
            await asyncio.sleep(0)  # the rest of a request's work
            if n % 500 == 0:
                largest = max(largest, (tmp_path / "used.db-wal").stat().st_size)

    try:
        await asyncio.gather(*(writer() for _ in range(16)))
    finally:
        await store.close()
    # Unbounded, it passes 200 MiB here; bounded, it stays near a checkpoint's worth of writes.
    assert largest < 100 * 2**20, f"the write-ahead log reached {largest / 2**20:.0f} MiB"


async def test_in_memory_store() -> None:
    async with SQLiteSingleUseStore(":memory:") as store:
        results = await asyncio.gather(*(store.consume("one", FAR) for _ in range(50)))
        assert results.count(True) == 1
        assert await store.consume("old", 1.0)
        assert await store.purge_expired(2.0) == 1


async def test_durable_mode(tmp_path: Path) -> None:
    async with SQLiteSingleUseStore(tmp_path / "durable.db", durable=True) as store:
        results = await asyncio.gather(*(store.consume("d", FAR) for _ in range(10)))
        assert results.count(True) == 1


OPEN_AND_CONSUME = """
import asyncio, sys, time
from mcp_elicit.state import SQLiteSingleUseStore
async def main(path, start):
    while time.time() < start:
        await asyncio.sleep(0.0005)
    async with SQLiteSingleUseStore(path) as store:
        print(await store.consume("same", time.time() + 60))
asyncio.run(main(sys.argv[1], float(sys.argv[2])))
"""


async def test_processes_opening_a_new_file_at_the_same_moment(tmp_path: Path) -> None:
    # Regression: switching a brand-new file to WAL while other processes open it can fail at
    # once with SQLITE_BUSY (no busy handler); the store must wait and retry instead. The race is
    # probabilistic, so it is run on three fresh files with eight processes each.
    start = time.time() + 1.5
    procs = [
        (
            index,
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                OPEN_AND_CONSUME,
                str(tmp_path / f"fresh-{index}.db"),
                repr(start + index * 0.3),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            ),
        )
        for index in range(3)
        for _ in range(8)
    ]
    outputs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for _, p in procs)), 60)
    per_file: dict[int, list[str]] = {0: [], 1: [], 2: []}
    for (index, proc), (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()
        per_file[index].append(out.decode().strip())
    for results in per_file.values():
        assert sorted(results) == ["False"] * 7 + ["True"]


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="busy_timeout"):
        SQLiteSingleUseStore(":memory:", busy_timeout=-1)
    with pytest.raises(ValueError, match="purge_every"):
        SQLiteSingleUseStore(":memory:", purge_every=-1)
