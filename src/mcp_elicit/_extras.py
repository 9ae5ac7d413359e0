"""Which extra installs a part's third-party packages, said when one is missing.

``pip install mcp-elicit`` installs the core: a server over stdio, forms from dataclasses and
TypedDicts, sealed state, SQLite stores. Every other part comes with an extra (docs/install.md).
A part checks for its packages when it is first used, before it does anything, and raises
:class:`MissingExtra` (an ``ImportError``) whose message is the pip command that fixes it::

    Server.run_http() needs the [http] extra (uvicorn is not installed): pip install 'mcp-elicit[http]'
"""

from __future__ import annotations

import importlib.util
from typing import Final

# The modules whose absence shows that an extra is not installed, by import name (pyjwt is
# ``jwt``), including those of the extras it brings along ([connect] brings [http]). Only what
# the parts need: email-validator ([pydantic]) serves pydantic's EmailStr in a server's own
# models, and uvloop ([fast]) is used when present. tests/install/test_declared_imports.py
# checks that pyproject.toml installs each of them with its extra.
PROVIDES: Final[dict[str, tuple[str, ...]]] = {
    "http": ("uvicorn",),
    "cli": ("httpx", "prompt_toolkit", "rich", "publicsuffixlist"),
    "connect": ("authlib", "jwt", "httpx", "uvicorn"),
    "postgres": ("psycopg",),
    "pydantic": ("pydantic",),
    "fast": ("httptools",),
}


class MissingExtra(ImportError):
    """A part of mcp-elicit is used without the extra that installs its packages.

    ``extras`` are the extras the part needs (all of them: installing only the first would fail
    at the next); ``name`` is the first module found missing."""

    def __init__(self, part: str, extras: tuple[str, ...], module: str) -> None:
        wanted = ",".join(extras)
        noun = "extra" if len(extras) == 1 else "extras"
        super().__init__(
            f"{part} needs the [{wanted}] {noun} ({module} is not installed): "
            f"pip install 'mcp-elicit[{wanted}]'",
            name=module,
        )
        self.extras = extras


def require(*extras: str, part: str) -> None:
    """Raise :class:`MissingExtra` now if a module of one of ``extras`` is not installed.

    Nothing is imported (``find_spec`` only looks), so a part may check at its entry and still
    import its packages lazily."""
    for extra in extras:
        for module in PROVIDES[extra]:
            if importlib.util.find_spec(module) is None:
                raise MissingExtra(part, extras, module)
