"""Worker process for the cross-process single-flight test (run as a script, not collected).

Usage: python vault_worker.py KIND LOCATION PREFIX SYNC_DIR NAME CALLERS
(keys come from MCP_ELICIT_VAULT_KEYS, as in a deployment).

Opens the vault and reads the connection once (so the tables and the database connection are
ready), writes SYNC_DIR/ready-NAME, waits for SYNC_DIR/go, then runs CALLERS concurrent
``fresh_connection`` calls whose refresher appends one line to SYNC_DIR/calls and sleeps a little
(so that the other process surely contends). Prints JSON: the access tokens its callers got.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from mcp_elicit.connect.vault import Connection, RefreshResult, Vault

OWNER = "https://issuer.example|alice"


async def main(
    kind: str, location: str, prefix: str, sync: Path, name: str, callers: int
) -> dict[str, object]:
    if kind == "sqlite":
        vault = Vault.sqlite(location, table_prefix=prefix)
    else:
        vault = Vault.postgres(location, table_prefix=prefix)

    async def refresher(connection: Connection) -> RefreshResult:
        with (sync / "calls").open("a") as calls:
            calls.write(f"{name} {connection.refresh_token}\n")
        await asyncio.sleep(0.3)
        return RefreshResult.ok(f"access-{name}", refresh_token=f"refresh-{name}", expires_in=3600)

    try:
        assert await vault.get_connection(OWNER, "github") is not None
        (sync / f"ready-{name}").touch()
        deadline = time.monotonic() + 30
        while not (sync / "go").exists():
            if time.monotonic() > deadline:
                raise SystemExit("no start signal")
            await asyncio.sleep(0.001)
        results = await asyncio.gather(
            *(vault.fresh_connection(OWNER, "github", refresher) for _ in range(callers))
        )
        return {"tokens": [c.access_token for c in results]}
    finally:
        await vault.close()


if __name__ == "__main__":
    kind, location, prefix, sync_dir, name, callers = sys.argv[1:7]
    print(json.dumps(asyncio.run(main(kind, location, prefix, Path(sync_dir), name, int(callers)))))
