"""An answerer that fails (a bug in the caller's code, not the server's) fails the call with its
own exception, whichever era carries the question. On 2025-11-25 it used to come out as the
server's -32603 ("the client failed to answer"), with a warning line besides; on 2026-07-28 the
exception itself came out of ``call_tool``."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit.client import Answer, Client, FormQuestion, UrlQuestion
from mcp_elicit.client.era import ProtocolChoice

from .conftest import Target


class Broken:
    modes = frozenset({"form"})

    async def answer_form(self, question: FormQuestion) -> Answer:
        raise RuntimeError("answerer bug")

    async def answer_url(self, question: UrlQuestion) -> Answer:
        raise RuntimeError("answerer bug")


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_an_answerer_that_raises_fails_the_call_with_its_exception(
    ours: Target, protocol: ProtocolChoice, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcp_elicit.client"):
        async with Client.connect(
            ours.target, answerer=Broken(), protocol=protocol, stderr="devnull"
        ) as client:
            with pytest.raises(RuntimeError, match="answerer bug"):
                await client.call_tool("confirm")
            # The client goes on: the next call asks again, and fails the same way.
            with pytest.raises(RuntimeError, match="answerer bug"):
                await client.call_tool("confirm")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("mcp_elicit")]
