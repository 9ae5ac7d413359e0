"""``python -m mcp_elicit.demo``: serve the demo on 127.0.0.1 (what ``mcp-elicit demo`` spawns)."""

from __future__ import annotations

import sys

from mcp_elicit.demo.site import main

sys.exit(main())
