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
run() {
  local name=$1 port=$2
  shift 2
  "$@" &
  local pid=$!
  sleep 0.5
  echo "== $name"
  wrk -t2 -c32 -d"${DURATION:-10s}" --latency -s "$here/post_32_tokens.lua" "http://127.0.0.1:$port/embed" |
    grep -E 'Requests/sec| +50%| +99%|Socket errors|Non-2xx' | grep -v Req/Sec || true
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
run civetweb 18080 "$out/civetweb" 127.0.0.1:18080
run cpp-httplib 18081 "$out/httplib" 18081
run beast 18082 "$out/beast" 18082 2
run evhttp 18083 "$out/evhttp" 18083
run microhttpd 18084 "$out/microhttpd" 18084
