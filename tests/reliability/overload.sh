#!/usr/bin/env bash
# Overload, with the real binaries on 127.0.0.1: the server (defaults except
# model, ports and --threads 2) first gets a closed loop that saturates it for
# 10 s, which measures its capacity C (OK calls/s) on this machine now; then an
# open loop offers 4 C calls/s (Poisson) for 60 s from 8 connections ("several
# clients"), each call with a 1 s deadline, while the server's RSS and
# /metrics are sampled every 0.5 s; then C is measured again for 10 s (the
# machine may be shared: the reference is the mean of the two measurements).
# Under sanitizers the phases are 4 s, 20 s and 4 s, with the same assertions.
#
# Asserts:
#   - the server stays up (alive, health SERVING after the overload);
#   - every call ends OK, RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED (client's
#     codes), and the server counted no UNAVAILABLE or INTERNAL;
#   - no call lasts past its deadline + 0.25 s, measured from the call's
#     actual send (bench's since_send_seconds.max: an open loop's latency
#     counts from the intended start, which would include client-side waits
#     the deadline does not cover);
#   - the generator really overloaded the server: offered >= 3 C;
#   - OK throughput during the overload >= 60 % of C: no congestion collapse.
#     The target is 90 %; on the 2-core machines, where the load generator and
#     the refused calls' gRPC handling share the cores with the engine's
#     OpenMP team, we measure 82-90 % (RELIABILITY.md): the engine itself
#     runs 7-14 % slower per token while ~200 refused calls/s are handled
#     beside it (the summary's engine_microseconds_per_token against the
#     capacity runs' shows it). So CI guards against collapse (before the
#     batcher's admission by expected wait: 6-51 %) at 60 %, with room for
#     slower CI machines, and the summary records the ratio against the 90 %
#     target;
#   - peak RSS (VmHWM) under the bound derived below.
# Writes JSON lines (capacity, overload, summary) to the summary file.
#
# Usage: overload.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI RELIABILITY_PROBE SUMMARY_JSONL
set -euo pipefail
name=overload
source "$(dirname "$0")/../support/e2e_lib.sh"
take_arguments "$@"
trap cleanup EXIT
require_tools jq curl
: >"$summary"

# Under sanitizers 4 s and 20 s (load_seconds): the same ratios, fewer calls.
capacity_seconds=$(load_seconds 10 4)
overload_seconds=$(load_seconds 60 20)
overload_factor=4
deadline_seconds=1
slack_seconds=0.25
connections=8
# Workload: 8 synthetic texts of 4..16 words per call (capacity and overload
# alike). Changed from one text per call: with one short text a call costs
# the engine ~1 ms and gRPC (server and client, on the same 2 cores) about a
# third of that, so at 4 x capacity (~4,600 calls/s) the RPC handling of the
# refused calls alone took the cores the engine needs (measured: server in
# flight 51,000 calls stuck in gRPC, engine at 215 inputs/s against a capacity
# of ~900 calls/s). Embedding clients batch their texts; with 8 per call,
# compute dominates the per-call cost, as in production. The assertions are
# unchanged.
inputs_per_call=8

# The model: MiniLM-L6's shape, so that compute dominates a call's cost. With a
# tiny model (hidden 128, 2 layers) a call cost ~0.8 ms in all, and at 4 x
# capacity the gRPC handling of ~3,900 refused calls/s (server and client on
# the same 2 cores) took the CPU the engine needed: measured on a quiet
# machine, OK fell to 33 % of capacity with the engine 91 % busy. That
# measures RPC overhead, not queueing; production embedding models are this
# size or larger. A full batch (256 inputs of ~12 tokens) still takes well
# under the 1 s deadline.
hidden=384 layers=6 heads=12 intermediate=1536
make_model "$work/model" $hidden $layers $heads $intermediate
start_server "$work/model" --threads 2
log "server on 127.0.0.1:$port (metrics $metrics_port), load average $(load_average)"

# ---- the RSS bound, from the model and the server's default limits -------------
# weights: float32 as in the file, x2 for oneDNN's blocked copies and padding
# workspace: activations sized at load from --max-batch-tokens (16384, rounded
#   up to a row bucket, at most x1.125): rows x (7 H + I) floats
#   (engine/src/layers/workspace.cc: hidden, normed, context, sublayer [H], qkv [3H],
#   intermediate [I]), plus the attention's fixed scratch per thread
#   (kernels::kAttentionScratchFloats = 256 x 128 + 3 x 256 floats)
# queue: --max-queue-tokens (65536) x 64 bytes (ids, token types, bookkeeping)
# calls held: a call whose client gave up (deadline) frees its HTTP/2 stream
#   at once but stays in the queue until the batcher drops it, so the server
#   holds up to connections x --max-concurrent-streams (256) calls plus the
#   queue's --max-queue-tokens / 6 requests (the bench's shortest text, 4
#   words, is 6 tokens with [CLS] and [SEP]); 32 KiB each (request and
#   response protobufs and their serialized copies, the gRPC call arena, the
#   reactor and HTTP/2 buffers)
# base: 64 MiB for code, libraries (ICU data, oneDNN, gRPC), threads, allocator
weights=$(stat -c %s "$work/model/model.safetensors")
workspace=$((4 * 16384 * 9 / 8 * (7 * hidden + intermediate) + 4 * 2 * (256 * 128 + 3 * 256)))
queue=$((65536 * 64))
calls=$(((connections * 256 + 65536 / 6) * 32 * 1024))
base=$((64 * 1024 * 1024))
rss_bound_kib=$(((2 * weights + workspace + queue + calls + base) / 1024))
log "RSS bound $((rss_bound_kib / 1024)) MiB: weights 2 x $((weights / 1024)) KiB, workspace \
$((workspace / 1048576)) MiB, queue $((queue / 1048576)) MiB, calls $((calls / 1048576)) MiB, base 64 MiB"

bench() { "$client_bin" bench --target "127.0.0.1:$port" --json --progress=false "$@"; }

# ---- capacity: a closed loop deep enough to fill batches of 256 ---------------
measure_capacity() {  # measure_capacity PHASE: prints OK calls/s
  local before after
  before=$(scrape)
  bench --concurrency 128 --connections $connections --duration ${capacity_seconds}s \
    --inputs-per-request $inputs_per_call --timeout 30s >"$work/$1.json" 2>"$work/$1.err" || fail "$1 bench failed: $(cat "$work/$1.err")"
  after=$(scrape)
  local ok_rate
  ok_rate=$(jq '.ok / .elapsed_seconds' "$work/$1.json")
  record --arg phase "$1" --arg load "$(load_average)" --argjson r "$(cat "$work/$1.json")" \
    --argjson us_per_token "$(engine_us_per_token "$before" "$after")" \
    '{phase: $phase, ok_per_second: ($r.ok / $r.elapsed_seconds), codes: $r.codes,
      ok_p50_seconds: $r.ok_latency_seconds.p50, ok_p99_seconds: $r.ok_latency_seconds.p99,
      engine_microseconds_per_token: $us_per_token, load_average: $load}'
  echo "$ok_rate"
}
capacity=$(measure_capacity capacity)
check "the capacity run was all OK: $(jq -c .codes "$work/capacity.json")" \
  holds '$a == $b' "$(jq .ok "$work/capacity.json")" "$(jq .requests "$work/capacity.json")"
log "capacity $(printf %.1f "$capacity") OK calls/s (closed loop, 128 calls of $inputs_per_call inputs in flight), load average $(load_average)"

# ---- overload -------------------------------------------------------------------
rate=$(jq -n --argjson c "$capacity" "\$c * $overload_factor")
hwm_before=$(hwm_kib "$server_pid")
metrics_before=$(scrape)
sample_server "$work/samples.txt" $((overload_seconds + 15)) &
sampler_pid=$!
extra_pids+=("$sampler_pid")
log "offering $(printf %.1f "$rate") calls/s for ${overload_seconds} s, deadline ${deadline_seconds} s"
timer=()  # the client's own CPU time, when GNU time is there: it shares the cores
if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -o "$work/client.time" -f "%U %S"); fi
"${timer[@]}" "$client_bin" bench --target "127.0.0.1:$port" --json --progress=false \
  --rate "$rate" --concurrency 100000 --connections $connections \
  --inputs-per-request $inputs_per_call \
  --duration ${overload_seconds}s --timeout ${deadline_seconds}s >"$work/overload.json" \
  2>"$work/overload.err" || fail "overload bench failed: $(cat "$work/overload.err")"
client_cpu=$(awk '{print $1 + $2}' "$work/client.time" 2>/dev/null || echo null)
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
kill -0 "$server_pid" 2>/dev/null || fail "the server died during the overload"
check "health SERVING after the overload" \
  test "$("$client_bin" health --target "127.0.0.1:$port" --timeout 5s 2>/dev/null)" = SERVING
peak_rss_kib=$(hwm_kib "$server_pid")
sampled_peak_kib=$(awk 'BEGIN {m = 0} $1 > m {m = $1} END {print m}' "$work/samples.txt")
peak_queue_tokens=$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$work/samples.txt")
peak_in_flight=$(awk 'BEGIN {m = 0} $3 > m {m = $3} END {print m}' "$work/samples.txt")
server_metrics=$(scrape)
# What the engine did during the overload, from the server's own counters.
delta() { jq -n "$(metric "$server_metrics" "$1") - $(metric "$metrics_before" "$1")"; }
engine_seconds=$(delta encoder_batch_duration_seconds_sum)
computed_inputs=$(delta encoder_batch_inputs_sum)
batches=$(delta encoder_batch_inputs_count)
overload_us_per_token=$(engine_us_per_token "$metrics_before" "$server_metrics")
server_cpu=$(delta process_cpu_seconds_total)
server_codes=$(awk '$1 ~ /^encoder_requests_total\{/ && $1 ~ /rpc="Encode"/ {
  match($1, /code="[A-Z_]+"/); c = substr($1, RSTART + 6, RLENGTH - 7); printf "%s\"%s\":%d", s, c, $2; s = "," }
  BEGIN {printf "{"} END {printf "}"}' <<<"$server_metrics")

capacity_after=$(measure_capacity capacity_after)
reference=$(jq -n --argjson a "$capacity" --argjson b "$capacity_after" '($a + $b) / 2')

o="$work/overload.json"
offered=$(jq '.requests / .elapsed_seconds' "$o")
served=$(jq '.ok / .elapsed_seconds' "$o")
record --arg load "$(load_average)" --argjson r "$(cat "$o")" --argjson capacity "$capacity" \
  --argjson capacity_after "$capacity_after" --argjson reference "$reference" \
  --argjson target_rate "$rate" --argjson peak_rss_kib "$peak_rss_kib" \
  --argjson sampled_peak_kib "$sampled_peak_kib" --argjson rss_bound_kib "$rss_bound_kib" \
  --argjson rss_before_kib "$hwm_before" --argjson server_codes "$server_codes" \
  --argjson peak_queue_tokens "${peak_queue_tokens:-0}" --argjson peak_in_flight "${peak_in_flight:-0}" \
  --argjson engine_seconds "$engine_seconds" --argjson computed_inputs "$computed_inputs" \
  --argjson server_cpu "$server_cpu" --argjson client_cpu "$client_cpu" \
  --argjson batches "$batches" --argjson us_per_token "$overload_us_per_token" \
  --argjson capacity_us_per_token "$(jq -s '[.[] | select(.phase | startswith("capacity")) | .engine_microseconds_per_token] | add / length' "$summary")" \
  '{phase: "summary", capacity_before: $capacity, capacity_after: $capacity_after,
    capacity_reference: $reference, target_rate: $target_rate,
    offered_per_second: ($r.requests / $r.elapsed_seconds), ok_per_second: ($r.ok / $r.elapsed_seconds),
    ok_over_capacity: (($r.ok / $r.elapsed_seconds) / $reference),
    calls: $r.requests, codes: $r.codes, server_codes: $server_codes,
    ok_p50_seconds: $r.ok_latency_seconds.p50, ok_p99_seconds: $r.ok_latency_seconds.p99,
    max_since_send_seconds: $r.since_send_seconds.max, max_since_intended_start_seconds: $r.latency_seconds.max,
    peak_rss_mib: ($peak_rss_kib / 1024), sampled_peak_rss_mib: ($sampled_peak_kib / 1024),
    rss_before_overload_mib: ($rss_before_kib / 1024), rss_bound_mib: ($rss_bound_kib / 1024),
    peak_queue_tokens: $peak_queue_tokens, peak_in_flight: $peak_in_flight,
    engine_busy_fraction: ($engine_seconds / $r.elapsed_seconds),
    computed_inputs_per_second: ($computed_inputs / $r.elapsed_seconds),
    mean_batch_inputs: ($computed_inputs / $batches),
    engine_microseconds_per_token: $us_per_token,
    capacity_engine_microseconds_per_token: $capacity_us_per_token,
    server_cpu_seconds: $server_cpu, client_cpu_seconds: $client_cpu, load_average: $load}'
tail -n 1 "$summary"

# ---- the assertions -------------------------------------------------------------
codes=$(jq -c .codes "$o")
check "only OK, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED: $codes" \
  jq -e '.codes | keys - ["OK", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"] | length == 0' "$o" >/dev/null
check "the server counted no UNAVAILABLE or INTERNAL: $server_codes" \
  jq -en --argjson s "$server_codes" '($s.UNAVAILABLE // 0) == 0 and ($s.INTERNAL // 0) == 0' >/dev/null
check "no call past its deadline + ${slack_seconds} s: max $(jq .since_send_seconds.max "$o") s from send" \
  holds '$a <= $b + $c' "$(jq .since_send_seconds.max "$o")" "$deadline_seconds" "$slack_seconds"
check "the load overloaded: offered $offered/s >= 3 x capacity $capacity/s" \
  holds '$a >= 3 * $b' "$offered" "$capacity"
check "no congestion collapse: OK $served/s >= 60 % of capacity $reference/s (before $capacity, after $capacity_after; target 90 %)" \
  holds '$a >= 0.6 * $b' "$served" "$reference"
check_memory "peak RSS $((peak_rss_kib / 1024)) MiB under the bound $((rss_bound_kib / 1024)) MiB" \
  test "$peak_rss_kib" -le "$rss_bound_kib"

log "offered $(printf %.1f "$offered")/s, OK $(printf %.1f "$served")/s ($(jq -n "$served / $reference * 100 | floor")% of capacity), codes $codes, \
OK p99 $(jq .ok_latency_seconds.p99 "$o") s, engine $(printf %.0f "$overload_us_per_token") us/token \
(capacity runs $(tail -n 1 "$summary" | jq '.capacity_engine_microseconds_per_token | floor')), peak RSS $((peak_rss_kib / 1024)) MiB (bound $((rss_bound_kib / 1024)) MiB)"
log "all checks passed; figures in $summary"
