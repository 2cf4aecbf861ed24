#!/usr/bin/env bash
# encoder-cli score and sparse on the heads fixtures (tests/golden/heads, by
# make_heads.py and make_decoders.py): the JSON-lines interface and the
# numbers, against the PyTorch references with heads_test's tolerances
# (logits 1e-4 absolute, Qwen3-Reranker's logit("yes") - logit("no") 2e-4
# and its score 1e-4; SPLADE weights 1e-3 relative to max(|w|, 1), the same
# ids above 1e-3).
#
# Usage: cli_heads.sh ENCODER_CLI GOLDEN_DIR
set -euo pipefail
cli_bin=$1
golden=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

for reference in "$golden"/heads/*/reference.json; do
  fixture=$(dirname "$reference")
  name=$(basename "$fixture")
  jq -c '.inputs[]' "$reference" >"$work/inputs.jsonl"
  head=$(jq -r .head "$reference")
  if [ "$head" = yes_no ]; then
    "$cli_bin" score --model "$fixture/model" <"$work/inputs.jsonl" >"$work/out.jsonl"
    "$cli_bin" score --activation --model "$fixture/model" <"$work/inputs.jsonl" >"$work/scores.jsonl"
    error=$(jq -s --slurpfile ref "$reference" --slurpfile s "$work/scores.jsonl" '
      [range(0; length) as $i | $ref[0] as $r |
       ((.[$i].logits[0] - ($r.yes_logits[$i] - $r.no_logits[$i])) | fabs / 2),
       (($s[$i].scores[0] - $r.scores[$i]) | fabs)] | max' "$work/out.jsonl")
    echo "$name: yes/no score max |diff| $error"
    jq -n --argjson e "$error" '$e <= 1e-4' | grep -q true || fail "$name: yes/no off by $error"
    continue
  fi
  if [ "$head" = classifier ]; then
    "$cli_bin" score --model "$fixture/model" <"$work/inputs.jsonl" >"$work/out.jsonl"
    error=$(jq -s --slurpfile ref "$reference" '
      [range(0; length) as $i | .[$i].logits as $g | $ref[0].logits[$i] as $r |
       range(0; $r | length) as $k | ($g[$k] - $r[$k]) | fabs] | max' "$work/out.jsonl")
    echo "$name: score max |diff| $error"
    jq -n --argjson e "$error" '$e <= 1e-4' | grep -q true || fail "$name: logits off by $error"
    "$cli_bin" score --activation --model "$fixture/model" <"$work/inputs.jsonl" |
      jq -e '.scores | length > 0' >/dev/null || fail "$name: score --activation"
  else
    for pooling in max sum; do
      "$cli_bin" sparse --sparse-pooling "$pooling" --model "$fixture/model" \
        <"$work/inputs.jsonl" >"$work/out.jsonl"
      bad=$(jq -s --slurpfile ref "$reference" --arg key "sparse_$pooling" '
        def above: map(select(.[1] > 1e-3)) | map({key: (.[0] | tostring), value: .[1]}) | from_entries;
        [range(0; length) as $i | (.[$i].sparse | above) as $g | ($ref[0][$key][$i] | above) as $r |
         select(($g | keys) != ($r | keys) or
                ([$r | to_entries[] | (($g[.key] - .value) | fabs) / ([(.value | fabs), 1] | max)]
                 | max // 0) > 1e-3) | $i]' "$work/out.jsonl")
      echo "$name: sparse $pooling inputs off: $bad"
      [ "$bad" = "[]" ] || fail "$name: sparse $pooling inputs $bad"
    done
  fi
done
if "$cli_bin" sparse --model "$golden/heads/bert_reranker/model" </dev/null 2>"$work/err"; then
  fail "sparse on a model without a masked-LM head succeeded"
fi
grep -q "no masked-LM head" "$work/err" || fail "sparse without a head: $(cat "$work/err")"
[ "$failures" -eq 0 ] || exit 1
echo "cli_heads: all passed"
