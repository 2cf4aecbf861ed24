#!/usr/bin/env bash
# SIGTERM under load, with the real binaries on 127.0.0.1. The server (model,
# ports, --threads 2, --shutdown-grace 10s) gets a closed loop of 256 calls in
# flight over 4 connections; a watcher polls grpc.health.v1.Health/Check every
# 10 ms on its own connection; after 3 s of load the server gets SIGTERM.
#
# Asserts:
#   - the server exits 0, within --shutdown-grace + 2 s of the SIGTERM, and
#     logs that all queued and running work finished;
#   - the watcher saw SERVING, then NOT_SERVING (an answer from the live
#     process, so before it exited), never SERVING again, then errors;
#   - every call the server accepted was answered, and the answer arrived:
#     the server's own account at exit ("answered since start: gRPC: OK n,
#     ...") holds only OK and UNAVAILABLE (refused at the door after SIGTERM,
#     before tokenizing or queueing: with all queued work finished, nothing
#     else answers UNAVAILABLE), and the load generator got as many OK
#     answers as the server sent, less at most the calls that ended in a
#     connection reset (below);
#   - the load generator's codes are only OK and UNAVAILABLE. Its UNAVAILABLE
#     messages are reported by kind: "server is shutting down" (refused at
#     the door), "failed to connect ..." (the port was closed: the call never
#     left), and others. A call that crossed GOAWAY on the wire ends with
#     "Connection reset by peer" when gRPC closes a connection the client has
#     just written to: the kernel answers the unread bytes with a TCP reset,
#     and the client's gRPC fails every call still open on that connection,
#     including answers the server had already written (seen once in about
#     twenty runs under ASan: 44 resets, server OK 7876, client OK 7832). The
#     client got UNAVAILABLE for those, which it may retry; no call is lost
#     without an error;
#   - calls were queued when the SIGTERM came (the drain had work to do).
# Writes one JSON line of figures to the summary file.
#
# Usage: shutdown_under_load.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI RELIABILITY_PROBE SUMMARY_JSONL
set -euo pipefail
name=shutdown_under_load
source "$(dirname "$0")/../support/e2e_lib.sh"
take_arguments "$@"
trap cleanup EXIT
require_tools jq curl
: >"$summary"

grace_seconds=10
make_model "$work/model" 128 2 4 512
start_server "$work/model" --threads 2 --shutdown-grace ${grace_seconds}s
log "server on 127.0.0.1:$port, load average $(load_average)"

"$probe_bin" health-watch "127.0.0.1:$port" 10 60 >"$work/watch.txt" 2>"$work/watch.err" &
watcher_pid=$!
extra_pids+=("$watcher_pid")
"$client_bin" bench --target "127.0.0.1:$port" --concurrency 256 --connections 4 --duration 5s \
  --timeout 30s --json --progress=false >"$work/bench.json" 2>"$work/bench.err" &
bench_pid=$!
extra_pids+=("$bench_pid")

# Load running: OK answers counted by the server (bounded wait), then 3 s in.
ok_before=0
for _ in $(seq 1 100); do
  ok_before=$(metric "$(scrape)" 'encoder_requests_total{code="OK",rpc="Encode",transport="grpc"}')
  [ "${ok_before:-0}" != 0 ] && break
  sleep 0.1
done
check "calls were answered before the SIGTERM" test "${ok_before:-0}" != 0
sleep "$(load_seconds 3 1.5)"  # the queue fills within a second; shorter under sanitizers
text=$(scrape)
queued=$(metric "$text" encoder_queue_requests)
in_flight=$(metric "$text" encoder_inflight_requests)

start_ns=$(date +%s%N)
kill -TERM "$server_pid"
status=0
# Bounded: main.cc's own watchdog exits at grace + 5 s; ctest's TIMEOUT backs it.
wait "$server_pid" || status=$?
exit_seconds=$(jq -n "($(date +%s%N) - $start_ns) / 1e9")
server_pid=""
log "server exited with $status after $exit_seconds s (at SIGTERM: $queued queued, $in_flight in flight)"

for _ in $(seq 1 300); do kill -0 "$bench_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$bench_pid" 2>/dev/null && fail "the load generator did not finish within 30 s"
wait "$bench_pid" || true  # it fails when nothing succeeded; checked below
for _ in $(seq 1 100); do kill -0 "$watcher_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$watcher_pid" 2>/dev/null && fail "the health watcher did not finish within 10 s"
wait "$watcher_pid" || true

b="$work/bench.json"
[ -s "$b" ] || fail "no report from the load generator: $(cat "$work/bench.err")"
# UNAVAILABLE calls by reason, as defined above.
refused=$(jq '[.error_messages | to_entries[] | select(.key == "UNAVAILABLE: server is shutting down") | .value] | add // 0' "$b")
no_connection=$(jq '[.error_messages | to_entries[] | select(.key | startswith("UNAVAILABLE: failed to connect")) | .value] | add // 0' "$b")
others=$(jq -c '.error_messages | with_entries(select((.key == "UNAVAILABLE: server is shutting down" or (.key | startswith("UNAVAILABLE: failed to connect"))) | not))' "$b")
# The server's account: "answered since start: gRPC: OK 6555, UNAVAILABLE 46; HTTP: none".
answered=$(sed -n 's/.*answered since start: gRPC: \([^;]*\);.*/\1/p' "$work/server.log" | tail -n 1)
server_ok=$(sed -n 's/.*\bOK \([0-9]*\).*/\1/p' <<<"$answered")
server_other_codes=$(tr ',' '\n' <<<"$answered" | awk '$1 != "OK" && $1 != "UNAVAILABLE" && $1 != "" {print $1}' | paste -sd' ' -)
client_ok=$(jq .ok "$b")
states=$(grep -v '^polls ' "$work/watch.txt" | awk '{ $1 = ""; sub(/^ /, ""); print }' |
  sed 's/^ERROR .*/ERROR/' | uniq | paste -sd' ' -)
not_serving_ms=$(awk '$2 == "NOT_SERVING" {print $1; exit}' "$work/watch.txt")
record --arg load "$(load_average)" --argjson r "$(cat "$b")" --argjson exit_status "$status" \
  --argjson exit_seconds "$exit_seconds" --argjson grace "$grace_seconds" --arg states "$states" \
  --argjson queued "${queued:-0}" --argjson in_flight "${in_flight:-0}" \
  --argjson refused "$refused" --argjson no_connection "$no_connection" --argjson others "$others" \
  --arg answered "$answered" \
  '{phase: "shutdown", exit_status: $exit_status, exit_seconds_after_sigterm: $exit_seconds,
    shutdown_grace_seconds: $grace, queued_at_sigterm: $queued, in_flight_at_sigterm: $in_flight,
    calls: $r.requests, codes: $r.codes, unavailable_refused_by_server: $refused,
    unavailable_no_connection: $no_connection, other_unavailable: $others,
    server_answered_grpc: $answered,
    ok_p99_seconds: $r.ok_latency_seconds.p99, health_states: $states, load_average: $load}'
tail -n 1 "$summary"

check "the server exits 0 (got $status)" test "$status" -eq 0
check "the server exits within the grace + 2 s (took $exit_seconds s)" \
  holds '$a <= $b + 2' "$exit_seconds" "$grace_seconds"
check "the server logged the SIGTERM" grep -q "received SIGTERM" "$work/server.log"
check "all queued work finished" \
  grep -q "stopped: all queued and running work finished" "$work/server.log"
check "calls were in flight at the SIGTERM ($in_flight)" test "${in_flight:-0}" -gt 0
check "health went SERVING, NOT_SERVING, then unreachable (saw: $states)" \
  test "$states" = "SERVING NOT_SERVING ERROR"
check "only OK and UNAVAILABLE: $(jq -c .codes "$b")" \
  jq -e '.codes | keys - ["OK", "UNAVAILABLE"] | length == 0' "$b" >/dev/null
check "the server logged what it answered (got: $answered)" test -n "$server_ok"
check "the server answered only OK and UNAVAILABLE (others: ${server_other_codes:-none})" \
  test -z "$server_other_codes"
resets=$(jq '[.error_messages | to_entries[] | select(.key | test("Connection reset by peer")) | .value] | add // 0' "$b")
check "every OK the server sent arrived or its call ended in a reset (server $server_ok, \
load generator $client_ok, resets $resets)" \
  holds '$a >= $b and $a - $b <= $c' "$server_ok" "$client_ok" "$resets"
check "some calls succeeded: $(jq -c .codes "$b")" holds '$a > 0' "$(jq .ok "$b")"

log "exit 0 after $exit_seconds s; NOT_SERVING seen ${not_serving_ms:-?} ms into the watch; \
codes $(jq -c .codes "$b"): $refused refused by the server, $no_connection after it closed its port"
log "all checks passed"
