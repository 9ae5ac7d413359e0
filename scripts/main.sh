#!/usr/bin/env bash
# main.sh: set up (scripts/setup.sh) and run the main example: the ticket service over Streamable
# HTTP (examples/tickets.py prints its URL and tools).
#
# Usage: bash scripts/main.sh [EXTRA_ARGS...]      PORT=9000 bash scripts/main.sh  (default 8765)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
[[ -f examples/tickets.py ]] || { echo "main: ERROR: examples/tickets.py does not exist yet" >&2; exit 1; }
echo "main: .venv/bin/python examples/tickets.py --http --port ${PORT:-8765} $*"
exec .venv/bin/python examples/tickets.py --http --port "${PORT:-8765}" "$@"
