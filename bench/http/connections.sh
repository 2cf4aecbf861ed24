#!/usr/bin/env bash
# What idle and stalled connections cost the HTTP API, on one encoder-server
# (MiniLM-L6 shape, random weights, --threads 1; ENCODER_BENCH_MODEL=tiny for
# a 1-layer model whose engine time is small beside the transport's):
#   new-client latency: 200 POST /embed, each on a new connection, on a quiet
#     server and with 2,000 idle keep-alive connections + 200 stalled uploads
#     open, alternating (ROUNDS rounds); the p50s' medians and difference
#   memory: the server's RSS before and after 10,000 idle keep-alive
#     connections (each served one GET /health), per connection
# The crowd comes from reliability-probe http-crowd (tests/reliability).
# Usage: bench/http/connections.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
rounds="${2:-5}"
probe="$build/tests/reliability/reliability-probe"
work=$(mktemp -d)
server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

source "$here/server.sh"
stop() {
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
crowd() {  # IDLE STALLED REQUESTS -> the probe's JSON
  "$probe" http-crowd 127.0.0.1 8182 "$1" "$2" "$3" --server-pid "$server_pid" \
    --stall-wait-seconds 0 --body '{"inputs":"the quick brown fox jumps over the lazy dog"}'
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Stalled uploads are closed after --http-body-timeout: long enough to outlast a round.
start_server 8182 --http-body-timeout 120s
: >"$work/quiet" && : >"$work/busy"
for round in $(seq 1 "$rounds"); do
  quiet=$(crowd 0 0 200)
  busy=$(crowd 2000 200 200)
  jq -r .p50_ms <<<"$quiet" >>"$work/quiet"
  jq -r .p50_ms <<<"$busy" >>"$work/busy"
  echo "round $round: quiet p50 $(jq -r .p50_ms <<<"$quiet") ms max $(jq -r .max_ms <<<"$quiet") ms;" \
    "2,000 idle + 200 stalled: p50 $(jq -r .p50_ms <<<"$busy") ms max $(jq -r .max_ms <<<"$busy") ms" \
    "($(jq -r .ok <<<"$busy")/200 ok)"
  sleep 1  # the crowd's connections close
done
quiet=$(median <"$work/quiet")
busy=$(median <"$work/busy")
echo "new client p50, median of $rounds: quiet $quiet ms, with the crowd $busy ms," \
  "difference $(awk -v a="$busy" -v b="$quiet" 'BEGIN {printf "%.2f", a - b}') ms"
stop

start_server 8182
idle=$(crowd 10000 0 20)
echo "10,000 idle connections: RSS $(jq -r .rss_before_kb <<<"$idle") -> $(jq -r .rss_after_kb <<<"$idle") kB," \
  "$(jq -r '.kb_per_connection * 100 | round / 100' <<<"$idle") kB per connection;" \
  "new client meanwhile p50 $(jq -r .p50_ms <<<"$idle") ms max $(jq -r .max_ms <<<"$idle") ms"
