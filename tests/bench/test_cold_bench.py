"""``bench/cold.py`` runs real flows through the bench servers' apps and refuses bad options."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

COLD = Path(__file__).resolve().parents[2] / "bench" / "cold.py"


def run_cold(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(COLD), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_times_checked_flows_of_ours_and_bare() -> None:
    done = run_cold("--servers", "ours,bare", "--flows", "20", "--flush-mb", "1")
    assert done.returncode == 0, done.stderr
    times = dict(re.findall(r"^  (ours|bare) \(.*?\)\s+([\d.]+) us$", done.stdout, re.MULTILINE))
    assert set(times) == {"ours", "bare"}, done.stdout
    assert all(float(t) > 0 for t in times.values())
    ratio = re.search(r"bare/ours ([\d.]+)", done.stdout)
    assert ratio is not None, done.stdout
    # bare answers with canned bytes: it is faster than any real server, never slower.
    assert 0 < float(ratio.group(1)) < 1
    assert "caches flushed (1 MiB)" in done.stdout


def test_refuses_unknown_servers_and_too_few_flows() -> None:
    unknown = run_cold("--servers", "ours,nginx")
    assert unknown.returncode == 2
    assert "unknown server(s) ['nginx']" in unknown.stderr
    few = run_cold("--flows", "3")
    assert few.returncode == 2
    assert "--flows must be at least 10" in few.stderr
