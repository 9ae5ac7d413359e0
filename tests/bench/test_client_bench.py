"""The TypeScript SDK v2 client (``tsv2``) in ``bench/client/run.py``: a short real run of ours and
tsv2 through all three parts, whose tsv2 flows are verified and whose tsv2 figures are printed,
and the clear note (not a crash) when Node or the SDK is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "bench" / "client" / "run.py"


def bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_a_short_run_verifies_the_tsv2_flows_and_prints_its_figures() -> None:
    done = bench("--clients", "ours,tsv2", "--flows", "20", "--warmup", "3", "--spawns", "1")
    out = done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    assert "NOT RUN" not in out, out
    # ours' own targets (start-up <= 150 ms) may miss on a loaded machine; that is not tested here
    assert done.returncode == 0 or "SOME TARGETS NOT MET" in out, out + done.stderr
    for transport in ("stdio", "http"):
        verified = f"tsv2 over {transport}: 20 measured flows, each verified ('Created <title>')"
        assert f"{verified}, protocol 2026-07-28" in out, out
        # ours CPU, sdk (not run), tsv2 CPU, sdk/ours (-), tsv2/ours
        row = rf"^\| {transport}\s+\|\s+\d+ \|\s+- \|\s+\d+ \|\s+- \|\s+[\d.]+x \|"
        assert re.search(row, out, re.MULTILINE), out
    assert re.search(
        r"^\| node: import\('@modelcontextprotocol/client'\) \(tsv2\) \| \d+ \|$", out, re.MULTILINE
    )
    for transport in ("http", "stdio"):
        assert re.search(rf"^\| {transport} \| \d+ \| - \| \d+ \|", out, re.MULTILINE), out


def test_without_node_tsv2_is_not_run_with_the_way_to_get_it() -> None:
    missing = {"NODE24_BIN_DIR": "/nonexistent-node24"}
    nothing = ("--skip", "flows,import,startup")
    default = bench(*nothing, env=missing)
    assert default.returncode == 0, default.stdout + default.stderr
    assert "tsv2: NOT RUN: Node 24 is missing" in default.stdout
    assert "run bash scripts/node.sh (optional by default: the exit status is not affected)" in default.stdout
    named = bench("--clients", "ours,tsv2", *nothing, env=missing)
    assert named.returncode == 1, named.stdout + named.stderr
    assert "run bash scripts/node.sh (named in --clients: the run fails)" in named.stdout
    assert "Traceback" not in named.stderr
