"""stdio: nothing is written for a request once its answer has gone out, not even progress from a
task its handler left behind (the client has forgotten the progress token by then)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.e2e.test_stdio import META, running_peer
from tests.helpers import wait_for_text


async def test_progress_reported_after_the_answer_is_not_written(tmp_path: Path) -> None:
    label = f"late-{time.monotonic_ns()}"
    async with running_peer(tmp_path) as peer:
        answer = await peer.call(
            1,
            "tools/call",
            {
                "name": "progress_after_result",
                "arguments": {"label": label, "early": False},
                "_meta": {**META, "progressToken": "late"},
            },
        )
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"] == "returned"
        # The leftover task has reported (and saw no error) by the time its marker is written.
        assert await wait_for_text(tmp_path / f"late-{label}", "none") == "none"
        # The next line on stdout answers the next request: no notification came in between.
        discover = await peer.call(2, "server/discover", {})
        assert discover["id"] == 2
        assert "result" in discover
