"""AutoDecline: declares what it is told, declines everything, silently or with a notice."""

from __future__ import annotations

import pytest

from mcp_elicit.client.answerers import AutoDecline
from mcp_elicit.client.questions import Answer, Answerer, FormQuestion, UrlQuestion

from ._harness import form, url_question

SCHEMA = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}


async def test_declines_forms_and_urls() -> None:
    auto = AutoDecline()
    assert isinstance(auto, Answerer)
    assert auto.modes == frozenset({"form", "url"})
    assert await auto.answer_form(form(SCHEMA)) == Answer("decline")
    assert await auto.answer_url(url_question("javascript:alert(1)")) == Answer("decline")


def test_modes_are_configurable() -> None:
    assert AutoDecline(modes=()).modes == frozenset()
    assert AutoDecline(modes={"form"}).modes == frozenset({"form"})
    with pytest.raises(ValueError, match="unknown elicitation modes"):
        AutoDecline(modes={"sampling"})


async def test_notify_sees_each_question() -> None:
    seen: list[FormQuestion | UrlQuestion] = []
    auto = AutoDecline(notify=seen.append)
    question = form(SCHEMA, key="k")
    await auto.answer_form(question)
    assert seen == [question]
