#!/usr/bin/env bash
# Slow and abusive clients, with the real binaries on 127.0.0.1. One server
# (model, ports, --threads 2; defaults otherwise). A well-behaved client
# (closed loop, 8 calls in flight, 3 s) measures the baseline latency first.
#
# (a) 500 idle connections (fewer if ulimit -n is low): half bare TCP that
#     never send a byte, half that complete the HTTP/2 preface and SETTINGS
#     exchange and then stay silent. Asserts: the server holds them (its open
#     fds grow by at least 90 % of them), its RSS grows by at most 64 KiB per
#     connection + 32 MiB, the well-behaved client is served meanwhile (all
#     OK, p99 <= 5 x baseline + 0.5 s, see below), and the fds come back when
#     they go.
# (b) A client that opens EncodeStream, writes 5000 requests (16 texts of 20
#     words, pooling NONE: ~180 KB responses) and never reads. Asserts: the
#     server reads at most 32 + 32 of them while holding them unanswered (the
#     per-stream cap, EncodeStreamReactor::kMaxInFlight, stops its reads),
#     its RSS stays under baseline + the engine workspace + 64 x the largest
#     response + 32 MiB, the well-behaved client is served meanwhile (all OK
#     within its 10 s timeout; its latency is recorded, see below), and when
#     that client's process dies the stream's calls are released (in flight
#     back to 0, fds back) within 10 s.
# (c) Oversize and over-limit requests: a message 1 MiB over the derived
#     --max-receive-message-bytes (0: 64 x (2 x 65536 + 32) + 10 x 16384 +
#     4096 = 8,558,592 bytes with the defaults) is RESOURCE_EXHAUSTED from
#     gRPC; a text of --max-text-bytes + 1 and 65 inputs (> --max-inputs-per-
#     request) are INVALID_ARGUMENT with messages naming the limit; the
#     largest request the other limits allow (64 texts of 64 KiB) passes gRPC's
#     check and gets the server's own answer (not RESOURCE_EXHAUSTED); all
#     while the well-behaved client is served (all OK).
# Writes JSON lines of figures to the summary file.
#
# Latency: (a) compares with a baseline measured just before it, so that the
# machine's load and the build (sanitizers) are the same on both sides, with
# a margin that holds under load: on a busy 2-core machine one scheduler
# stall adds 0.1 s or more to the p99 of a 3 s run (a run once missed "5 x
# baseline + 0.1 s" by 3 ms at load average 3 under ASan). In (b) the good
# client's calls queue behind the stream's own batches (up to 11,000 tokens),
# so its p99 measures the engine's batch time under the machine's load (2.3
# and 2.9 s against a 0.2 to 0.4 s baseline at load average 6 on 2 cores;
# the former bound, 1.2 s there, passed only on a quiet machine), not the
# stream's handling: (b) asserts that every call is answered OK within the
# client's timeout and records the p99, with a baseline taken just before it,
# in the summary file (RELIABILITY.md). What the checks guard against, a
# server that stops serving others while it holds idle connections or an
# unread stream, costs seconds or timeouts.
#
# Usage: slow_clients.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI RELIABILITY_PROBE SUMMARY_JSONL
set -euo pipefail
name=slow_clients
source "$(dirname "$0")/../support/e2e_lib.sh"
take_arguments "$@"
trap cleanup EXIT
require_tools jq curl
: >"$summary"

hidden=128 intermediate=512
make_model "$work/model" $hidden 2 4 $intermediate
start_server "$work/model" --threads 2
target="127.0.0.1:$port"
fds() { ls "/proc/$server_pid/fd" 2>/dev/null | wc -l; }
in_flight() { metric "$(scrape)" encoder_inflight_requests; }

# A well-behaved client: prints its JSON report to $1. 3 s (1.5 s under
# sanitizers: load_seconds), four times over.
good_seconds=$(load_seconds 3 1.5)
good_client() {
  "$client_bin" bench --target "$target" --concurrency 8 --duration ${good_seconds}s --timeout 10s --json \
    --progress=false >"$1" 2>"$1.err" || fail "the well-behaved client failed: $(cat "$1.err")"
}
all_ok() { jq -e '.ok == .requests and .requests > 0' "$1" >/dev/null; }
p99() { jq .ok_latency_seconds.p99 "$1"; }

good_client "$work/warm.json"  # first touches (allocator, engine buffers for small batches)
good_client "$work/base.json"
base_p99=$(p99 "$work/base.json")
base_rss=$(rss_kib "$server_pid")
base_fds=$(fds)
log "baseline: p99 $base_p99 s, RSS $((base_rss / 1024)) MiB, $base_fds fds, load average $(load_average)"
record --arg load "$(load_average)" --argjson p99 "$base_p99" --argjson rss "$base_rss" \
  --argjson fds "$base_fds" '{phase: "baseline", ok_p99_seconds: $p99, rss_mib: ($rss / 1024), fds: $fds, load_average: $load}'

# ---- (a) idle connections ---------------------------------------------------------
want=500
limit=$(ulimit -n)
if [ "$limit" != unlimited ] && [ "$limit" -lt $((want + 100)) ]; then
  want=$((limit - 100))
  log "ulimit -n is $limit: $want idle connections"
fi
"$probe_bin" idle-connections 127.0.0.1 "$port" "$want" 20 >"$work/idle.txt" 2>"$work/idle.err" &
idle_pid=$!
extra_pids+=("$idle_pid")
for _ in $(seq 1 300); do grep -q '^connected' "$work/idle.txt" && break; sleep 0.1; done
connected=$(sed -n 's/^connected //p' "$work/idle.txt")
check "the idle connections opened ($(cat "$work/idle.err"))" test "${connected:-0}" -eq "$want"
sleep 1
good_client "$work/idle_good.json"
idle_fds=$(fds)
idle_rss=$(rss_kib "$server_pid")
kill "$idle_pid" 2>/dev/null || true
wait "$idle_pid" 2>/dev/null || true
fds_after=""
for _ in $(seq 1 100); do
  fds_after=$(fds)
  [ "$fds_after" -le $((base_fds + 5)) ] && break
  sleep 0.1
done
record --arg load "$(load_average)" --argjson n "$want" --argjson fds "$idle_fds" \
  --argjson rss "$idle_rss" --argjson base_rss "$base_rss" --argjson fds_after "$fds_after" \
  --argjson r "$(cat "$work/idle_good.json")" \
  '{phase: "idle_connections", connections: $n, server_fds: $fds, server_fds_after: $fds_after,
    rss_mib: ($rss / 1024), rss_growth_kib_per_connection: (($rss - $base_rss) / $n),
    good_client_codes: $r.codes, good_client_ok_p99_seconds: $r.ok_latency_seconds.p99, load_average: $load}'
tail -n 1 "$summary"
check "the server holds the idle connections: $idle_fds fds (base $base_fds)" \
  test "$idle_fds" -ge $((base_fds + want * 9 / 10))
check_memory "RSS with $want idle connections: $((idle_rss / 1024)) MiB <= base + 64 KiB each + 32 MiB" \
  test "$idle_rss" -le $((base_rss + want * 64 + 32 * 1024))
check "the good client is all OK beside idle connections: $(jq -c .codes "$work/idle_good.json")" \
  all_ok "$work/idle_good.json"
check "the good client's p99 $(p99 "$work/idle_good.json") s <= 5 x $base_p99 + 0.5 s" \
  holds '$a <= 5 * $b + 0.5' "$(p99 "$work/idle_good.json")" "$base_p99"
check "fds come back when the idle connections close ($fds_after, base $base_fds)" \
  test "$fds_after" -le $((base_fds + 5))

# ---- (b) a stream that is never read ------------------------------------------------
good_client "$work/base_b.json"  # the baseline under the load of now, for the summary
log "baseline before (b): p99 $(p99 "$work/base_b.json") s, load average $(load_average)"
before=$(scrape)
read_before=$(awk '$1 ~ /^encoder_requests_total\{/ && /rpc="EncodeStream"/ {s += $2} END {print s + 0}' <<<"$before")
"$probe_bin" stream-no-read "$target" 5000 16 20 8 >"$work/stream.txt" 2>"$work/stream.err" &
stream_pid=$!
extra_pids+=("$stream_pid")
sleep 2
good_client "$work/stream_good.json"
peak_in_flight=0
stream_rss=0
for _ in $(seq 1 20); do  # while the stream is held (8 s in all)
  kill -0 "$stream_pid" 2>/dev/null || break
  n=$(in_flight)
  [ "${n:-0}" -gt "$peak_in_flight" ] && peak_in_flight=$n
  r=$(rss_kib "$server_pid")
  [ "$r" -gt "$stream_rss" ] && stream_rss=$r
  sleep 0.25
done
for _ in $(seq 1 100); do kill -0 "$stream_pid" 2>/dev/null || break; sleep 0.1; done
wait "$stream_pid" 2>/dev/null || true
written=$(sed -n 's/^written //p' "$work/stream.txt")
released=""
fds_after=""
for _ in $(seq 1 100); do  # 10 s for the server to notice and free the stream
  released=$(in_flight)
  fds_after=$(fds)
  [ "${released:-1}" = 0 ] && [ "$fds_after" -le $((base_fds + 5)) ] && break
  sleep 0.1
done
after=$(scrape)
stream_requests=$(($(awk '$1 ~ /^encoder_requests_total\{/ && /rpc="EncodeStream"/ {s += $2} END {print s + 0}' <<<"$after") - read_before))
# The largest response: 16 inputs of at most 128 tokens, hidden floats each, as
# float32 in a protobuf (x2: the message and its serialized copy).
largest_response=$((16 * 128 * hidden * 4 * 2))
workspace=$((4 * 16384 * 9 / 8 * (7 * hidden + intermediate)))
stream_bound=$((base_rss + (workspace + 64 * largest_response) / 1024 + 32 * 1024))
record --arg load "$(load_average)" --argjson written "${written:-0}" --argjson read "$stream_requests" \
  --argjson peak "$peak_in_flight" --argjson rss "$stream_rss" --argjson bound "$stream_bound" \
  --argjson released "${released:-null}" --argjson fds_after "$fds_after" \
  --argjson r "$(cat "$work/stream_good.json")" --argjson b "$(cat "$work/base_b.json")" \
  '{phase: "stream_never_read", written_by_client: $written, answered_or_cancelled_by_server: $read,
    peak_in_flight: $peak, peak_rss_mib: ($rss / 1024), rss_bound_mib: ($bound / 1024),
    in_flight_after_client_died: $released, fds_after: $fds_after,
    good_client_codes: $r.codes, good_client_ok_p99_seconds: $r.ok_latency_seconds.p99,
    good_client_baseline_p99_seconds: $b.ok_latency_seconds.p99, load_average: $load}'
tail -n 1 "$summary"
check "the stream client wrote requests (${written:-0})" test "${written:-0}" -gt 64
check "the server took at most 64 of the stream's requests (took $stream_requests of ${written:-0})" \
  test "$stream_requests" -le 64
check "in flight during the stream $peak_in_flight <= 32 + the good client's 8" \
  test "$peak_in_flight" -le 40
check_memory "RSS during the stream $((stream_rss / 1024)) MiB <= $((stream_bound / 1024)) MiB" \
  test "$stream_rss" -le "$stream_bound"
check "the good client is all OK beside the stream: $(jq -c .codes "$work/stream_good.json")" \
  all_ok "$work/stream_good.json"
check "the stream's calls are released when its client dies (in flight ${released:-?})" \
  test "${released:-1}" = 0
check "fds come back after the stream client died ($fds_after, base $base_fds)" \
  test "$fds_after" -le $((base_fds + 5))

# ---- (c) oversize and over-limit requests ---------------------------------------------
# --max-receive-message-bytes' default, derived from the other limits (server_config.h)
receive_limit=$((64 * (2 * 65536 + 32) + 10 * 16384 + 4096))
"$client_bin" bench --target "$target" --concurrency 8 --duration 4s --timeout 10s --json \
  --progress=false >"$work/oversize_good.json" 2>"$work/oversize_good.err" &
good_pid=$!
extra_pids+=("$good_pid")
sleep 0.5
declare -A answers
for i in 1 2 3 4 5; do
  answers[oversize]=$("$probe_bin" encode-sized "$target" 1 $((receive_limit + 1024 * 1024)))
  answers[long_text]=$("$probe_bin" encode-sized "$target" 1 65537)
  answers[many_inputs]=$("$probe_bin" encode-sized "$target" 65 10)
done
answers[largest_valid_texts]=$("$probe_bin" encode-sized "$target" 64 65536)
for _ in $(seq 1 100); do kill -0 "$good_pid" 2>/dev/null || break; sleep 0.1; done
wait "$good_pid" || fail "the well-behaved client failed: $(cat "$work/oversize_good.err")"
record --arg load "$(load_average)" --arg oversize "${answers[oversize]}" \
  --arg long_text "${answers[long_text]}" --arg many_inputs "${answers[many_inputs]}" \
  --arg largest "${answers[largest_valid_texts]}" --argjson r "$(cat "$work/oversize_good.json")" \
  '{phase: "oversize", over_receive_limit_message: $oversize, text_over_max_text_bytes: $long_text,
    inputs_over_max: $many_inputs, sixty_four_texts_of_64_kib: $largest,
    good_client_codes: $r.codes, good_client_ok_p99_seconds: $r.ok_latency_seconds.p99, load_average: $load}'
tail -n 1 "$summary"
check "a message over the derived limit is RESOURCE_EXHAUSTED: ${answers[oversize]}" \
  grep -qE "^RESOURCE_EXHAUSTED: .*larger than max \([0-9]+ vs\. $receive_limit\)" <<<"${answers[oversize]}"
check "a text over --max-text-bytes is INVALID_ARGUMENT: ${answers[long_text]}" \
  grep -qx "INVALID_ARGUMENT: input 0: text is 65537 bytes, more than the limit of 65536 (--max-text-bytes)" \
  <<<"${answers[long_text]}"
check "64 texts of 64 KiB pass gRPC's size check: ${answers[largest_valid_texts]}" \
  test "${answers[largest_valid_texts]#RESOURCE_EXHAUSTED}" = "${answers[largest_valid_texts]}"
check "65 inputs are INVALID_ARGUMENT: ${answers[many_inputs]}" \
  grep -qx "INVALID_ARGUMENT: request has 65 inputs, more than the limit of 64 (--max-inputs-per-request)" \
  <<<"${answers[many_inputs]}"
check "the good client is all OK beside oversize calls: $(jq -c .codes "$work/oversize_good.json")" \
  all_ok "$work/oversize_good.json"
check "the server is still SERVING" \
  test "$("$client_bin" health --target "$target" --timeout 5s 2>/dev/null)" = SERVING

log "64 texts of 64 KiB (each within --max-text-bytes): ${answers[largest_valid_texts]}"
log "all checks passed; figures in $summary"
