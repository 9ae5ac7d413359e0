"""requestState and the JSON-RPC envelope end to end: real Servers over real HTTP on 127.0.0.1.

Each case is what a hostile or sloppy client can put on the wire; each asserts the exact answer
(status, code, message) and that the server keeps serving afterwards.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.state import SQLiteSingleUseStore
from tests.e2e.test_http import body, headers_for
from tests.helpers import InProcessServer

KEY = "wire-state-tests-secret-0123456789abcdefghij"
REFUSED = {
    "code": -32602,
    "message": "Invalid or expired requestState",
    "data": {"reason": "invalid_request_state"},
}


@dataclass
class Name:
    name: str


def app(name: str, **options: Any) -> Server:
    """A tool, a prompt and a resource all called ``x``, each asking one question."""
    server = Server(name, state_keys=[KEY], **options)

    @server.tool(name="x")
    async def tool_x(ctx: Context) -> str:
        return (await ctx.elicit("Name?", Name, key="k")).data.name

    @server.tool(name="y")
    async def tool_y(word: str, count: float, ctx: Context) -> str:
        return f"{word}{count:g}" + (await ctx.elicit("Name?", Name, key="k")).data.name

    @server.prompt(name="x")
    async def prompt_x(ctx: Context) -> str:
        return (await ctx.elicit("Name?", Name, key="k")).data.name

    @server.resource("x")
    async def resource_x(ctx: Context) -> str:
        return (await ctx.elicit("Name?", Name, key="k")).data.name

    return server


@dataclass
class Site:
    url: str


@contextmanager
def serve(server: Server, store: SQLiteSingleUseStore | None = None) -> Iterator[Site]:
    threaded = InProcessServer(server.asgi())
    if store is not None:
        threaded.on_close = store.close  # closed in the loop that used it
    with threaded:
        yield Site(f"{threaded.base}/mcp")


@pytest.fixture(scope="module")
def alpha() -> Iterator[Site]:
    with serve(app("alpha")) as site:
        yield site


@pytest.fixture
async def client() -> Any:
    async with httpx.AsyncClient(timeout=20) as c:
        yield c


def params_for(method: str, **more: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"uri": "x"} if method == "resources/read" else {"name": "x", "arguments": {}}
    params.update(more)
    return params


async def post(client: httpx.AsyncClient, site: Site, message: dict[str, Any], raw: str | None = None) -> Any:
    return await client.post(site.url, content=raw or json.dumps(message), headers=headers_for(message))


async def first_state(client: httpx.AsyncClient, site: Site, method: str = "tools/call") -> str:
    response = await post(client, site, body(method, params_for(method)))
    result = response.json()["result"]
    assert result["resultType"] == "input_required"
    return str(result["requestState"])


def retry(method: str, state: object, name: str = "Ada") -> dict[str, Any]:
    answer = {"k": {"action": "accept", "content": {"name": name}}}
    return body(method, params_for(method, requestState=state, inputResponses=answer))


def answered(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["resultType"] == "complete", result
    if "contents" in result:
        return str(result["contents"][0]["text"])
    if "messages" in result:
        return str(result["messages"][0]["content"]["text"])
    return str(result["content"][0]["text"])


def refused(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.json()["error"] == REFUSED


# ------------------------------------------------------------------------------ binding


@pytest.mark.parametrize("sealed_on", ["tools/call", "prompts/get", "resources/read"])
async def test_state_sealed_for_one_method_is_refused_on_the_others_with_the_same_name(
    alpha: Site, client: httpx.AsyncClient, sealed_on: str
) -> None:
    state = await first_state(client, alpha, sealed_on)
    for other in {"tools/call", "prompts/get", "resources/read"} - {sealed_on}:
        refused(await post(client, alpha, retry(other, state)))
    assert answered(await post(client, alpha, retry(sealed_on, state))) == "Ada"


async def test_state_sealed_for_some_arguments_is_refused_for_others(
    alpha: Site, client: httpx.AsyncClient
) -> None:
    sent = body("tools/call", {"name": "y", "arguments": {"word": "one", "count": 2}})
    state = (await post(client, alpha, sent)).json()["result"]["requestState"]
    answer = {"k": {"action": "accept", "content": {"name": "!"}}}

    def again(arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": "y", "arguments": arguments, "requestState": state, "inputResponses": answer}
        return body("tools/call", params)

    for other in ({"word": "two", "count": 2}, {"word": "one", "count": 2.5}, {"word": "One", "count": 2}):
        refused(await post(client, alpha, again(other)))
    # The same arguments in another order, 2 written as 2.0: the same request.
    assert answered(await post(client, alpha, again({"count": 2.0, "word": "one"}))) == "one2!"


async def test_state_from_another_server_with_the_same_key_is_refused(
    alpha: Site, client: httpx.AsyncClient
) -> None:
    """The server name is the default audience: one key shared by two servers is not one
    audience. Instances that share an explicit audience are one deployment and accept it."""
    state = await first_state(client, alpha)
    with serve(app("beta")) as other:
        refused(await post(client, other, retry("tools/call", state)))
    with serve(app("gamma", audience="mcp-elicit:alpha")) as same_deployment:
        assert answered(await post(client, same_deployment, retry("tools/call", state))) == "Ada"


def _variants(state: str) -> dict[str, object]:
    return {
        "truncated by one": state[:-1],
        "one '=' added": state + "=",
        "two '=' added": state + "==",
        "standard alphabet": state.replace("-", "+").replace("_", "/")
        if "-" in state or "_" in state
        else "+" + state,
        "trailing space": state + " ",
        "inner space": state[:20] + " " + state[20:],
        "trailing newline": state + "\n",
        "upper-case prefix": "V1." + state[3:],
        "a JSON number": 12345,
        "a JSON array": [state],
        "1 MB long": "v1." + "A" * (1 << 20),
    }


async def test_malformed_tokens_get_the_one_fixed_refusal(alpha: Site, client: httpx.AsyncClient) -> None:
    state = await first_state(client, alpha)
    for label, variant in _variants(state).items():
        response = await post(client, alpha, retry("tools/call", variant))
        assert response.status_code == 400, label
        assert response.json()["error"] == REFUSED, label
    # None of them used the token up or upset the server.
    assert answered(await post(client, alpha, retry("tools/call", state))) == "Ada"


async def test_an_expired_state_is_refused(client: httpx.AsyncClient) -> None:
    with serve(app("short-lived", state_ttl=0.3)) as site:
        state = await first_state(client, site)
        await asyncio.sleep(0.6)
        refused(await post(client, site, retry("tools/call", state)))


async def test_single_use_refuses_the_second_use(client: httpx.AsyncClient, tmp_path: Path) -> None:
    store = SQLiteSingleUseStore(tmp_path / "used.db")
    with serve(app("once", single_use=store), store) as site:
        state = await first_state(client, site)
        assert answered(await post(client, site, retry("tools/call", state))) == "Ada"
        refused(await post(client, site, retry("tools/call", state)))


# ------------------------------------------------------------------------------ duplicate keys


def _twice(message: dict[str, Any], before: str, after: str) -> str:
    """The message's JSON with ``inputResponses.k`` written twice: ``before``, then ``after``."""
    raw = json.dumps(message)
    answer = json.dumps({"k": message["params"]["inputResponses"]["k"]})[1:-1]
    assert raw.count(answer) == 1
    one = answer.replace('"name": "Ada"', f'"name": "{before}"')
    two = answer.replace('"name": "Ada"', f'"name": "{after}"')
    return raw.replace(answer, f"{one}, {two}")


async def test_an_answer_key_written_twice_the_last_wins_for_the_handler_and_the_digest(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """The JSON is parsed once: the answer the handler reads is the one the single-use digest
    covers. A re-issue holding only the winning answer is the same request (its committed
    answer comes back); one holding only the losing answer is another request (refused)."""
    store = SQLiteSingleUseStore(tmp_path / "used.db")
    with serve(app("dup", single_use=store, single_use_redelivery=True), store) as site:
        state = await first_state(client, site)
        message = retry("tools/call", state)
        assert answered(await post(client, site, message, _twice(message, "Loser", "Winner"))) == "Winner"
        assert answered(await post(client, site, retry("tools/call", state, "Winner"))) == "Winner"
        refused(await post(client, site, retry("tools/call", state, "Loser")))


@pytest.mark.parametrize(
    ("first", "last", "status", "code"),
    [("1900-01-01", "2026-07-28", 200, None), ("2026-07-28", "1900-01-01", 400, -32020)],
)
async def test_meta_keys_written_twice_the_last_wins_everywhere(
    alpha: Site, client: httpx.AsyncClient, first: str, last: str, status: int, code: int | None
) -> None:
    """The version checked against the MCP-Protocol-Version header (2026-07-28 here) is the one
    the request runs under: the last."""
    message = body("tools/list")
    key = '"io.modelcontextprotocol/protocolVersion": '
    raw = json.dumps(message).replace(key + '"2026-07-28"', f'{key}"{first}", {key}"{last}"')
    assert raw.count(key) == 2
    response = await post(client, alpha, message, raw)
    assert response.status_code == status
    if code is None:
        assert [tool["name"] for tool in response.json()["result"]["tools"]] == ["x", "y"]
    else:
        error = response.json()["error"]
        assert error["code"] == code
        assert "'2026-07-28' does not match the body value '1900-01-01'" in error["message"]


# ------------------------------------------------------------------------------ envelope


def _with_id(message: dict[str, Any], literal: str) -> str:
    raw = json.dumps(message)
    return raw.replace(f'"id": {message["id"]}', f'"id": {literal}', 1)


@pytest.mark.parametrize(
    ("literal", "echoed"),
    [("-7", -7), ('"a\\u0000b"', "a\x00b"), ("18446744073709551615", 2**64 - 1), ('""', "")],
)
async def test_unusual_but_valid_ids_are_echoed_exactly(
    alpha: Site, client: httpx.AsyncClient, literal: str, echoed: object
) -> None:
    message = body("tools/list")
    response = await post(client, alpha, message, _with_id(message, literal))
    assert response.status_code == 200
    assert response.json()["id"] == echoed
    assert "result" in response.json()


@pytest.mark.parametrize(
    ("literal", "needle"),
    [
        ("1.5", '"id" must be a string or an integer'),
        ("1.0", '"id" must be a string or an integer'),
        ("18446744073709551616", "integer ids must fit in 64 bits"),
        ("-9223372036854775809", "integer ids must fit in 64 bits"),
        ("{}", '"id" must be a string or an integer'),
    ],
)
async def test_ids_that_are_not_strings_or_64_bit_integers_are_invalid_requests(
    alpha: Site, client: httpx.AsyncClient, literal: str, needle: str
) -> None:
    message = body("tools/list")
    response = await post(client, alpha, message, _with_id(message, literal))
    assert response.status_code == 400
    assert response.json()["id"] is None
    error = response.json()["error"]
    assert error["code"] == -32600
    assert needle in error["message"]


async def test_params_as_an_array_and_batches_are_invalid_requests(
    alpha: Site, client: httpx.AsyncClient
) -> None:
    message = body("tools/list")
    as_array = {**message, "params": [message["params"]]}
    response = await post(client, alpha, message, json.dumps(as_array))
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": message["id"],
        "error": {"code": -32600, "message": 'Invalid request: "params" must be an object'},
    }
    for batch in ([message], [message, body("tools/list")], []):
        response = await post(client, alpha, message, json.dumps(batch))
        assert response.status_code == 400
        assert response.json()["id"] is None
        assert response.json()["error"] == {
            "code": -32600,
            "message": "Invalid request: JSON-RPC batches are not supported; send one message",
        }


async def test_a_byte_order_mark_and_invalid_utf8_are_parse_errors_that_say_so(
    alpha: Site, client: httpx.AsyncClient
) -> None:
    message = body("tools/list")
    encoded = json.dumps(message).encode()
    cases = {
        b"\xef\xbb\xbf" + encoded: "byte order mark (BOM) is not supported",
        encoded.replace(b"tools/list", b"tools/list\xff"): "not valid UTF-8 (byte 0xff at offset",
        encoded.replace(b"tools/list", b"tools/list\xed\xa0\x80"): "not valid UTF-8 (byte 0xed at offset",
    }
    for raw, needle in cases.items():
        response = await client.post(alpha.url, content=raw, headers=headers_for(message))
        assert response.status_code == 400
        assert response.json()["id"] is None
        error = response.json()["error"]
        assert error["code"] == -32700
        assert needle in error["message"], error["message"]


@pytest.mark.parametrize("where", ["name", "arguments", "answer", "answer key", "requestState"])
@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\udc00\\ud800"])
async def test_lone_surrogates_anywhere_are_parse_errors_and_the_server_goes_on(
    alpha: Site, client: httpx.AsyncClient, where: str, escape: str
) -> None:
    state = await first_state(client, alpha)
    message = retry("tools/call", state)
    message["params"]["arguments"] = {"q": "v"}
    raw = json.dumps(message)
    old = {
        "name": '"name": "x"',
        "arguments": '"q": "v"',
        "answer": '"name": "Ada"',
        "answer key": '"k": {',
        "requestState": f'"requestState": "{state}"',
    }[where]
    new = {
        "name": f'"name": "x{escape}"',
        "arguments": f'"q": "{escape}"',
        "answer": f'"name": "{escape}"',
        "answer key": f'"{escape}": {{',
        "requestState": f'"requestState": "{state}{escape}"',
    }[where]
    assert raw.count(old) == 1
    response = await client.post(alpha.url, content=raw.replace(old, new), headers=headers_for(message))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32700
    assert "lone surrogate" in error["message"], error["message"]
    # A properly paired surrogate (an astral character) in the same place is ordinary text.
    assert answered(await post(client, alpha, retry("tools/call", state, "\U0001f600"))) == "\U0001f600"
