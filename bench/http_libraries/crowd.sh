#!/usr/bin/env bash
# Builds the candidate servers (as run.sh does) and puts each under the
# reliability probe's crowd: 2000 idle keep-alive connections (each served
# GET /health once), 200 slowloris uploads (POST /embed headers announcing 100
# bytes, 10 sent), then 50 sequential POST /embed on new connections, then up
# to 12 s for the server to close the uploads. One line per library: the
# probe's JSON (tests/reliability/reliability_probe.cc, http-crowd).
#   bench/http_libraries/crowd.sh [PATH/TO/reliability-probe]
# (default build/tests/reliability/reliability-probe; cmake --build build
# --target reliability-probe).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
probe="${1:-$here/../../build/tests/reliability/reliability-probe}"
out=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$out"' EXIT
ulimit -n "$(ulimit -Hn)"  # 2200 connections on each side
source "$here/build.sh"
crowd() {  # NAME PORT PID
  echo "$1 $("$probe" http-crowd 127.0.0.1 "$2" 2000 200 50 --server-pid "$3" \
    --stall-wait-seconds 12)"
}
for_each_library crowd
