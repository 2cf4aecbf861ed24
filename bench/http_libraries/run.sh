#!/usr/bin/env bash
# Builds the candidate servers (CivetWeb, cpp-httplib, Boost.Beast, libevent's
# evhttp, libmicrohttpd) and loads each with wrk (2 threads, 32 connections,
# 10 s, POST of a 32-token text, a 4 KB JSON answer of 384 floats, answered
# by a worker thread as a batcher would). Needs: libcivetweb-dev
# libcpp-httplib-dev libboost1.74-dev libevent-dev libmicrohttpd-dev wrk (not
# project dependencies: only this measurement).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$out"' EXIT
source "$here/build.sh"
load() {  # NAME PORT PID
  echo "== $1"
  wrk -t2 -c32 -d"${DURATION:-10s}" --latency -s "$here/post_32_tokens.lua" "http://127.0.0.1:$2/embed" |
    grep -E 'Requests/sec| +50%| +99%|Socket errors|Non-2xx' | grep -v Req/Sec || true
}
for_each_library load
