#!/usr/bin/env bash
# Start-up reads each model file once, and refuses what it cannot serve: under
# `strace -f -e trace=openat,listen`, encoder-server on the demo model
# (encoder-cli make-model) and on a sentence-transformers pipeline
# (modules.json, 1_Pooling, 2_Dense, Normalize, config_sentence_transformers.json,
# tokenizer.json) opens each of
# config.json, the tokenizer files, modules.json, 1_Pooling/config.json and
# the safetensors at most once before its first listen(). Then a config key
# the engine does not implement (BERT's is_decoder, Qwen3's
# use_bidirectional_attention) makes it exit non-zero with one line naming
# the key, the value and the file, before it listens. The strace part is
# skipped (with a message) where ptrace is not permitted.
#
# Usage: e2e_loading.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI GOLDEN_DIR
set -euo pipefail
server_bin=$1
client_bin=$2
cli_bin=$3
golden=$4

name=e2e_loading
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
require_tools jq

make_model "$work/demo" 64 2 4 128
# A sentence-transformers pipeline: the golden one (97 ids), with a
# tokenizer.json of a few words within them.
cp -r "$golden/pipelines/model" "$work/pipeline"
cat >"$work/pipeline/tokenizer.json" <<'JSON'
{"version": "1.0", "added_tokens": [], "normalizer": {"type": "Lowercase"},
 "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": null, "decoder": null,
 "model": {"type": "WordLevel", "unk_token": "[UNK]",
           "vocab": {"[UNK]": 0, "hello": 1, "world": 2, "the": 3, "a": 4}}}
JSON

# opens_before_listen TRACE DIR FILE: how many openat calls of DIR/FILE the
# trace holds before the first listen() (an unfinished call counts once: its
# "resumed" line names no path).
opens_before_listen() {
  awk -v path="\"$2/$3\"" '
    / listen\(/ { exit }
    /openat\(/ && index($0, path) { n++ }
    END { print n + 0 }' "$1"
}

# traced_start MODEL: encoder-server under strace until it serves; then
# stopped. The trace is in $work/trace.log.
traced_start() {
  : >"$work/server.log"
  strace -f -qq -e trace=openat,listen -o "$work/trace.log" \
    "$server_bin" --model "$1" --host 127.0.0.1 --port 0 --metrics-port 0 --http-port 0 \
    2>"$work/server.log" &
  local strace_pid=$!
  for _ in $(seq 1 600); do
    grep -q "serving on 127.0.0.1:" "$work/server.log" && break
    kill -0 "$strace_pid" 2>/dev/null || fail "the server exited while starting under strace"
    sleep 0.1
  done
  grep -q "serving on 127.0.0.1:" "$work/server.log" || fail "no 'serving on' within 60 s"
  # The traced server is strace's child.
  local pid
  pid=$(cat "/proc/$strace_pid/task/$strace_pid/children" 2>/dev/null | cut -d' ' -f1)
  [ -n "$pid" ] && kill -TERM "$pid"
  wait "$strace_pid" || true
}

if ! command -v strace >/dev/null; then
  log "SKIP the open counts: strace is not installed (scripts/packages.txt lists it)"
elif ! strace -f -qq -e trace=openat -o /dev/null true 2>/dev/null; then
  log "SKIP the open counts: ptrace is not permitted here (strace cannot trace a child)"
else
  traced_start "$work/demo"
  for file in config.json model.safetensors vocab.txt tokenizer_config.json; do
    n=$(opens_before_listen "$work/trace.log" "$work/demo" "$file")
    check "the demo model's $file is opened once before listening (got $n)" test "$n" -eq 1
  done
  traced_start "$work/pipeline"
  for file in config.json model.safetensors tokenizer.json modules.json 1_Pooling/config.json \
    2_Dense/config.json 2_Dense/model.safetensors config_sentence_transformers.json; do
    n=$(opens_before_listen "$work/trace.log" "$work/pipeline" "$file")
    check "the pipeline's $file is opened once before listening (got $n)" test "$n" -eq 1
  done
  check "the pipeline is served as its modules say" \
    grep -q "pooling max+mean + Dense + Normalize" "$work/server.log"
  log "each model file opened once before listening (demo and pipeline)"
fi

# refused MODEL LINE: encoder-server exits non-zero with LINE as its one line
# of standard error, and never listens.
refused() {
  local status=0
  "$server_bin" --model "$1" --host 127.0.0.1 --port 0 --metrics-port 0 --http-port 0 \
    2>"$work/refused.err" || status=$?
  check "a refused model exits non-zero: $(cat "$work/refused.err")" test "$status" -ne 0
  check "a refused model is one line: $(cat "$work/refused.err")" \
    test "$(wc -l <"$work/refused.err")" -eq 1
  check "the line names the key, the value and the file: $(cat "$work/refused.err")" \
    grep -qF -- "$2" "$work/refused.err"
  check "a refused model never listens" test -z "$(grep 'serving on' "$work/refused.err")"
}

cp -r "$work/demo" "$work/decoder"
jq '.is_decoder = true' "$work/demo/config.json" >"$work/decoder/config.json"
refused "$work/decoder" "$work/decoder/config.json: unsupported is_decoder true (supported: false)"

"$cli_bin" make-model --out "$work/qwen3" --model-type qwen3 --hidden 64 --layers 2 --heads 4 \
  --intermediate 128 --max-position 128 --seed 7 >/dev/null
jq '.use_bidirectional_attention = true' "$work/qwen3/config.json" >"$work/qwen3/config.edited"
mv "$work/qwen3/config.edited" "$work/qwen3/config.json"
refused "$work/qwen3" \
  "$work/qwen3/config.json: unsupported use_bidirectional_attention true (supported: false)"
log "refusals: one line naming key, value and file, exit non-zero, never listening"
log "PASS"
