"""Running ``bench/run.py`` from the tests: a real run, as a person runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"

# Each part measured for a moment only: enough for every flow of every server to be verified.
SHORT_RUN = (
    "--duration",
    "1",
    "--warmup",
    "0.3",
    "--rounds",
    "1",
    "--users",
    "4",
    "--stdio-flows",
    "20",
    "--stdio-warmup",
    "3",
    "--stdio-rounds",
    "1",
)


def bench(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python bench/run.py ARGS``, its output captured; ``env``: variables over this one's."""
    return subprocess.run(
        [sys.executable, str(BENCH / "run.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )
