#!/usr/bin/env bash
# A model served with a real XLM-R tokenizer (BAAI/bge-m3's tokenizer.json
# from ../shared/tokenizers, random weights of a 250,002-token xlm-roberta
# model) end to end over gRPC, against Hugging Face's ids
# (tests/golden/tokenizer/rust/BAAI--bge-m3.jsonl):
#   - encoder-client tokenize gives exactly the reference ids;
#   - encode of the text equals encode of the reference ids (same vector,
#     |diff| <= 1e-6: the same ids through the same engine);
#   - decode of the ids gives the reference text where the fixture has one;
#   - GetModelInfo says text_input true, and the start-up log names the
#     tokenizer.json it read.
#
# Usage: e2e_tokenizers.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI REPO_ROOT
set -euo pipefail
name=e2e_tokenizers
server_bin=$1
client_bin=$2
cli_bin=$3
root=$4
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT

tokenizer="$root/../shared/tokenizers/BAAI--bge-m3/tokenizer.json"
reference="$root/tests/golden/tokenizer/rust/BAAI--bge-m3.jsonl"
corpus="$root/tests/golden/tokenizer/corpus.jsonl"
[ -f "$tokenizer" ] || fail "missing $tokenizer (../shared beside the checkout)"

model="$work/xlmr"
"$cli_bin" make-model --out "$model" --model-type xlm-roberta --vocab-size 250002 --hidden 32 \
  --layers 1 --heads 2 --intermediate 64 --max-position 512 --seed 3 >/dev/null
rm -f "$model/vocab.txt" "$model/tokenizer_config.json"
cp "$tokenizer" "$model/tokenizer.json"

start_server "$model"
client() { "$client_bin" --target "127.0.0.1:$port" "$@"; }
check "the start-up log names the tokenizer file" \
  grep -q "tokenizer $model/tokenizer.json (250002 tokens)" "$work/server.log"
check "text_input true in info" holds '$a.text_input == true and $a.architecture == "roberta"' \
  "$(client info)"

# Single texts of the fixture with at least one real token (lines 4..60), with
# the special tokens (the records without them are left out: tokenize adds
# them), all in one call of each kind (one process per call, not per text).
jq -c 'select(.line >= 4 and .line <= 60 and (.ids | length) > 2 and
  (has("pair_line") or has("max_length") or has("add_special_tokens") | not))' \
  "$reference" >"$work/entries.jsonl"
checked=$(wc -l <"$work/entries.jsonl")
[ "$checked" -ge 20 ] || fail "only $checked reference lines checked"
jq -c --slurpfile corpus <(jq -s . "$corpus") '{text: $corpus[0][.line - 1]}' "$work/entries.jsonl" \
  >"$work/texts.jsonl"
jq -c '{ids}' "$work/entries.jsonl" >"$work/ids.jsonl"

client tokenize --input "$work/texts.jsonl" >"$work/tokenized.jsonl" || fail "tokenize failed"
client encode --pooling mean --input "$work/texts.jsonl" >"$work/by_text.jsonl" ||
  fail "encode of the texts failed"
client encode --pooling mean --input "$work/ids.jsonl" >"$work/by_ids.jsonl" ||
  fail "encode of the ids failed"
client decode --input "$work/ids.jsonl" >"$work/decoded.jsonl" || fail "decode failed"
for f in tokenized by_text by_ids decoded; do
  [ "$(wc -l <"$work/$f.jsonl")" -eq "$checked" ] || fail "$f: $(wc -l <"$work/$f.jsonl") answers for $checked inputs"
done

# One line per text: {line, want ids, got ids, embeddings by text and by ids,
# want and got decoded text}.
mismatches=$(paste -d '\n' "$work/entries.jsonl" "$work/tokenized.jsonl" "$work/by_text.jsonl" \
  "$work/by_ids.jsonl" "$work/decoded.jsonl" | jq -r -n '
  def rows: [inputs] as $all | range(0; $all | length; 5) | $all[. : . + 5];
  rows | . as [$entry, $tokens, $text, $ids, $decoded]
  | [ (if $tokens.ids != $entry.ids then
         "line \($entry.line): tokenize gave \($tokens.ids), Hugging Face \($entry.ids)" else empty end),
      (if ([$text.embedding, $ids.embedding] | transpose | map(.[0] - .[1] | fabs) | max) > 1e-6 then
         "line \($entry.line): encode(text) != encode(reference ids)" else empty end),
      (if ($entry | has("decoded")) and $decoded.text != $entry.decoded then
         "line \($entry.line): decode gave \($decoded.text | tojson), Hugging Face \($entry.decoded | tojson)"
       else empty end) ][]')
[ -z "$mismatches" ] || fail "$(printf '%s\n' "$mismatches" | head -n 5)"
decoded=$(jq -s 'map(select(has("decoded"))) | length' "$work/entries.jsonl")
log "$checked texts tokenized and encoded as Hugging Face's ids, $decoded decoded: PASS"
