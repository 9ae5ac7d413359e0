"""Answering one round of input requests: all of them at once, each checked before it is sent.

Independent questions are put to the answerer concurrently (a UI may show them side by side;
a script answers them in parallel). A form answer is validated against its schema first, with
defaults applied; an invalid one goes back to the answerer as the same question with ``errors``
and ``previous``, up to ``max_attempts`` times -- the server never sees invalid content. A form
the server asks again in the next round of the same call (under the same key: it refused the
answer, say) comes with the answer given last time in ``previous``, so the person starts from it,
not from the defaults. If any request fails, the others are cancelled and the error propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_elicit.client.errors import InvalidAnswerError, TransportError, UndeclaredRequestError
from mcp_elicit.client.inputs import FormInput, InputRequest, RootsInput, SamplingInput, UrlInput
from mcp_elicit.client.providers import RootsProvider, Sampler
from mcp_elicit.client.questions import Answer, Answerer, FormQuestion, ServerIdentity, UrlQuestion
from mcp_elicit.schema.errors import AnswerInvalid
from mcp_elicit.schema.validate import validate_compiled

_ACTIONS = frozenset({"accept", "decline", "cancel"})


class Answering:
    __slots__ = ("_answerer", "_closing", "_max_attempts", "_roots", "_sampler")

    def __init__(
        self,
        answerer: Answerer | None,
        sampler: Sampler | None,
        roots: RootsProvider | None,
        *,
        max_attempts: int,
        closing: asyncio.Event | None = None,
    ) -> None:
        self._answerer = answerer
        self._sampler = sampler
        self._roots = roots
        self._max_attempts = max(1, max_attempts)
        self._closing = closing  # set when the client begins to close: no question is put then

    async def round(
        self,
        requests: Sequence[InputRequest],
        server: ServerIdentity,
        answered: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """``inputResponses`` for every request of one round. ``answered``: the
        ``inputResponses`` of the previous round of the same call, if any (a form asked again
        under the same key is pre-filled with the answer it got then)."""
        answered = answered or {}
        if len(requests) == 1:  # the common case needs no tasks
            request = requests[0]
            return {request.key: await self._one(request, server, answered)}
        tasks = [asyncio.ensure_future(self._one(request, server, answered)) for request in requests]
        try:
            await _all_or_first_error(tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return {request.key: task.result() for request, task in zip(requests, tasks, strict=True)}

    async def _one(
        self, request: InputRequest, server: ServerIdentity, answered: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, Any]:
        if self._closing is not None and self._closing.is_set():
            # The questions of a round (and -32042's URLs) each run in a task of their own, which
            # starts a turn of the loop after the round was taken up: aclose() may have begun
            # meanwhile, and then nobody is asked.
            raise TransportError("the client was closed before the question was put to the person")
        if isinstance(request, FormInput):
            return await self._form(request, server, _content(answered.get(request.key)))
        if isinstance(request, UrlInput):
            return await self._url(request, server)
        if isinstance(request, SamplingInput):
            return await self._sample(request)
        return await self._list_roots(request)

    def _need_answerer(self, key: str, mode: str) -> Answerer:
        if self._answerer is None:
            raise UndeclaredRequestError(key, "elicitation/create", f"elicitation.{mode}")
        return self._answerer

    async def _form(
        self, request: FormInput, server: ServerIdentity, last_round: dict[str, Any] | None
    ) -> dict[str, Any]:
        answerer = self._need_answerer(request.key, "form")
        question = FormQuestion(server, request.key, request.message, request.schema, previous=last_round)
        errors: dict[str, str] = {}
        for _ in range(self._max_attempts):
            answer = _checked(await answerer.answer_form(question))
            if answer.action != "accept":
                return {"action": answer.action}
            content = answer.content if answer.content is not None else {}
            try:
                cleaned = validate_compiled(request.form, content)
            except AnswerInvalid as exc:
                errors = dict(exc.errors)
                previous = dict(content) if isinstance(content, dict) else None
                question = FormQuestion(
                    server, request.key, request.message, request.schema, errors, previous
                )
                continue
            return {"action": "accept", "content": request.form.to_wire(cleaned)}
        raise InvalidAnswerError(request.key, errors, self._max_attempts)

    async def _url(self, request: UrlInput, server: ServerIdentity) -> dict[str, Any]:
        answerer = self._need_answerer(request.key, "url")
        answer = _checked(
            await answerer.answer_url(UrlQuestion(server, request.key, request.message, request.url))
        )
        return {"action": answer.action}  # URL mode never carries content

    async def _sample(self, request: SamplingInput) -> dict[str, Any]:
        if self._sampler is None:
            raise UndeclaredRequestError(request.key, "sampling/createMessage", "the sampling capability")
        result = await self._sampler.create_message(request.params)
        if not isinstance(result, dict):
            raise TypeError(f"the sampler returned {type(result).__name__}, not a CreateMessageResult dict")
        return result

    async def _list_roots(self, request: RootsInput) -> dict[str, Any]:
        if self._roots is None:
            raise UndeclaredRequestError(request.key, "roots/list", "the roots capability")
        return {"roots": [dict(root) for root in await self._roots.list_roots()]}


def _content(response: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The content of an accepted form answer of the previous round (a copy), else ``None``."""
    if response is None or response.get("action") != "accept":
        return None
    content = response.get("content")
    return dict(content) if isinstance(content, dict) else None


def _checked(answer: object) -> Answer:
    if not isinstance(answer, Answer):
        raise TypeError(f"the answerer returned {type(answer).__name__}, not a questions.Answer")
    if answer.action not in _ACTIONS:
        raise ValueError(f"the answerer returned action {answer.action!r}; use accept, decline or cancel")
    return answer


async def _all_or_first_error(tasks: Sequence[asyncio.Future[dict[str, Any]]]) -> None:
    """Wait for every task; raise the first failure as soon as it happens."""
    pending: set[asyncio.Future[dict[str, Any]]] = set(tasks)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
        for task in tasks:
            if task in done and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
