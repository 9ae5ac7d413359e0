"""A server as the core install must run it: one tool that asks with a dataclass form.

    python booking_server.py                serve stdio
    python booking_server.py --http PORT    serve Streamable HTTP on 127.0.0.1:PORT

It imports nothing but mcp_elicit (it runs in environments that hold only the package).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated, Literal

from mcp_elicit import Context, Email, Server, Title

app = Server("booking", version="1.0.0")


@dataclass
class Booking:
    seats: Annotated[int, Title("Seats")]
    contact: Email
    cabin: Literal["economy", "business"] = "economy"


@app.tool()
async def book(flight: str, ctx: Context) -> str:
    """Book seats on a flight; asks how many, for whom, and in which cabin."""
    answer = await ctx.elicit(f"Book {flight}?", Booking)
    if not answer.accepted:
        return f"not booked ({answer.action})"
    booking = answer.data
    return f"booked {flight}: {booking.seats} {booking.cabin} seat(s) for {booking.contact}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        app.run_http(host="127.0.0.1", port=int(sys.argv[2]), quiet=True)
    else:
        app.run_stdio()
