#!/usr/bin/env bash
# setup.sh: create/refresh the project's virtualenv (.venv) with the package installed editable
# plus its test extra (every runtime extra and the test tools). Safe to re-run; works on a fresh
# clone of a fresh machine.
#
# Usage: bash scripts/setup.sh [--no-browser]   (PYTHON=/path/to/python3.11+ to pick the interpreter)
#        bash scripts/setup.sh --venv DIR --extras LIST --no-browser
#            another virtualenv with other extras: scripts/main.sh makes .venv-demo with
#            cli,connect (the demo only), so that it never changes the tests' .venv, nor they its
#
# Steps (one line each):
#   1. create the venv with `python3 -m venv` if it is missing (or recreate it if it is broken)
#   2. upgrade pip quietly                      } skipped when pyproject.toml, the extras and
#   3. pip install -e '.[EXTRAS]' (quiet;       }  the Python version are unchanged since the
#      errors stay visible)                     }  last successful install (VENV/.installed-hash)
#   4. byte-compile src/ (.pyc), as installing a wheel does: with PYTHONDONTWRITEBYTECODE set, an
#      editable install would otherwise compile every module again in every process it starts
#      (stale .pyc files are detected and ignored by Python)
#   5. Debian's chromium for the browser tests, when /usr/bin/chromium is missing (apt-get, as
#      root; otherwise it fails with the command to run). Playwright drives this binary:
#      `playwright install` is never run and no browser is downloaded. `--no-browser` skips this
#      step (scripts/main.sh: the demo needs no browser).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { echo "setup: $*"; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

PYTHON="${PYTHON:-python3}"
VENV=".venv"
EXTRAS="test"
BROWSER=1
while (($#)); do
    case "$1" in
        --venv) VENV="${2:?--venv needs a directory}"; shift 2 ;;
        --extras) EXTRAS="${2:?--extras needs a list such as cli,connect}"; shift 2 ;;
        --no-browser) BROWSER=0; shift ;;
        *) die "unknown option $1 (usage: setup.sh [--venv DIR] [--extras LIST] [--no-browser])" ;;
    esac
done
VPY="$VENV/bin/python"
HASH_FILE="$VENV/.installed-hash"

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

# what the install depends on: the project metadata, the extras and the interpreter
wanted_hash() {
    { cat pyproject.toml; echo "$EXTRAS"; "$VPY" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
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
    say "pip install -e '.[$EXTRAS]' into $VENV"
    quiet_pip install -e ".[$EXTRAS]" ||
        die "pip install -e '.[$EXTRAS]' failed"
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
if ((BROWSER)); then
    ensure_chromium
else
    say "chromium not needed here (--no-browser)"
fi
say "ready: $VPY ($("$VPY" --version 2>&1))"
