"""An answerer wrapper that remembers what the person decided, for the CLI's exit code."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_elicit.client.questions import Answer, Answerer, FormQuestion, UrlQuestion


@dataclass
class Recording:
    """Delegates to ``inner`` and keeps the questions that were declined or cancelled."""

    inner: Answerer
    refused: list[tuple[str, str]] = field(default_factory=list)  # (action, message)

    @property
    def modes(self) -> frozenset[str]:
        return self.inner.modes

    async def answer_form(self, question: FormQuestion) -> Answer:
        return self._note(question.message, await self.inner.answer_form(question))

    async def answer_url(self, question: UrlQuestion) -> Answer:
        return self._note(question.message, await self.inner.answer_url(question))

    def _note(self, message: str, answer: Answer) -> Answer:
        if answer.action != "accept":
            self.refused.append((answer.action, message))
        return answer
