"""Hostile input, client side: a malicious stdio server, and our client driven against it.

    python bench/reliability/hostile_client.py              # every case, prints one line per case
    python bench/reliability/hostile_client.py --serve CASE # the malicious server (stdio), one case

The server speaks raw JSON-RPC lines (no library code) and answers ``server/discover`` and
``tools/call`` (any tool) with the behaviour its case names: schemas outside the elicitation subset,
enormous schemas and messages, URLs from the attack catalogue (docs/security.md 5.7), escape
sequences and bidi characters in every string a person would read, endless ``input_required``
rounds (with questions, or state-only), answers that never come or come too slowly, truncated
lines, stdout closed, a line that is not JSON and a line over the client's size limit.

:func:`run` drives ``mcp_elicit.client.Client`` against every case (a few at a time, each its own
server process) with small limits and a :class:`RecordingAnswerer` that cleans everything it is
shown with :func:`mcp_elicit.client.text.clean`, checks the cleaned text, assesses every URL with
``assess_url`` and "opens" (into a list, never a browser) only the URLs not refused. Each case
ends as ``refused`` (a typed ``ProtocolViolation``), ``stopped at limit`` (round, time or request
limit), ``transport error`` (a typed ``TransportError``), ``cleaned`` / ``completed``, ``crashed``
(any exception that is not a ``ClientError``) or ``hung`` (past the case's bound). Only 127.0.0.1
is ever involved (pipes, in fact); every server process is stopped by its id.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

SELF = os.path.abspath(__file__)

# -------------------------------------------------------------------------------------------------
# The catalogue (shared by the server and the driver; standard library only above this point).

#: Every one of these must be refused by ``assess_url`` (docs/security.md 5.7).
REFUSED_URLS: tuple[str, ...] = (
    "javascript:alert(1)",
    "JaVaScRiPt:alert(document.cookie)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "vbscript:msgbox(1)",
    "https://paypal.com@evil.example/",
    "https://user:pass@example.com/",
    "https://good.example\\@evil.example/",
    "https:\\\\evil.example",
    "https://2130706433/",
    "https://0x7f.1/",
    "https://[::1]/",
    "https://10.0.0.1/",
    "https://xn--example-.com/",
    "-https://example.com/",
    "https://printer.local/",
)
#: A URL that must not be refused: proves the recording opener is reached at all.
GOOD_URL = "https://example.com/sign-in?flow=42"

# Escape sequences, C1 controls, bidi overrides/isolates, zero-width characters, OSC 8 and OSC 52.
EVIL = (
    "\x1b[2J\x1b[1A\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
    "\x1b]52;c;ZXZpbA==\x07\x9b31m\x9d0;t\x9c\u202egnp.exe\u202c\u2066x\u2069\u200b\u200d\ufeff"
    "\u2060good\rhttps://evil.example\x08\x07\x7f"
)


def hostile(text: str) -> str:
    return f"{EVIL}{text}{EVIL}"


FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
OUT_OF_SUBSET: dict[str, dict[str, object]] = {
    "schema-nested-object": {
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    },
    "schema-pattern": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}},
    "schema-ref": {
        "type": "object",
        "properties": {"who": {"$ref": "#/$defs/person"}},
        "$defs": {"person": {"type": "string"}},
    },
    "schema-numeric-enum": {"type": "object", "properties": {"n": {"type": "number", "enum": [1, 2, 3]}}},
    "schema-array-of-objects": {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {}}}},
    },
    "schema-not-object": {"type": "array", "items": {"type": "string"}},
    "schema-5000-properties": {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "title": f"field {i}"} for i in range(5000)},
    },
    "schema-5mb-description": {
        "type": "object",
        "properties": {"a": {"type": "string", "description": "D" * (5 * 1024 * 1024)}},
    },
}


#: Of OUT_OF_SUBSET, what the client's tolerant reading accepts (compile_schema(tolerant=True)):
#: the pattern is left to the server (never run), the numeric enum is a choice.
READ_TOLERANTLY = frozenset({"schema-pattern", "schema-numeric-enum"})


CLEAN_CHOICES = {
    "type": "object",
    "properties": {
        "plan": {"type": "string", "title": "Plan", "oneOf": [{"const": "free", "title": "Free"}]},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Option A", "Option B"]},
    },
}


def _escapes_schema() -> dict[str, object]:
    return {
        "type": "object",
        "title": hostile("form title"),
        "description": hostile("form description"),
        "properties": {
            "name": {"type": "string", "title": hostile("Name"), "description": hostile("your name")},
            "plan": {
                "type": "string",
                "title": hostile("Plan"),
                "oneOf": [
                    {"const": "free", "title": hostile("Free")},
                    {"const": "pro", "title": hostile("Pro")},
                ],
            },
            "legacy": {
                "type": "string",
                "enum": ["a", "b"],
                "enumNames": [hostile("Option A"), hostile("Option B")],
            },
            "tags": {
                "type": "array",
                "title": hostile("Tags"),
                "items": {"anyOf": [{"const": "x", "title": hostile("Tag X")}]},
            },
            "agree": {"type": "boolean", "title": hostile("Agree"), "default": False},
        },
    }


# -------------------------------------------------------------------------------------------------
# The server.


def _elicit(key: str, params: dict[str, object]) -> dict[str, object]:
    return {key: {"method": "elicitation/create", "params": params}}


def _form(key: str, schema: object, message: str = "Please answer") -> dict[str, object]:
    return _elicit(key, {"mode": "form", "message": message, "requestedSchema": schema})


def _url(key: str, url: str, message: str = "Sign in") -> dict[str, object]:
    return _elicit(key, {"mode": "url", "message": message, "url": url, "elicitationId": f"id-{key}"})


def _input_required(requests: object = None, state: str | None = None) -> dict[str, object]:
    result: dict[str, object] = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


def _done(text: str) -> dict[str, object]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


def _tool_call(case: str, params: dict[str, object], rounds: int) -> dict[str, object] | str:
    """The result for one ``tools/call`` round; a str means a raw behaviour (see serve)."""
    answered = params.get("inputResponses") is not None or params.get("requestState") is not None
    if case in OUT_OF_SUBSET:
        return _input_required(_form("q", OUT_OF_SUBSET[case]))
    if case == "message-5mb":
        return _done("answered") if answered else _input_required(_form("q", FORM, "M" * (5 * 1024 * 1024)))
    if case == "too-many-requests":
        many: dict[str, object] = {}
        for i in range(101):
            many.update(_form(f"q{i}", FORM))
        return _input_required(many)
    if case.startswith("url-"):
        index = case.removeprefix("url-")
        url = GOOD_URL if index == "good" else REFUSED_URLS[int(index)]
        return _done("answered") if answered else _input_required(_url("u", url, hostile("Sign in")))
    if case == "escapes-schema-strings":
        return _input_required(_form("q", _escapes_schema(), hostile("Confirm the transfer")))
    if case == "invisible-schema-strings":  # bidi and zero-width only: no C0/C1 control at all
        sneaky = {
            "type": "object",
            "properties": {"ok": {"type": "boolean", "title": "\u202eOK\u200b\u2066"}},
        }
        return _input_required(_form("q", sneaky))
    if case == "escapes-form":  # the schema is clean; the message and the server's name are not
        if answered:
            return _done(hostile("done"))
        return _input_required(_form("q", CLEAN_CHOICES, hostile("Confirm the transfer")))
    if case == "escapes-url":
        url = "https://example.com/files/\u202egnp.exe"
        return _done("answered") if answered else _input_required(_url("u", url, hostile("Download")))
    if case == "endless-input-required":
        return _input_required(_form("q", FORM, f"round {rounds}"), state=f"s{rounds}")
    if case == "endless-state-only":
        return _input_required(None, state=f"s{rounds}")
    if case == "slow-drip":
        time.sleep(0.4)
        return _input_required(None, state=f"s{rounds}")
    if case in (
        "never-answers",
        "truncated-then-exit",
        "truncated-stdout-closed",
        "non-json-only",
        "huge-line",
    ):
        return case
    if case == "non-json-then-answer":
        return "non-json-then-answer"
    return _done("plain")


def _discover(case: str) -> dict[str, object]:
    name = hostile("Totally Legit Bank") if case.startswith("escapes") else "hostile-client-server"
    info: dict[str, object] = {"name": name, "version": "6.6.6"}
    if case.startswith("escapes"):
        info["title"] = hostile("Bank of Examp1e")
    return {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "ttlMs": 0,
        "_meta": {"io.modelcontextprotocol/serverInfo": info},
    }


def serve(case: str) -> None:
    """Read JSON-RPC lines on stdin, misbehave on stdout as ``case`` says."""
    out = sys.stdout.buffer
    rounds = 0

    def send(obj: object) -> None:
        out.write(json.dumps(obj).encode() + b"\n")
        out.flush()

    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message:
            continue  # notifications (cancellations) need no answer
        request_id = message["id"]
        method = message.get("method")
        if method == "server/discover":
            if case == "discover-never-answers":
                continue
            send({"jsonrpc": "2.0", "id": request_id, "result": _discover(case)})
            continue
        if method != "tools/call":
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}})
            continue
        rounds += 1
        result = _tool_call(case, message.get("params") or {}, rounds)
        if not isinstance(result, str):
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
            continue
        full = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": _done("x")}).encode()
        if result == "never-answers":
            continue
        if result in ("truncated-then-exit", "truncated-stdout-closed"):
            out.write(full[: len(full) // 2])
            out.flush()
            if result == "truncated-then-exit":
                os._exit(3)
            os.close(1)
            sys.stdout = sys.__stderr__  # never write to the closed descriptor again
            time.sleep(60)  # alive, with stdout closed: the client must stop this process itself
            os._exit(0)
        if result == "non-json-only":
            out.write(b"this is not JSON \x1b[2J\n")
            out.flush()
            continue
        if result == "non-json-then-answer":
            out.write(b"<html>oops</html>\n{not json either\n")
            send({"jsonrpc": "2.0", "id": request_id, "result": _done("after garbage")})
            continue
        if result == "huge-line":  # over the client's 16 MiB message limit
            out.write(b'{"jsonrpc": "2.0", "id": ' + str(request_id).encode() + b', "result": "')
            out.write(b"A" * (17 * 1024 * 1024) + b'"}\n')
            out.flush()
            continue


# -------------------------------------------------------------------------------------------------
# The driver (imports the client only here, so that --serve stays light).

if __name__ != "__main__" or "--serve" not in sys.argv:
    import asyncio
    import re
    import unicodedata
    from dataclasses import dataclass, field
    from typing import Any

    from mcp_elicit.client import (
        Answer,
        Backoff,
        Client,
        ClientError,
        FormQuestion,
        ProtocolViolation,
        RequestTimeoutError,
        RoundLimitError,
        TimeLimitError,
        TransportError,
        UrlQuestion,
        assess_url,
        open_in_browser,
    )
    from mcp_elicit.client.stdio import StdioTransport
    from mcp_elicit.client.text import clean

    # What must not survive clean(): ESC, C0 but tab/newline, DEL, C1, format characters (Cf:
    # bidi, zero-width, BOM), line/paragraph separators.
    _BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")

    def dangerous(s: str) -> bool:
        return bool(_BAD.search(s)) or any(unicodedata.category(ch) == "Cf" for ch in s if ord(ch) > 0x7F)

    def _library_would_open(assessment: Any) -> bool:
        import webbrowser

        reached: list[bool] = []

        def trap(using: str | None = None) -> webbrowser.BaseBrowser:
            reached.append(True)
            raise webbrowser.Error("hostile_client: no browser here")

        real, webbrowser.get = webbrowser.get, trap
        try:
            result = open_in_browser(assessment)
        finally:
            webbrowser.get = real
        return bool(reached or result.opened or result.print_url)

    @dataclass
    class Opened:
        url: str
        href: str | None
        verdict: str

    @dataclass
    class RecordingAnswerer:
        """Shows nothing, records everything; cleans what it is shown, checks URLs before "opening"."""

        modes: frozenset[str] = frozenset({"form", "url"})
        shown: int = 0
        hostile_raw: int = 0  # strings that reached us with something to clean
        dirty_after_clean: list[str] = field(default_factory=list)
        opened: list[Opened] = field(default_factory=list)
        refused_urls: list[str] = field(default_factory=list)
        longest_shown: int = 0
        library_would_open: list[str] = field(default_factory=list)

        def _look(self, s: object) -> None:
            if not isinstance(s, str):
                return
            self.shown += 1
            self.longest_shown = max(self.longest_shown, len(s))
            if dangerous(s):
                self.hostile_raw += 1
            cleaned = clean(s, single_line=True)
            if dangerous(cleaned):
                self.dirty_after_clean.append(repr(cleaned[:80]))

        def _walk(self, value: object) -> None:
            if isinstance(value, dict):
                for key, item in value.items():
                    self._look(key)
                    self._walk(item)
            elif isinstance(value, list):
                for item in value:
                    self._walk(item)
            else:
                self._look(value)

        def _server(self, question: FormQuestion | UrlQuestion) -> None:
            for s in (question.server.name, question.server.title, question.server.version):
                self._look(s)

        async def answer_form(self, question: FormQuestion) -> Answer:
            self._server(question)
            self._look(question.message)
            self._walk(question.schema)
            return Answer("decline")

        async def answer_url(self, question: UrlQuestion) -> Answer:
            self._server(question)
            self._look(question.message)
            assessment = assess_url(question.url)
            self._look(assessment.href or "")
            if assessment.verdict == "refuse":
                self.refused_urls.append(question.url)
                # Defence in depth: even a UI that asked anyway must be turned down by
                # open_in_browser, before any browser lookup (webbrowser.get is a trap here).
                if _library_would_open(assessment):
                    self.library_would_open.append(question.url)
                return Answer("decline")
            self.opened.append(Opened(question.url, assessment.href, assessment.verdict))  # the "browser"
            return Answer("accept")

    #: Cases that show a client bug already reported (src/ is not ours to fix here). Such a case is
    #: counted apart ("known bug") instead of as a crash; tests/reliability/test_hostile_client.py
    #: has a strict xfail for each, which starts failing the day the bug is fixed.
    KNOWN_BUGS: dict[str, str] = {}  # none open (discover-never-answers was fixed in Client.start)

    @dataclass(frozen=True)
    class Case:
        name: str
        expect: str  # the outcome the client should reach ("a or b": either)
        limits: dict[str, Any] = field(default_factory=dict)
        bound: float = 6.0  # the case must end within this many seconds

    LIMITS: dict[str, Any] = {
        "max_rounds": 5,
        "max_total_seconds": 4.0,
        "request_timeout": 2.0,
        "connect_timeout": 3.0,
        "backoff": Backoff(initial=0.01, cap=0.05, url_cap=0.05),
    }

    def cases(quick: bool = True) -> list[Case]:
        # Forms beyond the subset that the client reads tolerantly (what the official SDK sends) are
        # shown, declined, and asked again by this server until the round limit.
        out = [
            Case(name, "stopped at limit" if name in READ_TOLERANTLY else "refused") for name in OUT_OF_SUBSET
        ]
        out.append(Case("too-many-requests", "refused"))
        out.append(Case("message-5mb", "completed", bound=10.0))
        out += [Case(f"url-{i}", "cleaned") for i in range(len(REFUSED_URLS))]
        out.append(Case("url-good", "cleaned"))
        out.append(Case("escapes-schema-strings", "refused"))
        out.append(Case("invisible-schema-strings", "refused"))
        out.append(Case("escapes-form", "cleaned"))
        out.append(Case("escapes-url", "cleaned"))
        out.append(Case("endless-input-required", "stopped at limit"))
        out.append(Case("endless-state-only", "stopped at limit"))
        out.append(Case("slow-drip", "stopped at limit", {"max_rounds": 50, "max_total_seconds": 1.5}))
        out.append(Case("never-answers", "stopped at limit", {"request_timeout": 1.0}))
        out.append(Case("discover-never-answers", "stopped at limit", {"connect_timeout": 1.0}))
        out.append(Case("non-json-only", "stopped at limit", {"request_timeout": 1.0}))
        out.append(Case("non-json-then-answer", "completed"))
        out.append(Case("truncated-then-exit", "transport error"))
        # With the default loop the client sees EOF and ends with ServerExitedError (after its 1 s
        # wait for an exit code). Under uvloop (run.py uses it) the child inherits a duplicate of
        # its stdout socket, so no EOF ever comes: the client must then stop at max_total_seconds.
        out.append(
            Case(
                "truncated-stdout-closed",
                "transport error or stopped at limit",
                {"request_timeout": 5.0},
                bound=10.0,
            )
        )
        out.append(Case("huge-line", "refused", bound=10.0))
        return out

    @dataclass
    class Outcome:
        case: str
        expect: str
        outcome: str = ""
        error: str = ""
        seconds: float = 0.0
        bound: float = 0.0
        shown: int = 0
        hostile_raw: int = 0
        dirty_after_clean: list[str] = field(default_factory=list)
        opened: list[str] = field(default_factory=list)
        refused_opened: list[str] = field(default_factory=list)
        catalogue_not_refused: list[str] = field(default_factory=list)
        server_left_running: bool = False
        longest_shown: int = 0
        library_would_open: list[str] = field(default_factory=list)

        @property
        def as_expected(self) -> bool:
            return self.outcome in self.expect.split(" or ")

    def _classify(exc: BaseException) -> str:
        if isinstance(exc, RoundLimitError | TimeLimitError | RequestTimeoutError):
            return "stopped at limit"
        if isinstance(exc, ProtocolViolation):
            return "refused"
        if isinstance(exc, TransportError):
            return "transport error"
        if isinstance(exc, ClientError):
            return "refused (other client error)"
        return "crashed"

    def _alive(pid: int | None) -> bool:
        if pid is None:
            return False
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    async def run_case(case: Case) -> Outcome:
        result = Outcome(case.name, case.expect, bound=case.bound)
        answerer = RecordingAnswerer()
        limits = {**LIMITS, **case.limits}
        argv = [sys.executable, SELF, "--serve", case.name]
        transport = StdioTransport(argv, display=f"hostile_client.py --serve {case.name}", stderr="devnull")
        client = Client(transport, answerer=answerer, **limits)
        pid: int | None = None
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(case.bound):
                try:
                    await client.start()
                    await client.call_tool("go", {})
                    result.outcome = "cleaned" if answerer.hostile_raw else "completed"
                except Exception as exc:  # classified below: a ClientError, or a crash
                    result.outcome = _classify(exc)
                    result.error = f"{type(exc).__name__}: {str(exc)[:160]}"
                finally:
                    pid = pid or transport.pid
                    await client.aclose()
        except TimeoutError:
            result.outcome = "hung"
            result.error = f"no outcome within {case.bound:g} s"
        result.seconds = round(time.perf_counter() - t0, 2)
        if (answerer.opened or answerer.refused_urls) and result.outcome == "completed":
            result.outcome = "cleaned"  # a URL case: the URL was refused (or, the good one, opened)
        result.shown = answerer.shown
        result.hostile_raw = answerer.hostile_raw
        result.longest_shown = answerer.longest_shown
        result.dirty_after_clean = answerer.dirty_after_clean
        result.opened = [o.url for o in answerer.opened]
        result.library_would_open = answerer.library_would_open
        result.refused_opened = [o.url for o in answerer.opened if assess_url(o.url).verdict == "refuse"]
        if case.name.startswith("url-") and case.name != "url-good":
            url = REFUSED_URLS[int(case.name.removeprefix("url-"))]
            if assess_url(url).verdict != "refuse":
                result.catalogue_not_refused.append(url)
        if _alive(pid):
            result.server_left_running = True
            assert pid is not None
            with contextlib.suppress(OSError):
                os.kill(pid, 9)  # our own child, by its id
        return result

    async def run(quick: bool = True, concurrency: int = 6) -> list[Outcome]:
        gate = asyncio.Semaphore(concurrency)

        async def one(case: Case) -> Outcome:
            async with gate:
                return await run_case(case)

        return list(await asyncio.gather(*(one(c) for c in cases(quick))))

    def summary(outcomes: list[Outcome]) -> dict[str, Any]:
        return {
            "tried": len(outcomes),
            "refused_or_cleaned": sum(
                o.outcome in ("refused", "cleaned", "stopped at limit", "transport error", "completed")
                for o in outcomes
            ),
            "hung": sum(o.outcome == "hung" for o in outcomes),
            "crashed": sum(o.outcome == "crashed" and o.case not in KNOWN_BUGS for o in outcomes),
            "known_bugs": [o.case for o in outcomes if o.outcome == "crashed" and o.case in KNOWN_BUGS],
            "refused_urls_opened": sum(len(o.refused_opened) + len(o.library_would_open) for o in outcomes),
            "dirty_after_clean": sum(len(o.dirty_after_clean) for o in outcomes),
            "over_bound": sum(o.seconds > o.bound for o in outcomes),
            "unexpected": [
                f"{o.case}: {o.outcome} (expected {o.expect})" for o in outcomes if not o.as_expected
            ],
            "catalogue_not_refused": [u for o in outcomes for u in o.catalogue_not_refused],
            "servers_left_running": sum(o.server_left_running for o in outcomes),
            "max_seconds": max((o.seconds for o in outcomes), default=0.0),
            "longest_string_shown": max((o.longest_shown for o in outcomes), default=0),
            "cases": [
                {
                    "case": o.case,
                    "outcome": o.outcome,
                    "seconds": o.seconds,
                    "error": o.error,
                    "hostile_strings": o.hostile_raw,
                    "opened": o.opened,
                }
                for o in outcomes
            ],
        }

    def rows(s: dict[str, Any]) -> list[tuple[str, str]]:
        """Rows for the reliability table."""
        out = [
            (
                "hostile client cases tried / refused or cleaned / hung / crashed / refused URLs opened",
                f"{s['tried']} / {s['refused_or_cleaned']} / {s['hung']} / {s['crashed']} / "
                f"{s['refused_urls_opened']}",
            ),
            (
                "  client: dirty after clean / over bound / servers left running / slowest case",
                f"{s['dirty_after_clean']} / {s['over_bound']} / {s['servers_left_running']} / "
                f"{s['max_seconds']} s",
            ),
            ("  client: longest server string handed to the answerer", f"{s['longest_string_shown']} chars"),
        ]
        out += [("  client KNOWN BUG (untyped error)", f"{c}: {KNOWN_BUGS[c]}") for c in s["known_bugs"]]
        out += [("  client UNEXPECTED", u) for u in s["unexpected"] if u.split(":")[0] not in s["known_bugs"]]
        out += [("  client CATALOGUE URL NOT REFUSED", repr(u)) for u in s["catalogue_not_refused"]]
        return out

    def ok(s: dict[str, Any]) -> bool:
        return bool(
            s["hung"] == 0
            and s["crashed"] == 0
            and s["refused_urls_opened"] == 0
            and s["over_bound"] == 0
            and s["dirty_after_clean"] == 0
            and s["servers_left_running"] == 0
        )

    def main() -> int:
        os.environ.setdefault("CI", "1")  # belt and braces: nothing here opens a browser anyway
        outcomes = asyncio.run(run())
        for o in outcomes:
            print(f"{o.case:28} {o.outcome:18} {o.seconds:6.2f} s  {o.error[:90]}")
        s = summary(outcomes)
        for name, value in rows(s):
            print(f"{name}  {value}")
        return 0 if ok(s) else 1


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve(sys.argv[sys.argv.index("--serve") + 1])
    else:
        sys.exit(main())
