"""Make the pictures of the README and the server guide from the real program, never by hand.

    .venv/bin/python scripts/pictures.py              # all three, into docs/images/
    .venv/bin/python scripts/pictures.py --out DIR    # somewhere else

* ``terminal-form.svg``: ``mcp-elicit call`` on the README's first server. The server is the
  README's first ``python`` block, saved as ``server.py`` and spawned as ``python server.py``; the
  call is the README's first ``bash`` block; the question is answered by the real
  ``TerminalAnswerer`` (keys typed through prompt_toolkit's pipe input) with a recording rich
  console, exported with rich's SVG export. Its input widgets erase themselves once answered and
  the answerer echoes each answer through rich, so the SVG is the terminal as it stands once the
  answer is sent, with the tool's text last (what the command prints on stdout).
* ``guide-form.svg``: the same for the first form of docs/server-guide.md (every kind of field),
  its first block saved as ``server.py`` with ``app.run()`` added, as the guide says to run it.
* ``connect-page.png``: the confirmation page of the URL-mode kit, as Debian's Chromium shows it
  (Playwright, ``/usr/bin/chromium``, nothing downloaded): the bundled demo
  (``python -m mcp_elicit.demo``, 127.0.0.1 only) is started, its ``file_issue`` tool called
  with our client, its two forms answered as ``mcp-elicit demo --script`` answers them, and the
  link opened in the browser, signed in (DEMO ONLY) and photographed; then Decline.

tests/docs/test_pictures.py runs these functions into a temporary folder and checks what they
make (the text in the SVGs, the PNG's size and the page's text), never pixels.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
IMAGES = REPO / "docs" / "images"
CHROMIUM = "/usr/bin/chromium"
# The browser stays offline: only loopback resolves (as in tests/browser_support.py).
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"

# Keys as a terminal sends them.
ENTER = "\r"
DOWN = "\x1b[B"
SPACE = " "


@dataclass(frozen=True)
class TerminalPicture:
    """One ``mcp-elicit call`` answered at the terminal: the server file comes from ``markdown``'s
    first ``python`` block (plus ``append``), the command line is ``command``, and ``keys`` are
    what the person types."""

    markdown: str
    command: str
    keys: str
    append: str = ""
    width: int = 80


def code_blocks(markdown: Path, language: str) -> list[str]:
    """The fenced blocks of ``markdown`` tagged ``language``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", markdown.read_text(), flags=re.DOTALL | re.MULTILINE)


def readme_picture() -> TerminalPicture:
    command = code_blocks(REPO / "README.md", "bash")[0].strip()
    # Enter: fill in the form; the date; Enter keeps the default nights, Enter the default
    # cabin; s sends.
    return TerminalPicture("README.md", command, ENTER + "2027-07-01" + ENTER + ENTER + ENTER + "s")


def guide_picture() -> TerminalPicture:
    keys = "".join(
        (
            ENTER,  # fill in the form
            "ada@example.com" + ENTER,  # e-mail
            DOWN + ENTER,  # priority: from the default (Normal) one down to High
            SPACE + DOWN + SPACE + ENTER,  # labels: tick bug and ux
            "2027-01-15" + ENTER,  # due date
            ENTER,  # notify: the default, yes
            "s",  # send
        )
    )
    return TerminalPicture(
        "docs/server-guide.md",
        """mcp-elicit call "python server.py" create_ticket --args '{"title": "Printer on fire"}'""",
        keys,
        append='\n\nif __name__ == "__main__":\n    app.run()\n',
        width=92,
    )


def terminal_svg(picture: TerminalPicture) -> str:
    """The terminal once ``picture``'s call is answered, as an SVG (see the module docstring)."""
    argv = shlex.split(picture.command)
    if argv[:2] != ["mcp-elicit", "call"] or argv[4:5] != ["--args"] or len(argv) != 6:
        raise ValueError(f"expected: mcp-elicit call TARGET TOOL --args JSON, got {picture.command!r}")
    arguments = json.loads(argv[5])
    with tempfile.TemporaryDirectory() as folder:
        server = code_blocks(REPO / picture.markdown, "python")[0] + picture.append
        (Path(folder) / "server.py").write_text(server)
        return asyncio.run(_answered(picture, argv[2], argv[3], arguments, folder))


async def _answered(
    picture: TerminalPicture, target: str, tool: str, arguments: dict[str, Any], folder: str
) -> str:
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output
    from rich.console import Console
    from rich.text import Text

    from mcp_elicit.client import Client, TerminalAnswerer

    # The settings of the answerer's own console (markup, emoji and highlighting off), recorded.
    console = Console(
        file=io.StringIO(),
        record=True,
        width=picture.width,
        force_terminal=True,
        color_system="truecolor",
        markup=False,
        emoji=False,
        highlight=False,
    )
    console.print(Text.assemble(("$ ", "dim"), (picture.command, "bold")))
    # `python` is this interpreter, as in an activated virtual environment.
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    with create_pipe_input() as keys:
        # What prompt_toolkit draws is erased again by each widget: it is not kept.
        screen = Vt100_Output(io.StringIO(), lambda: Size(rows=40, columns=picture.width), term="xterm")
        # Keys go in at once: the consent delay would drop keys typed ahead of a menu.
        answerer = TerminalAnswerer(input=keys, output=screen, console=console, consent_delay=0.0)
        # The server's stderr is kept, as mcp-elicit call keeps it (shown only on a failure).
        async with Client.connect(target, answerer=answerer, env=env, cwd=folder, stderr="capture") as client:
            keys.send_text(picture.keys)
            result = await asyncio.wait_for(client.call_tool(tool, arguments), 30)
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.text}")
    console.print(Text(result.text))  # what the command writes on stdout
    return console.export_svg(title=f"mcp-elicit call {tool}")


def connect_page_png(path: Path, *, width: int = 800, scale: float = 1.5) -> str:
    """Photograph the demo's connect confirmation page into ``path`` (PNG, ``width`` CSS pixels
    wide, the whole page, at ``scale`` device pixels per CSS pixel); return the page's text."""
    return asyncio.run(_photographed(path, width, scale))


async def _photographed(path: Path, width: int, scale: float) -> str:
    from playwright.async_api import async_playwright

    from mcp_elicit.cli.demo import SCRIPT, TITLE
    from mcp_elicit.cli.demo_site import demo_site
    from mcp_elicit.client import Answer, Client, FormQuestion, UrlQuestion

    shown: list[str] = []

    class Photographer:
        """Answers the demo's forms as its scripted walk-through does; opens the link in Chromium."""

        modes = frozenset({"form", "url"})

        def __init__(self, page: Any) -> None:
            self.page = page
            self.forms = iter(SCRIPT.values())

        async def answer_form(self, question: FormQuestion) -> Answer:
            return Answer("accept", next(self.forms))

        async def answer_url(self, question: UrlQuestion) -> Answer:
            page = self.page
            await page.goto(question.url)
            await page.get_by_role("link", name="Sign in").click()
            await page.get_by_role("button", name=re.compile(r"^Continue as ")).click()
            await page.get_by_role("button", name="Decline").wait_for()
            await page.screenshot(path=str(path), full_page=True)
            shown.append(await page.inner_text("body"))
            await page.get_by_role("button", name="Decline").click()  # the flow ends, declined
            return Answer("decline")

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=[OFFLINE])
        try:
            context = await browser.new_context(
                viewport={"width": width, "height": 600}, device_scale_factor=scale
            )
            page = await context.new_page()
            async with demo_site() as site:
                headers = {"Authorization": f"Bearer {site.bearer}"}
                async with Client.connect(site.mcp, answerer=Photographer(page), headers=headers) as client:
                    await asyncio.wait_for(client.call_tool("file_issue", {"title": TITLE}), 60)
        finally:
            await browser.close()
    if not shown:
        raise RuntimeError("the demo never sent its connect link")
    return shown[0]


def make_all(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for name, picture in (("terminal-form.svg", readme_picture()), ("guide-form.svg", guide_picture())):
        (out / name).write_text(terminal_svg(picture))
        made.append(out / name)
    connect_page_png(out / "connect-page.png")
    made.append(out / "connect-page.png")
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=IMAGES, help="where to write (default: docs/images)")
    for path in make_all(parser.parse_args().out):
        print(f"pictures: wrote {path}")


if __name__ == "__main__":
    main()
