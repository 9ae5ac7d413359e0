"""``-32042`` (URLElicitationRequiredError, 2025-11-25): open these URLs first, then retry.

The server failed the request instead of asking mid-call; ``data.elicitations`` lists the URL
questions (each with its ``elicitationId``). Each is checked like any URL question and put to the
answerer, which shows the full address and opens it only after consent. The request is retried
(once, by the caller) when the person accepted every one of them -- an answerer's ``accept`` of
a URL comes when they are done in the browser -- or as soon as the server reports every flow
complete (``notifications/elicitation/complete``), whichever comes first. A decline or cancel
of any of them means no retry.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcp_elicit.client.answering import Answering
from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import MalformedMessageError, UrlElicitationRequiredError
from mcp_elicit.client.inputs import MAX_INPUT_REQUESTS, UrlInput, parse_elicitation
from mcp_elicit.client.questions import ServerIdentity
from mcp_elicit.client.server_requests import ServerRequestHandler
from mcp_elicit.client.timers import PausableTimers


def url_questions(error: UrlElicitationRequiredError, declared: Declared) -> list[UrlInput]:
    """The error's entries as checked URL questions (a URL mode this client did not declare is
    an :class:`~mcp_elicit.client.errors.UndeclaredRequestError`)."""
    entries = error.elicitations
    if not entries:
        raise MalformedMessageError("a -32042 error must list its URL elicitations in data.elicitations")
    if len(entries) > MAX_INPUT_REQUESTS:
        raise MalformedMessageError(f"a -32042 error lists more than {MAX_INPUT_REQUESTS} URLs")
    questions: list[UrlInput] = []
    for number, entry in enumerate(entries):
        if entry.get("mode") != "url":
            raise MalformedMessageError("every entry of a -32042 error must be a URL elicitation")
        question = parse_elicitation(f"url-{number}", entry, declared, legacy=True)
        assert isinstance(question, UrlInput)
        questions.append(question)
    return questions


async def open_urls(
    questions: list[UrlInput],
    answering: Answering,
    handler: ServerRequestHandler,
    server: ServerIdentity,
    timers: PausableTimers,
) -> bool:
    """Ask about every URL; True when the request should be retried."""
    events = [handler.watch(question) for question in questions]
    asking = asyncio.ensure_future(answering.round(questions, server))
    completed = asyncio.ensure_future(_all_set(events))
    timers.pause()
    try:
        await asyncio.wait({asking, completed}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        timers.resume()
        tasks: tuple[asyncio.Future[Any], ...] = (asking, completed)
        for task in tasks:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    if completed.done() and not completed.cancelled():
        return True  # the server says every flow is done
    answers = asking.result()  # a failure to ask raises here
    return all(answer.get("action") == "accept" for answer in answers.values())


async def _all_set(events: list[asyncio.Event]) -> None:
    for event in events:
        await event.wait()
