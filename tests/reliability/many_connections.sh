#!/usr/bin/env bash
# Thousands of connections on both ports, with the real binaries on 127.0.0.1:
# what a fleet of pooled clients and a slowloris do to a working client.
#
# (a) HTTP: 2,000 idle keep-alive connections (each served one GET /health,
#     then silent, as a client pool's) and 200 stalled uploads (the headers of
#     a POST /embed announcing 100 bytes, then 10 of them and silence), with
#     --http-body-timeout 3s. Then 50 new clients, one after another, each a
#     POST /embed on a new connection. Asserts: every idle connection was
#     served; every new client gets 200 within 1 s (the issue's bound; the
#     thread-per-connection adapter made the 65th idle client wait 60 s and
#     a request behind 80 stalled uploads 30 s); every stalled upload is
#     answered 408 and closed by the server within its timeout (+ 2 s for a
#     loaded machine); the idle ones are still open (--http-idle-timeout
#     60 s); the server's memory grows by < 32 KB per connection (not under
#     a sanitizer: check_memory).
# (b) gRPC: 1,000 idle connections (HTTP/2 preface and SETTINGS, then
#     silence) and 200 stalled Encode calls (HEADERS, then a DATA frame with
#     10 of the 1,000 bytes its gRPC prefix announces). Then 50 Encode calls,
#     each on a new channel. Asserts: all OK, each within 1 s.
# Writes both reports (reliability-probe's JSON) to the summary file.
#
# Usage: many_connections.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI RELIABILITY_PROBE SUMMARY_JSONL
set -euo pipefail
name=many_connections
source "$(dirname "$0")/../support/e2e_lib.sh"
take_arguments "$@"
trap cleanup EXIT
require_tools jq
: >"$summary"

limit=$(ulimit -Hn)
if [ "$limit" != unlimited ] && [ "$limit" -lt 3000 ]; then
  log "skipped: the hard open-file limit ($limit) cannot hold 2,200 connections"
  exit 0
fi

make_model "$work/model" 32 1 4 64
http=$(free_port)
start_server "$work/model" --threads 1 --http-port "$http" --http-body-timeout 3s
log "server up (HTTP on $http, gRPC on $port), load average $(load_average)"

# crowd KIND PORT IDLE STALLED STALL_WAIT_SECONDS: reliability-probe KIND-crowd
# with 50 new clients; sets report (its JSON), recorded in the summary.
crowd() {
  "$probe_bin" "$1-crowd" 127.0.0.1 "$2" "$3" "$4" 50 --server-pid "$server_pid" \
    --stall-wait-seconds "$5" >"$work/$1.json" 2>"$work/$1.err" ||
    fail "reliability-probe $1-crowd failed: $(cat "$work/$1.err")"
  report=$(cat "$work/$1.json")
  log "$1: $report"
  record --argjson r "$report" --arg phase "$1" --arg load "$(load_average)" \
    '{phase: $phase, report: $r, load_average: $load}'
}
value() { jq -r "$1" <<<"$report"; }

# ---- (a) HTTP ------------------------------------------------------------------
crowd http "$http" 2000 200 8
check "2,000 idle connections were each served once ($(value .idle_served))" \
  test "$(value .idle_served)" -eq 2000
check "every new client got 200 ($(value .statuses))" test "$(value .ok)" -eq 50
check "every new client within 1 s (max $(value .max_ms) ms, p50 $(value .p50_ms) ms)" \
  holds '$a < 1000' "$(value .max_ms)"
check "every stalled upload was answered 408 ($(value .stalled_answers))" \
  test "$(value '.stalled_answers["408"] // 0')" -eq 200
check "and closed within its 3 s timeout + 2 s (latest $(value .stalled_close_ms_max) ms)" \
  holds '$a <= 5000' "$(value .stalled_close_ms_max)"
check "the idle connections stay open within --http-idle-timeout ($(value .idle_open_at_end))" \
  test "$(value .idle_open_at_end)" -eq 2000
check_memory "under 32 KB per connection ($(value .kb_per_connection) KB)" \
  holds '$a < 32' "$(value .kb_per_connection)"
check "the server counted the stalled uploads' timeouts" \
  grep -q 'encoder_http_timeouts_total{phase="body"} 200' <<<"$(scrape)"

# ---- (b) gRPC ------------------------------------------------------------------
crowd grpc "$port" 1000 200 1
check "every new gRPC client got OK ($(value .statuses))" test "$(value .ok)" -eq 50
check "every new gRPC client within 1 s (max $(value .max_ms) ms, p50 $(value .p50_ms) ms)" \
  holds '$a < 1000' "$(value .max_ms)"

check "SIGTERM ends the server with exit 0" stop_server
log "all checks passed"
