#!/usr/bin/env bash
# The task heads of several models in one process, end to end on 127.0.0.1:
# encoder-cli make-model writes a reranker (--head classifier --labels 1),
# an embedder (no head) and a SPLADE model (--head masked-lm); ONE
# encoder-server serves the three (--model NAME=DIR, repeated) and, for
# comparison, one server per model serves it alone (under the same name).
#   - the same requests (HTTP /rerank with raw_scores, /v1/rerank, /predict,
#     /embed, /v1/embeddings, /embed_sparse; gRPC through encoder-client
#     rerank, classify, encode, sparse with --model) get the same answers
#     from the server of three as from the model's own server;
#   - under load: one bounded loop per model, all at once, mixing HTTP and
#     gRPC; every answer is 200 / exit 0 and the single server's answer;
#   - a head the model lacks is 424 (FAILED_PRECONDITION over gRPC), an
#     unknown model 404 (NOT_FOUND) naming the served ones, no model named
#     400 / 422 (INVALID_ARGUMENT) listing them;
#   - /v1/models lists the three, /info?model=NAME describes each;
#   - SIGTERM ends every server with 0.
# Every curl and RPC has a timeout; the loops end by themselves.
#
# Usage: e2e_heads.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI
set -euo pipefail
name=e2e_heads
server_bin=$1
client_bin=$2
cli_bin=$3
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
require_tools curl jq

models=(rerank embed splade)
rounds=40  # requests per model in the load phase

# --- The models -------------------------------------------------------------------
shape=(--hidden 64 --layers 2 --heads 4 --intermediate 128 --max-position 128)
"$cli_bin" make-model --out "$work/rerank" "${shape[@]}" --seed 11 --head classifier --labels 1 \
  >/dev/null
"$cli_bin" make-model --out "$work/embed" "${shape[@]}" --seed 12 >/dev/null
"$cli_bin" make-model --out "$work/splade" "${shape[@]}" --seed 13 --head masked-lm >/dev/null
vocab=$(wc -l <"$work/splade/vocab.txt")

# --- The servers --------------------------------------------------------------------
# Server KEY ("multi", or a model's name for its own server): its ports and pid.
declare -A grpc_port=() http_port=() metrics_port=() server_pids=()

# launch KEY MODEL_FLAGS...: encoder-server on free ports, --threads 1, its
# log in $work/KEY.log; waits (bounded) until /health is 200 and gRPC
# serves. A port taken in between (another test) ends the server: retried.
launch() {
  local key=$1 g h m pid
  shift
  extra_logs+=("$key.log")
  for _ in 1 2 3; do
    if ! g=$(free_port) || ! h=$(free_port) || ! m=$(free_port); then fail "$key: no free port"; fi
    if [ "$g" = "$h" ] || [ "$h" = "$m" ] || [ "$g" = "$m" ]; then continue; fi
    "$server_bin" "$@" --host 127.0.0.1 --port "$g" --http-port "$h" --metrics-port "$m" \
      --threads 1 >"$work/$key.log" 2>&1 &
    pid=$!
    extra_pids+=("$pid")
    for _ in $(seq 1 300); do
      if grep -qF "serving on 127.0.0.1:$g " "$work/$key.log" &&
        [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
          "http://127.0.0.1:$h/health")" = 200 ]; then
        grpc_port[$key]=$g
        http_port[$key]=$h
        metrics_port[$key]=$m
        server_pids[$key]=$pid
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && fail "$key: not serving within 30 s"
    log "$key: the server exited while starting, retrying: $(tail -n 1 "$work/$key.log")"
  done
  fail "$key: the server did not start"
}

launch multi --model "rerank=$work/rerank" --model "embed=$work/embed" \
  --model "splade=$work/splade"
for model in "${models[@]}"; do launch "$model" --model "$model=$work/$model"; done
log "servers up: multi (gRPC ${grpc_port[multi]}, HTTP ${http_port[multi]}) and one per model"

# --- Requests -----------------------------------------------------------------------
# http KEY PATH BODY OUT: POST BODY (GET when it is empty) to server KEY; the
# answer in OUT; prints the status ("000": no answer within 10 s).
http() {
  local key=$1 path=$2 body=$3 out=$4
  local args=(-s --max-time 10 -o "$out" -w '%{http_code}')
  if [ -n "$body" ]; then
    args+=(-H 'Content-Type: application/json' --data-binary "$body")
  fi
  curl "${args[@]}" "http://127.0.0.1:${http_port[$key]}$path" || true
}
# grpc KEY OUT ARGS...: encoder-client ARGS against server KEY, stdout in
# OUT, stderr in OUT.err; its exit status.
grpc() {
  local key=$1 out=$2
  shift 2
  "$client_bin" --target "127.0.0.1:${grpc_port[$key]}" --timeout 10s "$@" >"$out" 2>"$out.err"
}

query="what is the city by the river"
docs=("the city is by the river" "music and books" "a quick brown fox jumps over the lazy dog")
texts=("hello world" "the quick brown fox jumps over the lazy dog" "search query")
docs_json=$(printf '%s\n' "${docs[@]}" | jq -R . | jq -sc .)
texts_json=$(printf '%s\n' "${texts[@]}" | jq -R . | jq -sc .)

# Every kind of request, by the model it is for (read through namerefs).
# shellcheck disable=SC2034
kinds_of_rerank=(rerank_http rerank_cohere predict rerank_grpc classify_grpc)
# shellcheck disable=SC2034
kinds_of_embed=(embed_http embed_openai embed_grpc)
# shellcheck disable=SC2034
kinds_of_splade=(sparse_http sparse_grpc)

# ask KIND KEY OUT: KIND's request to server KEY, the answer in OUT; OK
# when it is 200 (exit 0 for gRPC), else the reason in OUT.err.
ask() {
  local kind=$1 key=$2 out=$3 status
  case $kind in
    rerank_http)
      status=$(http "$key" /rerank "{\"model\": \"rerank\", \"query\": \"$query\",
        \"texts\": $docs_json, \"raw_scores\": true}" "$out") ;;
    rerank_cohere)
      status=$(http "$key" /v1/rerank "{\"model\": \"rerank\", \"query\": \"$query\",
        \"documents\": $docs_json, \"top_n\": 3}" "$out") ;;
    predict)
      status=$(http "$key" /predict "{\"model\": \"rerank\", \"inputs\": [[\"$query\",
        \"${docs[0]}\"], [\"$query\", \"${docs[1]}\"], [\"${texts[0]}\"]]}" "$out") ;;
    embed_http)
      status=$(http "$key" /embed "{\"model\": \"embed\", \"inputs\": $texts_json}" "$out") ;;
    embed_openai)
      status=$(http "$key" /v1/embeddings "{\"model\": \"embed\", \"input\": $texts_json}" "$out") ;;
    sparse_http)
      status=$(http "$key" /embed_sparse "{\"model\": \"splade\", \"inputs\": $texts_json}" "$out") ;;
    rerank_grpc) grpc "$key" "$out" --model rerank rerank --raw-scores "$query" "${docs[@]}" ;;
    classify_grpc) grpc "$key" "$out" --model rerank classify --pair "$query" "${docs[0]}" ;;
    embed_grpc) grpc "$key" "$out" --model embed encode "${texts[@]}" ;;
    sparse_grpc) grpc "$key" "$out" --model splade sparse "${texts[@]}" ;;
    *) echo "unknown request kind $kind" >"$out.err" && return 1 ;;
  esac || return 1  # gRPC: the client's error is in OUT.err
  if [ -n "${status:-}" ] && [ "$status" != 200 ]; then
    echo "HTTP $status: $(head -c 300 "$out")" >"$out.err"
    return 1
  fi
}

# KIND's answer (its JSON documents slurped into an array) in a form to
# compare: results by index rather than by score (two scores within the
# tolerance may swap), /v1/rerank without its per-process id, sparse
# weights as a dense vector over the vocabulary (a weight near zero may be
# kept by one server and dropped by the other).
normal_form() {
  case $1 in
    rerank_http) echo '.[0] | sort_by(.index)' ;;
    rerank_cohere) echo '.[0] | del(.id) | .results |= sort_by(.index)' ;;
    predict) echo '.[0] | map(sort_by(.label))' ;;
    rerank_grpc) echo 'sort_by(.index)' ;;
    sparse_http) echo '.[0] | map(dense)' ;;
    sparse_grpc) echo 'map(.entries | map({index: .id, value: .weight}) | dense)' ;;
    *) echo '.' ;;
  esac
}
# close: the same structure, strings and keys, numbers within 1e-5. The
# two servers batch differently (the server of three interleaves models,
# and the load phase puts requests together), so float sums may round
# differently: equal up to that, not bit for bit.
# shellcheck disable=SC2016  # jq's variables, not the shell's
jq_defs='
def dense: (map({key: (.index | tostring), value: .value}) | from_entries) as $m
  | [range(0; $vocab) | $m[tostring] // 0];
def close($a; $b):
  if ($a | type) != ($b | type) then false
  elif ($a | type) == "number" then (($a - $b) | fabs) <= 1e-5
  elif ($a | type) == "array" then ($a | length) == ($b | length)
    and all(range(0; $a | length); close($a[.]; $b[.]))
  elif ($a | type) == "object" then ($a | keys) == ($b | keys)
    and all($a | keys[]; close($a[.]; $b[.]))
  else $a == $b end;'
# same KIND A B: are A and B the same answer to KIND?
same() {
  local form
  form=$(normal_form "$1")
  jq -en --slurpfile a "$2" --slurpfile b "$3" --argjson vocab "$vocab" \
    "$jq_defs (\$a | $form) as \$x | (\$b | $form) as \$y | close(\$x; \$y)" >/dev/null
}

# --- The server of three answers as each model alone ----------------------------------
for model in "${models[@]}"; do
  declare -n kinds="kinds_of_$model"
  for kind in "${kinds[@]}"; do
    ask "$kind" "$model" "$work/ref_$kind.json" ||
      fail "$kind on $model's own server: $(cat "$work/ref_$kind.json.err")"
    ask "$kind" multi "$work/multi_$kind.json" ||
      fail "$kind on the server of three: $(cat "$work/multi_$kind.json.err")"
    check "$kind: the server of three answers as $model alone:
  three: $(head -c 300 "$work/multi_$kind.json")
  alone: $(head -c 300 "$work/ref_$kind.json")" \
      same "$kind" "$work/multi_$kind.json" "$work/ref_$kind.json"
  done
  unset -n kinds
done
# The answers tell the models apart: another model's vectors are not these.
check "/embed naming rerank is 200" \
  test "$(http multi /embed "{\"model\": \"rerank\", \"inputs\": $texts_json}" "$work/other.json")" = 200
if same embed_http "$work/other.json" "$work/ref_embed_http.json"; then
  fail "/embed gives the same vectors for rerank and embed: the comparisons prove nothing"
fi
check "the reranker's scores differ between documents: $(cat "$work/ref_rerank_http.json")" \
  jq -e '(map(.score) | max) - (map(.score) | min) > 1e-4' "$work/ref_rerank_http.json" >/dev/null
check "SPLADE weights: some, all above zero: $(head -c 200 "$work/ref_sparse_http.json")" \
  jq -e 'all(.[]; length > 0 and all(.[]; .value > 0))' "$work/ref_sparse_http.json" >/dev/null

# --- Interleaved under load ---------------------------------------------------------------
# load MODEL: $rounds requests for MODEL to the server of three, its kinds in
# turn (HTTP and gRPC); each must be the model's own server's answer.
# Prints the failures; exits 1 if any.
load() {
  local model=$1 i kind bad=0 out="$work/load_$1.json"
  declare -n load_kinds="kinds_of_$model"
  for ((i = 0; i < rounds; i++)); do
    kind=${load_kinds[i % ${#load_kinds[@]}]}
    if ! ask "$kind" multi "$out"; then
      echo "request $i ($kind): $(cat "$out.err")"
      bad=$((bad + 1))
    elif ! same "$kind" "$out" "$work/ref_$kind.json"; then
      echo "request $i ($kind): another answer: $(head -c 300 "$out")"
      bad=$((bad + 1))
    fi
  done
  echo "$bad of $rounds failed"
  [ "$bad" -eq 0 ]
}
declare -A load_pids=()
for model in "${models[@]}"; do
  load "$model" >"$work/load_$model.log" 2>&1 &
  load_pids[$model]=$!
  extra_pids+=("$!")
done
for model in "${models[@]}"; do
  wait "${load_pids[$model]}" || fail "under load, $model: $(head -n 5 "$work/load_$model.log")
  $(tail -n 1 "$work/load_$model.log")"
done
# The server of three counted every request of each model OK (the load's,
# the comparisons', and rerank's /embed above), and none otherwise.
metrics=$(curl -s --max-time 5 "http://127.0.0.1:${metrics_port[multi]}/metrics")
requests() {  # requests MODEL OK|other: encoder_requests_total of MODEL with code OK, or not
  awk -v m="model=\"$1\"" -v want="$2" '/^encoder_requests_total\{/ && index($0, m) {
      ok = index($0, "code=\"OK\"") > 0
      if ((want == "OK") == ok) s += $2
    } END {print s + 0}' <<<"$metrics"
}
for model in "${models[@]}"; do
  declare -n kinds="kinds_of_$model"
  want=$((rounds + ${#kinds[@]}))
  unset -n kinds
  if [ "$model" = rerank ]; then want=$((want + 1)); fi
  ok=$(requests "$model" OK)
  check "$model: $want requests OK in the metrics, got $ok" test "$ok" -eq "$want"
  other=$(requests "$model" other)
  check "$model: no request other than OK in the metrics, got $other" test "$other" -eq 0
done
log "under load: $((rounds * ${#models[@]})) requests, three models at once, every answer right"

# --- Errors: a head the model lacks, an unknown model, no model -----------------------
served='"rerank", "embed", "splade"'
check "/rerank on embed is 424" \
  test "$(http multi /rerank '{"model": "embed", "query": "a", "texts": ["b"]}' "$work/e")" = 424
check "/rerank on embed: Backend, what embed serves: $(cat "$work/e")" \
  jq -e '.error_type == "Backend" and (.error | test("this model serves embeddings$"))' "$work/e" >/dev/null
check "/embed_sparse on rerank is 424" \
  test "$(http multi /embed_sparse '{"model": "rerank", "inputs": "a"}' "$work/e")" = 424
check "/embed_sparse on rerank: Backend, what rerank serves: $(cat "$work/e")" \
  jq -e '.error_type == "Backend" and (.error | test("this model serves .*rerank"))' "$work/e" >/dev/null
check "/predict on splade is 424" \
  test "$(http multi /predict '{"model": "splade", "inputs": "a"}' "$work/e")" = 424
if grpc multi "$work/e" --model embed rerank a b; then fail "gRPC Rerank on embed succeeded"; fi
check "gRPC Rerank on embed is FAILED_PRECONDITION: $(cat "$work/e.err")" \
  grep -q "FAILED_PRECONDITION: rerank needs a cross-encoder" "$work/e.err"
if grpc multi "$work/e" --model rerank sparse a; then fail "gRPC EncodeSparse on rerank succeeded"; fi
check "gRPC EncodeSparse on rerank is FAILED_PRECONDITION: $(cat "$work/e.err")" \
  grep -q "FAILED_PRECONDITION: sparse embeddings need a masked-LM" "$work/e.err"

# The error's message, in TEI's, OpenAI's or Cohere's shape.
message() { jq -r 'if has("message") then .message else .error | if type == "object" then .message else . end end' "$1"; }
for route in /embed /rerank /embed_sparse /predict /v1/rerank /v1/embeddings; do
  case $route in
    /rerank) body='"query": "a", "texts": ["b"]' ;;
    /v1/rerank) body='"query": "a", "documents": ["b"]' ;;
    /v1/embeddings) body='"input": "a"' ;;
    *) body='"inputs": "a"' ;;
  esac
  check "$route naming an unknown model is 404" \
    test "$(http multi "$route" "{\"model\": \"nope\", $body}" "$work/e")" = 404
  check "$route: the 404 names the served models: $(cat "$work/e")" \
    grep -qF "the model \"nope\" is not served here (served: $served)" <<<"$(message "$work/e")"
  status=$(http multi "$route" "{$body}" "$work/e")
  check "$route naming no model is 400 or 422 (got $status)" grep -qx '400\|422' <<<"$status"
  check "$route: naming no model lists the served ones: $(cat "$work/e")" \
    grep -qF "name one in \"model\" ($served)" <<<"$(message "$work/e")"
done
if grpc multi "$work/e" --model nope encode a; then fail "gRPC naming an unknown model succeeded"; fi
check "gRPC naming an unknown model is NOT_FOUND listing the served: $(cat "$work/e.err")" \
  grep -qF "NOT_FOUND: the model \"nope\" is not served here (served: $served)" "$work/e.err"
if grpc multi "$work/e" rerank a b; then fail "gRPC Rerank naming no model succeeded"; fi
check "gRPC naming no model is INVALID_ARGUMENT listing the served: $(cat "$work/e.err")" \
  grep -qF "INVALID_ARGUMENT: this server serves several models: name one in \"model\" ($served)" \
  "$work/e.err"

# --- What the server says it serves ----------------------------------------------------
check "GET /v1/models is 200" test "$(http multi /v1/models '' "$work/models.json")" = 200
check "/v1/models lists the three: $(cat "$work/models.json")" \
  jq -e '[.data[].id] == ["rerank", "embed", "splade"]' "$work/models.json" >/dev/null
check "GET /info?model=rerank is 200" test "$(http multi '/info?model=rerank' '' "$work/info")" = 200
check "/info?model=rerank: a reranker: $(cat "$work/info")" \
  jq -e '.model_id == "rerank" and (.model_type | keys) == ["reranker"]
    and .model_type.reranker.id2label == {"0": "LABEL_0"} and (.outputs | index("rerank"))' \
  "$work/info" >/dev/null
check "GET /info?model=splade is 200" test "$(http multi '/info?model=splade' '' "$work/info")" = 200
check "/info?model=splade: an embedder with sparse output: $(cat "$work/info")" \
  jq -e '(.model_type | keys) == ["embedding"] and (.outputs | index("sparse"))' "$work/info" >/dev/null
check "GET /info?model=embed is 200" test "$(http multi '/info?model=embed' '' "$work/info")" = 200
check "/info?model=embed: embeddings only: $(cat "$work/info")" \
  jq -e '(.model_type | keys) == ["embedding"] and .outputs == ["embeddings"]' "$work/info" >/dev/null

# --- SIGTERM ends every server with 0 ---------------------------------------------------
for key in multi "${models[@]}"; do kill -TERM "${server_pids[$key]}"; done
for key in multi "${models[@]}"; do
  status=0
  wait "${server_pids[$key]}" || status=$?
  check "$key: SIGTERM ends the server with 0 (got $status)" test "$status" -eq 0
done
log "PASS"
