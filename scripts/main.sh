#!/usr/bin/env bash
# main.sh: set up (scripts/setup.sh) and run the main job: `mcp-elicit demo`, the bundled issue
# tracker driven end to end. In a terminal the person answers in the terminal UI; without one
# (CI, a pipe) the scripted walk-through plays and prints its transcript.
#
# The demo gets a virtualenv of its own, .venv-demo, with what it needs only: the package and its
# [cli,connect] extras (the terminal client, the URL-mode kit, HTTP serving), not the test tools
# that scripts/setup.sh puts in .venv. Neither script touches the other's venv.
#
# Usage: bash scripts/main.sh [--script]
#        bash scripts/main.sh --serve      serve examples/tickets.py over Streamable HTTP instead
#                                          (PORT=9000 to change the port; default 8765)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV=".venv-demo"
bash scripts/setup.sh --venv "$VENV" --extras cli,connect --no-browser
if [[ "${1:-}" == "--serve" ]]; then
    shift
    echo "main: $VENV/bin/python examples/tickets.py --http --port ${PORT:-8765} $*"
    exec "$VENV/bin/python" examples/tickets.py --http --port "${PORT:-8765}" "$@"
fi
echo "main: $VENV/bin/mcp-elicit demo $*"
exec "$VENV/bin/mcp-elicit" demo "$@"
