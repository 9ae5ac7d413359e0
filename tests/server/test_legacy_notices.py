"""CallNotices: what one 2025-11-25 call's rounds (the handler run again from the top) send."""

from __future__ import annotations

from typing import Any

from mcp_elicit.server.legacy.notices import CallNotices


def log(data: str) -> dict[str, Any]:
    return {"level": "info", "data": data}


async def test_each_round_replays_its_logs_and_only_new_ones_go_out() -> None:
    sent: list[tuple[str, Any]] = []

    async def send(method: str, params: dict[str, Any]) -> None:
        sent.append((method, params.get("data", params.get("progress"))))

    notices = CallNotices(send)
    for round_logs in (["start"], ["start", "asked", "asked"], ["start", "asked", "other", "end"]):
        for data in round_logs:
            await notices("notifications/message", log(data))
        notices.next_round()
    # A log repeated within a round is two logs; one that differs from the last round's at its
    # place goes out, and the rounds after are compared with it.
    await notices("notifications/message", log("start"))
    await notices("notifications/message", log("asked"))
    await notices("notifications/message", log("other"))
    await notices("notifications/message", log("end"))
    await notices("notifications/elicitation/complete", {"elicitationId": "e"})
    await notices("notifications/elicitation/complete", {"elicitationId": "e"})
    assert sent == [
        ("notifications/message", "start"),
        ("notifications/message", "asked"),
        ("notifications/message", "asked"),
        ("notifications/message", "other"),
        ("notifications/message", "end"),
        ("notifications/elicitation/complete", None),
        ("notifications/elicitation/complete", None),
    ]


async def test_progress_goes_out_only_past_the_highest_sent() -> None:
    sent: list[float] = []

    async def send(method: str, params: dict[str, Any]) -> None:
        sent.append(params["progress"])

    notices = CallNotices(send)
    for value in (1, 1, 2, 1.5, 3):
        await notices("notifications/progress", {"progressToken": "t", "progress": value})
    assert sent == [1, 2, 3]
