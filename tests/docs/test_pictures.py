"""scripts/pictures.py makes the pictures of the README and the server guide from the real
program: run here into a temporary folder, each holds what it must show (the SVGs the form's
labels, the answers typed and the tool's reply; the PNG a whole page of the width asked, taken on
the confirmation page). The pictures kept in docs/images are the ones the docs show, and were
made from the docs as they are now (the README's command and reply are in its SVG). Pixels are
never compared."""

from __future__ import annotations

import html
import importlib.util
import re
import struct
import sys
import types
from pathlib import Path

import pytest

from tests.docs.markdown_blocks import REPO, blocks, doc

IMAGES = REPO / "docs" / "images"


@pytest.fixture(scope="module")
def pictures() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("pictures", REPO / "scripts" / "pictures.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pictures"] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["pictures"]
    return module


def svg_text(svg: str) -> str:
    """The text an SVG made by rich shows: its pieces joined (a line's styled runs are pieces,
    and lines are padded to the width), every run of spaces made one."""
    pieces = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.DOTALL)
    return " ".join("".join(html.unescape(piece) for piece in pieces).split())


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def readme_reply() -> str:
    return blocks(doc("README.md"), "text")[0].code.strip()


def test_the_terminal_picture_of_the_readme(pictures: types.ModuleType) -> None:
    picture = pictures.readme_picture()
    assert picture.command == blocks(doc("README.md"), "bash")[0].code.strip()
    shown = svg_text(pictures.terminal_svg(picture))
    for text in ("trips", "python server.py", "When do you fly to Lisbon?", "Leaving", "Nights", "Cabin"):
        assert text in shown
    assert "2027-07-01" in shown  # what was typed
    assert "Sent: the server gets this answer." in shown
    assert shown.endswith(readme_reply())


def test_the_terminal_picture_of_the_guide(pictures: types.ModuleType) -> None:
    shown = svg_text(pictures.terminal_svg(pictures.guide_picture()))
    for label in ("Your e-mail", "Priority", "Labels", "Due date", "Notify", "Pick any that apply"):
        assert label in shown
    assert "High: wake someone up" in shown  # the titled choice, by its title
    assert shown.endswith("Created 'Printer on fire': high priority, bug, ux, due 2027-01-15.")


def test_the_connect_page_picture(pictures: types.ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "connect-page.png"
    text = pictures.connect_page_png(path, width=640, scale=1.0)
    width, height = png_size(path)
    assert width == 640
    assert height > 400  # the whole page, Continue and Decline at its foot
    assert text.startswith("DEMO ONLY")
    for shown in ("Connect Demo CI service", "Signed in as", "Continue takes you to 127.0.0.1:", "Decline"):
        assert shown in text


def test_the_docs_show_the_pictures_kept_here() -> None:
    readme = doc("README.md").read_text()
    guide = doc("server-guide.md").read_text()
    assert "](docs/images/terminal-form.svg)" in readme
    assert "](docs/images/connect-page.png)" in readme
    assert "](images/guide-form.svg)" in guide
    shown = svg_text((IMAGES / "terminal-form.svg").read_text())
    assert blocks(doc("README.md"), "bash")[0].code.strip() in shown, "run scripts/pictures.py again"
    assert shown.endswith(readme_reply()), "run scripts/pictures.py again"
    assert "Your e-mail" in svg_text((IMAGES / "guide-form.svg").read_text())
    width, _ = png_size(IMAGES / "connect-page.png")
    assert width == 1200  # 800 CSS pixels at 1.5
