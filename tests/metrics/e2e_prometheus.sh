#!/usr/bin/env bash
# End to end with a real Prometheus, on 127.0.0.1 only: encoder-server on a
# small random model; Prometheus (Debian's) scraping it every second with the
# project's alerting rules loaded; load from `encoder-client bench --json`
# (32 calls in flight, 5 % of them invalid, so two codes). Then PromQL through
# Prometheus's HTTP API must agree with what the client counted:
#   - every family is there, at zero, before the first request;
#   - sum by (code) (encoder_requests_total) = the client's calls per code;
#   - encoder_inputs_total and encoder_tokens_total = the client's inputs and
#     tokens (from the responses);
#   - histogram_quantile(0.99, ...) is consistent with the client's p99 (see
#     check_p99 below for what "consistent" means);
#   - the mean of encoder_batch_inputs is above 1: concurrent calls shared batches;
#   - the rules evaluate without error;
# and every PromQL expression of the Grafana dashboard parses and runs.
#
# Usage: e2e_prometheus.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI DEPLOY_DIR
set -euo pipefail
name=metrics_e2e
server_bin=$1
client_bin=$2
cli_bin=$3
deploy=$4
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
extra_logs+=(prometheus.log)
require_tools prometheus curl jq

# query PROMQL: the JSON answer of /api/v1/query (status "success" checked).
query() {
  local answer
  answer=$(curl -fsS --max-time 10 -G --data-urlencode "query=$1" "$prom/api/v1/query") ||
    fail "query failed: $1"
  [ "$(jq -r .status <<<"$answer")" = success ] || fail "query $1: $answer"
  echo "$answer"
}
# scalar PROMQL: the single value of an instant vector with one element ("" if none).
scalar() { query "$1" | jq -r '.data.result[0].value[1] // ""'; }

# ---- the server ---------------------------------------------------------------
make_model "$work/model" 64 2 4 128
# The result cache on, so that its series (and the dashboard's cache panels) exist.
start_server "$work/model" --threads 2 --cache-bytes 16777216
log "encoder-server: gRPC on $port, /metrics on $metrics_port"

# ---- Prometheus ---------------------------------------------------------------
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $deploy/prometheus/encoder-rules.yml
scrape_configs:
  - job_name: encoder-server
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
YAML
ready=""
for attempt in 1 2 3; do  # a port taken between the check and the bind: try another
  prom_port=$(free_port) || fail "no free port for Prometheus"
  prom="http://127.0.0.1:$prom_port"
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data-$attempt" \
    --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
  prometheus_pid=$!
  extra_pids+=("$prometheus_pid")
  for _ in $(seq 1 300); do
    if curl -fsS --max-time 2 "$prom/-/ready" >/dev/null 2>&1; then ready=1; break; fi
    kill -0 "$prometheus_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$ready" ] && break
  kill -9 "$prometheus_pid" 2>/dev/null || true
  prometheus_pid=""
done
[ -n "$ready" ] || fail "Prometheus did not become ready"
log "Prometheus $(prometheus --version 2>&1 | head -n1 | awk '{print $3}') on 127.0.0.1:$prom_port, scraping every 1 s"

for _ in $(seq 1 300); do
  [ "$(scalar 'up{job="encoder-server"}')" = 1 ] && break
  sleep 0.1
done
[ "$(scalar 'up{job="encoder-server"}')" = 1 ] || fail "the target never came up"

# ---- before the first request: every family, at zero --------------------------
names=$(query 'count by (__name__) ({job="encoder-server"})' | jq -r '.data.result[].metric.__name__' | sort)
for family in encoder_request_duration_seconds_bucket encoder_tokenize_duration_seconds_bucket \
  encoder_queue_duration_seconds_bucket encoder_batch_duration_seconds_bucket \
  encoder_batch_inputs_bucket encoder_batch_tokens_bucket encoder_requests_total \
  encoder_inputs_total encoder_tokens_total encoder_queue_requests encoder_queue_tokens \
  encoder_queue_tokens_limit encoder_inflight_requests encoder_model_info process_resident_memory_bytes \
  process_cpu_seconds_total process_start_time_seconds process_open_fds \
  encoder_cache_hits_total encoder_cache_misses_total encoder_cache_coalesced_total \
  encoder_cache_evictions_total encoder_cache_bytes; do
  grep -qx "$family" <<<"$names" || fail "$family is not in Prometheus before the first request"
done
# The codes each call can answer (metrics_parts_test lists them): 144 over
# both transports' RPCs (HTTP has no EncodeStream).
[ "$(scalar 'count(encoder_requests_total{job="encoder-server"})')" = 144 ] ||
  fail "expected the 144 call x code series of encoder_requests_total"
[ "$(scalar 'count(encoder_requests_total{job="encoder-server",transport="http",rpc="EncodeStream"})')" = "" ] ||
  fail "an HTTP EncodeStream series, which no request can move"
[ "$(scalar 'sum(encoder_requests_total{job="encoder-server"})')" = 0 ] || fail "requests before any call"
log "before the first request: all 23 families (the cache's five too), 144 call x code series at 0"

# ---- load ----------------------------------------------------------------------
# Half the calls repeat one request (result cache hits), the rest send texts
# no call sent before (misses, computed): the engine stays the load, as
# without the cache (a load of hits alone runs at tens of thousands of calls
# a second, where the server's answer-to-OnDone time is not the client's).
"$client_bin" bench --target "127.0.0.1:$port" --concurrency 32 --duration 8s \
  --invalid-fraction 0.05 --repeat-fraction 0.5 --text-words 4:24 --timeout 30s \
  --json >"$work/bench.json" ||
  fail "bench failed: $(cat "$work/bench.json")"
requests=$(jq .requests "$work/bench.json")
log "bench: $(jq -c '{requests, requests_per_second, codes, p99: .latency_seconds.p99}' "$work/bench.json")"
[ "$(jq '.codes | length' "$work/bench.json")" -ge 2 ] || fail "the load had a single code"

# Wait for a scrape taken after the last call was answered.
for _ in $(seq 1 100); do
  [ "$(scalar 'sum(encoder_requests_total{job="encoder-server"})')" = "$requests" ] && break
  sleep 0.2
done

# ---- requests per code ----------------------------------------------------------
server_codes=$(query 'sum by (code) (encoder_requests_total{job="encoder-server"})' |
  jq -c '[.data.result[] | select(.value[1] != "0") | {(.metric.code): (.value[1] | tonumber)}] | add')
client_codes=$(jq -c '.codes' "$work/bench.json")
jq -en --argjson s "$server_codes" --argjson c "$client_codes" '$s == $c' >/dev/null ||
  fail "requests per code: Prometheus $server_codes, client $client_codes"
log "sum by (code) (encoder_requests_total) = the client's counts: $server_codes"

for counter in inputs tokens; do
  server_value=$(scalar "sum(encoder_${counter}_total{job=\"encoder-server\"})")
  client_value=$(jq ".$counter" "$work/bench.json")
  [ "$server_value" = "$client_value" ] ||
    fail "encoder_${counter}_total is $server_value, the client counted $client_value"
done
log "encoder_inputs_total and encoder_tokens_total = the client's inputs and tokens"
hits=$(scalar 'sum(encoder_cache_hits_total{job="encoder-server"})')
misses=$(scalar 'sum(encoder_cache_misses_total{job="encoder-server"})')
jq -en --argjson h "${hits:-0}" --argjson m "${misses:-0}" '$h > 0 and $m > 0' >/dev/null ||
  fail "the result cache saw hits $hits and misses $misses (both expected)"
log "result cache: $hits hits, $misses misses"

# ---- p99 ------------------------------------------------------------------------
# histogram_quantile finds the bucket (lo, hi] holding the 99th percentile of
# the server's request durations and interpolates inside it; it says nothing
# finer. The client times more than the server (its own send and receive,
# and its CPU, on the same two cores) and ranks samples slightly differently
# (nearest rank), so its p99 may sit in a neighbouring bucket. The check:
# the client's p99 lies in (the bound below lo, the bound above hi], one
# bucket either side of the server's (about x1.47 each way with E6 buckets).
server_p99=$(scalar 'histogram_quantile(0.99, sum by (le) (rate(encoder_request_duration_seconds_bucket{job="encoder-server"}[1m])))')
client_p99=$(jq '.latency_seconds.p99' "$work/bench.json")
bounds=$(query 'encoder_request_duration_seconds_bucket{job="encoder-server",transport="grpc",rpc="Encode",code="OK"}' |
  jq -c '[.data.result[].metric.le | select(. != "+Inf") | tonumber] | sort')
window=$(jq -nc --argjson b "$bounds" --argjson q "$server_p99" '
  ([$b | to_entries[] | select(.value >= $q)][0].key) as $i
  | {lo: (if $i >= 1 then $b[$i - 1] else 0 end), hi: $b[$i],
     below: (if $i >= 2 then $b[$i - 2] else 0 end), above: ($b[$i + 1] // $b[$i])}')
jq -en --argjson w "$window" --argjson c "$client_p99" '$c > $w.below and $c <= $w.above' >/dev/null ||
  fail "server p99 $server_p99 s (bucket $window) and client p99 $client_p99 s are more than a bucket apart"
log "p99: Prometheus $server_p99 s in bucket $(jq -c '[.lo, .hi]' <<<"$window"), client $client_p99 s: within a bucket either side"

# ---- batching -------------------------------------------------------------------
mean_inputs=$(scalar 'sum(rate(encoder_batch_inputs_sum{job="encoder-server"}[1m])) / sum(rate(encoder_batch_inputs_count{job="encoder-server"}[1m]))')
holds '$a > 1' "$mean_inputs" || fail "mean inputs per batch $mean_inputs: concurrent calls were not batched"
p90_inputs=$(scalar 'histogram_quantile(0.9, sum by (le) (rate(encoder_batch_inputs_bucket{job="encoder-server"}[1m])))')
log "encoder_batch_inputs: mean $mean_inputs inputs per batch, p90 $p90_inputs (concurrency 32)"

for gauge in encoder_inflight_requests encoder_queue_requests encoder_queue_tokens; do
  [ "$(scalar "$gauge{job=\"encoder-server\"}")" = 0 ] || fail "$gauge is not back to 0 after the load"
done

# ---- rules ----------------------------------------------------------------------
rules=$(curl -fsS --max-time 10 "$prom/api/v1/rules")
[ "$(jq '[.data.groups[].rules[]] | length' <<<"$rules")" -ge 5 ] || fail "the rules were not loaded"
bad_rules=$(jq -c '[.data.groups[].rules[] | select(.health != "ok") | {name, health, lastError}]' <<<"$rules")
[ "$bad_rules" = "[]" ] || fail "rules that do not evaluate: $bad_rules"
firing=$(jq -c '[.data.groups[].rules[] | select(.state == "firing") | .name]' <<<"$rules")
[ "$firing" = "[]" ] || fail "alerts firing on a healthy server: $firing"
log "$(jq '[.data.groups[].rules[]] | length' <<<"$rules") alerting rules evaluate without error; none firing"

# ---- the Grafana dashboard --------------------------------------------------------
dashboard="$deploy/grafana/encoder-dashboard.json"
substitute() { sed -e 's/\$__rate_interval/1m/g' -e 's/\$job/encoder-server/g' -e 's/\$instance/.*/g'; }
count=0
while IFS= read -r expr; do
  [ -n "$expr" ] || continue
  answer=$(query "$(substitute <<<"$expr")")
  [ "$(jq '.data.result | length' <<<"$answer")" -ge 1 ] || fail "dashboard query has no data: $expr"
  count=$((count + 1))
done < <(jq -r '.panels[].targets[].expr' "$dashboard")
[ "$count" -ge 10 ] || fail "only $count expressions found in the dashboard"
# Template variables: label_values(SELECTOR, LABEL) must find series.
while IFS= read -r variable; do
  selector=$(sed -n 's/^label_values(\(.*\), *[a-z_]*)$/\1/p' <<<"$variable" | substitute)
  [ -n "$selector" ] || fail "unexpected variable query: $variable"
  series=$(curl -fsS --max-time 10 -G --data-urlencode "match[]=$selector" "$prom/api/v1/series")
  [ "$(jq '.data | length' <<<"$series")" -ge 1 ] || fail "dashboard variable finds nothing: $variable"
done < <(jq -r '.templating.list[] | select(.type == "query") | .definition' "$dashboard")
log "all $count dashboard expressions and its variables run with data"

# ---- stop -------------------------------------------------------------------------
status=0
stop_server || status=$?
[ "$status" -eq 0 ] || fail "the server exited $status after SIGTERM"
kill -TERM "$prometheus_pid"
wait "$prometheus_pid" 2>/dev/null || true
log "all checks passed"
