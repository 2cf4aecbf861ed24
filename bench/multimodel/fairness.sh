#!/usr/bin/env bash
# Fairness between served models: one encoder-server serving two models of
# the MiniLM-L6 shape (random weights), "a" and "b". Model b's latency at
# concurrency 1 (encoder-client bench, closed loop) is measured with model a
# idle and with model a under load at concurrency 32; the models take turns
# on the engine (server/core/batching/engine_turns.h), so b's short batch waits for
# one layer of a's batch in progress, never for a's queue. Rounds alternate idle and
# loaded; figures are medians. Goal (bench/README.md): b's p50 with a loaded
# within 2x of b's p50 with a idle.
#
#   bench/multimodel/fairness.sh [BUILD_DIR]        (default: build/)
#   ROUNDS=3 SECONDS_EACH=5
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
rounds="${ROUNDS:-3}"
seconds_each="${SECONDS_EACH:-5}"

# What tests/support/e2e_lib.sh's start_server, make_model and cleanup use.
# shellcheck disable=SC2034
name=fairness
# shellcheck disable=SC2034
server_bin="$build/server/app/encoder-server"
client_bin="$build/client/encoder-client"
cli_bin="$build/engine/encoder-cli"
work=$(mktemp -d)
# shellcheck source-path=SCRIPTDIR/../..
# shellcheck source=tests/support/e2e_lib.sh
source "$here/../../tests/support/e2e_lib.sh"
trap cleanup EXIT
require_tools jq lscpu

# "P50_MS P99_MS REQUESTS_PER_SECOND" of a closed loop on model $1 at concurrency $2.
bench() {
  # shellcheck disable=SC2154  # port: set by start_server
  "$client_bin" bench --target "127.0.0.1:$port" --model "$1" --concurrency "$2" \
    --duration "${3:-$seconds_each}s" --text-words 5:15 --json --progress=false |
    jq -r '"\(.latency_seconds.p50 * 1000 | . * 100 | round / 100) \(.latency_seconds.p99 * 1000 | . * 100 | round / 100) \(.requests_per_second | round)"'
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "fairness: $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p')," \
  "$(nproc) CPUs; $rounds rounds of ${seconds_each}s; load average $(load_average)"
make_model "$work/minilm" 384 6 12 1536
start_server "a=$work/minilm" --model "b=$work/minilm"
sed -n 's/.*\(engine threads: .*\)/\1/p' "$work/server.log"
bench a 8 2 >/dev/null  # warm-up of both
bench b 1 2 >/dev/null

idle_p50=() loaded_p50=() loaded_p99=() idle_p99=() a_rps=()
for round in $(seq 1 "$rounds"); do
  read -r p50 p99 _ < <(bench b 1)
  idle_p50+=("$p50")
  idle_p99+=("$p99")
  # a at concurrency 32 for longer than b's measurement, which starts once
  # a's queue has filled.
  bench a 32 $((seconds_each + 3)) >"$work/a.out" &
  a_pid=$!
  sleep 1
  read -r p50 p99 _ < <(bench b 1)
  wait "$a_pid"
  loaded_p50+=("$p50")
  loaded_p99+=("$p99")
  read -r _ _ rps <"$work/a.out"
  a_rps+=("$rps")
  echo "round $round: b alone p50 ${idle_p50[-1]} ms (p99 ${idle_p99[-1]}); b beside a at" \
    "concurrency 32: p50 $p50 ms (p99 $p99), a $rps req/s; load average $(load_average)"
done
idle=$(median "${idle_p50[@]}")
loaded=$(median "${loaded_p50[@]}")
echo
echo "| model b, concurrency 1 (median of $rounds) | p50 | p99 |"
echo "|---|---:|---:|"
echo "| a idle | $idle ms | $(median "${idle_p99[@]}") ms |"
echo "| a at concurrency 32 ($(median "${a_rps[@]}") req/s) | $loaded ms | $(median "${loaded_p99[@]}") ms |"
echo "ratio loaded/idle p50: $(jq -n "$loaded / $idle * 100 | round / 100")x (goal: <= 2x)"
stop_server
