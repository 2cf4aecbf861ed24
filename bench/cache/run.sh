#!/usr/bin/env bash
# The result cache (--cache-bytes, docs/configuration.md#result-cache): the
# latency of a hit against a miss, and throughput at a 50% hit rate against
# no cache, on gRPC with encoder-client bench (--repeat-fraction: that
# fraction of calls repeats one request, every other call's texts are new),
# MiniLM-L6 shape (random weights), one synthetic text of 4..16 words a call.
#
#   bench/cache/run.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (default: build/ 5 3)
#   CACHE_BENCH_THREADS=2    the engine's threads
#
# Each round starts a server with a 256 MiB cache and runs, at concurrency 1,
# all hits (--repeat-fraction 1) and all misses (0), then at concurrency 8 a
# 50% hit rate; then a server without the cache runs the same 50% mix and
# the misses at concurrency 1. Prints each run and a markdown table of the
# medians over the rounds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
seconds="${2:-5}"
rounds="${3:-3}"
threads="${CACHE_BENCH_THREADS:-2}"

# What tests/support/e2e_lib.sh's start_server, make_model and cleanup use.
# shellcheck disable=SC2034
name=cache_bench
# shellcheck disable=SC2034
server_bin="$build/server/app/encoder-server"
client_bin="$build/client/encoder-client"
cli_bin="$build/engine/encoder-cli"
work=$(mktemp -d)
# shellcheck source-path=SCRIPTDIR/../..
# shellcheck source=tests/support/e2e_lib.sh
source "$root/tests/support/e2e_lib.sh"
trap cleanup EXIT
require_tools jq lscpu

cpu="$(lscpu | sed -n 's/^Model name: *//p'), family $(lscpu | sed -n 's/^CPU family: *//p')"
cpu+=" model $(lscpu | sed -n 's/^Model: *//p')"
echo "cache_bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $(nproc) CPUs;" \
  "$rounds rounds of ${seconds}s; engine threads $threads; load average $(load_average)"
make_model "$work/minilm" 384 6 12 1536

# "P50_MS P99_MS REQ_PER_S" of gRPC at concurrency $1, repeat fraction $2.
# Each run has a seed of its own, so its texts are new to the server (the
# unique calls' prefixes spell the call's index, which every run counts from
# 0); with --repeat-fraction 0 the calls take the texts in turn (4,096 of
# them, more than a run at concurrency 1 sends).
seed=1
run() {
  seed=$((seed + 1))
  "$client_bin" bench --target "127.0.0.1:$port" --concurrency "$1" --duration "${seconds}s" \
    --repeat-fraction "$2" --seed "$seed" --json --progress=false >"$work/bench.json"
  [ "$(jq .errors "$work/bench.json")" = 0 ] || fail "errors: $(cat "$work/bench.json")"
  jq -r '"\(.latency_seconds.p50 * 1000) \(.latency_seconds.p99 * 1000) \(.requests_per_second)"' \
    "$work/bench.json"
}
# The median (of an even count, the lower middle value).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
round_to() { jq -n "$2 | . * $1 | round / $1"; }

declare -A p50 p99 rps
measure() {  # measure KEY CONCURRENCY REPEAT
  local a b r
  read -r a b r < <(run "$2" "$3")
  p50[$1]+=" $a"
  p99[$1]+=" $b"
  rps[$1]+=" $r"
  echo "$1: p50 $(round_to 1000 "$a") ms, p99 $(round_to 1000 "$b") ms, $(round_to 1 "$r") req/s"
}

for round in $(seq 1 "$rounds"); do
  echo "-- round $round (load average $(load_average))"
  start_server "$work/minilm" --threads "$threads" --cache-bytes 268435456
  run 8 0.5 >/dev/null  # warm-up
  measure "cache: hit, c=1" 1 1
  measure "cache: miss, c=1" 1 0
  before=$(scrape)
  measure "cache: 50% hits, c=8" 8 0.5
  text=$(scrape)
  hits=$(jq -n "$(metric "$text" encoder_cache_hits_total) - $(metric "$before" encoder_cache_hits_total)")
  misses=$(jq -n "$(metric "$text" encoder_cache_misses_total) - \
    $(metric "$before" encoder_cache_misses_total)")
  echo "   that run on the server: hits $hits, misses $misses," \
    "coalesced $(metric "$text" encoder_cache_coalesced_total) (whole run)," \
    "cache bytes $(metric "$text" encoder_cache_bytes)"
  stop_server
  start_server "$work/minilm" --threads "$threads"
  run 8 0.5 >/dev/null  # warm-up
  measure "no cache: 50% repeats, c=8" 8 0.5
  measure "no cache: miss, c=1" 1 0
  stop_server
done

echo
echo "| run | p50 ms | p99 ms | req/s |"
echo "|---|---:|---:|---:|"
for key in "cache: hit, c=1" "cache: miss, c=1" "no cache: miss, c=1" \
  "cache: 50% hits, c=8" "no cache: 50% repeats, c=8"; do
  # shellcheck disable=SC2086
  echo "| $key | $(round_to 1000 "$(median ${p50[$key]})") |" \
    "$(round_to 1000 "$(median ${p99[$key]})") | $(round_to 1 "$(median ${rps[$key]})") |"
done
