"""The engine's caches give what the general code gives."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.schema import form_spec
from mcp_elicit.server import gating
from mcp_elicit.server.call import Call
from mcp_elicit.server.gating import form_spec as cached_form_spec
from mcp_elicit.server.record import CallRecord
from mcp_elicit.server.round import Round
from mcp_elicit.wire.meta import ClientCapabilities


@dataclass
class Confirm:
    ok: bool


def test_cached_form_specs_are_the_ones_form_spec_builds() -> None:
    assert cached_form_spec(Confirm, ()) is cached_form_spec(Confirm, ())
    assert cached_form_spec(Confirm, ()) == form_spec(Confirm)
    assert cached_form_spec(None, ()).schema == {"type": "object", "properties": {}}
    assert cached_form_spec(Confirm, ["ok"]) == form_spec(Confirm, allow_secrets=["ok"])


def test_the_next_payload_carries_the_answers_steps_and_questions_so_far() -> None:
    record = CallRecord(steps={"s": 1}, answers={"k": ("d", ["accept", {}])}, user_state="u")
    rnd = Round(record, {}, ClientCapabilities({"elicitation": {}}))
    rnd.record_answer("k2", "d2", ["decline", None])
    rnd.ask("k3", "d3", {"method": "elicitation/create", "params": {}}, 1)
    following = CallRecord.from_payload(rnd.next_payload("next"))
    assert following == CallRecord(
        record.call_id,
        1,
        {"k": ("d", ["accept", {}]), "k2": ("d2", ["decline", None])},
        {"s": 1},
        {"k3": ("d3", 1)},
        "next",
        1,
    )


def test_the_link_search_is_skipped_only_for_messages_without_a_link() -> None:
    """gating searches a form's message for links only when it holds ':', '.', ']' or '<':
    every pattern of the search holds one of them."""
    for pattern in gating._LINK_HINT.pattern.split("|"):
        literal = re.sub(r"\\(.)", r"\1", pattern)
        assert not gating._LINK_MARKS.isdisjoint(literal), literal


@given(st.text(alphabet=st.sampled_from("htps:/w.]()<a mailtojvcrdeA?-T"), max_size=30))
def test_a_message_the_link_search_skips_has_no_match(message: str) -> None:
    if gating._LINK_MARKS.isdisjoint(message):
        assert gating._LINK_HINT.search(message) is None


def test_the_next_round_of_a_call_keeps_everything_but_its_answers_and_state() -> None:
    """Call.next_round builds the Call field by field (dataclasses.replace costs more): it must
    carry every other field, whatever fields Call has."""
    values: dict[str, Any] = {field.name: object() for field in fields(Call)}
    call = Call(**values)
    answers = {"k": {"action": "accept"}}
    following = call.next_round(answers, "state-2")
    assert following == replace(call, input_responses=answers, request_state="state-2", in_process=True)
    for field in fields(Call):
        if field.name not in ("input_responses", "request_state", "in_process"):
            assert getattr(following, field.name) is values[field.name], field.name
