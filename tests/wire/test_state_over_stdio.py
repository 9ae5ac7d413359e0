"""The same hostile lines over real stdio: the e2e server as a subprocess, one message per line.

Every bad line gets its one error line, and the next good line is served.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_stdio import META, StdioPeer, running_peer

REFUSED = {
    "code": -32602,
    "message": "Invalid or expired requestState",
    "data": {"reason": "invalid_request_state"},
}


@pytest.fixture
async def peer(tmp_path: Path) -> AsyncIterator[StdioPeer]:
    # The default message limit (4 MiB): a 1 MB requestState reaches the sealer.
    async with running_peer(tmp_path, line_limit=8 * 1024 * 1024) as running:
        yield running


def greet(request_id: object, **more: Any) -> dict[str, Any]:
    params = {"_meta": META, "name": "greet", "arguments": {}, **more}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def still_serving(peer: StdioPeer, request_id: int) -> None:
    answer = await peer.call(request_id, "tools/list", {})
    assert answer["id"] == request_id
    assert "greet" in [tool["name"] for tool in answer["result"]["tools"]]


async def test_hostile_lines_get_the_right_error_and_the_server_goes_on(peer: StdioPeer) -> None:
    good = json.dumps(greet(1)).encode()
    cases: list[tuple[bytes, int, str]] = [
        (b"\xef\xbb\xbf" + good, -32700, "byte order mark (BOM) is not supported"),
        (good.replace(b"greet", b"gr\xffeet"), -32700, "not valid UTF-8 (byte 0xff at offset"),
        (good.replace(b"greet", b"gr\\ud800eet"), -32700, "lone surrogate"),
        (good.replace(b'"arguments": {}', b'"arguments": {"q": "\\udfff"}'), -32700, "lone surrogate"),
        (b"[" + good + b"]", -32600, "JSON-RPC batches are not supported"),
        (b"[]", -32600, "JSON-RPC batches are not supported"),
        (good.replace(b'"id": 1', b'"id": 1.5'), -32600, '"id" must be a string or an integer'),
        (good.replace(b'"id": 1', b'"id": 18446744073709551616'), -32600, "integer ids must fit in 64 bits"),
    ]
    for number, (line, code, needle) in enumerate(cases, start=100):
        await peer.send_raw(line)
        error = await peer.receive()
        assert error["id"] is None, line
        assert error["error"]["code"] == code, line
        assert needle in error["error"]["message"], (line, error)
        await still_serving(peer, number)


async def test_a_string_id_holding_nul_is_echoed_exactly(peer: StdioPeer) -> None:
    await peer.send(greet("a\x00b"))
    answer = await peer.receive()
    assert answer["id"] == "a\x00b"
    assert answer["result"]["resultType"] == "input_required"


async def test_an_argument_past_64_bits_is_invalid_params_not_a_rounded_number(peer: StdioPeer) -> None:
    """orjson would read it as a float, rounded: the request is refused, naming where it is."""
    line = json.dumps(greet(4)).replace('"arguments": {}', '"arguments": {"n": 18446744073709551617}')
    await peer.send_raw(line.encode())
    assert await peer.receive() == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {
            "code": -32602,
            "message": "Invalid params: the integer 18446744073709551617 at params.arguments.n "
            "is outside -2**63 .. 2**64 - 1",
        },
    }
    await still_serving(peer, 5)


async def test_params_as_an_array_keeps_the_id(peer: StdioPeer) -> None:
    await peer.send({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": [META]})
    assert await peer.receive() == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32600, "message": 'Invalid request: "params" must be an object'},
    }


async def test_damaged_states_get_the_fixed_refusal_and_the_real_one_still_works(peer: StdioPeer) -> None:
    await peer.send(greet(1))
    state = (await peer.receive())["result"]["requestState"]
    answer = {"first": {"action": "accept", "content": {"name": "Ada"}}}
    damaged: list[object] = [state[:-1], state + "=", state + " ", 7, "v1." + "A" * (1 << 20)]
    for number, bad in enumerate(damaged, start=2):
        await peer.send(greet(number, requestState=bad, inputResponses=answer))
        assert await peer.receive() == {"jsonrpc": "2.0", "id": number, "error": REFUSED}
    await peer.send(greet(50, requestState=state, inputResponses=answer))
    assert list((await peer.receive())["result"]["inputRequests"]) == ["last"]
