"""``call --answers``: questions answered from a file are still shown, and URLs checked.

A script decides in advance, but the person running the command answers for what it sends:
each question goes to stderr with who asks and what the script answered, so that a server
cannot get a scripted "accept" for a question nobody saw (the same key asked again with other
words, say). For a URL, the address (its canonical form, the domain, and any warning) is shown
before the scripted answer is sent, and a scripted ``accept`` of an address that must not be
opened becomes a ``decline`` (the spec: show the full URL before consent; never accept what
would not be opened).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from mcp_elicit.client.questions import Answer, Answerer, FormQuestion, ServerIdentity, UrlQuestion
from mcp_elicit.client.text import clean

_SHOWN = 300  # characters of a server's text in one line


@dataclass
class ShowScriptedAnswers:
    """Delegates to a scripted ``inner`` answerer; prints each question and its answer to
    ``out``."""

    inner: Answerer
    allow_loopback_http: bool = False
    out: TextIO | None = None

    @property
    def modes(self) -> frozenset[str]:
        return self.inner.modes

    async def answer_form(self, question: FormQuestion) -> Answer:
        answer = await self.inner.answer_form(question)
        fields = ", ".join(clean(str(name), single_line=True, max_length=80) for name in answer.content or {})
        lines = [
            f"{_asker(question.server)} asks: {clean(question.message, single_line=True, max_length=_SHOWN)}",
            f"  answered from the script: {answer.action}" + (f" ({fields})" if fields else ""),
        ]
        print("\n".join(lines), file=self.out or sys.stderr, flush=True)
        return answer

    async def answer_url(self, question: UrlQuestion) -> Answer:
        from mcp_elicit.client.urls import assess_url

        answer = await self.inner.answer_url(question)
        assessment = assess_url(question.url, allow_loopback_http=self.allow_loopback_http)
        server = question.server
        lines = [
            f"{_asker(server)} asks you to open a page: "
            f"{clean(question.message, single_line=True, max_length=_SHOWN)}",
        ]
        if assessment.href is not None and assessment.verdict != "refuse":
            domain = assessment.registrable_domain or assessment.unicode_host or assessment.host or "?"
            lines.append(f"  address: {assessment.href}")
            lines.append(f"  domain:  {clean(domain, single_line=True, max_length=_SHOWN)}")
        lines += [
            f"  {'refused' if assessment.verdict == 'refuse' else 'warning'}: {r}" for r in assessment.reasons
        ]
        if answer.action == "accept" and assessment.verdict == "refuse":
            answer = Answer("decline")
            lines.append("  the script accepted it, but this address must not be opened: declined")
        else:
            lines.append(f"  answered from the script: {answer.action}")
        print("\n".join(lines), file=self.out or sys.stderr, flush=True)
        return answer


def _asker(server: ServerIdentity) -> str:
    era = f", {server.era}" if server.era else ""
    return (
        f"{clean(server.name, single_line=True, max_length=_SHOWN)} (reached via "
        f"{clean(server.reached_via, single_line=True, max_length=_SHOWN)}{era})"
    )
