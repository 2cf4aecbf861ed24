#!/usr/bin/env bash
# BAAI/bge-m3's three outputs served end to end on 127.0.0.1: the PyTorch
# fixture tests/golden/multi_vector/bge_m3 (a small random XLM-R with
# sparse_linear.pt and colbert_linear.pt written by torch.save, and
# reference.json computed by FlagEmbedding's definitions in float64) under a
# real encoder-server, over HTTP and gRPC:
#   - POST /embed_multi (dense, sparse, colbert; float and base64) and
#     gRPC EncodeMulti (encoder-client multi) give the reference's outputs
#     for its token-id inputs within 1e-4 (the engine's fp32 against float64
#     torch; float32 torch stays within 2.5e-6);
#   - a text input equals its ids ("w5 w6" is <s> w5 w6 </s> in the
#     fixture's word-level tokenizer);
#   - TEI /embed_sparse and EncodeSparse answer bge-m3's lexical weights, and
#     /embed its dense vector, both as /embed_multi does;
#   - past --max-output-vectors: 422 on HTTP, INVALID_ARGUMENT on gRPC, and
#     the server still serves; a model without the heads: 424 naming them;
#   - a ColBERT model in PyLate's layout (tests/golden/multi_vector/colbert,
#     and the same weights in colbert-ir's HF_ColBERT layout, colbertv2,
#     its reference computed with PyLate's tokenize rules: prefix token after
#     [CLS], queries padded with [MASK] that nothing attends to, documents
#     without punctuation vectors): its query and document vectors from
#     texts over gRPC and HTTP within 1e-4, /rerank's MaxSim scores within
#     1e-3 (a sum of 12 dot products), a single vector refused (424);
#   - bge-m3's rerank is MaxSim divided by the query's vectors, computed
#     here from its /embed_multi vectors.
#
# Usage: e2e_multi_vector.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI REPO_ROOT
set -euo pipefail
name=e2e_multi_vector
server_bin=$1
client_bin=$2
cli_bin=$3
root=$4
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
require_tools curl jq

fixture="$root/tests/golden/multi_vector/bge_m3"
reference="$fixture/reference.json"
colbert="$root/tests/golden/multi_vector/colbert"
"$cli_bin" make-model --out "$work/plain" --hidden 32 --layers 1 --heads 2 --intermediate 64 \
  --seed 6 >/dev/null
http=$(free_port) || fail "no free port"
# 100 vectors at most: the fixture's six inputs give 99 ColBERT vectors.
start_server "bge=$fixture/model" --model "plain=$work/plain" --model "colbert=$colbert/model" \
  --model "colbertv2=$root/tests/golden/multi_vector/colbertv2/model" \
  --http-port "$http" --threads 1 --max-output-vectors 100
client() { "$client_bin" --target "127.0.0.1:$port" --timeout 20s "$@"; }
post() {  # post PATH BODY: the HTTP status; the body in $work/body.
  curl -s --max-time 20 -o "$work/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "$2" "http://127.0.0.1:$http$1" || true
}
# max |a - b| over two equally shaped JSON arrays (nested any depth).
max_diff() {
  jq -n --argjson a "$1" --argjson b "$2" '[($a | flatten), ($b | flatten)] |
    if (.[0] | length) != (.[1] | length) then 1e9
    else [transpose[] | (.[0] - .[1]) | fabs] | (max // 0) end'
}
# The sparse entries [{index, value}] of one output as [[id, weight]] sorted by id.
by_id() { jq -c '[.[] | [.index, .value]] | sort_by(.[0])'; }
ref_by_id() { jq -c "[.sparse[$1][] ] | sort_by(.[0])" "$reference"; }

inputs=$(jq -c '[.inputs[].ids]' "$reference")
count=$(jq '.inputs | length' "$reference")

# --- HTTP /embed_multi against the reference -------------------------------------------
check "/embed_multi is 200" test "$(post /embed_multi "{\"model\":\"bge\",\"inputs\":$inputs}")" = 200
cp "$work/body" "$work/multi.json"
for i in $(seq 0 $((count - 1))); do
  d=$(max_diff "$(jq -c ".data[$i].dense" "$work/multi.json")" "$(jq -c ".dense[$i]" "$reference")")
  check "input $i: dense within 1e-4 ($d)" holds '$a <= 1e-4' "$d"
  got=$(jq -c ".data[$i].sparse" "$work/multi.json" | by_id)
  want=$(ref_by_id "$i")
  check "input $i: sparse ids as FlagEmbedding's" \
    test "$(jq -c 'map(.[0])' <<<"$got")" = "$(jq -c 'map(.[0])' <<<"$want")"
  d=$(max_diff "$(jq -c 'map(.[1])' <<<"$got")" "$(jq -c 'map(.[1])' <<<"$want")")
  check "input $i: sparse weights within 1e-4 ($d)" holds '$a <= 1e-4' "$d"
  d=$(max_diff "$(jq -c ".data[$i].colbert" "$work/multi.json")" "$(jq -c ".colbert[$i]" "$reference")")
  check "input $i: colbert within 1e-4 ($d)" holds '$a <= 1e-4' "$d"
done

# base64: the same floats.
post /embed_multi "{\"model\":\"bge\",\"inputs\":$inputs,\"encoding_format\":\"base64\",\"outputs\":[\"colbert\"]}" \
  >/dev/null
b64=$(jq -r '.data[3].colbert' "$work/body")
decoded=$(base64 -d <<<"$b64" | od -An -v -t f4 -w4 | jq -sc '.')
d=$(max_diff "$decoded" "$(jq -c '.data[3].colbert | flatten' "$work/multi.json")")
check "base64 colbert == float colbert ($d)" holds '$a <= 1e-7' "$d"

# A text: "w5 w6" is <s> w5 w6 </s>.
post /embed_multi '{"model":"bge","inputs":"w5 w6"}' >/dev/null
cp "$work/body" "$work/text.json"
post /embed_multi '{"model":"bge","inputs":[[0,5,6,2]]}' >/dev/null
d=$(max_diff "$(jq -c '.data[0] | [.dense, .colbert]' "$work/text.json")" \
  "$(jq -c '.data[0] | [.dense, .colbert]' "$work/body")")
check "a text == its ids ($d)" holds '$a == 0' "$d"

# --- The single-output routes agree ----------------------------------------------------
post /embed_sparse "{\"model\":\"bge\",\"inputs\":$inputs}" >/dev/null
d=$(max_diff "$(jq -c '[.[] | [.[] | [.index, .value]] | sort_by(.[0])]' "$work/body")" \
  "$(jq -c '[.data[].sparse | [.[] | [.index, .value]] | sort_by(.[0])]' "$work/multi.json")")
check "/embed_sparse == /embed_multi's sparse ($d)" holds '$a == 0' "$d"
post /embed "{\"model\":\"bge\",\"inputs\":$inputs}" >/dev/null
d=$(max_diff "$(cat "$work/body")" "$(jq -c '[.data[].dense]' "$work/multi.json")")
check "/embed == /embed_multi's dense ($d)" holds '$a == 0' "$d"

# --- gRPC: EncodeMulti and EncodeSparse -----------------------------------------------
ids=$(jq -r '.inputs[4].ids | join(",")' "$reference")
client --model bge multi --ids "$ids" >"$work/grpc.json"
d=$(max_diff "$(jq -c '[.dense, .colbert.values]' "$work/grpc.json")" \
  "$(jq -c '.data[4] | [.dense, (.colbert | flatten)]' "$work/multi.json")")
# The same floats, printed by two JSON writers (protobuf's shortest float, nlohmann's).
check "gRPC EncodeMulti == HTTP ($d)" holds '$a <= 1e-6' "$d"
check "gRPC colbert shape" \
  holds '$a.colbert.rows == $b[0] and $a.colbert.cols == $b[1]' "$(cat "$work/grpc.json")" \
  "$(jq -c '.data[4].colbert_shape' "$work/multi.json")"
client --model bge sparse --ids "$ids" >"$work/grpc_sparse.json"
d=$(max_diff "$(jq -c '[.entries[] | [.id, .weight]] | sort_by(.[0])' "$work/grpc_sparse.json")" \
  "$(jq -c '.data[4].sparse | [.[] | [.index, .value]] | sort_by(.[0])' "$work/multi.json")")
check "gRPC EncodeSparse == HTTP ($d)" holds '$a <= 1e-6' "$d"

# --- Limits and missing heads ----------------------------------------------------------
longest=$(jq -c '.inputs[5].ids' "$reference")  # 38 tokens: 37 vectors
status=$(post /embed_multi "{\"model\":\"bge\",\"inputs\":[$longest,$longest,$longest],\"outputs\":[\"colbert\"]}")
check "past --max-output-vectors: 422 (got $status: $(cat "$work/body"))" test "$status" = 422
check "the message names the flag" grep -q -- "--max-output-vectors" "$work/body"
long=$(jq -r '.inputs[5].ids | join(",")' "$reference")
printf '{"ids":[%s]}\n{"ids":[%s]}\n{"ids":[%s]}\n' "$long" "$long" "$long" >"$work/two.jsonl"
status=0
client --model bge multi --outputs colbert --input "$work/two.jsonl" >/dev/null 2>"$work/err" || status=$?
check "gRPC past the limit exits 1 with INVALID_ARGUMENT ($(cat "$work/err"))" \
  grep -q INVALID_ARGUMENT "$work/err"
check "the server still serves" test "$(post /embed_multi '{"model":"bge","inputs":"w5"}')" = 200
status=$(post /embed_multi '{"model":"plain","inputs":"hello"}')
check "a model without the heads: 424 (got $status)" test "$status" = 424
check "the 424 names what the model serves" grep -q "this model serves" "$work/body"
check "GetModelInfo gives the ColBERT width" \
  holds '$a.colbert_dimensions == 24 and $a.sparse == true' "$(client --model bge info)"
curl -s --max-time 5 "http://127.0.0.1:$http/info?model=bge" >"$work/info.json"
check "/info lists sparse and colbert among the outputs" \
  jq -e '.outputs | index("sparse") != null and index("colbert") != null' "$work/info.json"

# --- ColBERT models: PyLate's layout, and colbert-ir's (HF_ColBERT) -----------------------
for name in colbert colbertv2; do
  cref="$root/tests/golden/multi_vector/$name/reference.json"
  for i in 0 1 2; do
    text=$(jq -r ".queries[$i].text" "$cref")
    client --model "$name" multi --input-type query --outputs colbert "$text" >"$work/q.json"
    d=$(max_diff "$(jq -c '.colbert.values' "$work/q.json")" "$(jq -c ".queries[$i].vectors" "$cref")")
    check "$name query $i over gRPC within 1e-4 ($d)" holds '$a <= 1e-4' "$d"
  done
  docs=$(jq -c '[.documents[].text]' "$cref")
  check "$name documents over HTTP are 200" test "$(post /embed_multi \
    "{\"model\":\"$name\",\"inputs\":$docs,\"outputs\":[\"colbert\"],\"input_type\":\"document\"}")" = 200
  for i in 0 1 2 3; do
    d=$(max_diff "$(jq -c ".data[$i].colbert" "$work/body")" "$(jq -c ".documents[$i].vectors" "$cref")")
    check "$name document $i over HTTP within 1e-4 ($d)" holds '$a <= 1e-4' "$d"
  done
  for i in 0 1 2; do
    body=$(jq -c --argjson i "$i" --arg m "$name" '{model: $m, query: .queries[$i].text,
      texts: [.documents[].text], raw_scores: true}' "$cref")
    check "$name /rerank $i is 200" test "$(post /rerank "$body")" = 200
    got=$(jq -c 'sort_by(.index) | map(.score)' "$work/body")
    d=$(max_diff "$got" "$(jq -c ".scores[$i]" "$cref")")
    check "$name MaxSim scores of query $i within 1e-3 ($d)" holds '$a <= 1e-3' "$d"
  done
done
status=$(post /embed '{"model":"colbert","inputs":"the river"}')
check "colbert: a single vector needs a pooling (got $status)" test "$status" = 424
check "the 424 says why" grep -q "ColBERT model" "$work/body"

# bge-m3's rerank: FlagEmbedding's colbert_score, the mean over the query's vectors.
post /embed_multi '{"model":"bge","inputs":["w5 w6 w7","w8 w5","w9 w10 w11"],"outputs":["colbert"]}' \
  >/dev/null
want=$(jq -c '.data | map(.colbert) as $v | [range(1; 3) as $d |
  ([$v[0][] as $q | [$v[$d][] as $x | [$q, $x] | transpose | map(.[0] * .[1]) | add] | max]
   | add) / ($v[0] | length)]' "$work/body")
post /rerank '{"model":"bge","query":"w5 w6 w7","texts":["w8 w5","w9 w10 w11"],"raw_scores":true}' \
  >/dev/null
got=$(jq -c 'sort_by(.index) | map(.score)' "$work/body")
d=$(max_diff "$got" "$want")
check "bge-m3 /rerank == mean MaxSim of its ColBERT vectors ($d)" holds '$a <= 1e-5' "$d"

stop_server || fail "the server did not exit 0"
log "all checks passed"
