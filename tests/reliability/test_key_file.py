"""Key rotation at runtime: ``KeyFile`` re-reads its file, the sealer swaps rings atomically."""

from __future__ import annotations

import itertools
import logging
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.state import KeyRing, RequestBinding, StateRejected, StateSealer
from mcp_elicit.state.key_file import KeyFile, parse_key_file
from mcp_elicit.wire.errors import INVALID_PARAMS, McpError
from mcp_elicit.wire.jsonrpc import Request

K1 = KeyRing.generate_secret()
K2 = KeyRing.generate_secret()
KID1 = KeyRing.from_secrets([K1]).kids[0]
KID2 = KeyRing.from_secrets([K2]).kids[0]
BINDING = RequestBinding("tools/call", "t", "d" * 64, None)
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
_ids = itertools.count(1)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def write(path: Path, *secrets: str) -> None:
    """Atomic replace, the way the docs say to do it."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text("# state keys, the first one seals\n" + "\n".join(secrets) + "\n")
    tmp.chmod(0o600)
    os.replace(tmp, path)


def sealing_kid(token: str) -> str:
    import base64

    raw = base64.urlsafe_b64decode(token[3:] + "=" * (-len(token[3:]) % 4))
    return raw[:4].hex()


def test_parse_key_file_skips_comments_and_blank_lines() -> None:
    ring = parse_key_file(f"# comment\n\n  {K2}  \n# {K1}\n{K1}\n")
    assert ring.kids == (KID2, KID1)
    with pytest.raises(ValueError, match="no keys"):
        parse_key_file("# nothing\n\n")
    with pytest.raises(ValueError, match="state key #0") as info:
        parse_key_file("short\n")
    assert "short" not in str(info.value)
    # A byte-order mark is not part of the key; a comment after a key would be.
    assert parse_key_file(f"\ufeff{K1}\n").kids == (KID1,)
    for commented in (f"{K1}  # primary", f"{K1}\t# primary"):
        with pytest.raises(ValueError, match="key 1 is followed by a comment") as info:
            parse_key_file(commented)
        assert K1 not in str(info.value)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # the environment variable's value pasted into the file: read as one passphrase, it
        # would have made another key than the instances given the variable
        (f"{K1},{K2}\n", "key 1 holds a comma; a key file has one key per line"),
        (f"{K2}\n{K1}, {K2}\n", "key 2 holds a comma"),
        (f"MCP_ELICIT_STATE_KEYS={K1}\n", "key 1 starts with 'MCP_ELICIT_STATE_KEYS=': write the keys alone"),
    ],
)
def test_a_key_file_written_as_the_environment_variable_is_refused(text: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle) as info:
        parse_key_file(text)
    assert K1 not in str(info.value)
    assert parse_key_file(f"{K1}\n{K2}\n").kids == (KID1, KID2)  # the same keys, one per line


def test_a_key_file_saved_with_a_byte_order_mark_gives_the_same_key(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_bytes(b"\xef\xbb\xbf" + K1.encode() + b"\r\n")
    path.chmod(0o600)
    assert KeyFile(path).ring.kids == (KID1,)


@pytest.mark.parametrize("where", ["missing", "a directory"])
def test_a_key_file_that_cannot_be_read_is_a_clear_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    path = tmp_path / "keys"
    if where == "a directory":
        path.mkdir()
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(path))
    with pytest.raises(ValueError, match="MCP_ELICIT_STATE_KEYS_FILE: cannot read the state key file"):
        KeyFile.from_env()


def test_a_bad_file_at_start_up_fails_fast(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read the state key file"):
        KeyFile(tmp_path / "missing")
    (tmp_path / "empty").write_text("")
    with pytest.raises(ValueError, match="no keys"):
        KeyFile(tmp_path / "empty")


def test_the_file_is_checked_once_per_interval_and_reloaded_when_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    write(path, K1)
    clock = Clock()
    keys = KeyFile(path, check_interval=5.0, clock=clock)
    sealer = StateSealer(keys, audience="a")
    old_token = sealer.seal({}, BINDING)
    assert sealing_kid(old_token) == KID1

    write(path, K2, K1)
    clock.now += 4.9
    assert sealing_kid(sealer.seal({}, BINDING)) == KID1  # not due yet
    clock.now += 0.2
    new_token = sealer.seal({}, BINDING)
    assert sealing_kid(new_token) == KID2
    assert keys.reloads == 1
    assert sealer.unseal(old_token, BINDING).payload == {}  # old key still opens

    write(path, K2)
    clock.now += 5.1
    with pytest.raises(StateRejected) as info:
        sealer.unseal(old_token, BINDING)
    assert info.value.reason == "unknown-key"
    assert sealer.unseal(new_token, BINDING).payload == {}


def test_a_broken_file_never_replaces_working_keys(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "keys"
    write(path, K1)
    clock = Clock()
    keys = KeyFile(path, check_interval=1.0, clock=clock)
    sealer = StateSealer(keys, audience="a")
    token = sealer.seal({}, BINDING)
    caplog.set_level(logging.ERROR, logger="mcp_elicit.state")
    for bad in ("", "not-a-key\n", "\xff"):
        path.write_text(bad)
        clock.now += 1.5
        assert sealer.unseal(token, BINDING).payload == {}
        assert sealer.keys.kids == (KID1,)
    path.unlink()
    for _ in range(3):  # missing at every check: reported once
        clock.now += 1.5
        assert sealer.unseal(token, BINDING).payload == {}
    write(path, K1)  # back, then missing again: reported again
    clock.now += 1.5
    assert sealer.unseal(token, BINDING).payload == {}
    path.unlink()
    clock.now += 1.5
    assert sealer.unseal(token, BINDING).payload == {}
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 5  # once per bad version of the file, none of them shows a secret
    assert not any(K1 in r.getMessage() for r in errors)
    write(path, K2, K1)
    clock.now += 1.5
    assert sealing_kid(sealer.seal({}, BINDING)) == KID2


def test_request_reload_and_sighup_reload_at_the_next_use(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    write(path, K1)
    clock = Clock()
    keys = KeyFile(path, check_interval=3600.0, clock=clock)
    sealer = StateSealer(keys, audience="a")
    write(path, K2, K1)
    assert sealer.keys.kids == (KID1,)
    previous = signal.getsignal(signal.SIGHUP)
    try:
        keys.install_sighup()
        os.kill(os.getpid(), signal.SIGHUP)  # the handler only sets a flag
        assert sealer.keys.kids == (KID1,)
        assert sealing_kid(sealer.seal({}, BINDING)) == KID2
    finally:
        signal.signal(signal.SIGHUP, previous)
    write(path, K2)
    assert keys.reload() is True
    assert sealer.keys.kids == (KID2,)


def test_replace_keys_is_refused_for_a_file_backed_sealer(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    write(path, K1)
    with pytest.raises(ValueError, match="KeyFile"):
        StateSealer(KeyFile(path), audience="a").replace_keys(KeyRing.from_secrets([K2]))
    plain = StateSealer(KeyRing.from_secrets([K1]), audience="a")
    plain.replace_keys(KeyRing.from_secrets([K2]))
    assert sealing_kid(plain.seal({}, BINDING)) == KID2


@dataclass
class Name:
    name: str


def make_server(**options: Any) -> Server:
    app = Server("rotation", **options)

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Name, key="n")
        assert answer.data is not None
        return answer.data.name

    return app


def call(state: str | None = None) -> Request:
    params: dict[str, Any] = {"_meta": META, "name": "ask", "arguments": {}}
    if state is not None:
        params["requestState"] = state
        params["inputResponses"] = {"n": {"action": "accept", "content": {"name": "x"}}}
    return Request(next(_ids), "tools/call", params)


async def test_server_rotation_through_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keys"
    write(path, K1)
    monkeypatch.delenv("MCP_ELICIT_STATE_KEYS", raising=False)
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(path))
    a, b = make_server(), make_server()  # two instances, one file
    assert isinstance(a.sealer.key_file, KeyFile)
    assert a.sealer.key_file is not None
    assert b.sealer.key_file is not None
    old_state = (await a.dispatch(call()))["requestState"]

    write(path, K1, K2)  # step 1: everyone learns the new key
    write(path, K2, K1)  # step 2: it seals (both steps at once here: the instances reload together)
    assert a.sealer.key_file.reload()
    assert b.sealer.key_file.reload()
    new_state = (await b.dispatch(call()))["requestState"]
    assert sealing_kid(new_state) == KID2
    assert (await a.dispatch(call(old_state)))["content"][0]["text"] == "x"  # old key still opens

    write(path, K2)  # step 3, after the TTL: the old key goes
    assert a.sealer.key_file.reload()
    with pytest.raises(McpError) as info:
        await a.dispatch(call(old_state))
    assert info.value.code == INVALID_PARAMS
    assert info.value.message == "Invalid or expired requestState"
    assert (await a.dispatch(call(new_state)))["content"][0]["text"] == "x"


def test_both_environment_variables_at_once_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keys"
    write(path, K1)
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS_FILE", str(path))
    monkeypatch.setenv("MCP_ELICIT_STATE_KEYS", K2)
    with pytest.raises(ValueError, match="keep one"):
        Server("both")
