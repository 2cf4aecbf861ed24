#!/usr/bin/env bash
# Low-load latency (issue 24): the server against the engine in-process at
# concurrency 1, 4 and 32, on gRPC and on HTTP, MiniLM-L6 shape (random
# weights), one 8-word text (10 tokens with [CLS] and [SEP], checked with
# /tokenize), closed loops.
#
#   bench/latency/low_load.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (default: build/ 5 3)
#   LOW_LOAD_THREADS=2          the engine's threads (server and in-process)
#   LOW_LOAD_SERVER_FLAGS=...   more encoder-server flags (e.g. --max-queue-delay 0s)
#
# One encoder-server (gRPC and HTTP on); each round runs, in turn: the engine
# in-process at batch 1 (encoder-cli bench --batch 1 --seq 10), gRPC
# (encoder-client bench) at concurrency 1, 4, 32, HTTP (wrk POST /embed) at
# 1, 4, 32, then the engine in-process at the server's mean batch of each
# concurrency (from its encoder_batch_inputs histogram). Prints each round
# and a markdown table of the medians over the rounds:
#   concurrency 1: server p50 / in-process time of one batch of 1 (goal: <= 1.15)
#   concurrency 4, 32: server tok/s / in-process tok/s at the server's mean
#   batch (goal at 32: >= 0.95)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
seconds="${2:-5}"
rounds="${3:-3}"
threads="${LOW_LOAD_THREADS:-2}"
read -r -a extra_flags <<<"${LOW_LOAD_SERVER_FLAGS:-}"

# What tests/support/e2e_lib.sh's start_server, make_model and cleanup use.
# shellcheck disable=SC2034
name=low_load
# shellcheck disable=SC2034
server_bin="$build/server/app/encoder-server"
client_bin="$build/client/encoder-client"
cli_bin="$build/engine/encoder-cli"
work=$(mktemp -d)
# shellcheck source-path=SCRIPTDIR/../..
# shellcheck source=tests/support/e2e_lib.sh
source "$root/tests/support/e2e_lib.sh"
trap cleanup EXIT
require_tools jq wrk curl lscpu

cpu="$(lscpu | sed -n 's/^Model name: *//p'), family $(lscpu | sed -n 's/^CPU family: *//p')"
cpu+=" model $(lscpu | sed -n 's/^Model: *//p')"
echo "low_load: $(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $(nproc) CPUs;" \
  "$rounds rounds of ${seconds}s; engine threads $threads; load average $(load_average)"
make_model "$work/minilm" 384 6 12 1536
http_port=$(free_port)
start_server "$work/minilm" --threads "$threads" --http-port "$http_port" "${extra_flags[@]}"

# Eight whole words of the demo vocabulary.
text="the and that for was with not this"
printf '%s\n' "$text" >"$work/text.txt"
tokens=$(curl -fsS "http://127.0.0.1:$http_port/tokenize" -H 'Content-Type: application/json' \
  -d "{\"inputs\": \"$text\"}" | grep -o '"id"' | wc -l)
[ "$tokens" -eq 10 ] || fail "the text has $tokens tokens, not 10"
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs": "$text"}'
LUA

# The server's batches so far: "INPUTS BATCHES".
batches() {
  local text
  text=$(scrape)
  echo "$(metric "$text" encoder_batch_inputs_sum) $(metric "$text" encoder_batch_inputs_count)"
}
# Mean batch between two batches() readings.
mean_batch() {
  local i0 b0 i1 b1
  read -r i0 b0 <<<"$1"
  read -r i1 b1 <<<"$2"
  jq -n "($i1 - $i0) / ($b1 - $b0) | . * 10 | round / 10"
}
# "P50_MS P99_MS REQ_PER_S MEAN_BATCH" of gRPC at concurrency $1.
grpc() {
  local before
  before=$(batches)
  "$client_bin" bench --target "127.0.0.1:$port" --concurrency "$1" --duration "${seconds}s" \
    --input "$work/text.txt" --json --progress=false >"$work/grpc.json"
  [ "$(jq .errors "$work/grpc.json")" = 0 ] || fail "gRPC errors: $(cat "$work/grpc.json")"
  echo "$(jq -r '"\(.latency_seconds.p50 * 1000) \(.latency_seconds.p99 * 1000) \(.requests_per_second)"' \
    "$work/grpc.json") $(mean_batch "$before" "$(batches)")"
}
# wrk's latency ("812.00us", "1.20ms", "1.01s") in ms.
wrk_ms() {
  awk -v k="$1" '$1 == k {v = $2; if (v ~ /us$/) {sub("us", "", v); v /= 1000}
    else if (v ~ /ms$/) {sub("ms", "", v)} else if (v ~ /s$/) {sub("s", "", v); v *= 1000}; print v}' \
    "$work/wrk.txt"
}
# The same for HTTP (wrk, POST /embed).
http() {
  local before
  before=$(batches)
  wrk -t"$(($1 > 1 ? 2 : 1))" -c"$1" -d"${seconds}s" --timeout 30s --latency -s "$work/post.lua" \
    "http://127.0.0.1:$http_port/embed" >"$work/wrk.txt"
  if grep -qE 'Non-2xx|Socket errors' "$work/wrk.txt"; then fail "HTTP errors: $(cat "$work/wrk.txt")"; fi
  echo "$(wrk_ms 50%) $(wrk_ms 99%) $(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")" \
    "$(mean_batch "$before" "$(batches)")"
}
# "MEDIAN_MS TOKENS_PER_S" of the engine in-process on batches of $1 x 10 tokens.
in_process() {
  local iters=$((2000 / $1 + 20))
  "$cli_bin" bench --model "$work/minilm" --batch "$1" --seq 10 --threads "$threads" \
    --iters "$iters" | jq -r '"\(.median_seconds * 1000) \(.tokens_per_second)"'
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
round_to() { jq -n "$2 | . * $1 | round / $1"; }  # round_to 100 X: X to 2 decimals

grpc 8 >/dev/null  # warm-up
http 8 >/dev/null

declare -A p50 p99 rps batch ratio
ip_p50=() ip_tps=()
for round in $(seq 1 "$rounds"); do
  echo "-- round $round (load average $(load_average))"
  read -r ms tps < <(in_process 1)
  ip_p50+=("$ms")
  ip_tps+=("$tps")
  echo "in-process batch 1: $(round_to 100 "$ms") ms, $(round_to 1 "$tps") tok/s"
  for transport in grpc http; do
    for c in 1 4 32; do
      read -r a b r m < <("$transport" "$c")
      key="$transport $c"
      p50[$key]+=" $a"
      p99[$key]+=" $b"
      rps[$key]+=" $r"
      batch[$key]+=" $m"
      if [ "$c" = 1 ]; then
        x=$(jq -n "$a / $ms")
      else
        read -r _ ip < <(in_process "$(jq -n "$m | round | if . < 1 then 1 else . end")")
        x=$(jq -n "$r * $tokens / $ip")
      fi
      ratio[$key]+=" $x"
      echo "$transport c=$c: p50 $(round_to 100 "$a") ms, p99 $(round_to 100 "$b") ms," \
        "$(round_to 1 "$r") req/s, mean batch $m, ratio to in-process $(round_to 100 "$x")"
    done
  done
done

ms=$(median "${ip_p50[@]}")
echo
echo "Medians of $rounds rounds of ${seconds}s; load average at the end $(load_average)."
echo "Ratio: at concurrency 1 server p50 / in-process p50 (lower is better);"
echo "at 4 and 32 server tok/s / in-process tok/s at the server's mean batch (higher is better)."
echo
echo "| transport | concurrency | p50 | p99 | req/s | tok/s | mean batch | ratio to in-process |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
echo "| in-process | batch 1 | $(round_to 100 "$ms") ms | | $(round_to 1 "$(jq -n "1000 / $ms")") |" \
  "$(round_to 1 "$(median "${ip_tps[@]}")") | 1 | |"
for transport in grpc http; do
  label=gRPC
  [ "$transport" = http ] && label=HTTP
  for c in 1 4 32; do
    key="$transport $c"
    # shellcheck disable=SC2086  # word splitting of the per-round lists
    r=$(median ${rps[$key]})
    # shellcheck disable=SC2086
    echo "| $label | $c | $(round_to 100 "$(median ${p50[$key]})") ms |" \
      "$(round_to 100 "$(median ${p99[$key]})") ms | $(round_to 1 "$r") |" \
      "$(round_to 1 "$(jq -n "$r * $tokens")") | $(median ${batch[$key]}) |" \
      "$(round_to 100 "$(median ${ratio[$key]})") |"
  done
done
stop_server
