"""AuthorizationCodeGrant.finish: the checks made *before* any token request, in order, each
fail-closed with AuthorizationFailed, and not one request sent to the provider when they fail."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oauth_support import REDIRECT_URI, Answer, ScriptedServer, scripted_provider, token_body

from mcp_elicit.connect.oauth import AuthorizationCodeGrant, AuthorizationFailed, PendingAuthorization


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class MultiParams(Mapping[str, str]):
    """A query-string multidict like Starlette's QueryParams (last value wins, getlist)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._pairs = pairs

    def __getitem__(self, key: str) -> str:
        return [v for k, v in self._pairs if k == key][-1]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(k for k, _ in self._pairs))

    def __len__(self) -> int:
        return len(dict.fromkeys(k for k, _ in self._pairs))

    def getlist(self, key: str) -> list[str]:
        return [v for k, v in self._pairs if k == key]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def flow(server: ScriptedServer, clock: Clock) -> AuthorizationCodeGrant:
    server.routes["/token"] = Answer(body=token_body())
    return AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI, clock=clock, max_age=600)


def _ok_params(flow: AuthorizationCodeGrant, pending: PendingAuthorization) -> dict[str, str]:
    assert flow.provider.issuer is not None
    return {"code": "the-code", "state": pending.state, "iss": flow.provider.issuer}


async def _refused(
    flow: AuthorizationCodeGrant,
    server: ScriptedServer,
    pending: Any,
    params: Any,
    reason: str,
    *,
    path: str = "github",
) -> AuthorizationFailed:
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, params, provider_in_path=path)
    assert info.value.reason == reason, repr(info.value)
    assert server.requests == [], "nothing may be sent to the provider when a check fails"
    return info.value


async def test_the_good_callback_passes(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    grant = await flow.finish(pending, _ok_params(flow, pending), provider_in_path="github")
    assert grant.access_token == token_body()["access_token"]
    assert [r.path for r in server.requests] == ["/token"]


async def test_callback_under_another_providers_path(
    flow: AuthorizationCodeGrant, server: ScriptedServer
) -> None:
    _, pending = flow.begin()
    await _refused(flow, server, pending, _ok_params(flow, pending), "wrong-provider", path="gitlab")


async def test_pending_of_another_provider(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    other = PendingAuthorization.from_dict(pending.to_dict() | {"provider_id": "gitlab"})
    for path in ("github", "gitlab"):
        await _refused(flow, server, other, _ok_params(flow, pending), "wrong-provider", path=path)


async def test_pending_for_another_redirect_uri(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    other = PendingAuthorization.from_dict(pending.to_dict() | {"redirect_uri": "https://mcp.example.test/x"})
    await _refused(flow, server, other, _ok_params(flow, pending), "bad-pending")


async def test_not_a_pending_authorization(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    await _refused(flow, server, pending.to_dict(), _ok_params(flow, pending), "bad-pending")


async def test_expired_pending(flow: AuthorizationCodeGrant, server: ScriptedServer, clock: Clock) -> None:
    _, pending = flow.begin()
    clock.now += 601
    exc = await _refused(flow, server, pending, _ok_params(flow, pending), "expired")
    assert "again" in exc.public_message


async def test_pending_from_the_future(
    flow: AuthorizationCodeGrant, server: ScriptedServer, clock: Clock
) -> None:
    _, pending = flow.begin()
    clock.now -= 3600
    await _refused(flow, server, pending, _ok_params(flow, pending), "expired")


@pytest.mark.parametrize("state", [None, "", "x", "wrong-state-" * 3, "ünïcode", "\x00"])
async def test_state_mismatch(
    flow: AuthorizationCodeGrant, server: ScriptedServer, state: str | None
) -> None:
    _, pending = flow.begin()
    params = _ok_params(flow, pending)
    if state is None:
        del params["state"]
    else:
        params["state"] = state
    await _refused(flow, server, pending, params, "state-mismatch")


async def test_state_of_another_transaction(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    _, other = flow.begin()
    await _refused(flow, server, pending, _ok_params(flow, other), "state-mismatch")


@pytest.mark.parametrize("suffix", ["/", "/other", "x"])
async def test_iss_compared_exactly(
    flow: AuthorizationCodeGrant, server: ScriptedServer, suffix: str
) -> None:
    _, pending = flow.begin()
    params = _ok_params(flow, pending)
    params["iss"] += suffix
    await _refused(flow, server, pending, params, "iss-mismatch")


async def test_iss_case_is_not_normalised(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    params = _ok_params(flow, pending)
    params["iss"] = params["iss"].upper()
    await _refused(flow, server, pending, params, "iss-mismatch")


async def test_iss_missing_when_advertised(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    params = _ok_params(flow, pending)
    del params["iss"]
    await _refused(flow, server, pending, params, "iss-missing")


async def test_iss_optional_when_not_advertised(server: ScriptedServer, clock: Clock) -> None:
    server.routes["/token"] = Answer(body=token_body())
    flow = AuthorizationCodeGrant(
        scripted_provider(server, iss_parameter_supported=False), REDIRECT_URI, clock=clock
    )
    _, pending = flow.begin()
    await flow.finish(pending, {"code": "c", "state": pending.state}, provider_in_path="github")


async def test_iss_mismatch_beats_the_error(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    """An error response from another issuer is not believed, and its text is not kept."""
    _, pending = flow.begin()
    params = {
        "error": "access_denied",
        "error_description": "evil",
        "state": pending.state,
        "iss": "https://evil",
    }
    exc = await _refused(flow, server, pending, params, "iss-mismatch")
    assert exc.provider_error is None
    assert not exc.declined


async def test_forged_decline_without_state_is_not_a_decline(
    flow: AuthorizationCodeGrant, server: ScriptedServer
) -> None:
    _, pending = flow.begin()
    exc = await _refused(flow, server, pending, {"error": "access_denied"}, "state-mismatch")
    assert not exc.declined


async def test_provider_error_with_hostile_description(
    flow: AuthorizationCodeGrant, server: ScriptedServer
) -> None:
    _, pending = flow.begin()
    params = {
        "error": "access_denied",
        "error_description": "<script>alert(document.cookie)</script>\x1b]8;;https://evil\x07\r\nclick\u202e",
        "state": pending.state,
        "iss": flow.provider.issuer or "",
    }
    exc = await _refused(flow, server, pending, params, "provider-error")
    assert exc.declined
    assert exc.error == "access_denied"
    assert "<" not in exc.public_message
    assert "script" not in str(exc)
    assert exc.provider_error == "<script>alert(document.cookie)</script>]8;;https://evil click"


async def test_other_provider_error(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    params = {"error": "<b>server_error</b>", "state": pending.state, "iss": flow.provider.issuer or ""}
    exc = await _refused(flow, server, pending, params, "provider-error")
    assert exc.error is None  # not a well-formed code: not kept as one
    assert not exc.declined


async def test_code_and_error_together(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    params = _ok_params(flow, pending) | {"error": "access_denied"}
    await _refused(flow, server, pending, params, "malformed-callback")


@pytest.mark.parametrize("name", ["state", "code", "iss", "error"])
async def test_repeated_parameter(flow: AuthorizationCodeGrant, server: ScriptedServer, name: str) -> None:
    _, pending = flow.begin()
    pairs = list(_ok_params(flow, pending).items())
    pairs.append((name, dict(pairs).get(name, "again")))
    await _refused(flow, server, pending, MultiParams(pairs), "malformed-callback")


async def test_multidict_with_single_values_is_fine(flow: AuthorizationCodeGrant) -> None:
    _, pending = flow.begin()
    params = MultiParams([*_ok_params(flow, pending).items(), ("session_state", "a"), ("session_state", "b")])
    await flow.finish(pending, params, provider_in_path="github")


@pytest.mark.parametrize("code", ["", "x" * 2049, "co de\x00", "cödé"])
async def test_bad_code(flow: AuthorizationCodeGrant, server: ScriptedServer, code: str) -> None:
    _, pending = flow.begin()
    params = _ok_params(flow, pending) | {"code": code}
    await _refused(flow, server, pending, params, "missing-code" if not code else "malformed-callback")


async def test_missing_code(flow: AuthorizationCodeGrant, server: ScriptedServer) -> None:
    _, pending = flow.begin()
    params = _ok_params(flow, pending)
    del params["code"]
    await _refused(flow, server, pending, params, "missing-code")


@pytest.mark.parametrize(
    "params",
    [
        None,
        "code=x",
        [("code", "x")],
        {"code": 1},
        {1: "x"},
        {"code": ["x"]},
        {f"p{i}": "x" for i in range(40)},
    ],
)
async def test_params_that_are_not_a_string_mapping(
    flow: AuthorizationCodeGrant, server: ScriptedServer, params: Any
) -> None:
    _, pending = flow.begin()
    await _refused(flow, server, pending, params, "malformed-callback")


_value = st.text(max_size=40) | st.integers() | st.none() | st.lists(st.text(max_size=5), max_size=2)
_key = st.sampled_from(["code", "state", "iss", "error", "error_description"]) | st.text(max_size=8)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params=st.dictionaries(_key, _value, max_size=8) | st.lists(st.tuples(_key, st.text(max_size=20))))
async def test_arbitrary_callback_params_raise_only_authorization_failed(
    flow: AuthorizationCodeGrant, server: ScriptedServer, params: Any
) -> None:
    _, pending = flow.begin()
    if isinstance(params, list):
        params = MultiParams(params)
    with pytest.raises(AuthorizationFailed) as info:  # a random state can never match
        await flow.finish(pending, params, provider_in_path="github")
    assert info.value.reason in {"malformed-callback", "state-mismatch", "missing-code"}
    assert server.requests == []
