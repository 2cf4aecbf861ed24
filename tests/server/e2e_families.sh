#!/usr/bin/env bash
# Every family of the architecture registry end to end, with the real
# binaries, on the PyTorch fixtures of tests/golden/families (random
# weights, hub layout, no tokenizer files), one directory per model_type
# (engine_test's FixturesTest checks that they are the registry's, BERT's
# aside), each directory found here:
#   - encoder-cli encode --pooling none keeps its JSON-lines interface and
#     matches the reference hidden states (max |diff| <= 1e-4, the parity
#     test's float32 tolerance);
#   - encoder-server loads the model although it has no tokenizer, says so
#     in one log line, reports the architecture and text_input false in
#     GetModelInfo, serves token ids with the same numbers, and answers text
#     with FAILED_PRECONDITION.
#
# Usage: e2e_families.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI GOLDEN_DIR
set -euo pipefail
name=e2e_families
server_bin=$1
client_bin=$2
cli_bin=$3
golden=$4
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT

# max |got - reference| over every token state; got is JSON lines of {"hidden_states": ...}.
max_error() {
  jq -s --slurpfile ref "$2" '
    [range(0; length) as $i | .[$i].hidden_states as $g | $ref[0].hidden_states[$i] as $r |
     range(0; $g | length) as $t | range(0; $g[$t] | length) as $c |
     ($g[$t][$c] - $r[$t][$c]) | fabs] | max' "$1"
}

shopt -s nullglob
fixtures=("$golden"/families/*/)
[ "${#fixtures[@]}" -gt 0 ] || fail "no fixtures in $golden/families"
for fixture in "${fixtures[@]}"; do
  family=$(basename "$fixture")
  reference="$golden/families/$family/reference.json"
  model="$work/$family"
  cp -r "$golden/families/$family/model" "$model"
  jq -c '.inputs[]' "$reference" >"$work/inputs.jsonl"
  want_type=$(jq -r .family "$reference")

  "$cli_bin" encode --model "$model" --pooling none <"$work/inputs.jsonl" >"$work/cli.jsonl"
  error=$(max_error "$work/cli.jsonl" "$reference")
  log "$family: encoder-cli max |diff| $error"
  check "$family: encoder-cli within 1e-4 of PyTorch (got $error)" holds '$a <= 1e-4' "$error"

  start_server "$model"
  check "$family: the log says text input is unavailable" \
    grep -q "text input unavailable (token_ids only)" "$work/server.log"
  client() { "$client_bin" --target "127.0.0.1:$port" "$@"; }
  info=$(client info)
  check "$family: model_type in info ($info)" holds '$a.model_type == $b' "$info" "\"$want_type\""
  architecture=$(jq -r .architecture <<<"$info")
  check "$family: architecture in info ($architecture)" test -n "$architecture"
  check "$family: text_input false in info" holds '($a.text_input // false) == false' "$info"
  client encode --input "$work/inputs.jsonl" --pooling none >"$work/served.jsonl"
  error=$(max_error "$work/served.jsonl" "$reference")
  log "$family ($architecture): served max |diff| $error"
  check "$family: served within 1e-4 of PyTorch (got $error)" holds '$a <= 1e-4' "$error"
  if client encode "some text" 2>"$work/err"; then fail "$family: text input was accepted"; fi
  check "$family: text is FAILED_PRECONDITION ($(cat "$work/err"))" \
    grep -q "FAILED_PRECONDITION: .*text input is unavailable for this model (send token_ids)" \
    "$work/err"
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "$family: the server did not exit 0 on SIGTERM"
  server_pid=""
done
log "PASS: ${#fixtures[@]} families"
