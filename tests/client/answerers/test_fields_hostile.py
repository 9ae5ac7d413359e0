"""Any form a server can send: the answerer's model either shows it or says why not, never
crashes, never shows a blank or look-alike choice, never prints a control character."""

from __future__ import annotations

import io
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console

from mcp_elicit.client.answerers import _view as view
from mcp_elicit.client.answerers.fields import FormNotShown, form_fields, show_value

from ._harness import FORBIDDEN

# What the terminal must never receive from server text, beyond the harness's list: line and
# paragraph separators and lone surrogates too.
NEVER = re.compile(FORBIDDEN.pattern[:-1] + "\u2028\u2029\ud800-\udfff]")
# Characters that show as nothing although they are not removed by cleaning.
INVISIBLE = re.compile("[\u034f\u115f\u1160\u3164\ufe00-\ufe0f\uffa0\\s]")

# Inside the subset, yet blank, invisible or alike once shown: what a choice may look like.
_alike = st.sampled_from(
    ["", " ", "\u3164", "\ufe0f", "\u034f", "Yes", "Yes\ufe0f", "yes", "Y es", "x" * 300]
)
# Refused by the checker in names and values, some in titles too: the form is then not shown.
_tricks = st.sampled_from(["\t", "a\nb", "\u200b", "\u202e", "\x1b[2J", "\x1b]8;;https://e\x07x", "\u2028"])
_plain = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp")), max_size=8)
values = st.one_of(_plain, _alike, _alike)
names = st.one_of(
    _plain.filter(str.strip), st.sampled_from(["Yes", "\u3164", "\ufe0f", "__proto__", "a/b~c"])
)
texts = st.one_of(
    _plain, _plain, _alike, st.lists(st.one_of(_plain, _alike, _tricks), max_size=3).map("".join)
)
numbers = st.one_of(st.integers(-(2**60), 2**60), st.floats(), st.sampled_from([-0.0, 5.0, 1e308, 2**53 + 1]))


@st.composite
def prop(draw: st.DrawFn) -> dict[str, Any]:
    shape = draw(
        st.sampled_from(["string", "number", "boolean", "enum", "oneOf", "legacy", "multi", "anyOf"])
    )
    p: dict[str, Any]
    if shape == "string":
        p = {"type": "string"}
        if draw(st.booleans()):
            p["default"] = draw(values)
    elif shape == "number":
        p = {"type": draw(st.sampled_from(["number", "integer"]))}
        for key in ("minimum", "maximum", "default", "exclusiveMinimum", "multipleOf"):
            if draw(st.integers(0, 5)) == 0:
                p[key] = draw(numbers)
        if draw(st.integers(0, 3)) == 0:
            p["enum"] = draw(st.lists(numbers, min_size=1, max_size=4))
    elif shape == "boolean":
        p = {"type": "boolean"}
    elif shape in ("enum", "legacy", "multi"):
        options = draw(st.lists(values, min_size=1, max_size=5))
        p = {"type": "string", "enum": options}
        if shape == "legacy":
            p["enumNames"] = [draw(texts) for _ in options]
        elif shape == "multi":
            p = {"type": "array", "items": p}
    else:
        choices = [{"const": draw(values), "title": draw(texts)} for _ in range(draw(st.integers(1, 5)))]
        p = (
            {"type": "string", "oneOf": choices}
            if shape == "oneOf"
            else {"type": "array", "items": {"anyOf": choices}}
        )
    for key in ("title", "description"):
        if draw(st.integers(0, 2)) == 0:
            p[key] = draw(texts)
    return p


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(names, prop(), min_size=1, max_size=4))
    return {
        "type": "object",
        "properties": props,
        "required": draw(st.lists(st.sampled_from(sorted(props)), unique=True)),
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas())
def test_any_form_is_shown_safely_or_refused_with_reasons(schema: dict[str, Any]) -> None:
    out = io.StringIO()
    console = view.Out(Console(file=out, width=100, color_system=None))
    refused: list[str] | None = None
    try:
        fields = form_fields(schema)
    except FormNotShown as exc:
        refused = exc.problems
    if refused is not None:
        assert refused  # it says why
        for problem in refused:
            view.note(console, problem)
        assert NEVER.search(out.getvalue()) is None
        return
    for number, field in enumerate(fields, 1):
        labels = [choice.label for choice in field.choices]
        assert all(INVISIBLE.sub("", label) for label in labels), labels  # no blank line
        looks = {INVISIBLE.sub("", label).casefold() for label in labels}
        assert len(looks) == len(labels), labels  # no two alike
        view.field_block(console, field, number, len(fields), None)
        value = field.prefill(None)
        view.echo(console, field, value)
        assert NEVER.search(show_value(field, value)) is None
    view.review(console, fields, {f.key: f.prefill(None) for f in fields}, {})
    assert NEVER.search(out.getvalue()) is None, repr(NEVER.search(out.getvalue()))
    # Laid out to the width: the terminal never has to fold a line.
    assert max(cell_len(line) for line in out.getvalue().splitlines()) <= 100
