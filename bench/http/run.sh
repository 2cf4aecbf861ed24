#!/usr/bin/env bash
# HTTP against gRPC in one run, on one encoder-server (MiniLM-L6 shape or tiny, random
# weights, --threads 1 by default: one engine thread has no OpenMP barrier to
# stall when other processes share the CPUs): the same 32-token text, closed loop.
#   throughput at concurrency 32: wrk (POST /embed) vs encoder-client bench
#   latency of single requests (concurrency 1): wrk vs encoder-client bench
# Rounds alternate gRPC and HTTP; each prints requests/s and p50. Needs wrk
# (Debian package). Usage: bench/http/run.sh [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
seconds="${2:-10}"
rounds="${3:-3}"
work=$(mktemp -d)
server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

source "$here/server.sh"
start_server 8180

# 30 whole words of the demo vocabulary: 32 tokens with [CLS] and [SEP]
# (checked below with /tokenize).
text="the and that for was with not this are his from which but have had they you were their one all can her has there been more when will would"
printf '%s\n' "$text" >"$work/text.txt"
tokens=$(curl -s http://127.0.0.1:8180/tokenize -H 'Content-Type: application/json' \
  -d "{\"inputs\": \"$text\"}" | grep -o '"id"' | wc -l)
echo "text: $tokens tokens; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs": "$text"}'
LUA

grpc() {  # concurrency
  "$build/client/encoder-client" --target 127.0.0.1:50151 bench --concurrency "$1" \
    --duration "${seconds}s" --input "$work/text.txt" --json --progress=false |
    jq -r '"grpc c=\(.concurrency) req/s \(.requests_per_second) p50_ms \(.latency_seconds.p50 * 1000) errors \(.errors)"'
}
http() {  # concurrency
  wrk -t"$(($1 > 1 ? 2 : 1))" -c"$1" -d"${seconds}s" --timeout 30s --latency -s "$work/post.lua" \
    http://127.0.0.1:8180/embed >"$work/wrk.txt"
  local rps p50 errors
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
  p50=$(awk '$1 == "50%" {v = $2; if (v ~ /us$/) {sub("us", "", v); v /= 1000} else if (v ~ /ms$/) {sub("ms", "", v)} else if (v ~ /s$/) {sub("s", "", v); v *= 1000}; print v}' "$work/wrk.txt")
  errors=$(grep -E 'Non-2xx|Socket errors' "$work/wrk.txt" || true)
  echo "http c=$1 req/s $rps p50_ms $p50 ${errors}"
}
for round in $(seq 1 "$rounds"); do
  echo "-- round $round (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  grpc 32
  http 32
  grpc 1
  http 1
done
