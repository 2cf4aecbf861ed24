#!/usr/bin/env bash
# A random model of BAAI/bge-m3's shape for bench/multi_vector/compare.sh:
# XLM-RoBERTa large (hidden 1024, 24 layers, 16 heads, FFN 4096, 250,002
# tokens), BAAI/bge-m3's tokenizer.json from ../shared/tokenizers, and its
# two extra heads written by torch.save as FlagEmbedding saves them:
# sparse_linear.pt (Linear(1024, 1)) and colbert_linear.pt (Linear(1024, 1024)).
#
# Usage: bench/multi_vector/make_model.sh ENCODER_CLI OUT_DIR
set -euo pipefail
cli=$1
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
tokenizer="$root/../shared/tokenizers/BAAI--bge-m3/tokenizer.json"
[ -f "$tokenizer" ] || { echo "missing $tokenizer (../shared beside the checkout)" >&2; exit 1; }
"$cli" make-model --out "$out" --model-type xlm-roberta --hidden 1024 --layers 24 --heads 16 \
  --intermediate 4096 --vocab-size 250002 --max-position 8194 --seed 3 >/dev/null
rm -f "$out/vocab.txt" "$out/tokenizer_config.json"
ln -sf "$tokenizer" "$out/tokenizer.json"
/usr/bin/python3 - "$out" <<'PY'
import sys
import torch
torch.manual_seed(3)
for name, width in (("sparse_linear", 1), ("colbert_linear", 1024)):
    linear = torch.nn.Linear(1024, width)
    torch.save(linear.state_dict(), f"{sys.argv[1]}/{name}.pt")
PY
echo "$out: bge-m3-shaped model with sparse_linear.pt and colbert_linear.pt"
