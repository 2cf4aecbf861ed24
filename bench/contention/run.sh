#!/usr/bin/env bash
# Throughput at default settings, quiet and with a busy process (a shell
# loop, "the hog") pinned to one CPU: the engine alone (encoder-cli bench,
# MiniLM-L6 1 x 128 and BERT-base 8 x 128, random weights) and the server
# (encoder-server on the demo model's shape, encoder-client bench at
# concurrency 8 on the same machine). Rounds alternate quiet and busy; each
# figure is the median over the rounds, and "busy/quiet" is the share of
# the quiet throughput that is left (goal in bench/README.md: >= 40%).
#
#   bench/contention/run.sh [BUILD_DIR]          (default: build/)
#   ROUNDS=3 SERVER_SECONDS=5 HOG_CPU=<last CPU> PARTS="minilm bert server"
#
# The rest of the environment reaches the programs, so
# OMP_WAIT_POLICY=active bench/contention/run.sh measures libgomp's spinning
# wait, the engine's default before it waited passively. Takes about 3
# minutes on 2 cores; prints a table to paste into bench/README.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
rounds="${ROUNDS:-3}"
server_seconds="${SERVER_SECONDS:-5}"
hog_cpu="${HOG_CPU:-$(($(nproc) - 1))}"
parts="${PARTS:-minilm bert server}"

# What tests/support/e2e_lib.sh's start_server, make_model and cleanup use.
# shellcheck disable=SC2034
name=contention
# shellcheck disable=SC2034
server_bin="$build/server/app/encoder-server"
client_bin="$build/client/encoder-client"
cli_bin="$build/engine/encoder-cli"
work=$(mktemp -d)
# shellcheck source-path=SCRIPTDIR/../..
# shellcheck source=tests/support/e2e_lib.sh
source "$here/../../tests/support/e2e_lib.sh"
trap cleanup EXIT
require_tools jq taskset lscpu

wants() { [[ " $parts " == *" $1 "* ]]; }

hog_pid=""
start_hog() {
  taskset -c "$hog_cpu" sh -c 'while :; do :; done' &
  hog_pid=$!
  extra_pids+=("$hog_pid")
}
stop_hog() {
  kill "$hog_pid"
  wait "$hog_pid" 2>/dev/null || true
  hog_pid=""
  sleep 0.5
}

# Milliseconds per batch (the median of encoder-cli bench's iterations).
engine_ms() {  # engine_ms MODEL BATCH SEQ ITERS
  "$cli_bin" bench --model "$1" --batch "$2" --seq "$3" --iters "$4" |
    jq -r '.median_seconds * 1000 | . * 100 | round / 100'
}
# "REQUESTS_PER_SECOND P50_MS" of a closed loop at concurrency 8.
server_rps() {
  # shellcheck disable=SC2154  # port: set by start_server
  "$client_bin" bench --target "127.0.0.1:$port" --concurrency 8 --duration "${server_seconds}s" \
    --text-words 5:15 --json --progress=false |
    jq -r '"\(.requests_per_second | round) \(.latency_seconds.p50 * 1000 | . * 10 | round / 10)"'
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# busy/quiet throughput in percent: from times (ms) the ratio is quiet/busy.
percent() { jq -n "$1 * 100 | round"; }

model_name=$(lscpu | sed -n 's/^Model name: *//p')
family=$(lscpu | sed -n 's/^CPU family: *//p')
model=$(lscpu | sed -n 's/^Model: *//p')
echo "contention: $(date -u '+%Y-%m-%d %H:%M UTC'), $model_name (family $family, model $model)," \
  "$(nproc) CPUs, kernel $(uname -r); hog on CPU $hog_cpu; $rounds rounds"
echo "environment: OMP_WAIT_POLICY=${OMP_WAIT_POLICY-unset} GOMP_SPINCOUNT=${GOMP_SPINCOUNT-unset}" \
  "OMP_NUM_THREADS=${OMP_NUM_THREADS-unset}; load average $(load_average)"

wants minilm || wants server && make_model "$work/minilm" 384 6 12 1536
wants bert && make_model "$work/bert" 768 12 12 3072
if wants server; then
  start_server "$work/minilm"
  sed -n 's/.*\(engine threads: .*\)/\1/p' "$work/server.log"
  server_rps >/dev/null  # warm-up
fi

declare -A results
measure() {  # measure quiet|busy
  local line="" value
  if wants minilm; then
    value=$(engine_ms "$work/minilm" 1 128 100)
    results[minilm_$1]+="$value "
    line+=" minilm-l6 1x128 $value ms;"
  fi
  if wants bert; then
    value=$(engine_ms "$work/bert" 8 128 5)
    results[bert_$1]+="$value "
    line+=" bert-base 8x128 $value ms;"
  fi
  if wants server; then
    read -r value p50 < <(server_rps)
    results[server_$1]+="$value "
    line+=" server $value req/s (p50 $p50 ms);"
  fi
  echo "$1 (load average $(load_average)):$line"
}
for round in $(seq 1 "$rounds"); do
  echo "-- round $round"
  measure quiet
  start_hog
  measure busy
  stop_hog
done

echo
echo "| workload (median of $rounds) | quiet | busy | busy/quiet throughput |"
echo "|---|---:|---:|---:|"
row() {  # row LABEL KEY UNIT time|rate
  local quiet busy
  # shellcheck disable=SC2086  # the values are one word each
  quiet=$(median ${results[$2_quiet]})
  # shellcheck disable=SC2086
  busy=$(median ${results[$2_busy]})
  if [ "$4" = time ]; then
    echo "| $1 | $quiet $3 | $busy $3 | $(percent "$quiet / $busy")% |"
  else
    echo "| $1 | $quiet $3 | $busy $3 | $(percent "$busy / $quiet")% |"
  fi
}
wants minilm && row "engine, MiniLM-L6 1 x 128" minilm ms time
wants bert && row "engine, BERT-base 8 x 128" bert ms time
wants server && row "server, MiniLM-L6 shape, concurrency 8" server req/s rate
echo "load average at the end: $(load_average)"
if wants server; then stop_server; fi
