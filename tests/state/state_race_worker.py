"""Worker process for the cross-process single-use race tests (run as a script, not collected).

Usage: python state_race_worker.py KIND LOCATION TABLE SYNC_DIR NAME ID [ID ...]

Opens the store (and warms it up), writes SYNC_DIR/ready-NAME, waits for SYNC_DIR/go, then
consumes every ID concurrently (asyncio tasks) and prints JSON: the ids it won and the
monotonic clock (system-wide on Linux) at the start and end of the race.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from mcp_elicit.state import PostgresSingleUseStore, SingleUseStore, SQLiteSingleUseStore


async def main(
    kind: str, location: str, table: str, sync: Path, name: str, ids: list[str]
) -> dict[str, object]:
    store: SingleUseStore
    if kind == "sqlite":
        store = SQLiteSingleUseStore(location)
    else:
        store = PostgresSingleUseStore(location, table=table)
    try:
        # Connect and create the table before the start line so that the race is on the inserts.
        assert await store.consume(f"warm-up-{name}", time.time() + 600)
        (sync / f"ready-{name}").touch()
        deadline = time.monotonic() + 60
        while not (sync / "go").exists():
            if time.monotonic() > deadline:
                raise SystemExit("no start signal")
            await asyncio.sleep(0.0005)
        start = time.monotonic()
        results = await asyncio.gather(*(store.consume(i, time.time() + 600) for i in ids))
        end = time.monotonic()
        won = [i for i, first in zip(ids, results, strict=True) if first]
        return {"won": won, "start": start, "end": end}
    finally:
        await store.close()


if __name__ == "__main__":
    kind, location, table, sync_dir, name = sys.argv[1:6]
    report = asyncio.run(main(kind, location, table, Path(sync_dir), name, sys.argv[6:]))
    print(json.dumps(report))
