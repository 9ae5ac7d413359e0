"""Our server (``mcp_elicit.Server``) for the client cancellation hunt
(``test_client_cancellation_any.py``): run as a process, or imported for the in-process transport.

    python cancel_server.py --stdio --marker-dir DIR
    python cancel_server.py --port PORT --marker-dir DIR      (Streamable HTTP on 127.0.0.1)

Every tool takes a ``label`` (unique per call in a test) and puts it in what it sends back, so
that a result, a question and a progress notification tell which call they belong to:

* ``ask(label, count)``: ``count`` form questions, one after the other (one round each), message
  ``"<label>|q<i>"``; returns ``"<label>:<answers joined by ,>"``;
* ``pair(label)``: two questions asked together (one round with two input requests);
* ``long(label, seconds)``: reports progress (message ``label``) every 20 ms for ``seconds``;
  writes the marker ``started-<label>`` first, ``cancelled-<label>`` when it is cancelled,
  ``finished-<label>`` when it is done;
* ``late(label, seconds)``: works ``seconds``, then asks one question;
* ``quick(label)``: returns at once.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

# Run as a script: the repository root, for ``mcp_elicit`` from this checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from mcp_elicit import Context, Server
from tests.shared_tools import serve_from_argv

MARKERS = Path(".")

app = Server(
    "cancel-tests",
    version="1.0.0",
    state_keys=["client-cancellation-tests-only-key-0123456789abcdefghijkl"],
)


@dataclass
class Name:
    name: str


def mark(state: str, label: str) -> None:
    (MARKERS / f"{state}-{label}").write_text(state)


def answered(answer: object) -> str:
    data = getattr(answer, "data", None)
    return data.name if getattr(answer, "accepted", False) and data is not None else str(answer)


@app.tool()
async def ask(label: str, count: int, ctx: Context) -> str:
    """``count`` questions, one round each."""
    names = []
    for i in range(count):
        answer = await ctx.elicit(f"{label}|q{i}", Name, key=f"q{i}")
        names.append(answered(answer))
    return f"{label}:{','.join(names)}"


@app.tool()
async def pair(label: str, ctx: Context) -> str:
    """Two questions in one round."""
    left, right = await asyncio.gather(
        ctx.elicit(f"{label}|left", Name, key="left"), ctx.elicit(f"{label}|right", Name, key="right")
    )
    return f"{label}:{answered(left)}+{answered(right)}"


@app.tool()
async def long(label: str, seconds: float, ctx: Context) -> str:
    """Runs ``seconds``, reporting progress; records that it started, and how it ended."""
    mark("started", label)
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    step = 0
    try:
        while loop.time() < until:
            step += 1
            await ctx.report_progress(step, None, label)
            await asyncio.sleep(min(0.02, max(0.0, until - loop.time())))
    except asyncio.CancelledError:
        mark("cancelled", label)
        raise
    mark("finished", label)
    return f"{label}:long"


@app.tool()
async def late(label: str, seconds: float, ctx: Context) -> str:
    """Works ``seconds``, then asks one question."""
    await asyncio.sleep(seconds)
    answer = await ctx.elicit(f"{label}|late", Name, key="late")
    return f"{label}:{answered(answer)}"


@app.tool()
async def quick(label: str) -> str:
    return f"{label}:quick"


def main() -> None:
    serve_from_argv(app, sys.modules[__name__])


if __name__ == "__main__":
    main()
