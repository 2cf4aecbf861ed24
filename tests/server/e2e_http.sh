#!/usr/bin/env bash
# The HTTP API end to end with real clients, on a small random model, on
# 127.0.0.1 only: encoder-server with --http-port beside gRPC; the official
# OpenAI npm client (tests/http_clients) gets the same embeddings as
# encoder-client over gRPC (float, base64, dimensions) and curl's TEI /embed
# too, and its errors carry OpenAI's param and code; curl checks the TEI
# routes' shapes and the error paths (malformed JSON with its position, TEI's
# error types, 405 with Allow, a body over --http-max-body-bytes, a half-sent
# body while others are served), /health's empty 200, truncation by default
# (--auto-truncate) and on request; a second server with API keys (two
# --api-key flags) refuses calls
# without a key on both transports (401 / UNAUTHENTICATED), keeps /health and
# /metrics open and counts the refusals; SIGTERM ends both with exit 0.
# Installs Node.js (Debian) when missing and the pinned npm packages (npm ci
# --ignore-scripts) when package-lock.json changed, as deploy/check does.
#
# Usage: e2e_http.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI
set -euo pipefail
server_bin=$1
client_bin=$2
cli_bin=$3
root="$(cd "$(dirname "$0")/../.." && pwd)"
clients="$root/tests/http_clients"

name=e2e_http
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT

install_npm_packages "$clients"

# Starts the server with HTTP on a free port; sets port (gRPC) and http.
start_http_server() {
  http=$(free_port)
  start_server "$work/model" --http-port "$http" "$@"
  check "the start line names the HTTP port" grep -q "HTTP API on http://127.0.0.1:$http" \
    "$work/server.log"
  check "and every route" grep -q "GET /v1/models/{id}, POST /embed, POST /tokenize, POST /decode" \
    "$work/server.log"
}
stop_cleanly() {
  local status=0
  stop_server || status=$?
  check "SIGTERM ends the server with 0 (got $status)" test "$status" -eq 0
}

# curl_status METHOD PATH [BODY] [extra curl args...]: prints the status, body in $work/body.
curl_status() {
  local method=$1 path=$2 body=${3:-}
  shift 3 || shift $#
  curl -s -o "$work/body" -w '%{http_code}' -X "$method" -H 'Content-Type: application/json' \
    ${body:+--data-binary "$body"} "$@" "http://127.0.0.1:$http$path"
}

# --- --help lists every flag, spelled with dashes, with its default ---------------
help=$("$server_bin" --help) || fail "encoder-server --help exits non-zero"
for flag in --model --http-port --api-key --tls-cert --max-batch-tokens --shutdown-grace; do
  check "server --help lists $flag" grep -q -- "^  $flag (default " <<<"$help"
done
check "server --help names the variables" grep -q 'env ENCODER_HTTP_PORT' <<<"$help"
check "server --help has no underscores in names" bash -c '! grep -q "^  --[a-z]*_" <<<"$1"' _ "$help"
help=$("$client_bin" --help) || fail "encoder-client --help exits non-zero"
for flag in --target --tls-server-name --inputs-per-request --concurrency; do
  check "client --help lists $flag" grep -q -- "^  $flag (default " <<<"$help"
done
help=$("$cli_bin" --help) || fail "encoder-cli --help exits non-zero"
for flag in --model --precision --lengths --hidden-act; do
  check "cli --help lists $flag" grep -q -- "^  $flag (default " <<<"$help"
done
help=$("$cli_bin" bench --help) || fail "encoder-cli bench --help exits non-zero"
check "cli bench --help lists --lengths" grep -q -- "^  --lengths (default " <<<"$help"
check "cli bench --help leaves out make-model's flags" bash -c '! grep -q "^  --hidden-act " <<<"$1"' _ "$help"

"$cli_bin" make-model --out "$work/model" --hidden 64 --layers 2 --heads 4 --intermediate 128 \
  --max-position 128 --seed 3 >/dev/null
# Named prompts, as sentence-transformers models (e5, bge) ship them.
echo '{"prompts": {"query": "hello "}, "default_prompt_name": null}' \
  >"$work/model/config_sentence_transformers.json"

# --- Same numbers over gRPC, OpenAI and TEI -------------------------------------
start_http_server --http-max-body-bytes 4096 --http-body-timeout 1s
texts=("hello world" "the quick brown fox jumps over the lazy dog" "embeddings over http" "a")
printf '%s\n' "${texts[@]}" | node -e 'console.log(JSON.stringify(require("fs").readFileSync(0,"utf8").trim().split("\n")))' >"$work/texts.json"
"$client_bin" --target "127.0.0.1:$port" encode --normalize "${texts[@]}" >"$work/grpc.jsonl"
check "TEI /embed answers 200" test "$(curl_status POST /embed "{\"inputs\": $(cat "$work/texts.json")}")" = 200
cp "$work/body" "$work/tei.json"
check "the OpenAI client gets gRPC's numbers" \
  node "$clients/openai_matches_grpc.mjs" "http://127.0.0.1:$http/v1" "$work/texts.json" \
  "$work/grpc.jsonl" "$work/tei.json"

check "GET /health is 200" test "$(curl_status GET /health '' -D "$work/headers")" = 200
check "/health: an empty body, no content type: $(tr -d '\r' <"$work/headers" | tr '\n' ' ')" \
  bash -c "[ ! -s '$work/body' ] && ! grep -qi '^content-type' '$work/headers'"
check "GET /info is 200" test "$(curl_status GET /info)" = 200
check "/info names the model: $(cat "$work/body")" grep -q '"model_id":"model"' "$work/body"
check "/info the max length: $(cat "$work/body")" grep -q '"max_input_length":128' "$work/body"
check "POST /tokenize is 200" test "$(curl_status POST /tokenize '{"inputs": "Hello, world!"}')" = 200
check "/tokenize gives TEI's tokens: $(cat "$work/body")" \
  grep -q '{"id":2,"special":true,"start":null,"stop":null,"text":"\[CLS\]"}' "$work/body"
check "/tokenize gives offsets: $(cat "$work/body")" \
  grep -q '"special":false,"start":0,"stop":5,"text":"hello"}' "$work/body"
check "TEI dimensions: 200" test "$(curl_status POST /embed '{"inputs": "a", "dimensions": 8}')" = 200
check "TEI dimensions: 8 values: $(cat "$work/body")" \
  test "$(tr ',' '\n' <"$work/body" | grep -c .)" -eq 8

# Error paths: each API's shape; the server keeps serving.
check "malformed JSON is 400" test "$(curl_status POST /v1/embeddings '{"input": ')" = 400
check "OpenAI error shape, with the position: $(cat "$work/body")" \
  grep -qF '{"error":{"code":null,"message":"the body is not valid JSON at line 1, column 11 (byte 11): syntax error while parsing value - unexpected end of input; expected '"'"'['"'"', '"'"'{'"'"', or a literal","param":null,"type":"invalid_request_error"}}' "$work/body"
check "a wrong type on TEI is 422" test "$(curl_status POST /embed '{"inputs": 3}')" = 422
check "TEI error shape: $(cat "$work/body")" grep -q '"error_type":"Validation"' "$work/body"
check "an empty input is TEI's Empty, 400" \
  test "$(curl_status POST /embed '{"inputs": ["ok", ""]}')" = 400
check "the index: $(cat "$work/body")" \
  grep -q '{"error":"input 1: text is empty","error_type":"Empty"}' "$work/body"
# The head routes on a model without heads: TEI's 424 Backend, naming what it serves.
check "/rerank on an embedding model is 424" \
  test "$(curl_status POST /rerank '{"query": "a", "texts": ["b"]}')" = 424
check "/rerank: Backend, what the model serves: $(cat "$work/body")" \
  grep -q '"error_type":"Backend"' "$work/body"
check "/rerank names what it serves: $(cat "$work/body")" grep -q 'this model serves embeddings' "$work/body"
check "/v1/rerank on an embedding model is 424" \
  test "$(curl_status POST /v1/rerank '{"query": "a", "documents": ["b"]}')" = 424
check "/v1/rerank: Cohere's {\"message\"}, naming what it serves: $(cat "$work/body")" \
  jq -e 'keys == ["message"] and (.message | contains("this model serves embeddings"))' \
  "$work/body" >/dev/null
check "/predict on an embedding model is 424" \
  test "$(curl_status POST /predict '{"inputs": "a"}')" = 424
check "/embed_sparse on an embedding model is 424" \
  test "$(curl_status POST /embed_sparse '{"inputs": "a"}')" = 424
check "/embed_all is 200" test "$(curl_status POST /embed_all '{"inputs": "hello world"}')" = 200
check "/embed_all: a vector per token: $(head -c 200 "$work/body")" \
  node -e 'const b = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(b.length === 1 && b[0].length === 4 && b[0][0].length === 64 ? 0 : 1)' "$work/body"
check "/similarity is 200" test "$(curl_status POST /similarity \
  '{"inputs": {"source_sentence": "hello world", "sentences": ["hello world", "a"]}}')" = 200
check "/similarity: a text is its own twin: $(cat "$work/body")" \
  node -e 'const b = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.exit(b.length === 2 && Math.abs(b[0] - 1) < 1e-4 && b[1] < b[0] ? 0 : 1)' "$work/body"
check "encoder-client rerank on an embedding model exits 1 with FAILED_PRECONDITION" \
  bash -c '! "$1" --target "127.0.0.1:$2" rerank q a 2>"$3" && grep -q FAILED_PRECONDITION "$3"' _ \
  "$client_bin" "$port" "$work/client.err"
check "a wrong method is 405" test "$(curl_status GET /embed '' -D "$work/headers")" = 405
check "405 says what is allowed: $(tr -d '\r' <"$work/headers" | tr '\n' ' ')" \
  grep -qi '^allow: POST' "$work/headers"
big=$(head -c 6000 /dev/zero | tr '\0' 'a')
check "a body over --http-max-body-bytes is 413" \
  test "$(curl_status POST /embed "{\"inputs\": \"$big\"}")" = 413
# Half a body, then silence: the server gives up on it after --http-body-timeout.
(printf 'POST /embed HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{"inputs":'; sleep 3) |
  curl -s --max-time 5 telnet://127.0.0.1:"$http" >"$work/half" 2>/dev/null &
half_pid=$!
sleep 0.2
check "others are served meanwhile" test "$(curl_status POST /embed '{"inputs": "still here"}')" = 200
wait "$half_pid" 2>/dev/null || true
check "the half-sent request got 408: $(head -1 "$work/half")" \
  grep -q '^HTTP/1.1 408 ' "$work/half"
embed_body() { # body -> the /embed answer, or "" on an error status
  [ "$(curl_status POST /embed "$1")" = 200 ] && cat "$work/body"
}
check "prompt_name puts the prompt first" test "$(embed_body '{"inputs": "world", "prompt_name": "query"}')" = \
  "$(embed_body '{"inputs": "hello world"}')"
check "an unknown prompt_name is 422" \
  test "$(curl_status POST /embed '{"inputs": "x", "prompt_name": "passage"}')" = 422
check "the error names the prompts: $(cat "$work/body")" grep -q '(query)' "$work/body"
# 200 tokens after different first words: cut on the left, only the common end stays.
filler=$(printf 'world %.0s' $(seq 200))
left_a=$(embed_body "{\"inputs\": \"hello $filler\", \"truncate\": true, \"truncation_direction\": \"Left\"}")
left_b=$(embed_body "{\"inputs\": \"the $filler\", \"truncate\": true, \"truncation_direction\": \"Left\"}")
right_a=$(embed_body "{\"inputs\": \"hello $filler\", \"truncate\": true}")
right_b=$(embed_body "{\"inputs\": \"the $filler\", \"truncate\": true}")
grpc_prompted=$("$client_bin" --target "127.0.0.1:$port" encode --prompt-name query world)
check "gRPC prompt_name puts the prompt first" \
  test "$grpc_prompted" = "$("$client_bin" --target "127.0.0.1:$port" encode "hello world")"
grpc_left_a=$("$client_bin" --target "127.0.0.1:$port" encode --truncate --truncate-left "hello $filler")
grpc_left_b=$("$client_bin" --target "127.0.0.1:$port" encode --truncate --truncate-left "the $filler")
check "gRPC left truncation drops the beginning" test -n "$grpc_left_a" -a "$grpc_left_a" = "$grpc_left_b"
check "Left truncation drops the beginning" test -n "$left_a" -a "$left_a" = "$left_b"
check "Right truncation keeps it" test -n "$right_a" -a "$right_a" != "$right_b"
check "too long is cut by default (--auto-truncate)" \
  test "$(embed_body "{\"inputs\": \"hello $filler\"}")" = "$right_a"
check "\"truncate\": false refuses it: 422" \
  test "$(curl_status POST /embed "{\"inputs\": \"hello $filler\", \"truncate\": false}")" = 422
check "the error says how long and how to cut it: $(cat "$work/body")" \
  grep -qF '"error":"input 0: text is 203 tokens long, more than the model'"'"'s maximum of 128 (send \"truncate\": true to cut it)"' "$work/body"
check "/tokenize without special tokens is 200" \
  test "$(curl_status POST /tokenize '{"inputs": "hello", "add_special_tokens": false}')" = 200
check "only the text's token: $(cat "$work/body")" \
  grep -qx '\[\[{"id":[0-9]*,"special":false,"start":0,"stop":5,"text":"hello"}\]\]' "$work/body"
check "POST /decode is 200" test "$(curl_status POST /decode '{"ids": [2, 280, 16, 224, 5, 3]}')" = 200
check "/decode gives the text: $(cat "$work/body")" test "$(cat "$work/body")" = '"hello, world!"'

check "/metrics counts HTTP calls" test "$(curl_status GET /metrics)" = 200
check "HTTP series: $(grep -m1 transport=.http "$work/body")" \
  grep -q 'encoder_requests_total{code="OK",model="[^"]*",rpc="Encode",transport="http"} [1-9]' "$work/body"
stop_cleanly

# --- API keys; --auto-truncate off -----------------------------------------------
printf '# keys\nfrom-file\n' >"$work/keys"
start_http_server --api-key first --api-key second --api-keys-file "$work/keys" \
  --auto-truncate=false
check "no key: 401" test "$(curl_status POST /v1/embeddings '{"input": "x"}')" = 401
check "401 body: $(cat "$work/body")" grep -q '"code":"invalid_api_key"' "$work/body"
check "a wrong key: 401" \
  test "$(curl_status POST /embed '{"inputs": "x"}' -H 'Authorization: Bearer nope')" = 401
for key in first second from-file; do
  check "key $key: 200" \
    test "$(curl_status POST /embed '{"inputs": "x"}' -H "Authorization: Bearer $key")" = 200
done
check "health stays open" test "$(curl_status GET /health)" = 200
check "GET /info with a key is 200" \
  test "$(curl_status GET /info '' -H 'Authorization: Bearer first')" = 200
check "/info says auto_truncate false: $(cat "$work/body")" grep -q '"auto_truncate":false' "$work/body"
check "--auto-truncate=false refuses a too-long input" \
  test "$(curl_status POST /embed "{\"inputs\": \"hello $filler\"}" -H 'Authorization: Bearer first')" = 422
check "unless the request says truncate" \
  test "$(curl_status POST /embed "{\"inputs\": \"hello $filler\", \"truncate\": true}" -H 'Authorization: Bearer first')" = 200
status=0
"$client_bin" --target "127.0.0.1:$port" encode "x" >/dev/null 2>"$work/err" || status=$?
check "gRPC without a key fails" test "$status" -ne 0
check "gRPC says UNAUTHENTICATED: $(cat "$work/err")" grep -q 'UNAUTHENTICATED' "$work/err"
check "gRPC with --api-key works" \
  "$client_bin" --target "127.0.0.1:$port" --api-key second encode "x"
check "gRPC with ENCODER_API_KEY works" \
  env ENCODER_API_KEY=from-file "$client_bin" --target "127.0.0.1:$port" encode "x"
check "gRPC health stays open" \
  test "$("$client_bin" --target "127.0.0.1:$port" health)" = "SERVING"
check "/metrics stays open" test "$(curl_status GET /metrics)" = 200
check "refusals are counted: $(grep UNAUTHENTICATED "$work/body" | grep -v ' 0$')" \
  grep -q 'encoder_requests_total{code="UNAUTHENTICATED",model="[^"]*",rpc="Encode",transport="http"} 2' \
  "$work/body"
check "gRPC refusals are counted" \
  grep -q 'encoder_requests_total{code="UNAUTHENTICATED",model="[^"]*",rpc="Encode",transport="grpc"} 1' \
  "$work/body"
check "keys never reach the log" bash -c "! grep -q -e first -e second -e from-file '$work/server.log'"
stop_cleanly
echo "e2e_http: all checks passed"
