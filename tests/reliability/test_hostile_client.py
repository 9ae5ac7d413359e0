"""Hostile input, client side: our client against a deliberately malicious stdio server.

Runs ``bench/reliability/hostile_client.py`` directly (every case, a few at a time; well under
20 s): no case hangs or crashes, no refused URL is opened, every case ends within its bound, and
everything the answerer was shown is clean after ``mcp_elicit.client.text.clean``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "reliability"))

import hostile_client

from mcp_elicit.client.text import clean


@pytest.fixture(scope="module")
def outcomes() -> dict[str, hostile_client.Outcome]:
    import asyncio

    return {o.case: o for o in asyncio.run(hostile_client.run())}


@pytest.fixture(scope="module")
def summary(outcomes: dict[str, hostile_client.Outcome]) -> dict[str, Any]:
    return hostile_client.summary(list(outcomes.values()))


def test_every_case_ran(outcomes: dict[str, hostile_client.Outcome]) -> None:
    assert set(outcomes) == {c.name for c in hostile_client.cases()}
    assert len(outcomes) >= 40


def test_nothing_hung_or_crashed(summary: dict[str, Any]) -> None:
    assert summary["hung"] == 0, summary["cases"]
    assert summary["crashed"] == 0, summary["cases"]


def test_every_case_within_its_bound(outcomes: dict[str, hostile_client.Outcome]) -> None:
    late = {name: (o.seconds, o.bound) for name, o in outcomes.items() if o.seconds > o.bound}
    assert not late


def test_no_refused_url_opened(outcomes: dict[str, hostile_client.Outcome]) -> None:
    assert all(not o.refused_opened for o in outcomes.values())
    # open_in_browser itself turned every refused URL down, before looking for a browser
    assert all(not o.library_would_open for o in outcomes.values())
    for i, url in enumerate(hostile_client.REFUSED_URLS):
        case = outcomes[f"url-{i}"]
        assert case.opened == [], (url, case.opened)
        assert case.catalogue_not_refused == [], url
    # the opener is reached at all: the one acceptable URL was "opened" (into a list)
    assert outcomes["url-good"].opened == [hostile_client.GOOD_URL]


def test_answerer_saw_hostile_text_and_cleaned_it(outcomes: dict[str, hostile_client.Outcome]) -> None:
    for name in ("escapes-form", "escapes-url", "url-0", "url-good"):
        case = outcomes[name]
        assert case.hostile_raw > 0, f"{name}: the raw strings were not hostile; the test proves nothing"
    assert all(not o.dirty_after_clean for o in outcomes.values())
    assert hostile_client.dangerous(hostile_client.EVIL)
    assert not hostile_client.dangerous(clean(hostile_client.EVIL, single_line=True))


def test_expected_outcomes(outcomes: dict[str, hostile_client.Outcome]) -> None:
    wrong = {
        name: (o.outcome, o.expect, o.error)
        for name, o in outcomes.items()
        if not o.as_expected and name not in hostile_client.KNOWN_BUGS
    }
    assert not wrong


def test_no_server_left_running(summary: dict[str, Any]) -> None:
    assert summary["servers_left_running"] == 0


def test_discover_never_answered_gives_a_typed_error(outcomes: dict[str, hostile_client.Outcome]) -> None:
    assert outcomes["discover-never-answers"].outcome == "stopped at limit"
