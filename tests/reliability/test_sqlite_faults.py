"""The SQLite stores when their file misbehaves: damaged, not writable, on a full disk, and
shared by several processes at once.

What must hold: the request fails closed with the retryable internal error (-32603), never with
"invalid requestState"; the log names the file and, when it cannot be written, what to check;
the store recovers by itself once the cause is gone; and several processes on one file never see
"database is locked" under moderate load, each token being accepted exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.connect.flows import FlowStoreUnavailable, SQLiteFlowStore
from mcp_elicit.state import SQLiteSingleUseStore, StateStoreUnavailable
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError
from tests.reliability.test_redelivery import Effects, first, make_server, retry, text_of

FAR = time.time() + 3600
OWNER = "https://issuer.example|alice"
WORKER = Path(__file__).with_name("sqlite_contention_worker.py")
WRITABLE_HINT = "must be writable"


def damage(path: Path) -> None:
    """Overwrite the pages after the header page: a file that opens but cannot be read."""
    data = bytearray(path.read_bytes())
    assert len(data) > 4096 * 3
    data[4096 : 4096 * 3] = b"\xab" * (4096 * 2)
    path.write_bytes(bytes(data))


async def fill(path: Path, count: int = 2000) -> None:
    async with SQLiteSingleUseStore(path) as store:
        for n in range(count):
            assert await store.consume(f"filler-{n}", FAR)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` cannot be written by this process (root ignores modes: immutable flag then)."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            pytest.skip("root without chattr: cannot make a file read-only for this process")
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"chattr +i not supported here: {done.stderr.decode().strip()}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=False)
    else:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o600)


async def test_a_damaged_file_is_an_internal_error_naming_the_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "used.db"
    await fill(path)
    store = SQLiteSingleUseStore(path)
    effects = Effects()
    app = make_server(store, effects)
    try:
        state: Any = (await app.dispatch(first("a")))["requestState"]
        damage(path)
        caplog.set_level(logging.WARNING)
        with pytest.raises(McpError) as info:
            await app.dispatch(retry("a", state, "v"))
        assert info.value.code == INTERNAL_ERROR
        assert info.value.data == {"reason": "state_store_unavailable", "retryable": True}
        assert effects.calls == 0
        logged = [r.getMessage() for r in caplog.records if "state store is unavailable" in r.getMessage()]
        assert logged
        assert str(path) in logged[-1]
        assert "malformed" in logged[-1]
    finally:
        await store.close()


async def test_a_file_that_is_not_a_database_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not a database\n" * 500)
    async with SQLiteSingleUseStore(path) as store:
        with pytest.raises(StateStoreUnavailable) as info:
            await store.consume("x", FAR)
    assert str(path) in str(info.value)
    assert "not a database" in str(info.value)


async def test_a_read_only_file_names_the_file_and_what_to_check(tmp_path: Path) -> None:
    path = tmp_path / "used.db"
    async with SQLiteSingleUseStore(path) as store:
        assert await store.consume("before", FAR)
    with read_only(path):
        store = SQLiteSingleUseStore(path)
        try:
            for token in ("before", "new"):  # never "first use", never "already used"
                with pytest.raises(StateStoreUnavailable) as info:
                    await store.consume(token, FAR)
                assert str(path) in str(info.value)
                assert WRITABLE_HINT in str(info.value)
        finally:
            await store.close()
    async with SQLiteSingleUseStore(path) as store:
        assert await store.consume("before", FAR) is False
        assert await store.consume("new", FAR) is True


async def test_a_read_only_flow_file_names_the_file_and_what_to_check(tmp_path: Path) -> None:
    path = tmp_path / "flows.db"
    async with SQLiteFlowStore(path) as store:
        flow = await store.create(OWNER, "connect", "github", ["repo"])
    with read_only(path):
        store = SQLiteFlowStore(path)
        try:
            with pytest.raises(FlowStoreUnavailable) as info:
                await store.begin(flow.id, OWNER)
            assert str(path) in str(info.value)
            assert WRITABLE_HINT in str(info.value)
        finally:
            await store.close()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs of the test's own (needs root with CAP_SYS_ADMIN; skipped otherwise)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small disk needs root (mount -t tmpfs)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


async def test_a_full_disk_fails_closed_and_recovers_when_space_is_freed(small_disk: Path) -> None:
    path = small_disk / "used.db"
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * 700_000)
    store = SQLiteSingleUseStore(path)
    effects = Effects()
    app = make_server(store, effects)
    try:
        accepted: list[str] = []
        failure: StateStoreUnavailable | None = None
        for n in range(10_000):
            token = f"token-{n:05d}-" + "x" * 200
            try:
                assert await store.consume(token, FAR)
            except StateStoreUnavailable as exc:
                failure = exc
                break
            accepted.append(token)
        assert failure is not None, "the disk never filled up"
        assert str(path) in str(failure)
        assert "full" in str(failure)
        assert accepted  # some fitted before the disk filled up
        state: Any = (await app.dispatch(first("a")))["requestState"]
        with pytest.raises(McpError) as error:
            await app.dispatch(retry("a", state, "v"))
        assert error.value.code == INTERNAL_ERROR
        assert effects.calls == 0
        for token in (accepted[0], accepted[-1]):  # reads still refuse what was used
            assert await store.consume(token, FAR) is False
        filler.unlink()
        assert text_of(await app.dispatch(retry("a", state, "v"))) == "a=v"
        assert await store.consume(accepted[-1], FAR) is False
    finally:
        await store.close()


async def test_four_processes_on_one_file_never_see_a_locked_database(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"  # created by whichever worker gets there first
    sync = tmp_path / "sync"
    sync.mkdir()
    names = [f"w{n}" for n in range(4)]
    count = 200
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(WORKER),
            str(path),
            str(sync),
            name,
            str(count),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for name in names
    ]
    communicate = asyncio.gather(*(p.communicate() for p in procs))
    try:
        deadline = time.monotonic() + 60
        while not all((sync / f"ready-{name}").exists() for name in names):
            assert time.monotonic() < deadline, "worker processes did not get ready"
            if communicate.done():
                pytest.fail(f"a worker died early: {[e.decode() for _, e in communicate.result()]}")
            await asyncio.sleep(0.01)
        (sync / "go").touch()
        outputs = await asyncio.wait_for(communicate, 120)
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
        await asyncio.gather(communicate, return_exceptions=True)
    wins: Counter[str] = Counter()
    errors: list[str] = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()
        report = json.loads(out)
        wins.update(report["won"])
        errors += report["errors"]
    assert errors == []
    assert set(wins) == {f"token-{n}" for n in range(count)}
    assert max(wins.values()) == 1
