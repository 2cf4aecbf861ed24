#!/usr/bin/env bash
# A model served with a real XLM-R tokenizer (BAAI/bge-m3's tokenizer.json
# from ../shared/tokenizers, random weights of a 250,002-token xlm-roberta
# model) end to end over gRPC, against Hugging Face's ids
# (tests/golden/tokenizer/rust/BAAI--bge-m3.jsonl):
#   - encoder-client tokenize gives exactly the reference ids;
#   - encode of the text equals encode of the reference ids (same vector,
#     |diff| <= 1e-6: the same ids through the same engine);
#   - decode of the ids gives the reference text where the fixture has one;
#   - GetModelInfo says text_input true.
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
check "text_input true in info" holds '$a.text_input == true and $a.architecture == "roberta"' \
  "$(client info)"

checked=0
decoded=0
# Single texts of the fixture with at least one real token (lines 4..60).
while read -r entry; do
  line=$(jq -r .line <<<"$entry")
  want=$(jq -c .ids <<<"$entry")
  text=$(sed -n "${line}p" "$corpus" | jq -r .)
  got=$(client tokenize -- "$text" | jq -c .ids)
  [ "$got" = "$want" ] || fail "line $line: tokenize gave $got, Hugging Face $want"
  by_text=$(client encode --pooling mean -- "$text" | jq -c .embedding)
  by_ids=$(client encode --pooling mean --ids "$(jq -r 'join(",")' <<<"$want")" | jq -c .embedding)
  check "line $line: encode(text) == encode(reference ids)" \
    holds '[$a, $b] | transpose | map(.[0] - .[1] | fabs) | max <= 1e-6' "$by_text" "$by_ids"
  if jq -e 'has("decoded")' <<<"$entry" >/dev/null; then
    want_text=$(jq -c .decoded <<<"$entry")
    got_text=$(client decode --ids "$(jq -r 'join(",")' <<<"$want")" | jq -c .text)
    [ "$got_text" = "$want_text" ] || fail "line $line: decode gave $got_text, Hugging Face $want_text"
    decoded=$((decoded + 1))
  fi
  checked=$((checked + 1))
done < <(jq -c 'select(.line >= 4 and .line <= 60 and (.ids | length) > 2 and (has("pair_line") or has("max_length") | not))' "$reference")
[ "$checked" -ge 20 ] || fail "only $checked reference lines checked"
log "$checked texts tokenized and encoded as Hugging Face's ids, $decoded decoded: PASS"
