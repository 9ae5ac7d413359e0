"""Programs that are no MCP server, spawned over stdio: connecting ends with
:class:`NotMcpServerError` naming the first line they wrote, as soon as that is known (they
exit, or write many such lines), or at ``connect_timeout``; never a warning per line for ever,
nor the program started again for the other protocol era. And what an error quotes of an HTTP
body that is no JSON-RPC (:func:`body_excerpt`)."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import pytest

from mcp_elicit.client import Client, NotMcpServerError, RequestTimeoutError
from mcp_elicit.client.reply_text import body_excerpt


def script(tmp_path: Path, code: str) -> list[str]:
    path = tmp_path / "program.py"
    path.write_text(code)
    return [sys.executable, str(path)]


async def test_a_program_that_prints_text_and_exits_is_named_and_not_started_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runs = tmp_path / "runs.txt"
    argv = script(tmp_path, f"open({str(runs)!r}, 'a').write('ran\\n')\nprint('usage: program FILE')\n")
    with pytest.raises(NotMcpServerError) as caught:
        await Client.connect(argv, stderr="devnull", connect_timeout=20)
    assert caught.value.first_line == b"usage: program FILE\n"
    assert str(caught.value).endswith(
        "is not an MCP server: its output is not JSON-RPC (first line: 'usage: program FILE'); "
        "then it exited (exit code 0)"
    )
    assert runs.read_text() == "ran\n"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # said once, in the error


async def test_a_flood_of_lines_ends_connecting_long_before_the_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(NotMcpServerError, match=r"first line: 'y'\); it wrote 20 such lines and no message"):
        await Client.connect(["yes"], stderr="devnull", connect_timeout=30)
    assert time.monotonic() - started < 10


async def test_a_program_that_wrote_text_then_went_quiet_is_named_at_the_connect_timeout(
    tmp_path: Path,
) -> None:
    argv = script(tmp_path, "import time\nprint('Listening...', flush=True)\ntime.sleep(60)\n")
    with pytest.raises(
        NotMcpServerError, match=r"'Listening\.\.\.'\); no answer within 3 s \(connect_timeout\)"
    ):
        # 3 s: a loaded machine starts Python and prints the line well within it.
        await Client.connect(argv, stderr="devnull", connect_timeout=3)


async def test_a_program_that_wrote_nothing_is_still_a_timeout(tmp_path: Path) -> None:
    argv = script(tmp_path, "import time\ntime.sleep(60)\n")
    with pytest.raises(RequestTimeoutError, match=r"no answer within 1 s \(connect_timeout\)"):
        await Client.connect(argv, stderr="devnull", connect_timeout=1)


async def test_a_banner_before_the_first_message_is_noise_warned_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = Path(__file__).with_name("tiny_server.py")
    banner = "import sys\nfor n in range(5): print(f'banner {n}')\nsys.stdout.flush()\n"
    argv = script(tmp_path, f"{banner}sys.argv[0] = {str(server)!r}\nexec(open({str(server)!r}).read())\n")
    async with await Client.connect(argv, stderr="devnull") as client:
        assert (await client.call_tool("a")).text == "ran a"
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [
        "ignoring 5 line(s) on the server's stdout before its first message, which are not JSON-RPC "
        "(the first: b'banner 0\\n')"
    ]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            b'<!DOCTYPE HTML>\n<html lang="en"><head><title>Error response</title>'
            b"<style>body { color: red }</style></head>\n<body><h1>Error response</h1>\n"
            b"<p>Error code: 501</p><script>var x = 1;</script></body></html>\n",
            "an HTML page: Error response Error code: 501",
        ),
        (b"<html><head><title>Bad &amp; gone</title></head><body></body></html>", "an HTML page: Bad & gone"),
        (b"  <html>", "an HTML page"),
        (b"upstream connect error\r\n\x1b[31m", "upstream connect error"),
        (b"", "(empty body)"),
    ],
)
def test_a_body_is_quoted_by_what_a_person_would_read(body: bytes, said: str) -> None:
    assert body_excerpt(body) == said


def test_a_long_html_page_is_quoted_briefly() -> None:
    page = b"<!doctype html><html><body>" + b"<p>word</p>" * 10_000 + b"</body></html>"
    excerpt = body_excerpt(page)
    assert excerpt.startswith("an HTML page: word word")
    assert len(excerpt) == 200
