#!/usr/bin/env bash
# test.sh: THE test command. Sets everything up on a fresh machine and runs every check:
#   setup (scripts/setup.sh) -> node (scripts/node.sh) -> ruff (check, format) -> mypy
#   -> conformance-server, conformance-client (scripts/conformance.sh) -> pytest LAST
#
# Usage: bash scripts/test.sh [PYTEST_ARGS...]     (CI: .ci/run execs this)
#
# Every step runs even when an earlier one failed; the status of each step is printed before
# pytest starts, so that pytest's closing summary line is the very last line of output (CI reads
# it). Exit status: 0 only if every step passed; pytest exit 5 (no tests collected) is a failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONUNBUFFERED=1

FAILED_STEPS=()
STATUS_LINES=()

# step NAME CMD...: run CMD, record ok/FAILED; never stops the script
step() {
    local name="$1" rc=0
    shift
    echo "==> [$name] $*"
    "$@" || rc=$?
    if ((rc == 0)); then
        STATUS_LINES+=("ok      $name")
    else
        echo "==> [$name] FAILED (exit $rc)"
        STATUS_LINES+=("FAILED  $name (exit $rc)")
        FAILED_STEPS+=("$name")
    fi
}

step setup bash scripts/setup.sh
step node bash scripts/node.sh
step ruff .venv/bin/ruff check .
step ruff-format .venv/bin/ruff format --check .
step mypy .venv/bin/mypy
step conformance-server bash scripts/conformance.sh server
step conformance-client bash scripts/conformance.sh client

echo "==> steps before pytest:"
printf '      %s\n' "${STATUS_LINES[@]}"
if ((${#FAILED_STEPS[@]})); then
    echo "==> FAILED before pytest: ${FAILED_STEPS[*]} (the run will exit 1 whatever pytest says)"
fi

# pytest LAST: nothing may be printed after it
echo "==> [pytest] .venv/bin/python -m pytest -q $*"
pytest_rc=0
.venv/bin/python -m pytest -q "$@" || pytest_rc=$?

((pytest_rc == 0 && ${#FAILED_STEPS[@]} == 0)) || exit 1
