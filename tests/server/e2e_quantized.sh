#!/usr/bin/env bash
# Quantized embeddings end to end on 127.0.0.1 (server/core/model/quantize.h), every
# quantized answer checked against the float answer of the same request
# quantized by tests/server/quantized_expect.py (sentence-transformers'
# quantize_embeddings written again from its definition, standard library
# only):
#   - a server without calibration: binary/ubinary on OpenAI /v1/embeddings;
#     int8 is refused before any engine work, with the message naming
#     --quantization-ranges: 400 on OpenAI and Cohere /v2/embed (Cohere's
#     {"message"}), 422 on TEI /embed, FAILED_PRECONDITION on gRPC
#     (encoder-client encode);
#   - calibration ranges made from the model's own float embeddings (the
#     per-dimension min and max over a few texts), given with
#     --quantization-ranges: int8, uint8, binary, ubinary on OpenAI (integers
#     and base64 bytes), TEI /embed and gRPC Encode (encoder-client
#     --embedding-type); with "dimensions" (the first columns of the ranges);
#   - Cohere POST /v2/embed with all five embedding_types at once: each
#     quantized list equals the same response's float list quantized; its
#     texts, meta.api_version and billed_units; truncate NONE refuses a long
#     text, END and START cut it; an unknown type is 400;
#   - SIGTERM ends each server with 0.
# The wrong-dimension calibration file is a start-up fault:
# tests/reliability/startup_faults.sh.
#
# Usage: e2e_quantized.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI
set -euo pipefail
server_bin=$1
client_bin=$2
cli_bin=$3
name=e2e_quantized
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
require_tools curl jq python3
expect_py="$(cd "$(dirname "$0")" && pwd)/quantized_expect.py"

# hidden 36: binary rows of 36 bits, padded to 5 bytes.
make_model "$work/model" 36 2 4 64
texts='["the quick brown fox", "jumps over the lazy dog", "a", "vector databases store int8"]'

start_http_server() {
  http=$(free_port)
  start_server "$work/model" --http-port "$http" --threads 1 "$@"
}
stop_cleanly() {
  local status=0
  stop_server || status=$?
  check "SIGTERM ends the server with 0 (got $status)" test "$status" -eq 0
}
# post PATH BODY: the body in $work/body, the HTTP status printed.
post() {
  curl -sS --max-time 30 -o "$work/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d "$2" "http://127.0.0.1:$http$1"
}
# expect_equal TYPE FLOATS_FILE QUANTIZED_FILE [RANGES]
expect_equal() {
  local out
  out=$(python3 "$expect_py" "$@" 2>&1) || fail "$out"
  log "$out"
}
openai() {  # openai EXTRA_FIELDS: the vectors of /v1/embeddings in $work/$2
  check "/v1/embeddings $1 is 200" test "$(post /v1/embeddings "{\"input\": $texts $1}")" = 200
  jq -c '[.data | sort_by(.index)[] | .embedding]' "$work/body" >"$work/$2"
}
grpc_encode() {  # grpc_encode TYPE OUT [FLAGS...]
  local type=$1 out=$2
  shift 2
  "$client_bin" encode --target "127.0.0.1:$port" --timeout 30s --embedding-type "$type" "$@" \
    -- "the quick brown fox" "jumps over the lazy dog" "a" >"$work/$out.jsonl" \
    2>"$work/$out.err" || fail "encoder-client encode --embedding-type $type: $(cat "$work/$out.err")"
  if [ "$type" = float ]; then
    jq -sc 'map(.embedding)' "$work/$out.jsonl" >"$work/$out"
  else
    jq -sc --arg t "$type" 'map(.[$t])' "$work/$out.jsonl" >"$work/$out"
  fi
}

# ---- without calibration -------------------------------------------------------------
start_http_server
openai "" floats
for type in binary ubinary; do
  openai ", \"embedding_type\": \"$type\"" "$type"
  expect_equal "$type" "$work/floats" "$work/$type"
done
check "binary rows are 5 bytes (36 bits)" test "$(jq '.[0] | length' "$work/binary")" -eq 5
check "OpenAI int8 without calibration is 400" \
  test "$(post /v1/embeddings "{\"input\": $texts, \"embedding_type\": \"int8\"}")" = 400
check "... naming --quantization-ranges" grep -q -- "--quantization-ranges" "$work/body"
check "TEI uint8 without calibration is 422" \
  test "$(post /embed "{\"inputs\": $texts, \"embedding_type\": \"uint8\"}")" = 422
check "Cohere int8 without calibration is 400" \
  test "$(post /v2/embed "{\"texts\": $texts, \"embedding_types\": [\"float\", \"int8\"]}")" = 400
check "... in Cohere's shape: $(cat "$work/body")" jq -e 'keys == ["message"]' "$work/body" >/dev/null
check "... naming --quantization-ranges" grep -q -- "--quantization-ranges" "$work/body"
status=0
"$client_bin" encode --target "127.0.0.1:$port" --timeout 30s --embedding-type int8 -- "hi" \
  >/dev/null 2>"$work/grpc_int8.err" || status=$?
check "gRPC int8 without calibration fails" test "$status" -ne 0
check "... FAILED_PRECONDITION naming --quantization-ranges: $(cat "$work/grpc_int8.err")" \
  grep -q "FAILED_PRECONDITION.*--quantization-ranges" "$work/grpc_int8.err"
# Calibration from the model's own embeddings of other texts: their
# per-dimension minimum and maximum, so that the texts above fall partly
# outside (clamped) and partly inside.
check "calibration embeddings" test "$(post /v1/embeddings \
  '{"input": ["calibration one", "another sentence to calibrate", "brown dogs", "int8 and binary"]}')" = 200
jq -c '{ranges: ([.data[].embedding] | transpose | [map(min), map(max)])}' \
  "$work/body" >"$work/ranges.json"
stop_cleanly

# ---- with --quantization-ranges ------------------------------------------------------
start_http_server --quantization-ranges "$work/ranges.json"
openai "" floats
check "TEI float /embed is 200" test "$(post /embed "{\"inputs\": $texts}")" = 200
cp "$work/body" "$work/tei_floats"
grpc_encode float grpc_floats
for type in int8 uint8 binary ubinary; do
  openai ", \"embedding_type\": \"$type\"" "$type"
  expect_equal "$type" "$work/floats" "$work/$type" "$work/ranges.json"
  # base64: the same integers' bytes.
  openai ", \"embedding_type\": \"$type\", \"encoding_format\": \"base64\"" "$type.b64"
  python3 - "$work/$type.b64" "$work/$type" <<'PY' || fail "$type: base64 bytes differ from the integers"
import base64, json, sys
b64, ints = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert [[b % 256 for b in row] for row in ints] == [list(base64.b64decode(s)) for s in b64]
PY
  check "TEI /embed $type is 200" \
    test "$(post /embed "{\"inputs\": $texts, \"embedding_type\": \"$type\"}")" = 200
  expect_equal "$type" "$work/tei_floats" "$work/body" "$work/ranges.json"
  grpc_encode "$type" "grpc_$type"
  expect_equal "$type" "$work/grpc_floats" "$work/grpc_$type" "$work/ranges.json"
done
# Matryoshka: the first 16 columns of the ranges.
openai ', "dimensions": 16' floats16
openai ', "dimensions": 16, "embedding_type": "int8"' int8_16
check "int8 with dimensions 16 has 16 values" test "$(jq '.[0] | length' "$work/int8_16")" -eq 16
expect_equal int8 "$work/floats16" "$work/int8_16" "$work/ranges.json"

# Cohere /v2/embed: every type from one engine pass.
check "/v2/embed with five embedding_types is 200" test "$(post /v2/embed "{\"model\": \"model\", \
  \"texts\": $texts, \"input_type\": \"search_document\", \
  \"embedding_types\": [\"float\", \"int8\", \"uint8\", \"binary\", \"ubinary\"]}")" = 200
cp "$work/body" "$work/cohere"
jq -c '.embeddings.float' "$work/cohere" >"$work/cohere_floats"
for type in int8 uint8 binary ubinary; do
  jq -c ".embeddings.$type" "$work/cohere" >"$work/cohere_$type"
  expect_equal "$type" "$work/cohere_floats" "$work/cohere_$type" "$work/ranges.json"
done
check "Cohere's float equals OpenAI's (same texts, normalized)" \
  holds '[range(0; 4) as $i | range(0; 36) as $j | ($a[$i][$j] - $b[$i][$j]) | fabs] | max <= 1e-6' \
  "$(cat "$work/cohere_floats")" "$(cat "$work/floats")"
check "Cohere echoes the texts" test "$(jq -c '.texts' "$work/cohere")" = "$(jq -c . <<<"$texts")"
check "Cohere meta: api_version 2, input_tokens > 0" \
  jq -e '.meta.api_version.version == "2" and .meta.billed_units.input_tokens > 0 and
    (.id | type) == "string" and .response_type == "embeddings_by_type"' "$work/cohere" >/dev/null
check "Cohere without embedding_types answers float only" \
  test "$(post /v2/embed "{\"texts\": $texts}")" = 200
check "... (keys: float)" test "$(jq -c '.embeddings | keys' "$work/body")" = '["float"]'
long=$(printf 'word %.0s' $(seq 1 300))
check "Cohere truncate NONE refuses a text over the maximum (400)" \
  test "$(post /v2/embed "{\"texts\": [\"$long\"], \"truncate\": \"NONE\"}")" = 400
check "... saying how Cohere cuts it: $(cat "$work/body")" grep -qF '\"truncate\": \"END\"' "$work/body"
check "Cohere truncate END (the default) cuts it" test "$(post /v2/embed "{\"texts\": [\"$long\"]}")" = 200
check "Cohere truncate START cuts it" \
  test "$(post /v2/embed "{\"texts\": [\"$long\"], \"truncate\": \"START\"}")" = 200
check "Cohere unknown embedding type is 400" \
  test "$(post /v2/embed "{\"texts\": $texts, \"embedding_types\": [\"int4\"]}")" = 400
stop_cleanly
log "passed"
