#!/usr/bin/env bash
# The include graph of engine/src and of server/core follows a declared order
# of folders, lowest first: a file may include one of its own folder or of a
# folder below it, never one above. A strict order also rules out cycles
# between folders. Prints every include that breaks it, with the counts of
# files and cross-folder includes checked, and fails when there is any.
#   include_layers.sh <source root>
set -euo pipefail
root="$1"

# tree, the prefix its includes carry ("" when relative to the tree), and
# its folders from the bottom up ("." is the tree's own top-level files).
check_tree() {
  local tree="$1" prefix="$2"
  shift 2
  local layers=("$@")
  awk -v tree="$tree" -v prefix="$prefix" -v order="${layers[*]}" -v root="$root" '
    BEGIN {
      n = split(order, names, " ")
      for (i = 1; i <= n; i++) rank[names[i]] = i
    }
    FNR == 1 {
      files++
      rel = substr(FILENAME, length(root "/" tree "/") + 1)
      folder = rel; sub(/\/[^\/]*$/, "", folder); if (folder == rel) folder = "."
      if (!(folder in rank)) { printf "%s/%s: folder %s has no place in the order\n", tree, rel, folder; bad++ }
    }
    /^#include "/ {
      inc = $0; sub(/^#include "/, "", inc); sub(/".*$/, "", inc)
      if (prefix != "") { if (index(inc, prefix) != 1) next; inc = substr(inc, length(prefix) + 1) }
      if ((getline dummy < (root "/" tree "/" inc)) < 0) next
      close(root "/" tree "/" inc)
      target = inc; sub(/\/[^\/]*$/, "", target); if (target == inc) target = "."
      if (target == folder) next
      edges++
      if (!(target in rank) || rank[target] > rank[folder]) {
        printf "%s/%s includes %s: %s is above %s\n", tree, rel, inc, target, folder
        bad++
      }
    }
    END {
      printf "%s: %d files, %d includes across folders, %d against the order (%s)\n",
             tree, files, edges, bad, order
      exit bad > 0
    }' $(find "$root/$tree" -name '*.h' -o -name '*.cc' | grep -v '/tokenizer/' | sort)
}

status=0
# engine/src: kernels, the allocation and profiling runtime, file formats,
# oneDNN, the family recipes, the layers and their weights, the output heads,
# the model-directory loader, then the public API's implementation.
check_tree engine/src "" kernels runtime io dnnl families layers heads loading . || status=1
# server/core: the batcher and its backend, the API types, the loaded model,
# the result cache, metrics, request building, dispatch, then the served set.
check_tree server/core server/core/ batching api model cache metrics requests dispatch . || status=1
exit $status
