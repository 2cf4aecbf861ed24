#!/usr/bin/env bash
# Rerank pairs/s: encoder-server's POST /rerank against ONNX Runtime on the
# same cross-encoder, alternating rounds (rerank.mjs), on this machine.
#
#   bench/peer/rerank.sh [--precision fp32|int8|bf16] [--peer-precision fp32|int8]
#                        [rerank.mjs flags: --rounds 5 --seconds 3 ...]
#
# --peer-precision int8 times ONNX Runtime on the model quantized by
# quantize_onnx.py (what onnxruntime.quantization.quantize_dynamic makes),
# after checking its scores against the fp32 model's (within 5e-2).
#
# Before timing, the server's scores are checked against ONNX Runtime's fp32
# logits: within 1e-3 in fp32 (measured ~1e-6), 2e-2 in bf16 (measured
# ~2e-3) and 5e-2 in int8 (measured ~1.7e-2): the logits of this random
# cross-encoder are of order 1.
#
# The model: MiniLM-L6's shape (hidden 384, 6 layers, 12 heads, FFN 1536:
# cross-encoder/ms-marco-MiniLM-L-6-v2's) with random weights and a
# one-label classifier (add_classifier.py), exported to ONNX with its head
# (export_onnx.py --head classifier). The server runs with --threads 2 and
# ONNX Runtime with 2 intra-op threads; both take turns on the same cores.
# Needs: build/ (scripts/setup), python3-torch and python3-onnx for the
# export, and `npm ci --ignore-scripts` in bench/peer (onnxruntime-node).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
precision=fp32
peer_precision=fp32
while [ $# -gt 0 ]; do
  case "$1" in
    --precision) precision=$2; shift 2 ;;
    --peer-precision) peer_precision=$2; shift 2 ;;
    *) break ;;
  esac
done
work="$(mktemp -d /tmp/encoder-rerank.XXXXXX)"
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$build/engine/encoder-cli" make-model --out "$work/model" --hidden 384 --layers 6 --heads 12 \
  --intermediate 1536 --seed 1 >/dev/null
/usr/bin/python3 "$here/add_classifier.py" --model "$work/model"
/usr/bin/python3 "$here/export_onnx.py" --model "$work/model" --out "$work/model.onnx" \
  --head classifier
timed_onnx=()
if [ "$peer_precision" = int8 ]; then
  /usr/bin/python3 "$here/quantize_onnx.py" --model "$work/model.onnx" --out "$work/model.int8.onnx"
  timed_onnx=(--timed-onnx "$work/model.int8.onnx")
fi

port=$((20000 + RANDOM % 20000))
"$build/server/app/encoder-server" --model "$work/model" --host 127.0.0.1 --port 0 \
  --metrics-port 0 --http-port "$port" --threads 2 --precision "$precision" \
  2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
case "$precision" in
  bf16) tolerance=2e-2 ;;
  int8) tolerance=5e-2 ;;
  *) tolerance=1e-3 ;;
esac
node "$here/rerank.mjs" --onnx "$work/model.onnx" --vocab "$work/model/vocab.txt" \
  --url "http://127.0.0.1:$port" --tolerance "$tolerance" "${timed_onnx[@]}" "$@"
