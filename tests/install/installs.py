"""Real installs of the package: one wheel, built once, and fresh virtual environments that hold
it with a chosen set of extras (nothing else: not this test run's packages, not the source tree).

Each environment is made with ``python -m venv --without-pip`` and filled by this run's pip
(``pip --python``), which saves installing pip into every one; pip's own cache makes the second
run quick.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.server_process import LOOP

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).with_name("booking_server.py")  # imports mcp_elicit only
# The distributions of every extra: none of them may come with the core.
EXTRA_DISTRIBUTIONS = {
    "uvicorn",
    "httpx",
    "prompt-toolkit",
    "rich",
    "publicsuffixlist",
    "authlib",
    "pyjwt",
    "psycopg",
    "pydantic",
    "email-validator",
    "uvloop",
    "httptools",
}
# What building the wheel reads: the metadata, the README it names, and the package.
_SOURCES = ("pyproject.toml", "README.md", "src")
_PIP_TIME = 300  # seconds: a first run downloads the packages


def _run(command: list[str], what: str, cwd: Path | None = None) -> None:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=_PIP_TIME, cwd=cwd, env=clean_env()
    )
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")


def clean_env() -> dict[str, str]:
    """This process's environment without what would let another Python see this run's modules
    (``MCP_ELICIT_TEST_LOOP`` too: the launcher would put a folder of the tests on the path)."""
    hidden = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", LOOP)
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return env


def build_wheel(workdir: Path) -> Path:
    """The package's wheel, built from a copy of the sources (a build in the tree would leave
    ``build/`` and ``*.egg-info`` behind, and two runs at once would share them)."""
    source = workdir / "source"
    source.mkdir()
    for name in _SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(path, source / name)
    out = workdir / "wheel"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        "pip wheel",
    )
    (wheel,) = out.glob("mcp_elicit-*.whl")
    return wheel


@dataclass(frozen=True)
class Venv:
    """A virtual environment holding the wheel with ``extras``."""

    path: Path
    extras: tuple[str, ...]

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def script(self, name: str) -> Path:
        return self.path / "bin" / name

    def run(
        self, *args: str | Path, cwd: Path, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """``args`` (a console script of this environment, or ``self.python`` and its
        arguments), with the environment cleaned of this test run's paths."""
        return subprocess.run(
            [str(arg) for arg in args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env=clean_env(),
        )

    def installed(self) -> set[str]:
        """The normalised names of the distributions installed here."""
        probe = (
            "import importlib.metadata as m, re\n"
            "for d in m.distributions(): print(re.sub(r'[-_.]+', '-', d.metadata['Name']).lower())"
        )
        done = self.run(self.python, "-c", probe, cwd=self.path)
        assert done.returncode == 0, done.stderr
        return set(done.stdout.split())


def make_venv(root: Path, wheel: Path, extras: tuple[str, ...]) -> Venv:
    path = root / ("core" if not extras else "-".join(extras))
    _run([sys.executable, "-m", "venv", "--without-pip", str(path)], "python -m venv")
    venv = Venv(path, extras)
    wanted = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    _run(
        [sys.executable, "-m", "pip", "--python", str(venv.python), "install", "--quiet", wanted],
        f"pip install {wanted}",
    )
    return venv
