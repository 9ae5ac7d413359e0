"""Worker process for the cross-process ``begin`` race (run as a script, not collected).

Usage: python flows_race_worker.py KIND LOCATION TABLE SYNC_DIR NAME OWNER FLOW_ID

Opens the store (connects, creates the table), writes SYNC_DIR/ready-NAME, waits for SYNC_DIR/go,
calls ``begin(FLOW_ID, OWNER)`` and prints JSON: ``{"won": bool, "error": <class name or null>}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from mcp_elicit.connect.flows import FlowError, FlowStore, PostgresFlowStore, SQLiteFlowStore


async def main(
    kind: str, location: str, table: str, sync: Path, name: str, owner: str, flow_id: str
) -> dict[str, object]:
    store: FlowStore
    store = SQLiteFlowStore(location) if kind == "sqlite" else PostgresFlowStore(location, table=table)
    try:
        await store.expire_old()  # connect before the start line so that the race is on the update
        (sync / f"ready-{name}").touch()
        deadline = time.monotonic() + 60
        while not (sync / "go").exists():
            if time.monotonic() > deadline:
                raise SystemExit("no start signal")
            await asyncio.sleep(0.0005)
        try:
            await store.begin(flow_id, owner)
        except FlowError as exc:
            return {"won": False, "error": type(exc).__name__}
        return {"won": True, "error": None}
    finally:
        await store.close()


if __name__ == "__main__":
    kind, location, table, sync_dir, name, owner, flow_id = sys.argv[1:8]
    print(json.dumps(asyncio.run(main(kind, location, table, Path(sync_dir), name, owner, flow_id))))
