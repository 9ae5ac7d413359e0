#!/usr/bin/env bash
# main.sh: set up (scripts/setup.sh) and run the main job: `mcp-elicit demo`, the bundled issue
# tracker driven end to end. In a terminal the person answers in the terminal UI; without one
# (CI, a pipe) the scripted walk-through plays and prints its transcript.
#
# Usage: bash scripts/main.sh [--script]
#        bash scripts/main.sh --serve      serve examples/tickets.py over Streamable HTTP instead
#                                          (PORT=9000 to change the port; default 8765)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh --no-browser
if [[ "${1:-}" == "--serve" ]]; then
    shift
    echo "main: .venv/bin/python examples/tickets.py --http --port ${PORT:-8765} $*"
    exec .venv/bin/python examples/tickets.py --http --port "${PORT:-8765}" "$@"
fi
echo "main: .venv/bin/mcp-elicit demo $*"
exec .venv/bin/mcp-elicit demo "$@"
