"""The engine's caches give what the general code gives."""

from __future__ import annotations

from dataclasses import dataclass

from mcp_elicit.schema import form_spec
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
