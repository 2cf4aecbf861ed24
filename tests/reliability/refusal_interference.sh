#!/usr/bin/env bash
# Measurement (not a CI test): how much slower the engine computes while the
# server refuses calls beside it. One server (the overload test's
# MiniLM-shaped model, --threads 2) is saturated by a closed loop (128 calls of
# 8 texts in flight) for 15 s alone, then for 15 s while a second client
# offers REFUSED_RATE calls/s (default 200, about what the overload test's
# 4 x capacity refuses) with a 3 ms deadline, which the batcher refuses at
# the door (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED). The engine's cost per
# token comes from the server's own batch histograms. Rounds alternate;
# medians are printed and written as JSON lines.
#
# RENICE_IO_THREADS=N (a what-if, not what the server does): after start-up,
# every server thread except the engine's (named encoder-server) gets nice N.
#
# Usage: refusal_interference.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI RELIABILITY_PROBE SUMMARY_JSONL [ROUNDS]
set -euo pipefail
name=refusal_interference
source "$(dirname "$0")/../support/e2e_lib.sh"
take_arguments "$@"
rounds=${6:-3}
trap cleanup EXIT
: >"$summary"
make_model "$work/model" 384 6 12 1536
start_server "$work/model" --threads 2
if [ -n "${RENICE_IO_THREADS:-}" ]; then
  for task in /proc/"$server_pid"/task/*; do
    [ "$(cat "$task/comm")" = encoder-server ] || renice -n "$RENICE_IO_THREADS" -p "${task##*/}" >/dev/null
  done
fi

saturate() {  # saturate PHASE: records the engine's us/token over a 15 s closed loop
  local before after
  before=$(scrape)
  "$client_bin" bench --target "127.0.0.1:$port" --json --progress=false --concurrency 128 \
    --connections 8 --duration 15s --inputs-per-request 8 --timeout 30s >"$work/$1.json"
  after=$(scrape)
  record --arg phase "$1" --argjson us "$(engine_us_per_token "$before" "$after")" \
    --argjson r "$(cat "$work/$1.json")" '{phase: $phase, engine_microseconds_per_token: $us,
      ok_per_second: ($r.ok / $r.elapsed_seconds)}'
}

for round in $(seq 1 "$rounds"); do
  saturate alone
  # Refused stream: exits non-zero (no call succeeds), which is the point.
  "$client_bin" bench --target "127.0.0.1:$port" --json --progress=false \
    --rate "${REFUSED_RATE:-200}" --concurrency 100000 --connections 8 --duration 16s \
    --inputs-per-request 8 --timeout 3ms >"$work/refused.json" 2>/dev/null &
  refused_pid=$!
  extra_pids+=("$refused_pid")
  sleep 0.5
  saturate with_refusals
  wait "$refused_pid" || true
  log "round $round: $(tail -n 2 "$summary" | jq -r '"\(.phase) \(.engine_microseconds_per_token | floor) us/token"' | paste -sd' ') \
refused codes $(jq -c .codes "$work/refused.json")"
done

median() { jq -s --arg p "$1" '[.[] | select(.phase == $p) | .engine_microseconds_per_token] | sort | .[length / 2 | floor]' "$summary"; }
alone=$(median alone)
with=$(median with_refusals)
record --argjson alone "$alone" --argjson with "$with" --arg nice "${RENICE_IO_THREADS:-0}" \
  --arg load "$(load_average)" '{phase: "summary", rounds: '"$rounds"', io_threads_nice: $nice,
    median_alone_us_per_token: $alone, median_with_refusals_us_per_token: $with,
    slowdown: ($with / $alone - 1), load_average: $load}'
log "median engine cost: alone $(printf %.1f "$alone") us/token, with ${REFUSED_RATE:-200} refused calls/s \
$(printf %.1f "$with") us/token ($(jq -n "($with / $alone - 1) * 100 | . * 10 | floor / 10")% slower)"
