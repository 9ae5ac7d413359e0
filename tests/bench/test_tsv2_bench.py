"""The TypeScript SDK v2 server (``tsv2``) in ``bench/run.py``: a short real run of ours and tsv2
(2026-07-28 HTTP, stdio and cold start, 2025-11-25 stdio) whose flows are all verified, and the
clear note (not a crash) when Node or the SDK is missing."""

from __future__ import annotations

import re
import sys

import pytest

from tests.bench.bench_support import BENCH, SHORT_RUN, bench

sys.path.insert(0, str(BENCH))

import run


def test_a_short_run_verifies_every_flow_of_tsv2_and_prints_ours_over_tsv2() -> None:
    try:
        run.tsv2_toolchain()
    except RuntimeError as e:
        pytest.fail(str(e))
    done = bench("--servers", "ours,tsv2", "--skip", "legacy-http", *SHORT_RUN, "--cold-runs", "1")
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    # Each HTTP server passed one fully checked flow before its load.
    assert re.search(r"\[http\] tsv2 on 127\.0\.0\.1:\d+: verified flow -> 'Created T-verify'", done.stderr)
    http, rest = out.split("\nstdio  ")
    stdio, rest = rest.split("\ncold start  ")
    cold, legacy_stdio = rest.split("\n2025-11-25 stdio  ")
    for section in (http, stdio, legacy_stdio):
        rows = dict(re.findall(r"^  (ours|ts-sdk v2) \(.*?\)\s+(\d+)", section, re.MULTILINE))
        assert set(rows) == {"ours", "ts-sdk v2"}, section
        assert all(int(n) > 0 for n in rows.values()), section
        assert re.search(r"ratio ours/tsv2\s+[\d.]+x", section), section
        # its error column is 0
        assert re.search(r"^  ts-sdk v2 \(.*\)\s.*\s0$", section, re.MULTILINE), section
    assert re.search(r"^  ts-sdk v2 \(.*?\)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+0$", cold, re.MULTILINE), cold
    assert re.search(r"ratio ours/tsv2\s+[\d.]+x", cold), cold
    # every flow was checked and none failed
    assert "errors (every flow is verified" in out, out
    assert "\n    none\n" in out, out
    assert "NOT RUN" not in out


def test_without_node_tsv2_is_not_run_with_the_way_to_get_it() -> None:
    missing = {"NODE24_BIN_DIR": "/nonexistent-node24"}
    named = bench("--only", "cold", "--cold-runs", "1", "--servers", "ours,tsv2", env=missing)
    # Named and missing: the others still run, and the run fails.
    assert named.returncode == 1, named.stdout + named.stderr
    assert "NOT RUN: ts_v2.mjs cannot start: Node 24 is missing" in named.stdout
    assert "run bash scripts/node.sh" in named.stdout
    assert re.search(r"^  ours \(mcp-elicit\)\s+[\d.]+", named.stdout, re.MULTILINE), named.stdout
    assert "Traceback" not in named.stderr
    # Only in the default set: noted, and the run of the others passes.
    default = bench("--only", "cold", "--cold-runs", "1", env=missing)
    assert default.returncode == 0, default.stdout + default.stderr
    assert "Node 24 is missing" in default.stdout
    assert "(optional in the default --servers: the exit status is not affected)" in default.stdout


def test_unknown_servers_name_tsv2_among_the_choices() -> None:
    done = bench("--servers", "ours,deno")
    assert done.returncode == 2
    assert "choose from ours, sdk, bare, tsv2" in done.stderr
