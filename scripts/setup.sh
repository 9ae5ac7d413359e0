#!/usr/bin/env bash
# setup.sh: create/refresh the project's virtualenv (.venv) with the package installed editable
# plus its test extras. Safe to re-run; works on a fresh clone of a fresh machine.
#
# Usage: bash scripts/setup.sh            (PYTHON=/path/to/python3.11+ to pick the interpreter)
#
# Steps (one line each):
#   1. create .venv with `python3 -m venv` if it is missing (or recreate it if it is broken)
#   2. upgrade pip quietly                      } skipped when pyproject.toml and the Python
#   3. pip install -e '.[test]' (quiet; errors  }  version are unchanged since the last
#      stay visible)                            }  successful install (.venv/.installed-hash)
#   4. byte-compile src/ (.pyc), as installing a wheel does: with PYTHONDONTWRITEBYTECODE set, an
#      editable install would otherwise compile every module again in every process it starts
#      (stale .pyc files are detected and ignored by Python)
#   5. Debian's chromium for the browser tests, when /usr/bin/chromium is missing (apt-get, as
#      root; otherwise it fails with the command to run). Playwright drives this binary:
#      `playwright install` is never run and no browser is downloaded. `--no-browser` skips this
#      step (scripts/main.sh: the demo needs no browser).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
VENV=".venv"
VPY="$VENV/bin/python"
HASH_FILE="$VENV/.installed-hash"

say() { echo "setup: $*"; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

check_python() {
    command -v "$PYTHON" >/dev/null || die "$PYTHON not found"
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        die "$PYTHON is $("$PYTHON" --version 2>&1); need Python >= 3.11"
}

# pip, quiet; its errors and warnings stay visible, minus this machine's harmless pip-config noise
# ("WARNING: Location 'file:///opt/...' is ignored: it is neither a file nor a directory.")
quiet_pip() {
    local err rc=0
    err="$(mktemp)"
    "$VPY" -m pip --quiet --disable-pip-version-check "$@" </dev/null 2>"$err" || rc=$?
    grep -v "^WARNING: Location 'file:.*' is ignored: it is neither a file nor a directory" "$err" >&2 || true
    rm -f "$err"
    return "$rc"
}

venv_ok() { [[ -x "$VPY" ]] && "$VPY" -c 'import pip' >/dev/null 2>&1; }

ensure_venv() {
    if venv_ok; then
        say "$VENV exists ($("$VPY" --version 2>&1)) (skip)"
        return
    fi
    if [[ -e "$VENV" ]]; then
        say "$VENV is broken: recreating it with $PYTHON -m venv"
        rm -rf "$VENV"
    else
        say "creating $VENV with $PYTHON -m venv"
    fi
    "$PYTHON" -m venv "$VENV" || die "$PYTHON -m venv failed"
}

# what the install depends on: the project metadata and the interpreter
wanted_hash() {
    { cat pyproject.toml; "$VPY" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

installed() {
    [[ -f "$HASH_FILE" && "$(cat "$HASH_FILE")" == "$(wanted_hash)" ]] &&
        "$VPY" -c 'import importlib.metadata as m; m.version("mcp-elicit")' >/dev/null 2>&1
}

install_project() {
    if installed; then
        say "pyproject.toml unchanged since the last install: pip upgrade and install (skip)"
        return
    fi
    rm -f "$HASH_FILE"
    say "upgrading pip"
    quiet_pip install --upgrade pip ||
        die "pip upgrade failed"
    say "pip install -e '.[test]'"
    quiet_pip install -e '.[test]' ||
        die "pip install -e '.[test]' failed"
    wanted_hash >"$HASH_FILE"
}

byte_compile() {
    say "byte-compiling src/"
    "$VPY" -m compileall -q src >/dev/null || die "python -m compileall src failed"
}

CHROMIUM="/usr/bin/chromium"

ensure_chromium() {
    if [[ -x "$CHROMIUM" ]]; then
        say "$CHROMIUM present (skip)"
        return
    fi
    if [[ "$(id -u)" -ne 0 ]]; then
        die "$CHROMIUM is missing; as root run: apt-get update && apt-get install -y --no-install-recommends chromium"
    fi
    command -v apt-get >/dev/null || die "$CHROMIUM is missing and there is no apt-get: install Debian's chromium"
    say "installing Debian chromium (apt-get install --no-install-recommends chromium)"
    # A fresh machine may have no package lists yet.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null >/dev/null ||
        die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium </dev/null >/dev/null ||
        die "apt-get install chromium failed"
    [[ -x "$CHROMIUM" ]] || die "$CHROMIUM still missing after apt-get install chromium"
}

check_python
ensure_venv
install_project
byte_compile
if [[ "${1:-}" == "--no-browser" ]]; then
    say "chromium not needed here (--no-browser)"
else
    ensure_chromium
fi
say "ready: $VPY ($("$VPY" --version 2>&1))"
