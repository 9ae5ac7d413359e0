"""What the server remembers about a call between its rounds: the record sealed in ``requestState``.

A *call* is one logical ``tools/call`` (or ``prompts/get``, ``resources/read``) spread over
several JSON-RPC requests, its *rounds*. The server keeps nothing between them: everything it
must remember travels in the sealed ``requestState`` as a :class:`CallRecord`, made anew at the
end of each round (:meth:`mcp_elicit.server.round.Round.next_payload`):

* ``answers``: the answers the handler has consumed, by question key, each with the digest of the
  question it answered (a replay that asks something else under that key is a defect);
* ``steps``: the results of ``ctx.once`` steps, so a side effect runs once per call;
* ``asked``: the questions sent in the last round, with their digests and invalid attempts so far;
* ``user_state``: a low-level handler's own state string (``InputRequired.state``);
* ``input_kinds``: what the request that asked ``asked`` could answer (its client capabilities).

A question's key is the one the author gave (``key=``), or one derived from a digest of its
content and how many times the same content was asked before in the run, so that a recorded
answer finds its question whatever order concurrent branches reach it in.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

import orjson

PAYLOAD_VERSION = 2  # 2: question digests cut to 128 bits

MAX_ANSWER_NESTING = 200  # answers are kept in the sealed state; its encoder stops at 254 levels


class MalformedRecord(Exception):
    """A sealed payload that authenticated but is not a call record we wrote."""


def question_digest(kind: str, content: Any) -> str:
    """A stable digest of what a question asks (kind + canonical JSON of its content): SHA-256
    cut to 128 bits, 32 hex digits. Only compared for equality (did the question change between
    rounds?) and sealed in every requestState: 128 bits are plenty for that."""
    canonical = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(kind.encode() + b"\0" + canonical).hexdigest()[:32]


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether JSON data nests arrays/objects more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _new_call_id() -> str:
    return os.urandom(16).hex()


@dataclass(slots=True)
class CallRecord:
    """Everything the server remembers about a call between rounds (see the module docstring)."""

    call_id: str = field(default_factory=_new_call_id)
    round: int = 0
    answers: dict[str, tuple[str, Any]] = field(default_factory=dict)  # key -> (digest, answer)
    steps: dict[str, Any] = field(default_factory=dict)  # step name -> recorded result
    asked: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (digest, attempts)
    user_state: str | None = None
    input_kinds: int | None = None  # ClientCapabilities.input_kinds() of the asking request

    def to_payload(self) -> dict[str, Any]:
        """The sealed form: short keys, and empty parts left out."""
        payload: dict[str, Any] = {"v": PAYLOAD_VERSION, "f": self.call_id, "r": self.round}
        if self.answers:
            payload["a"] = {k: [d, v] for k, (d, v) in self.answers.items()}
        if self.steps:
            payload["s"] = self.steps
        if self.asked:
            payload["q"] = {k: [d, n] for k, (d, n) in self.asked.items()}
        if self.user_state is not None:
            payload["u"] = self.user_state
        if self.input_kinds is not None:
            payload["c"] = self.input_kinds
        return payload

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> CallRecord:
        """The record a payload holds; :class:`MalformedRecord` when it is not one we wrote."""
        try:
            if payload.get("v") != PAYLOAD_VERSION:
                raise MalformedRecord("unknown payload version")
            call_id = payload["f"]
            round_no = payload["r"]
            answers = {str(k): (str(v[0]), v[1]) for k, v in payload.get("a", {}).items()}
            steps = dict(payload.get("s", {}))
            asked = {str(k): (str(v[0]), int(v[1])) for k, v in payload.get("q", {}).items()}
            user_state = payload.get("u")
            input_kinds = payload.get("c")
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise MalformedRecord(str(exc)) from None
        if not isinstance(call_id, str) or type(round_no) is not int:
            raise MalformedRecord("bad call id or round")
        if user_state is not None and not isinstance(user_state, str):
            raise MalformedRecord("bad user state")
        if input_kinds is not None and type(input_kinds) is not int:
            raise MalformedRecord("bad input kinds")
        return cls(call_id, round_no, answers, steps, asked, user_state, input_kinds)
