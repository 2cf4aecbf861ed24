#!/usr/bin/env bash
# The README's quick start, run as written: the fenced blocks that follow the
# markers <!-- quickstart: serve -->, <!-- quickstart: calls --> and
# <!-- quickstart: node --> in README.md. So the README and this test cannot
# drift: a command that fails here fails for a new user too.
#
#   serve  runs from the source root on this build's binaries, with
#          RUN_SETUP=0 (scripts/run neither installs nor builds), DEMO_MODEL
#          in a scratch directory and the ports as ENCODER_* variables
#          (free ports on 127.0.0.1: tests run in parallel); scripts/run must
#          print the three endpoints and exec the server (signals reach it)
#   calls  each line one command, from the source root; it must exit 0, print
#          something and no "error"
#   node   the OpenAI npm client (tests/http_clients' pinned package) runs the
#          block as embed.mjs and must print the counts it logs
# The only edits to the README's text: localhost:50051, :8080 and :8081
# become 127.0.0.1 and the free ports, and build/ becomes this build
# directory. The defaults the README states (gRPC 50051, HTTP 8080, metrics
# 8081, all on) are read from encoder-server --help. Then SIGTERM: exit 0 and
# "stopped" in the log.
#
# Usage: e2e_quickstart.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI SOURCE_DIR BUILD_DIR
set -euo pipefail
server_bin=$1
client_bin=$2
cli_bin=$3
root=$4
build=$5

name=e2e_quickstart
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
require_tools curl
readme="$root/README.md"

# scripts/run finds the binaries under BUILD_DIR: they must be the ones given.
for binary in "$server_bin:server/app/encoder-server" "$client_bin:client/encoder-client" \
  "$cli_bin:engine/encoder-cli"; do
  check "${binary%%:*} is $build/${binary#*:} (scripts/run's layout)" \
    test "${binary%%:*}" -ef "$build/${binary#*:}"
done

# readme_block NAME: the fenced block right after the line <!-- quickstart: NAME -->.
readme_block() {
  awk -v marker="<!-- quickstart: $1 -->" '
    $0 == marker { armed = 1; next }
    armed && /^```/ { if (inside) exit; inside = 1; next }
    armed && !inside { exit }
    inside { print }' "$readme"
}
serve=$(readme_block serve)
calls=$(readme_block calls)
node_block=$(readme_block node)
for block in serve calls node_block; do
  [ -n "${!block}" ] || fail "README.md has no <!-- quickstart: ${block%_block} --> block"
done

port=$(free_port) || fail "no free port"
http=$(free_port) || fail "no free port"
metrics=$(free_port) || fail "no free port"
[ "$port" != "$http" ] && [ "$http" != "$metrics" ] && [ "$port" != "$metrics" ] ||
  fail "free_port gave the same port twice ($port $http $metrics): run again"
# The README's text with the test's ports and build directory.
localize() {
  sed -e "s#localhost:50051#127.0.0.1:$port#g" -e "s#localhost:8080#127.0.0.1:$http#g" \
    -e "s#localhost:8081#127.0.0.1:$metrics#g" -e "s#\(^\|[ \"'=]\)build/#\1$build/#g" <<<"$1"
}
for block in calls node_block; do
  # A localhost left would reach whatever listens on the default port.
  if grep -q localhost <<<"$(localize "${!block}")"; then
    fail "the ${block%_block} block names localhost other than on :50051, :8080 or :8081"
  fi
done

# The README says all three ports are on by default; the test's own ports
# come from the environment, so the defaults are read from --help.
help=$("$server_bin" --help)
for default in 'port (default "50051")' 'http-port (default "8080")' 'metrics-port (default "8081")'; do
  check "encoder-server --help: --$default" grep -qF -- "--$default" <<<"$help"
done

# ---- serve -------------------------------------------------------------------
log "serve: $serve"
(cd "$root" && RUN_SETUP=0 BUILD_DIR="$build" DEMO_MODEL="$work/demo-model" \
  ENCODER_HOST=127.0.0.1 ENCODER_PORT=$port ENCODER_HTTP_PORT=$http ENCODER_METRICS_PORT=$metrics \
  ENCODER_THREADS=2 exec bash -c "$serve") >"$work/run.out" 2>"$work/server.log" &
server_pid=$!
extra_logs=(run.out)
for _ in $(seq 1 600); do
  grep -q "serving on 127.0.0.1:$port " "$work/server.log" && break
  kill -0 "$server_pid" 2>/dev/null || fail "the serve command exited: $(cat "$work/run.out")"
  sleep 0.1
done
grep -q "serving on 127.0.0.1:$port " "$work/server.log" ||
  fail "the server did not listen on 127.0.0.1:$port within 60 s"
check "scripts/run execs encoder-server (so that Ctrl-C and SIGTERM reach it)" \
  test "$(cat "/proc/$server_pid/comm")" = encoder-server
for endpoint in "gRPC     127.0.0.1:$port" "HTTP     http://127.0.0.1:$http" \
  "metrics  http://127.0.0.1:$metrics/metrics"; do
  check "scripts/run prints the endpoint \"$endpoint\": $(cat "$work/run.out")" \
    grep -qF "$endpoint" "$work/run.out"
done
check "the log names the HTTP API's port" \
  grep -q "HTTP API on http://127.0.0.1:$http " "$work/server.log"

# ---- calls -------------------------------------------------------------------
while IFS= read -r line; do
  command=$(localize "$line")
  [ -n "${command// /}" ] || continue
  status=0
  (cd "$root" && bash -c "$command") >"$work/call.out" 2>"$work/call.err" || status=$?
  check "\"$line\" exits 0 (got $status): $(head -c 300 "$work/call.err")" test "$status" -eq 0
  check "\"$line\" prints something" test -s "$work/call.out"
  if grep -q '"error"' "$work/call.out"; then fail "\"$line\" answered an error: $(head -c 300 "$work/call.out")"; fi
  log "ok: $line -> $(head -c 100 "$work/call.out" | head -n 1)"
done <<<"$calls"

# ---- node --------------------------------------------------------------------
install_npm_packages "$root/tests/http_clients"
mkdir "$work/node"
ln -s "$root/tests/http_clients/node_modules" "$work/node/node_modules"
localize "$node_block" >"$work/node/embed.mjs"
status=0
(cd "$work/node" && node embed.mjs) >"$work/node.out" 2>"$work/node.err" || status=$?
check "node embed.mjs exits 0 (got $status): $(head -c 300 "$work/node.err")" test "$status" -eq 0
check "node embed.mjs prints 2 embeddings of 384 values and the tokens: $(cat "$work/node.out")" \
  grep -qE '^2 384 [0-9]+$' "$work/node.out"
log "ok: node embed.mjs -> $(cat "$work/node.out")"

status=0
stop_server || status=$?
check "SIGTERM ends the server with 0 (got $status)" test "$status" -eq 0
check "the server logged its stop" grep -q "stopped: all queued and running work finished" \
  "$work/server.log"
echo "e2e_quickstart: all checks passed"
