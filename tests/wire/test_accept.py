"""The Accept header read as RFC 9110 media ranges: the most specific range decides, q=0 refuses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.wire.http import accepted_replies


@pytest.mark.parametrize(
    ("accept", "json", "sse"),
    [
        ("application/json, text/event-stream", True, True),
        ("application/json", True, False),
        ("text/event-stream", False, True),
        ("*/*", True, True),
        ("application/*", True, False),
        ("text/*", False, True),
        ("Application/JSON; charset=utf-8", True, False),
        ("application/json;q=0, text/event-stream", False, True),
        ("application/json, text/event-stream;q=0", True, False),
        ("*/*, application/json;q=0", False, True),  # the specific range wins over */*
        ("*/*;q=0, application/json", True, False),
        ("application/jsonl, application/json-seq", False, False),
        ("text/html", False, False),
        ("application/json;q=abc", False, False),  # an unreadable weight accepts nothing
        ("application/json;q=0.001", True, False),
        ("", False, False),
        (" , ,", False, False),
    ],
)
def test_media_ranges(accept: str, json: bool, sse: bool) -> None:
    assert accepted_replies(accept) == (json, sse)


@given(st.text(max_size=200))
def test_any_text_gives_an_answer(accept: str) -> None:
    json, sse = accepted_replies(accept)
    assert type(json) is bool
    assert type(sse) is bool
