"""The engine's shortcuts give what the general code gives."""

from __future__ import annotations

import random
from dataclasses import dataclass

from mcp_elicit.schema import form_spec
from mcp_elicit.server.context import _LINK_HINT, _form_spec, _may_hold_link
from mcp_elicit.server.flow import FlowRecord, Round


def test_link_hint_shortcut_agrees_with_the_regex() -> None:
    samples = [
        "Create ticket 'T-1'?",
        "Please confirm.",
        "See https://example.com",
        "WWW.EXAMPLE.COM",
        "[here](x)",
        "<A href=x>",
        "MailTo:someone",
        "JavaScript:void(0)",
        "DATA:text/plain",
        "Tel:123",
        "ṯel: non-ascii, no hint",
        "\u212aelvin: no hint either",
        "java\u017fcript: the long s folds to s",  # IGNORECASE matches it: the regex decides
        "mailto\uff1a fullwidth colon",
        "",
    ]
    rng = random.Random(7)
    alphabet = "aAtTeElL:./]([<> wmMjJsScCrRiIpPdD\u017f\u212a"
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(3000)]
    for message in samples:
        assert _may_hold_link(message) == (_LINK_HINT.search(message) is not None), message


@dataclass
class Confirm:
    ok: bool


def test_cached_form_specs_are_the_ones_form_spec_builds() -> None:
    assert _form_spec(Confirm, ()) is _form_spec(Confirm, ())
    assert _form_spec(Confirm, ()) == form_spec(Confirm)
    assert _form_spec(None, ()).schema == {"type": "object", "properties": {}}
    assert _form_spec(Confirm, ["ok"]) == form_spec(Confirm, allow_secrets=["ok"])


def test_next_payload_is_the_next_records_payload() -> None:
    record = FlowRecord(steps={"s": 1}, answers={"k": ("d", ["accept", {}])}, user_state="u")
    rnd = Round(record, {})
    rnd.record_answer("k2", "d2", ["decline", None])
    rnd.ask("k3", "d3", {"method": "elicitation/create", "params": {}}, 1)
    assert rnd.next_payload("next") == rnd.next_record("next").to_payload()
    assert FlowRecord.from_payload(rnd.next_payload(None)) == rnd.next_record(None)
