#!/usr/bin/env bash
# End to end with the real binaries on a small random model, on 127.0.0.1 only:
# start encoder-server, wait for health SERVING, check that the start-up log
# names the model and the tokenizer files it read, call encode/tokenize/info
# with encoder-client and check the JSON (inputs from a file and from
# standard input, "--input -", which must not be empty), refuse a busy port and a bad model
# dir (one line, non-zero exit), serve mutual TLS with certificates made by
# make_test_certs.sh (encoder-client with its TLS flags; refused without a
# client certificate), then stop a server with SIGTERM while 20 calls are in
# flight and check every call was answered and the exit is 0.
#
# Usage: e2e_server.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI
set -euo pipefail
server_bin=$1
client_bin=$2
cli_bin=$3

name=e2e_server
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT

# client_flags (e2e_lib.sh): the TLS flags of the session's server
client() { "$client_bin" --target "127.0.0.1:$port" --timeout 30s "${client_flags[@]}" "$@"; }

# Number of values in the first JSON array after "$2": in the line $1.
count_values() { sed -n "s/.*\"$2\": \[\([^]]*\)\].*/\1/p" <<<"$1" | tr ',' '\n' | grep -c .; }

"$cli_bin" make-model --out "$work/model" --hidden 64 --layers 2 --heads 4 --intermediate 128 \
  --max-position 128 --seed 3 >/dev/null

# --- A normal session ---------------------------------------------------------
start_server "$work/model"
check "health SERVING" test "$(client health)" = "SERVING"
check "the start line says plaintext" grep -q "serving on 127.0.0.1:$port (plaintext," \
  "$work/server.log"
check "the start-up log names the model and its directory" \
  grep -q "loaded model model from $work/model: bert, hidden 64," "$work/server.log"
check "the start-up log names the tokenizer files it read" \
  grep -q "tokenizer $work/model/vocab.txt + $work/model/tokenizer_config.json (" "$work/server.log"
check "--http-port 0 (start_server's) turns HTTP off" test -z "$(grep 'HTTP API on' "$work/server.log")"

info=$(client info)
check "info names the hidden size: $info" grep -q '"hidden_size":64' <<<"$info"
check "info names the max length: $info" grep -q '"max_length":128' <<<"$info"
check "info names the default pooling: $info" grep -q '"default_pooling":"POOLING_CLS"' <<<"$info"
isa=$(sed -n 's/.*"isa":"\([a-z0-9_]*\)".*/\1/p' <<<"$info")
check "info names an instruction-set level: $info" \
  grep -qxE 'scalar|avx2|avx2_vnni|avx512|avx512_vnni|avx512_bf16' <<<"$isa"
check "the start-up log names the same level ($isa)" grep -q "instruction set $isa (oneDNN " \
  "$work/server.log"

out=$(client encode "hello world" "the quick brown fox")
check "two texts give two lines: $out" test "$(wc -l <<<"$out")" -eq 2
first=$(head -1 <<<"$out")
check "an embedding of 64 values: $first" test "$(count_values "$first" embedding)" -eq 64
check "tokens used: $first" grep -q '"tokens": 4}' <<<"$first"

out=$(client encode --pooling mean --normalize -- "-starts with a dash")
check "a text after -- : $out" grep -q '"embedding": \[' <<<"$out"
out=$(client encode --pooling none "hi there")
check "token states: $out" grep -q '"hidden_states": \[\[' <<<"$out"
tokens=$(sed -n 's/.*"tokens": \([0-9]*\)}/\1/p' <<<"$out")
check "one row per token: $out" test "$(grep -o '\], \[' <<<"$out" | wc -l)" -eq "$((tokens - 1))"
out=$(client encode --pair "what is bert?" "an encoder")
check "a text pair: $out" grep -q '"embedding": \[' <<<"$out"
out=$(client encode --ids 2,40,41,3 --pooling pooler)
check "ids with the pooler: $out" grep -q '"tokens": 4}' <<<"$out"

cat >"$work/inputs.jsonl" <<'EOF'
{"text": "from a file"}
{"text": "a question", "text_pair": "an answer"}

{"ids": [2, 50, 51, 52, 3], "token_type_ids": [0, 0, 0, 1, 1]}
EOF
out=$(client encode --input "$work/inputs.jsonl")
check "three JSON lines give three outputs: $out" test "$(wc -l <<<"$out")" -eq 3
check "ids from the file: $out" grep -q '"tokens": 5}' <<<"$(tail -1 <<<"$out")"
# Standard input: "--input -" with a space, which Abseil used to warn about
# ("Did you really mean to set flag 'input' to the value '-'?").
out=$(client encode --input - <"$work/inputs.jsonl" 2>"$work/err")
check "--input - reads standard input: $out" test "$(wc -l <<<"$out")" -eq 3
check "--input - prints nothing on stderr: $(cat "$work/err")" test ! -s "$work/err"
status=0
client encode --input - </dev/null >"$work/out" 2>"$work/err" || status=$?
check "an empty standard input is a usage error: exit 2 (got $status)" test "$status" -eq 2
check "it prints no output" test ! -s "$work/out"
check "one line says standard input is empty: $(cat "$work/err")" grep -qxF \
  'encoder-client: --input - (standard input) is empty: expected JSON lines such as {"text": "hello"}' \
  "$work/err"

out=$(client tokenize "Hello, world!")
check "tokenize ids: $out" grep -q '"ids": \[2, ' <<<"$out"
check "tokenize tokens: $out" grep -q '"tokens": \["\[CLS\]", "hello", ",", "world", "!", "\[SEP\]"\]' <<<"$out"
check "tokenize offsets: $out" grep -q '"offsets": \[\[0, 0\], \[0, 5\], \[5, 6\], \[7, 12\]' <<<"$out"

# A failing call: the gRPC code and message on stderr, a non-zero exit.
status=0
client encode "fine" "" >/dev/null 2>"$work/err" || status=$?
check "a bad input fails the call" test "$status" -ne 0
check "the error names the code and the input: $(cat "$work/err")" \
  grep -qx 'encoder-client: INVALID_ARGUMENT: input 1: text is empty' "$work/err"
status=0
client encode --ids 2,99999,3 >/dev/null 2>"$work/err" || status=$?
check "an id outside the vocabulary: $(cat "$work/err")" \
  grep -q 'INVALID_ARGUMENT: input 0: id 99999 at position 1 is outside the vocabulary' "$work/err"
check "the server still serves after bad calls" test "$(client health)" = "SERVING"

# A busy port (given through the environment) and a bad model dir: one line, non-zero exit.
status=0
ENCODER_PORT=$port "$server_bin" --model "$work/model" --host 127.0.0.1 --metrics-port 0 --http-port 0 \
  2>"$work/busy.err" || status=$?
check "a busy port exits 1 (a start-up fault, got $status)" test "$status" -eq 1
check "a busy port is one line: $(cat "$work/busy.err")" test "$(wc -l <"$work/busy.err")" -eq 1
check "a busy port says so and names the flag: $(cat "$work/busy.err")" \
  grep -q -- "port $port on 127.0.0.1 is already in use (--port)" "$work/busy.err"
status=0
"$server_bin" --model "$work/no-such-model" --host 127.0.0.1 --port 0 --metrics-port 0 --http-port 0 \
  2>"$work/model.err" || status=$?
check "a bad model dir exits 1 (got $status)" test "$status" -eq 1
check "a bad model dir is one line: $(cat "$work/model.err")" test "$(wc -l <"$work/model.err")" -eq 1
check "a bad model dir names it" grep -q "no-such-model" "$work/model.err"

# No log line per request: only the six start lines so far (model,
# tokenizer, instruction set, warm-up, serving, engine threads).
check "no per-request logs" test "$(wc -l <"$work/server.log")" -eq 6
check "the engine threads are logged with their reason" \
  grep -Eq "engine threads: [1-9][0-9]* \((CPU affinity|OMP_NUM_THREADS|--threads)" "$work/server.log"
if [ -z "${OMP_WAIT_POLICY-}" ] && [ -z "${GOMP_SPINCOUNT-}" ]; then
  check "OpenMP waits passively unless told otherwise" \
    grep -q "engine threads: .*, OMP_WAIT_POLICY=passive" "$work/server.log"
fi
status=0
stop_server || status=$?
check "a SIGTERM'd idle server exits 0" test "$status" -eq 0

# --- Mutual TLS ----------------------------------------------------------------
bash "$(dirname "$0")/make_test_certs.sh" "$work/certs" >/dev/null || fail "making test certificates"
certs=$work/certs
# The server's certificate names localhost and 127.0.0.1; --tls-server-name
# checks the name localhost while dialling 127.0.0.1.
client_flags=(--tls-ca "$certs/ca.pem" --tls-cert "$certs/client.pem" --tls-key "$certs/client.key"
  --tls-server-name localhost)
start_server "$work/model" --tls-cert "$certs/server.pem" --tls-key "$certs/server.key" \
  --tls-client-ca "$certs/ca.pem" --max-tokens-per-request 20
check "the start line says mutual TLS" grep -q "serving on 127.0.0.1:$port (mutual TLS," \
  "$work/server.log"
check "health SERVING over mutual TLS" test "$(client health)" = "SERVING"
out=$(client encode "hello over mutual tls")
check "encode over mutual TLS: $out" grep -q '"embedding": \[' <<<"$out"
status=0
# --max-tokens-per-request (20): two inputs of 11 ids reach 22 tokens at input 1.
printf '%s\n' '{"ids": [2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 3]}' \
  '{"ids": [2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 3]}' >"$work/tokens.jsonl"
client encode --input "$work/tokens.jsonl" >/dev/null 2>"$work/err" || status=$?
check "over --max-tokens-per-request fails the call" test "$status" -ne 0
check "the error names the input and the limit: $(cat "$work/err")" grep -q \
  'INVALID_ARGUMENT: input 1: the request reaches 22 tokens here, more than the limit of 20 tokens per request (--max-tokens-per-request)' \
  "$work/err"
out=$(client bench --duration 1s --concurrency 2 --json)
check "bench over mutual TLS, no errors: $out" grep -q '"errors":0,' <<<"$out"
status=0
"$client_bin" --target "127.0.0.1:$port" --timeout 10s --tls-ca "$certs/ca.pem" \
  --tls-server-name localhost health >/dev/null 2>"$work/err" || status=$?
check "a client without a certificate is refused: $(cat "$work/err")" test "$status" -ne 0
status=0
"$client_bin" --target "127.0.0.1:$port" --timeout 10s health >/dev/null 2>"$work/err" ||
  status=$?
check "a plaintext client is refused: $(cat "$work/err")" test "$status" -ne 0
status=0
"$client_bin" --target "127.0.0.1:$port" --tls-ca "$work/no-such-ca.pem" health \
  >/dev/null 2>"$work/err" || status=$?
check "a missing --tls-ca is a usage error (exit 2, got $status)" test "$status" -eq 2
check "it names the flag and the file: $(cat "$work/err")" \
  grep -q -- "--tls-ca $work/no-such-ca.pem: cannot read the file" "$work/err"
status=0
stop_server || status=$?
check "the TLS server exits 0 after SIGTERM" test "$status" -eq 0
client_flags=()

# Bad TLS files and limits, from the environment too: one line naming the
# flag (and the file), a non-zero exit, nothing listening.
status=0
ENCODER_TLS_CERT=$certs/server.pem ENCODER_TLS_KEY=$certs/client.key "$server_bin" \
  --model "$work/model" --host 127.0.0.1 --port 0 --metrics-port 0 --http-port 0 2>"$work/tls.err" || status=$?
check "a key not matching the certificate exits non-zero" test "$status" -ne 0
check "it is one line: $(cat "$work/tls.err")" test "$(wc -l <"$work/tls.err")" -eq 1
check "it names both files: $(cat "$work/tls.err")" grep -q -- \
  "--tls-key $certs/client.key does not match the certificate in --tls-cert $certs/server.pem" \
  "$work/tls.err"
status=0
"$server_bin" --model "$work/model" --host 127.0.0.1 --port 0 --metrics-port 0 --http-port 0 \
  --tls-cert "$work/no-such.pem" --tls-key "$certs/server.key" 2>"$work/tls.err" || status=$?
check "a missing certificate exits non-zero" test "$status" -ne 0
check "it names the flag and the file: $(cat "$work/tls.err")" grep -q -- \
  "--tls-cert $work/no-such.pem: cannot read the file" "$work/tls.err"
status=0
ENCODER_MAX_CONCURRENT_STREAMS=0 "$server_bin" --model "$work/model" --host 127.0.0.1 --port 0 \
  --metrics-port 0 --http-port 0 2>"$work/limit.err" || status=$?
check "a bad limit is a bad flag: exit 2 (got $status)" test "$status" -eq 2
check "it names the flag: $(cat "$work/limit.err")" \
  grep -q -- "--max-concurrent-streams must be positive (got 0)" "$work/limit.err"

# --- SIGTERM with 20 calls in flight ------------------------------------------
# The server is stopped (SIGSTOP) while the 20 clients connect and send, so
# that every call is in flight, unanswered, when SIGTERM arrives; it resumes
# with SIGTERM pending. (An idle engine starts a request at once, so calls
# are not held in the batcher's queue; server_test's shutdown test covers
# queued work run at shutdown, with the batcher held.)
start_server "$work/model" --shutdown-grace 20s
kill -STOP "$server_pid"
pids=()
for i in $(seq 1 20); do
  client encode "in flight number $i" >"$work/flight.$i.out" 2>"$work/flight.$i.err" &
  pids+=($!)
done
# Wait (bounded) until the server holds 20 connections from them.
port_hex=$(printf '%04X' "$port")
for _ in $(seq 1 200); do
  # gRPC may use IPv4-mapped IPv6 sockets: count both tables.
  established=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
    awk -v p=":$port_hex" '$2 ~ p"$" && $4 == "01"' | wc -l)
  [ "$established" -ge 20 ] && break
  sleep 0.05
done
check "20 clients connected (got ${established:-0})" test "${established:-0}" -ge 20
sleep 1  # their requests follow the connection at once; this is ample margin
for pid in "${pids[@]}"; do
  check "a call finished before the shutdown: it was not in flight" kill -0 "$pid"
done
status=0
kill -TERM "$server_pid"
kill -CONT "$server_pid"
wait "$server_pid" || status=$?
server_pid=""
check "the server exits 0 after SIGTERM (got $status)" test "$status" -eq 0
for i in $(seq 1 20); do
  call_status=0
  wait "${pids[$((i - 1))]}" || call_status=$?
  check "call $i answered OK: $(cat "$work/flight.$i.err")" test "$call_status" -eq 0
  check "call $i has its embedding" grep -q '"embedding": \[' "$work/flight.$i.out"
done
check "shutdown logged" grep -q "received SIGTERM" "$work/server.log"
check "all work finished" grep -q "stopped: all queued and running work finished" "$work/server.log"

echo "e2e_server: all checks passed"
