#!/usr/bin/env bash
# Decoder-based embedders and their reranker served beside a BERT-family
# model by one encoder-server, over gRPC and HTTP, with the real tokenizers
# of ../shared/tokenizers and random weights at small widths:
#   - qwen    Qwen3-Embedding's layout (qwen3, causal, grouped-query heads,
#             last-token pooling + Normalize, its "query" prompt) with
#             Qwen/Qwen3-Embedding-0.6B's tokenizer.json;
#   - gemma   EmbeddingGemma's (gemma3_text, bidirectional, sliding and full
#             layers, mean pooling + two Dense + Normalize, its task prompts)
#             with google/embeddinggemma-300m's tokenizer.json, which defines
#             262,145 ids for a 262,144-row table;
#   - rerank  Qwen3-Reranker's (Qwen3ForCausalLM, "model." prefix, tied LM
#             head) with Qwen's tokenizer;
#   - bert    the demo BERT with a cross-encoder head.
# Checks: each model's architecture in GetModelInfo; a prompt by name equals
# the same prompt written before the text and differs from no prompt, on
# gRPC, TEI /embed and OpenAI /v1/embeddings alike (1e-6: the same ids
# through the same engine); the extra tokenizer id is INVALID_ARGUMENT
# naming <image_soft_token> on both transports, and the model still serves;
# rerank gives the same scores on gRPC, TEI /rerank and Cohere /v1/rerank,
# in (0, 1), sorted, and moves with the instruction, and equals encoder-cli's
# score of the model card's prompt built from Hugging Face's ids; an
# instruction for the cross-encoder is refused.
#
# Usage: e2e_decoders.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI REPO_ROOT
set -euo pipefail
name=e2e_decoders
server_bin=$1
client_bin=$2
cli_bin=$3
root=$4
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT

shared="$root/../shared/tokenizers"
qwen_tokenizer="$shared/Qwen--Qwen3-Embedding-0.6B/tokenizer.json"
gemma_tokenizer="$shared/google--embeddinggemma-300m/tokenizer.json"
for f in "$qwen_tokenizer" "$gemma_tokenizer"; do
  [ -f "$f" ] || fail "missing $f (../shared beside the checkout)"
done
gemma_fixture="$root/tests/golden/families/gemma3_text/model"

# make_decoder DIR TOKENIZER VOCAB FLAGS...: a random model of VOCAB rows
# whose tokenizer is TOKENIZER (read in place: the Gemma file's terms say so).
make_decoder() {
  local dir=$1 tokenizer=$2 vocab=$3
  shift 3
  "$cli_bin" make-model --out "$dir" --vocab-size "$vocab" --max-position 512 --seed 5 "$@" \
    >/dev/null
  rm -f "$dir/vocab.txt" "$dir/tokenizer_config.json"
  ln -s "$tokenizer" "$dir/tokenizer.json"
}
make_decoder "$work/qwen" "$qwen_tokenizer" 151669 --model-type qwen3 --hidden 64 --layers 2 \
  --heads 4 --kv-heads 2 --head-dim 32 --intermediate 96
mkdir -p "$work/qwen/1_Pooling"
cat >"$work/qwen/modules.json" <<'EOF'
[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
 {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
EOF
echo '{"word_embedding_dimension": 64, "pooling_mode_lasttoken": true, "include_prompt": true}' \
  >"$work/qwen/1_Pooling/config.json"
qwen_prompt='Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:'
echo "{\"prompts\": {\"query\": \"$qwen_prompt\", \"document\": \"\"}, \"default_prompt_name\": null}" \
  >"$work/qwen/config_sentence_transformers.json"

# EmbeddingGemma: 64 wide like the fixture, whose Dense layers (64 -> 256 -> 64) it takes.
make_decoder "$work/gemma" "$gemma_tokenizer" 262144 --model-type gemma3_text --hidden 64 \
  --layers 6 --heads 2 --kv-heads 1 --head-dim 48 --intermediate 96 --attention bidirectional
for f in modules.json config_sentence_transformers.json 1_Pooling 2_Dense 3_Dense 4_Normalize; do
  [ -e "$gemma_fixture/$f" ] && cp -r "$gemma_fixture/$f" "$work/gemma/"
done

make_decoder "$work/rerank" "$qwen_tokenizer" 151669 --model-type qwen3 --hidden 64 --layers 2 \
  --heads 4 --kv-heads 2 --head-dim 32 --intermediate 96 --head causal-lm
"$cli_bin" make-model --out "$work/bert" --hidden 32 --layers 1 --heads 2 --intermediate 64 \
  --seed 6 --head classifier >/dev/null

http=$(free_port) || fail "no free port"
start_server "qwen=$work/qwen" --model "gemma=$work/gemma" --model "rerank=$work/rerank" \
  --model "bert=$work/bert" --http-port "$http" --threads 1
client() { "$client_bin" --target "127.0.0.1:$port" --timeout 20s "$@"; }
serves() { client "$@" >/dev/null; }
# post PATH BODY: the HTTP status; the body in $work/body.
post() {
  curl -s --max-time 20 -o "$work/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "$2" "http://127.0.0.1:$http$1" || true
}

check "rerank: a causal LM without a Pooling module pools its last token" \
  holds '$a.default_pooling == "POOLING_LAST_TOKEN"' "$(client --model rerank info)"
for pair in qwen:qwen3 gemma:gemma3_text rerank:qwen3 bert:bert; do
  info=$(client --model "${pair%%:*}" info)
  check "${pair%%:*}: architecture ${pair##*:} in info ($info)" \
    holds '$a.architecture == $b and $a.text_input == true' "$info" "\"${pair##*:}\""
done

# max |a - b| over two JSON arrays of vectors.
max_diff() {
  jq -n --argjson a "$1" --argjson b "$2" \
    '[range(0; $a | length) as $i | range(0; $a[$i] | length) as $j
      | ($a[$i][$j] - $b[$i][$j]) | fabs] | max'
}
grpc_vectors() { client "$@" | jq -sc 'map(.embedding)'; }
text="where is the river city"

# --- Prompts by name, on both transports ----------------------------------------------
for model in qwen gemma; do
  prompt=$(jq -r .prompts.query "$work/$model/config_sentence_transformers.json")
  by_name=$(grpc_vectors --model "$model" encode --prompt-name query "$text")
  written=$(grpc_vectors --model "$model" encode "$prompt$text")
  bare=$(grpc_vectors --model "$model" encode "$text")
  diff=$(max_diff "$by_name" "$written")
  check "$model: gRPC prompt_name query == the prompt written before the text ($diff)" \
    holds '$a <= 1e-6' "$diff"
  check "$model: the prompt changes the embedding" holds '$a > 1e-3' "$(max_diff "$by_name" "$bare")"
  norm=$(jq -n --argjson v "$by_name" '[$v[0][] | . * .] | add | sqrt')
  check "$model: the pipeline normalizes ($norm)" holds '($a - 1 | fabs) < 1e-5' "$norm"

  body=$(jq -cn --arg m "$model" --arg t "$text" '{model: $m, inputs: [$t], prompt_name: "query"}')
  check "$model: TEI /embed with prompt_name is 200" test "$(post /embed "$body")" = 200
  diff=$(max_diff "$(cat "$work/body")" "$by_name")
  check "$model: TEI /embed == gRPC ($diff)" holds '$a <= 1e-6' "$diff"
  body=$(jq -cn --arg m "$model" --arg t "$prompt$text" '{model: $m, input: [$t]}')
  check "$model: OpenAI /v1/embeddings is 200" test "$(post /v1/embeddings "$body")" = 200
  diff=$(max_diff "$(jq -c '[.data[].embedding]' "$work/body")" "$by_name")
  check "$model: OpenAI /v1/embeddings with the prompt written == gRPC by name ($diff)" \
    holds '$a <= 1e-6' "$diff"
done
for prompt_name in Retrieval-document Classification; do
  check "gemma: prompt $prompt_name serves" serves --model gemma encode --prompt-name "$prompt_name" \
    "$text"
done

# --- An id the embedding table lacks ----------------------------------------------------
status=0
client --model gemma encode "a picture <image_soft_token> here" >/dev/null 2>"$work/err" || status=$?
check "gemma: <image_soft_token> over gRPC exits 1 (got $status)" test "$status" -eq 1
check "gemma: the gRPC error is INVALID_ARGUMENT naming the token" \
  grep -q 'INVALID_ARGUMENT.*<image_soft_token>.*262144' "$work/err"
check "gemma: the same over HTTP is 4xx" \
  holds '$a >= 400 and $a < 500' "$(post /embed '{"model": "gemma", "inputs": "a <image_soft_token>"}')"
check "gemma: the HTTP error names the token" grep -q '<image_soft_token>' "$work/body"
check "gemma: still serves after the refusal" serves --model gemma encode "$text"
check "bert serves beside the decoders" serves --model bert encode "$text"

# --- Qwen3-Reranker's prompted pairs ------------------------------------------------------
query="what is the capital of france"
docs=("Paris is the capital of France." "The river flows to the sea." "Berlin is a city.")
client --model rerank rerank "$query" "${docs[@]}" >"$work/grpc_rerank.jsonl"
grpc_scores=$(jq -sc 'sort_by(.index) | map(.score)' "$work/grpc_rerank.jsonl")
check "rerank: gRPC answers every text sorted by score" \
  holds '($a | length) == 3 and ($b | map(.score)) == ($b | map(.score) | sort | reverse)' \
  "$grpc_scores" "$(jq -sc . "$work/grpc_rerank.jsonl")"
check "rerank: scores are probabilities ($grpc_scores)" \
  holds 'all($a[]; . > 0 and . < 1)' "$grpc_scores"
docs_json=$(printf '%s\n' "${docs[@]}" | jq -R . | jq -sc .)
check "rerank: TEI /rerank is 200" \
  test "$(post /rerank "{\"model\": \"rerank\", \"query\": \"$query\", \"texts\": $docs_json}")" = 200
tei=$(jq -c 'sort_by(.index) | map(.score)' "$work/body")
check "rerank: TEI == gRPC ($tei vs $grpc_scores)" \
  holds '[range(0; 3) as $i | ($a[$i] - $b[$i]) | fabs] | max <= 1e-6' "$tei" "$grpc_scores"
check "rerank: Cohere /v1/rerank is 200" test "$(post /v1/rerank \
  "{\"model\": \"rerank\", \"query\": \"$query\", \"documents\": $docs_json}")" = 200
cohere=$(jq -c '.results | sort_by(.index) | map(.relevance_score)' "$work/body")
check "rerank: Cohere == gRPC ($cohere)" \
  holds '[range(0; 3) as $i | ($a[$i] - $b[$i]) | fabs] | max <= 1e-6' "$cohere" "$grpc_scores"
client --model rerank rerank --instruction "Find the sentence about rivers" "$query" "${docs[@]}" \
  >"$work/instructed.jsonl"
instructed=$(jq -sc 'sort_by(.index) | map(.score)' "$work/instructed.jsonl")
check "rerank: the instruction enters the prompt ($instructed vs $grpc_scores)" \
  holds '[range(0; 3) as $i | ($a[$i] - $b[$i]) | fabs] | max > 1e-6' "$instructed" "$grpc_scores"
# The prompt as the model card builds it, from Hugging Face's own ids
# (tests/golden/tokenizer/rust: the card's prefix, one pair's middle and the
# suffix, each without special tokens), scored by encoder-cli: equal to the
# served score of that pair.
reference="$root/tests/golden/tokenizer/rust/Qwen--Qwen3-Embedding-0.6B.jsonl"
corpus="$root/tests/golden/tokenizer/corpus.jsonl"
# line_of JSON_STRING: the corpus line holding exactly that text.
line_of() { grep -nxF -- "$(jq -c . <<<"$1")" "$corpus" | cut -d: -f1 || true; }
card_query="What is the capital of China?"
card_doc="The capital of China is Beijing."
prefix_line=$(line_of '"<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n"')
suffix_line=$(line_of '"<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"')
middle_line=$(line_of "$(jq -cn --arg q "$card_query" --arg d "$card_doc" \
  '"<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n<Query>: \($q)\n<Document>: \($d)"')")
check "the card's prompt parts are corpus lines ($prefix_line, $middle_line, $suffix_line)" \
  test -n "$prefix_line" -a -n "$middle_line" -a -n "$suffix_line"
jq -c --argjson p "$prefix_line" --argjson m "$middle_line" --argjson s "$suffix_line" -s '
  map(select(.add_special_tokens == false and (has("max_length") | not) and (has("pair_line") | not)))
  | (map(select(.line == $p))[0].ids) + (map(select(.line == $m))[0].ids)
    + (map(select(.line == $s))[0].ids) | {ids: .}' "$reference" >"$work/card_ids.jsonl"
check "the card's prompt is 85 ids" holds '$a == 85' "$(jq '.ids | length' "$work/card_ids.jsonl")"
want=$("$cli_bin" score --model "$work/rerank" --activation --threads 1 <"$work/card_ids.jsonl" |
  jq '.scores[0] // .logits[0]')
got=$(client --model rerank rerank "$card_query" "$card_doc" | jq -s '.[0].score')
check "rerank: the served score == encoder-cli on the card's ids ($got vs $want)" \
  holds '($a - $b | fabs) <= 1e-6' "$got" "$want"
status=0
client --model bert rerank --instruction "x" "$query" "${docs[@]}" >/dev/null 2>"$work/err" ||
  status=$?
check "an instruction for a cross-encoder exits 1 (got $status)" test "$status" -eq 1
check "the cross-encoder's error is INVALID_ARGUMENT about the instruction" \
  grep -q 'INVALID_ARGUMENT.*instruction' "$work/err"
check "the cross-encoder reranks beside the decoders" serves --model bert rerank "$query" "${docs[@]}"
log "ok"
