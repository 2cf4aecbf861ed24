#!/usr/bin/env bash
# bge-m3's three outputs against its dense output alone, in one process per
# run of encoder-cli bench (the forward pass, then per sequence: CLS
# normalized; or that plus the lexical weights and the ColBERT vectors),
# alternating the two, ROUNDS rounds; prints each run's tokens/s and the
# medians' ratio (all three / dense alone).
#
# Usage: bench/multi_vector/compare.sh ENCODER_CLI MODEL_DIR [ROUNDS] [BENCH FLAGS...]
#   e.g. compare.sh build/engine/encoder-cli /tmp/bge-m3 5 --batch 8 --seq 128
set -euo pipefail
cli=$1
model=$2
rounds=${3:-5}
shift $(($# < 3 ? $# : 3))
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--batch 8 --seq 128)
declare -a dense=() all=()
for round in $(seq 1 "$rounds"); do
  d=$("$cli" bench --model "$model" --iters 3 --outputs dense "${flags[@]}" | jq .tokens_per_second)
  a=$("$cli" bench --model "$model" --iters 3 --outputs dense,sparse,colbert "${flags[@]}" |
    jq .tokens_per_second)
  echo "round $round: dense $d tokens/s, dense+sparse+colbert $a tokens/s"
  dense+=("$d")
  all+=("$a")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
md=$(median "${dense[@]}")
ma=$(median "${all[@]}")
echo "median: dense $md tokens/s, all three $ma tokens/s; cost of all three: $(jq -n "$md / $ma" | cut -c1-5)x dense alone"
