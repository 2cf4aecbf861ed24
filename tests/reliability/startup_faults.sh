#!/usr/bin/env bash
# Start-up faults, with the real server on 127.0.0.1: each case must end in
# its exit status (1 for a start-up fault, 2 for a bad flag) with exactly one
# line on stderr that names the problem (the
# key words are checked, so a vaguer message is a regression), and without
# ever listening: the case's gRPC port (a fixed free port) is polled every
# 20 ms while the process lives and must never be seen in LISTEN state (a
# sampled check: a listen shorter than 20 ms could be missed).
#
# Cases: a truncated safetensors file; a corrupt safetensors header (not JSON;
# a header length past the end of the file); a config.json that lies (a hidden
# size that does not match the weights; num_attention_heads not dividing the
# hidden size; more layers than the file has); a config.json that is not JSON
# (with the line and column), missing, or a directory; only pytorch_model.bin
# (the error says how to get safetensors); a weights symlink to a missing
# blob; a tokenizer file that is a directory or unreadable; an unreadable
# 1_Pooling/config.json; a Hugging Face cache folder without refs/main;
# an unreadable model directory (the server run as nobody with setpriv, since
# root ignores permissions); a model path that is a file; a missing model
# directory (file errors give the OS's reason); the gRPC, metrics or HTTP
# port in use; out-of-range flags
# (--port 70000, --threads -1, --max-batch-tokens 0, and the newer
# --max-receive-message-bytes, --max-concurrent-streams); an unknown flag; a
# flag value that does not parse; an instruction-set level this CPU lacks
# (--isa and ENCODER_ISA; the level is chosen from /proc/cpuinfo, the case
# skipped with a log line on a CPU that has every level) and one that does
# not exist.
#
# Usage: startup_faults.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI RELIABILITY_PROBE SUMMARY_JSONL
set -euo pipefail
name=startup_faults
source "$(dirname "$0")/../support/e2e_lib.sh"
take_arguments "$@"
busy_pid=""
cleanup_faults() {
  if [ -n "$busy_pid" ]; then kill -9 "$busy_pid" 2>/dev/null || true; fi
  cleanup
}
trap cleanup_faults EXIT
require_tools jq
: >"$summary"

make_model "$work/good" 128 2 4 512
variant() {  # variant NAME: a copy of the good model to break
  rm -rf "${work:?}/$1"
  cp -r "$work/good" "$work/$1"
}

cases=0
# Start-up faults (model, TLS, ports) exit 1; bad flags exit 2 (README, main.cc).
want_exit=1
# expect CASE PATTERN [--as-nobody] -- SERVER_ARGS...: runs the server on a
# fixed free port and checks the exit, the one line and that the port was
# never listening. PATTERN is a grep -E pattern the line must match.
expect() {
  local label=$1 pattern=$2
  shift 2
  local prefix=()
  if [ "$1" = --as-nobody ]; then
    prefix=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    shift
  fi
  [ "$1" = -- ] && shift
  local p
  p=$(free_port) || fail "no free port"
  local args=(--host 127.0.0.1 --port "$p" --metrics-port 0 --http-port 0 "$@")
  # An explicit port given by the case wins (later flags win in Abseil).
  "${prefix[@]}" "$server_bin" "${args[@]}" 2>"$work/err" >/dev/null &
  local pid=$! seen=0 i
  for i in $(seq 1 1500); do  # 30 s
    kill -0 "$pid" 2>/dev/null || break
    if listening "$p"; then seen=1; fi
    sleep 0.02
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    fail "$label: the server still runs after 30 s: $(cat "$work/err")"
  fi
  local status=0
  wait "$pid" || status=$?
  local lines
  lines=$(wc -l <"$work/err")
  local line
  line=$(head -n 1 "$work/err")
  record --arg case "$label" --argjson exit "$status" --arg line "$line" --argjson lines "$lines" \
    '{case: $case, exit: $exit, lines: $lines, stderr: $line}'
  check "$label: exit $want_exit (got $status)" test "$status" -eq "$want_exit"
  check "$label: exactly one line on stderr (got $lines): $(cat "$work/err")" test "$lines" -eq 1
  check "$label: the line names the problem (/$pattern/): $line" grep -qE -- "$pattern" "$work/err"
  check "$label: never listened on its port $p" test "$seen" -eq 0
  if listening "$p"; then fail "$label: port $p is bound after the exit"; fi
  cases=$((cases + 1))
  log "$label: exit $status: $line"
}

# ---- the model directory ---------------------------------------------------------
variant truncated
truncate -s $(($(stat -c %s "$work/truncated/model.safetensors") / 2)) "$work/truncated/model.safetensors"
expect "truncated safetensors" \
  'error: cannot load the model: .*truncated/model\.safetensors: tensor .* run past the end .*the file may be truncated' \
  -- --model "$work/truncated"

variant header
# A header length that fits, then bytes that are not a JSON object.
printf '\x40\x00\x00\x00\x00\x00\x00\x00{"not": "closed' |
  dd of="$work/header/model.safetensors" conv=notrunc status=none
expect "corrupt safetensors header (not JSON)" \
  'error: cannot load the model: .*header/model\.safetensors: header is not a JSON object' \
  -- --model "$work/header"

variant header_length
printf '\x00\x00\x00\x00\x00\x01\x00\x00' | dd of="$work/header_length/model.safetensors" conv=notrunc status=none
expect "corrupt safetensors header (length past the end)" \
  'error: cannot load the model: .*header_length/model\.safetensors: header length 1099511627776 runs past the end' \
  -- --model "$work/header_length"

variant hidden
sed -i 's/"hidden_size": *128/"hidden_size": 192/' "$work/hidden/config.json"
grep -q '"hidden_size": *192' "$work/hidden/config.json" || fail "could not edit hidden_size"
expect "config.json hidden size not matching the weights" \
  'error: cannot load the model: .*hidden/model\.safetensors: tensor embeddings\.word_embeddings\.weight: expected shape \[303, 192\], got \[303, 128\]' \
  -- --model "$work/hidden"

variant heads
sed -i 's/"num_attention_heads": *4/"num_attention_heads": 3/' "$work/heads/config.json"
grep -q '"num_attention_heads": *3' "$work/heads/config.json" || fail "could not edit num_attention_heads"
expect "config.json num_attention_heads not dividing hidden_size" \
  'error: cannot load the model: .*heads/config\.json: hidden_size 128 is not divisible by num_attention_heads 3' \
  -- --model "$work/heads"

variant layers
sed -i 's/"num_hidden_layers": *2/"num_hidden_layers": 3/' "$work/layers/config.json"
expect "config.json with more layers than the weights" \
  'error: cannot load the model: .*layers: missing tensor encoder\.layer\.2\.attention\.self\.query\.weight' \
  -- --model "$work/layers"

variant notjson
echo 'hidden_size = 128' >"$work/notjson/config.json"
expect "config.json that is not JSON" \
  'error: cannot load the model: .*notjson/config\.json: not valid JSON at line 1, column 1: ' \
  -- --model "$work/notjson"

variant comma
# A comma missing at the end of the hidden_size line: the parser stops at the
# key on the next line.
line=$(grep -n '"hidden_size": *128,' "$work/comma/config.json" | cut -d: -f1)
[ -n "$line" ] || fail "no hidden_size line in config.json"
sed -i 's/"hidden_size": *128,/"hidden_size": 128/' "$work/comma/config.json"
expect "config.json missing a comma" \
  "error: cannot load the model: .*comma/config\\.json: not valid JSON at line $((line + 1)), column [0-9]+: syntax error while parsing object - unexpected string literal" \
  -- --model "$work/comma"

variant noconfig
rm "$work/noconfig/config.json"
expect "config.json missing" \
  'error: cannot load the model: .*noconfig/config\.json: cannot open: No such file or directory' \
  -- --model "$work/noconfig"

variant configdir
rm "$work/configdir/config.json"
mkdir "$work/configdir/config.json"
expect "config.json that is a directory" \
  'error: cannot load the model: .*configdir/config\.json: cannot read: Is a directory' \
  -- --model "$work/configdir"

variant pytorch
rm "$work/pytorch/model.safetensors"
printf 'PK' >"$work/pytorch/pytorch_model.bin"
expect "only pytorch_model.bin" \
  "error: cannot load the model: .*pytorch: no model\\.safetensors or model\\.safetensors\\.index\\.json, only pytorch_model\\.bin .*huggingface-cli download ORG/NAME --include '\\*\\.safetensors' --local-dir .*save_pretrained\\(.*safe_serialization=True\\)" \
  -- --model "$work/pytorch"

variant dangling
rm "$work/dangling/model.safetensors"
ln -s ../../blobs/9b1c "$work/dangling/model.safetensors"
expect "weights symlink to a missing blob" \
  'error: cannot load the model: .*dangling/model\.safetensors: cannot open: No such file or directory \(a symlink to \.\./\.\./blobs/9b1c, which is missing\)' \
  -- --model "$work/dangling"

variant tokenizerdir
rm "$work/tokenizerdir/vocab.txt"
mkdir "$work/tokenizerdir/tokenizer.json"
expect "tokenizer.json that is a directory" \
  'error: cannot load the model: .*tokenizerdir/tokenizer\.json: cannot read: Is a directory' \
  -- --model "$work/tokenizerdir"

# The Hugging Face cache folder itself, its refs/main gone: the error names
# the file and the snapshot to pass instead.
mkdir -p "$work/hub/models--acme--tiny/snapshots" "$work/hub/models--acme--tiny/refs"
cp -r "$work/good" "$work/hub/models--acme--tiny/snapshots/abc123"
expect "cache folder without refs/main" \
  'error: cannot load the model: .*models--acme--tiny/refs/main: cannot open: No such file or directory; pass its snapshot instead: .*models--acme--tiny/snapshots/abc123' \
  -- --model "$work/hub/models--acme--tiny"

# Unreadable: the server runs as nobody; the parent stays traversable.
chmod 711 "$work"
variant private
chmod 000 "$work/private"
expect "unreadable model directory (as nobody)" \
  'error: cannot load the model: .*private/config\.json: cannot open: Permission denied' \
  --as-nobody -- --model "$work/private"
variant closed_parent
mkdir "$work/closed"
mv "$work/closed_parent" "$work/closed/model"
chmod 700 "$work/closed"
expect "model directory behind an unreadable parent (as nobody)" \
  'error: cannot load the model: .*closed/model: cannot open: Permission denied' \
  --as-nobody -- --model "$work/closed/model"
variant unreadable_weights
chmod 600 "$work/unreadable_weights/model.safetensors"
expect "unreadable weights file (as nobody)" \
  'error: cannot load the model: .*unreadable_weights/model\.safetensors: cannot open: Permission denied' \
  --as-nobody -- --model "$work/unreadable_weights"
variant unreadable_vocab
chmod 600 "$work/unreadable_vocab/vocab.txt"
expect "unreadable vocab.txt (as nobody)" \
  'error: cannot load the model: .*unreadable_vocab/vocab\.txt: cannot open: Permission denied' \
  --as-nobody -- --model "$work/unreadable_vocab"
variant unreadable_pooling
mkdir "$work/unreadable_pooling/1_Pooling"
echo '{"pooling_mode_mean_tokens": true}' >"$work/unreadable_pooling/1_Pooling/config.json"
chmod 600 "$work/unreadable_pooling/1_Pooling/config.json"
expect "unreadable 1_Pooling/config.json (as nobody)" \
  'error: cannot load the model: .*unreadable_pooling/1_Pooling/config\.json: cannot open: Permission denied' \
  --as-nobody -- --model "$work/unreadable_pooling"

expect "model path that is a file" \
  'error: cannot load the model: .*good/config\.json: not a directory' \
  -- --model "$work/good/config.json"
expect "missing model directory" \
  'error: cannot load the model: .*no-such-model: cannot open: No such file or directory' \
  -- --model "$work/no-such-model"

# ---- int8/uint8 calibration (--quantization-ranges, quantization_ranges.json) -------
# The good model's embedding has 128 dimensions: ranges of 3 are refused.
echo '{"ranges": [[-1, -1, -1], [1, 1, 1]]}' >"$work/ranges3.json"
expect "--quantization-ranges of the wrong dimension" \
  'error: model good: quantization ranges .*ranges3\.json: 3 dimensions, but the model.s embedding has 128' \
  -- --model "$work/good" --quantization-ranges "$work/ranges3.json"
variant shipped_ranges
cp "$work/ranges3.json" "$work/shipped_ranges/quantization_ranges.json"
expect "quantization_ranges.json of the wrong dimension in the model directory" \
  'error: model shipped_ranges: quantization ranges .*shipped_ranges/quantization_ranges\.json: 3 dimensions' \
  -- --model "$work/shipped_ranges"
expect "--quantization-ranges naming no served model" \
  'error: --quantization-ranges other=.*: no served model is named "other"' \
  -- --model "$work/good" --quantization-ranges "other=$work/ranges3.json"

# ---- ports -------------------------------------------------------------------------
busy=$(free_port) || fail "no free port"
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("ready", flush=True)
time.sleep(120)' "$busy" >"$work/busy.out" 2>&1 &
busy_pid=$!
for _ in $(seq 1 100); do grep -q ready "$work/busy.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$work/busy.out" || fail "could not hold port $busy: $(cat "$work/busy.out")"
expect "gRPC port in use" "error: port $busy on 127\.0\.0\.1 is already in use \(--port\)" \
  -- --model "$work/good" --port "$busy"
expect "metrics port in use" "error: port $busy on 127\.0\.0\.1 is already in use \(--metrics-port\)" \
  -- --model "$work/good" --metrics-port "$busy"
expect "HTTP port in use" "error: port $busy on 127\.0\.0\.1 is already in use \(--http-port\)" \
  -- --model "$work/good" --http-port "$busy"
kill -9 "$busy_pid" 2>/dev/null || true
wait "$busy_pid" 2>/dev/null || true
busy_pid=""

# ---- the instruction-set level -------------------------------------------------------
# The highest level /proc/cpuinfo does not list (engine/isa.h names the
# flags each level needs), independent of the server's own detection.
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }
lacking=""
has avx2 fma avx_vnni || lacking=avx2_vnni
has avx512f avx512dq avx512bw avx512vl fma avx512_vnni avx512_bf16 || lacking=avx512_bf16
has avx512f avx512dq avx512bw avx512vl fma avx512_vnni || lacking=avx512_vnni
has avx512f avx512dq avx512bw avx512vl fma || lacking=avx512
if [ -n "$lacking" ]; then
  expect "--isa $lacking (this CPU lacks it)" \
    "error: --isa: instruction set $lacking: this CPU lacks it \(it has scalar.*\)" \
    -- --model "$work/good" --isa "$lacking"
  ENCODER_ISA=$lacking expect "ENCODER_ISA=$lacking (this CPU lacks it)" \
    "error: --isa: instruction set $lacking: this CPU lacks it" -- --model "$work/good"
else
  log "skipped the lacking-level cases: this CPU has every level (avx_vnni, avx512_vnni, avx512_bf16)"
fi
# bf16 below avx512_bf16 is refused, not emulated: at --isa avx2 (every
# supported CPU has it) on any machine, and at the CPU's own best level where
# it lacks AVX512_BF16.
expect "--precision bf16 at --isa avx2" \
  'error: cannot load the model: precision bf16 needs .*avx512_bf16|AVX512_BF16' \
  -- --model "$work/good" --precision bf16 --isa avx2
if ! has avx512f avx512dq avx512bw avx512vl fma avx512_vnni avx512_bf16; then
  expect "--precision bf16 (this CPU lacks AVX512_BF16)" \
    'error: cannot load the model: precision bf16 needs a CPU with native bf16 \(AVX512_BF16, or AMX\): this CPU lacks AVX512_BF16' \
    -- --model "$work/good" --precision bf16
fi

# ---- flags ---------------------------------------------------------------------------
want_exit=2
expect "--port 70000" 'error: --port must be in 0\.\.65535 \(got 70000\)' \
  -- --model "$work/good" --port 70000
expect "--threads -1" 'error: --threads must be 0 or more \(got -1\)' \
  -- --model "$work/good" --threads -1
expect "--max-batch-tokens 0" 'error: --max-batch-tokens must be positive \(got 0\)' \
  -- --model "$work/good" --max-batch-tokens 0
expect "--max-receive-message-bytes 100" 'error: --max-receive-message-bytes must be 0 \(derived\) or in 1024\.\..* \(got 100\)' \
  -- --model "$work/good" --max-receive-message-bytes 100
expect "--max-concurrent-streams 0" 'error: --max-concurrent-streams must be positive \(got 0\)' \
  -- --model "$work/good" --max-concurrent-streams 0
expect "unknown flag" "Unknown command line flag 'no_such_flag'" \
  -- --model "$work/good" --no-such-flag 3
expect "flag value that does not parse" "Illegal value 'many' specified for flag 'threads'" \
  -- --model "$work/good" --threads many
expect "--isa that does not exist" \
  'error: --isa: unknown instruction set "avx-512" \(one of: scalar, avx2, avx2_vnni, avx512, avx512_vnni, avx512_bf16\)' \
  -- --model "$work/good" --isa avx-512
expect "missing --model" 'error: --model is required' --

log "all $cases cases passed: non-zero exit, one line naming the problem, never listening"
