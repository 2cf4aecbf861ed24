#!/usr/bin/env bash
# Every path of the source tree that a comment, a script or a document cites
# ("server/core/requests/plans.h", "docs/metrics.md") exists: a file moved or
# removed without its citations fails here. Public engine headers are cited
# as they are included ("engine/tokenizer.h", under engine/include/).
#   cited_paths.sh <source root>
set -euo pipefail
cd "$1"
missing=0
checked=0
while read -r path; do
  checked=$((checked + 1))
  [ -e "$path" ] || [ -e "engine/include/$path" ] && continue
  grep -rlF --include='*.cc' --include='*.h' --include='*.md' --include='*.sh' --include='*.txt' \
    --include='*.proto' --include='*.py' --include='*.mjs' --include='*.yaml' --include='*.yml' \
    --exclude-dir=build --exclude-dir='build-*' --exclude-dir=.git --exclude-dir=node_modules \
    "$path" . | sed "s|^\./|  cited in |"
  echo "missing: $path"
  missing=$((missing + 1))
done < <(git ls-files -- '*.cc' '*.h' '*.md' '*.sh' '*.txt' '*.proto' '*.py' '*.mjs' '*.yaml' \
           '*.yml' |
         xargs grep -ohE '\b(engine|server|tests|common|client|proto|deploy|bench|scripts|fuzz|docs)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(h|cc|md|sh|proto|py|mjs|json|yaml|txt)\b' |
         sort -u)
echo "cited_paths: $checked paths cited, $missing missing"
[ "$missing" -eq 0 ]
