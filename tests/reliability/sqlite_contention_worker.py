"""Worker process for the SQLite contention test (run as a script, not collected).

Usage: python sqlite_contention_worker.py FILE SYNC_DIR NAME COUNT

Opens a single-use store on FILE (the first process to get there creates it), writes
SYNC_DIR/ready-NAME, waits for SYNC_DIR/go, then runs COUNT tokens concurrently: even ones are
consumed (strict mode), odd ones claimed with this worker's own request digest and, when won,
committed. Prints JSON: the tokens this worker won and every error it met.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from mcp_elicit.state import SQLiteSingleUseStore, StateStoreUnavailable


async def main(path: str, sync: Path, name: str, count: int) -> dict[str, object]:
    store = SQLiteSingleUseStore(path)
    won: list[str] = []
    errors: list[str] = []
    expires = time.time() + 600

    async def one(n: int) -> None:
        token = f"token-{n}"
        try:
            if n % 2 == 0:
                if await store.consume(token, expires):
                    won.append(token)
                return
            claim = await store.claim(token, f"digest-{name}", expires)
            if claim.first:
                won.append(token)
                stored = await store.commit(token, f"digest-{name}", name.encode())
                if stored != name.encode():
                    errors.append(f"{token}: commit after a won claim gave {stored!r}")
            elif claim.same_request:
                errors.append(f"{token}: another worker's claim matched this worker's digest")
        except StateStoreUnavailable as exc:
            errors.append(f"{token}: {exc}")

    try:
        (sync / f"ready-{name}").touch()
        deadline = time.monotonic() + 60
        while not (sync / "go").exists():
            if time.monotonic() > deadline:
                raise SystemExit("no start signal")
            await asyncio.sleep(0.001)
        await asyncio.gather(*(one(n) for n in range(count)))
        return {"won": won, "errors": errors}
    finally:
        await store.close()


if __name__ == "__main__":
    path, sync_dir, name, count = sys.argv[1:5]
    print(json.dumps(asyncio.run(main(path, Path(sync_dir), name, int(count)))))
