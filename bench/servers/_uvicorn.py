"""The one uvicorn configuration shared by every HTTP bench server (ours, sdk, bare)."""

from __future__ import annotations

from typing import Any

import uvicorn

UVICORN_SETTINGS: dict[str, Any] = {
    "host": "127.0.0.1",  # loopback only
    "loop": "uvloop",
    "http": "httptools",
    "workers": 1,
    "access_log": False,
    "log_level": "warning",
    "lifespan": "auto",
}


def serve(asgi_app: Any, port: int) -> None:
    uvicorn.run(asgi_app, port=port, **UVICORN_SETTINGS)
