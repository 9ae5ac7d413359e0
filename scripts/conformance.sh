#!/usr/bin/env bash
# conformance.sh: run the official MCP conformance harness (@modelcontextprotocol/conformance,
# pinned in scripts/node.sh) against OUR implementation, one `--scenario` run per scenario at
# `--spec-version 2026-07-28`, then a second list at `--spec-version 2025-11-25` (server and client),
# and report PASS/FAIL per scenario. The scenarios are listed below.
#
# Usage:
#   scripts/conformance.sh server   start `python examples/conformance_server.py --port PORT`, wait
#                                   until it accepts connections, run SERVER_SCENARIOS (at
#                                   SPEC_VERSION), then LEGACY_SERVER_SCENARIOS (at
#                                   LEGACY_SPEC_VERSION) against http://127.0.0.1:PORT/mcp, stop
#                                   the server
#   scripts/conformance.sh client   run CLIENT_SCENARIOS (at SPEC_VERSION), then
#                                   CLIENT_SCENARIOS_2025 (at LEGACY_SPEC_VERSION), with
#                                   --command "python examples/conformance_client.py"
#                                   (the harness starts its mock server and appends its URL as the
#                                   client's last argument; the client's exit code counts)
#   scripts/conformance.sh MODE SCENARIO...   run only the named scenarios (for debugging); in
#                                   either mode SCENARIO@VERSION runs one at that spec version
#                                   (e.g. tools-list@2025-11-25), a bare name at SPEC_VERSION
#
# Everything (our server or client, and the harness with its mock servers, which listen on all
# interfaces) runs inside a private loopback-only network namespace (`unshare -n`). If the machine
# does not allow that, it runs directly and prints a WARNING.
#
# Output: one PASS/FAIL line per scenario, then `conformance: N passed, M failed`. Exit 0 only if
# every scenario passed: harness exit 0, no failed check, not skipped, and (strict by default) no
# WARNING check either. The harness itself lets WARNING (SHOULD-level) checks pass; a server that
# answers garbage "passes" missing-input-response, ignore-extra-params and validate-input that way,
# and the reference SDK server gets no warnings at all. Full harness logs, the
# checks.json files and the server's log go to conformance-results/<mode>-<UTC time>/
# (conformance-results/<mode>-latest points at the newest run; the newest 10 runs are kept).
#
# Environment overrides (all optional):
#   CONFORMANCE_SERVER_CMD   server command; {port} is replaced by the port. Runs via bash from the
#                            repo root, with .venv/bin (then node 24) first on PATH.
#   CONFORMANCE_SERVER_URL   URL template, default http://127.0.0.1:{port}/mcp
#   CONFORMANCE_PORT         port to use (default: a free one)
#   CONFORMANCE_CLIENT_CMD   client command (split on spaces by the harness: no spaces in paths)
#   CONFORMANCE_TIMEOUT_MS   harness --timeout per scenario in ms (default 60000)
#   CONFORMANCE_STARTUP_S    how long to wait for the server to accept connections (default 60)
#   CONFORMANCE_NETNS=0      do not use a network namespace (prints a WARNING)
#   CONFORMANCE_ALLOW_WARNINGS=1   let scenarios whose only problems are WARNING checks pass
set -euo pipefail

# --------------------------------------------------------------------------------------------
# What we run. Server side: all 14 input-required-result-* scenarios of the harness,
# server-stateless, and the 2026-07-28 scenarios on tools, prompts, resources, caching and HTTP
# headers whose fixtures examples/conformance_server.py serves. Client side: retries that echo requestState, and the per-request _meta and
# MCP-Protocol-Version header. All at the 2026-07-28 wire; then the server again at the
# 2025-11-25 wire (LEGACY_SERVER_SCENARIOS: every server scenario of that revision but two), and
# the client at it: the handshake, tool calls, schema defaults applied to the server's
# elicitation/create, SSE retry and resumption, and JSON Schema preservation
# (CLIENT_SCENARIOS_2025). The 14 auth/* client scenarios test OAuth to the MCP server, which
# this client does not implement (it takes a token with --header): they are not run.
SPEC_VERSION="2026-07-28"

SERVER_SCENARIOS=(
    input-required-result-basic-elicitation
    input-required-result-basic-sampling
    input-required-result-basic-list-roots
    input-required-result-request-state
    input-required-result-multiple-input-requests
    input-required-result-multi-round
    input-required-result-missing-input-response
    input-required-result-non-tool-request
    input-required-result-result-type
    input-required-result-unsupported-methods
    input-required-result-tampered-state
    input-required-result-capability-check
    input-required-result-ignore-extra-params
    input-required-result-validate-input
    server-stateless
    sep-2164-resource-not-found
    caching
    tools-list
    http-header-validation
    dns-rebinding-protection
    server-sse-multiple-streams
    tools-call-simple-text
    tools-call-image
    tools-call-audio
    tools-call-embedded-resource
    tools-call-mixed-content
    tools-call-error
    tools-call-with-progress
    resources-list
    resources-read-text
    resources-read-binary
    resources-templates-read
    prompts-list
    prompts-get-simple
    prompts-get-with-args
    prompts-get-embedded-resource
    prompts-get-with-image
    http-custom-header-server-validation
)

# The same server, as a 2025-11-25 client meets it (initialize, a session, questions as real
# elicitation/create requests on the call's SSE stream). Left out, for a reason:
#   completion-complete   completion/complete is not implemented (as at 2026-07-28)
#   json-schema-2020-12   tools take their inputSchema from the signature; the fixture's
#                         hand-written 2020-12 schema has no such signature (as at 2026-07-28)
LEGACY_SPEC_VERSION="2025-11-25"

LEGACY_SERVER_SCENARIOS=(
    server-initialize
    server-session-lifecycle
    logging-set-level
    ping
    tools-list
    tools-call-simple-text
    tools-call-image
    tools-call-audio
    tools-call-embedded-resource
    tools-call-mixed-content
    tools-call-with-logging
    tools-call-error
    tools-call-with-progress
    tools-call-sampling
    tools-call-elicitation
    elicitation-sep1034-defaults
    server-sse-polling
    server-sse-multiple-streams
    elicitation-sep1330-enums
    resources-list
    resources-read-text
    resources-read-binary
    resources-templates-read
    resources-subscribe
    resources-unsubscribe
    prompts-list
    prompts-get-simple
    prompts-get-with-args
    prompts-get-embedded-resource
    prompts-get-with-image
    dns-rebinding-protection
)

CLIENT_SCENARIOS=(
    sep-2322-client-request-state
    request-metadata
    tools_call
    http-standard-headers
    http-custom-headers
    http-invalid-tool-headers
    json-schema-ref-no-deref
    json-schema-2020-12-preservation
)

CLIENT_SCENARIOS_2025=(
    initialize
    tools_call
    elicitation-sep1034-client-defaults
    sse-retry
    json-schema-2020-12-preservation
)

DEFAULT_SERVER_CMD="python examples/conformance_server.py --port {port}"
DEFAULT_SERVER_URL="http://127.0.0.1:{port}/mcp"
DEFAULT_CLIENT_CMD="python examples/conformance_client.py"
# --------------------------------------------------------------------------------------------

HARNESS_TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-60000}"
STARTUP_S="${CONFORMANCE_STARTUP_S:-60}"
SCENARIO_WALL_S=$((HARNESS_TIMEOUT_MS / 1000 + 60)) # hard stop if the harness itself hangs

SCRIPT_PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
REPO_ROOT="$(cd "$(dirname "$SCRIPT_PATH")/.." && pwd)"
cd "$REPO_ROOT"

SERVER_PID=""
HARNESS_PID=""
RUN_DIR=""

log() { echo "conformance: $*"; }
die() { echo "conformance: ERROR: $*" >&2; exit 1; }

usage() {
    sed -n '2,/^set -euo/p' "$SCRIPT_PATH" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

find_ip() {
    command -v ip 2>/dev/null || { [[ -x /usr/sbin/ip ]] && echo /usr/sbin/ip; } ||
        { [[ -x /sbin/ip ]] && echo /sbin/ip; } || true
}

# ---- phase 1 (outside the namespace): install what needs the network, then re-exec inside ----

prepare() { # MODE
    local own_cmd
    # node 24 + harness from npm; exports PATH (node 24 first) and CONFORMANCE_BIN
    # shellcheck source=scripts/node.sh
    source "$REPO_ROOT/scripts/node.sh" >/dev/null || die "scripts/node.sh failed"
    own_cmd="${CONFORMANCE_SERVER_CMD:-}"
    [[ "$1" == "client" ]] && own_cmd="${CONFORMANCE_CLIENT_CMD:-}"
    if [[ -z "$own_cmd" && ! -x "$REPO_ROOT/.venv/bin/python" ]]; then
        log "no .venv yet: running scripts/setup.sh"
        bash "$REPO_ROOT/scripts/setup.sh" || die "scripts/setup.sh failed"
    fi
    export PATH="$NODE24_BIN_DIR:$REPO_ROOT/.venv/bin:$PATH" # `python` = the venv's python
    export CONFORMANCE_BIN
}

# Re-exec this script inside a new loopback-only network namespace, if the machine allows it.
enter_netns() {
    local ip flags
    if [[ "${CONFORMANCE_NETNS:-1}" == "0" ]]; then
        log "WARNING: CONFORMANCE_NETNS=0: running WITHOUT a network namespace; the harness's mock" \
            "servers listen on all interfaces of this host"
        export _CONFORMANCE_NETNS=none
        return 0
    fi
    ip="$(find_ip)"
    if [[ -n "$ip" ]] && command -v unshare >/dev/null; then
        for flags in "-n" "-r -n"; do # as root; else through a user namespace
            # shellcheck disable=SC2086
            if unshare $flags "$ip" link set lo up 2>/dev/null; then
                export _CONFORMANCE_NETNS=1 _CONFORMANCE_IP="$ip"
                # shellcheck disable=SC2086
                exec unshare $flags -- bash "$SCRIPT_PATH" "$@"
            fi
        done
    fi
    log "WARNING: cannot create a network namespace here (unshare -n / ip missing or not" \
        "permitted): running directly; the harness's mock servers listen on all interfaces"
    export _CONFORMANCE_NETNS=none
}

# ---- phase 2 (inside the namespace) -----------------------------------------------------------

new_run_dir() { # MODE: conformance-results/MODE-<UTC time>/, keeping the newest 10 such runs
    local stamp old
    stamp="$(date -u +%Y%m%dT%H%M%SZ)"
    RUN_DIR="$REPO_ROOT/conformance-results/$1-$stamp"
    mkdir -p "$RUN_DIR"
    ln -sfn "$1-$stamp" "$REPO_ROOT/conformance-results/$1-latest"
    find "$REPO_ROOT/conformance-results" -maxdepth 1 -type d -name "$1-2*Z" | sort -r | tail -n +11 |
        while read -r old; do rm -rf "$old"; done
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_server() {
    [[ -n "$SERVER_PID" ]] || return 0
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM -- "-$SERVER_PID" 2>/dev/null || kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

cleanup() {
    # `timeout` leads its own process group: this stops the harness and its node child
    [[ -z "$HARNESS_PID" ]] || kill -TERM -- "-$HARNESS_PID" 2>/dev/null || true
    stop_server
}

show_server_log() {
    echo "---- last 40 lines of the server's output ($RUN_DIR/server.log) ----" >&2
    tail -n 40 "$RUN_DIR/server.log" >&2 || true
    echo "---- end of server output ----" >&2
}

start_server() { # CMD
    log "starting server: $1"
    # own session/process group, so the trap can stop it and everything it spawned
    echo "---- $(date -u +%H:%M:%S) starting: $1" >>"$RUN_DIR/server.log"
    setsid bash -c "$1" </dev/null >>"$RUN_DIR/server.log" 2>&1 &
    SERVER_PID=$!
}

wait_for_port() { # PORT
    local deadline=$((SECONDS + STARTUP_S)) rc
    while ((SECONDS < deadline)); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            rc=0; wait "$SERVER_PID" || rc=$?
            SERVER_PID=""
            echo "conformance: ERROR: the server exited (code $rc) before accepting connections on" \
                "127.0.0.1:$1" >&2
            show_server_log
            return 1
        fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
            log "server is accepting connections on 127.0.0.1:$1"
            return 0
        fi
        sleep 0.2
    done
    echo "conformance: ERROR: the server did not accept connections on 127.0.0.1:$1 within" \
        "${STARTUP_S}s" >&2
    show_server_log
    return 1
}

# judge SCENARIO HARNESS_RC LOGFILE OUTDIR: print one PASS/FAIL line (plus failed checks); rc 0 = pass
judge() {
    python3 - "$@" <<'PY'
import glob, json, os, re, sys
name, rc, logfile, outdir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
allow_warnings = os.environ.get("CONFORMANCE_ALLOW_WARNINGS") == "1"
text = re.sub(r"\x1b\[[0-9;]*m", "", open(logfile, errors="replace").read())
checks, problems = [], []
for f in sorted(glob.glob(f"{outdir}/**/checks.json", recursive=True)):
    try:
        data = json.load(open(f))
        checks += data if isinstance(data, list) else data.get("checks", [])
    except (OSError, ValueError) as e:
        problems.append(f"unreadable {f}: {e}")
failed = [c for c in checks if c.get("status") in ("FAILURE", "ERROR")]
warned = [c for c in checks if c.get("status") == "WARNING"]
skipped = [c for c in checks if c.get("status") == "SKIPPED"]  # harness: feature not exercised
m = re.search(r"Passed:\s*(\d+)/(\d+),\s*(\d+) failed", text)
if rc == 124 or rc == 137:
    problems.append("harness killed: wall-clock limit reached")
elif rc != 0:
    problems.append(f"harness exit code {rc}")
if re.search(r"^SKIPPED", text, re.M):
    problems.append("harness SKIPPED the scenario (not applicable at this spec version?)")
if m and int(m.group(3)) > 0:
    problems.append(f"harness reports {m.group(3)} failed")
exited = re.search(r"CLIENT EXITED WITH ERROR \(code (-?\d+)\)", text)
if exited:
    problems.append(f"the client process exited with code {exited.group(1)}")
elif re.search(r"OVERALL:\s*FAILED|Validation error", text):
    problems.append("harness printed a failure")
if not checks:
    problems.append("no checks recorded (no checks.json)")
if failed:
    problems.append(f"{len(failed)} failed check(s)")
if warned and not allow_warnings:
    problems.append(f"{len(warned)} WARNING check(s) (CONFORMANCE_ALLOW_WARNINGS=1 tolerates them)")
ok = not problems
passed = sum(c.get("status") == "SUCCESS" for c in checks)
counts = f"{passed}/{len(checks)} checks passed, {len(warned)} warning(s)"
if skipped:
    counts += f", {len(skipped)} check(s) SKIPPED by the harness"
print(f"{'PASS' if ok else 'FAIL'}  {name:<48} {counts}" + ("" if ok else "; " + "; ".join(problems)))
shown = failed + warned
for c in shown[:12]:
    msg = (c.get("errorMessage") or c.get("description") or "").replace("\n", " ")
    print(f"        {c.get('status')} {c.get('id')}: {msg[:300]}")
if len(shown) > 12:
    print(f"        ... and {len(shown) - 12} more (see the log)")
if skipped:
    print("        skipped: " + ", ".join(str(c.get("id")) for c in skipped))
if not ok:
    print(f"        log: {logfile}")
sys.exit(0 if ok else 1)
PY
}

# run_scenario MODE SCENARIO EXTRA_ARGS...: run the harness once at RUN_SPEC_VERSION (default
# SPEC_VERSION); append the verdict to results. Runs at another version than SPEC_VERSION keep
# their logs in RUN_DIR/<version>/ and are named "SCENARIO@VERSION" in the summary.
run_scenario() {
    local mode="$1" s="$2" rc=0 version="${RUN_SPEC_VERSION:-$SPEC_VERSION}"
    shift 2
    local dir="$RUN_DIR" label="$s"
    if [[ "$version" != "$SPEC_VERSION" ]]; then
        dir="$RUN_DIR/$version" label="$s@$version"
        mkdir -p "$dir"
    fi
    local logfile="$dir/$s.log" outdir="$dir/$s"
    timeout --kill-after=10 "$SCENARIO_WALL_S" \
        "$CONFORMANCE_BIN" "$mode" "$@" --scenario "$s" --spec-version "$version" \
        --timeout "$HARNESS_TIMEOUT_MS" -o "$outdir" </dev/null >"$logfile" 2>&1 &
    HARNESS_PID=$! # in the background so that a signal reaches our trap at once
    wait "$HARNESS_PID" || rc=$?
    HARNESS_PID=""
    sed -i 's/\x1b\[[0-9;]*m//g' "$logfile" # the harness colours its output even into a file
    if judge "$label" "$rc" "$logfile" "$outdir" | tee -a "$RUN_DIR/summary.txt"; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
    fi
}

finish() { # MODE
    local line="conformance: $PASSED passed, $FAILED failed"
    echo "$line" | tee -a "$RUN_DIR/summary.txt"
    log "results: conformance-results/$(basename "$RUN_DIR")/ (summary.txt, <scenario>.log, checks.json)"
    ((FAILED == 0))
}

all_failed() { # REASON SCENARIO...: count every scenario as failed (nothing could run)
    local reason="$1" s
    shift
    for s in "$@"; do echo "FAIL  $s  ($reason)" >>"$RUN_DIR/summary.txt"; done
    FAILED=$#
    log "$reason: all $# scenarios counted as failed"
}

run_server_mode() {
    local template="${CONFORMANCE_SERVER_CMD:-$DEFAULT_SERVER_CMD}" port cmd url s runs=() run
    # SCENARIO@VERSION, in the order they run: the 2026 list, then the 2025-11-25 one
    for s in "${SERVER_SCENARIOS[@]}"; do
        [[ "$s" == *@* ]] && runs+=("$s") || runs+=("$s@$SPEC_VERSION")
    done
    for s in "${LEGACY_SERVER_SCENARIOS[@]}"; do runs+=("$s@$LEGACY_SPEC_VERSION"); done
    if [[ -z "${CONFORMANCE_SERVER_CMD:-}" && ! -f examples/conformance_server.py ]]; then
        echo "conformance: ERROR: examples/conformance_server.py does not exist (set" \
            "CONFORMANCE_SERVER_CMD to test another server)" >&2
        all_failed "no server" "${runs[@]}"
        finish server || true
        return 1
    fi
    port="${CONFORMANCE_PORT:-$(free_port)}"
    cmd="${template//\{port\}/$port}"
    url="${CONFORMANCE_SERVER_URL:-$DEFAULT_SERVER_URL}"
    url="${url//\{port\}/$port}"
    start_server "$cmd"
    if ! wait_for_port "$port"; then
        all_failed "server did not start" "${runs[@]}"
        finish server || true
        return 1
    fi
    log "running ${#runs[@]} server scenarios against $url:" \
        "$(printf '%s\n' "${runs[@]##*@}" | uniq -c | awk '{printf "%s%s at --spec-version %s", sep, $1, $2; sep=", then "}')"
    for run in "${runs[@]}"; do
        s="${run%@*}"
        RUN_SPEC_VERSION="${run##*@}" run_scenario server "$s" --url "$url"
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "conformance: ERROR: the server died during '$s'" >&2
            show_server_log
            SERVER_PID=""
            start_server "$cmd" # keep going, so the report covers every scenario
            wait_for_port "$port" || true
        fi
    done
    stop_server
    finish server
}

run_client_mode() {
    local cmd="${CONFORMANCE_CLIENT_CMD:-$DEFAULT_CLIENT_CMD}" s runs=() run
    # SCENARIO@VERSION, in the order they run: the 2026 list, then the 2025-11-25 one
    for s in "${CLIENT_SCENARIOS[@]}"; do
        [[ "$s" == *@* ]] && runs+=("$s") || runs+=("$s@$SPEC_VERSION")
    done
    for s in "${CLIENT_SCENARIOS_2025[@]}"; do runs+=("$s@$LEGACY_SPEC_VERSION"); done
    if [[ -z "${CONFORMANCE_CLIENT_CMD:-}" && ! -f examples/conformance_client.py ]]; then
        echo "conformance: ERROR: examples/conformance_client.py does not exist (set" \
            "CONFORMANCE_CLIENT_CMD to test another client)" >&2
        all_failed "no client" "${runs[@]}"
        finish client || true
        return 1
    fi
    log "running ${#runs[@]} client scenarios with --command \"$cmd\":" \
        "$(printf '%s\n' "${runs[@]##*@}" | uniq -c | awk '{printf "%s%s at --spec-version %s", sep, $1, $2; sep=", then "}')"
    for run in "${runs[@]}"; do
        RUN_SPEC_VERSION="${run##*@}" run_scenario client "${run%@*}" --command "$cmd"
    done
    finish client
}

main() {
    local mode="${1:-}"
    [[ "$mode" == "server" || "$mode" == "client" ]] || usage
    if (($# > 1)); then # explicit scenario list
        SERVER_SCENARIOS=("${@:2}")
        LEGACY_SERVER_SCENARIOS=()
        CLIENT_SCENARIOS=("${@:2}")
        CLIENT_SCENARIOS_2025=()
    fi
    if [[ -z "${_CONFORMANCE_NETNS:-}" ]]; then
        prepare "$mode"
        enter_netns "$@" # does not return if the namespace works
    fi
    if [[ "$_CONFORMANCE_NETNS" == "1" ]]; then
        "$_CONFORMANCE_IP" link set lo up
        log "inside a private loopback-only network namespace"
    fi
    export NO_COLOR=1 FORCE_COLOR=0
    PASSED=0
    FAILED=0
    new_run_dir "$mode"
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    log "harness: $CONFORMANCE_BIN ($("$CONFORMANCE_BIN" --version)), node $(node --version)"
    "run_${mode}_mode"
}

main "$@"
