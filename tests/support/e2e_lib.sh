# Shared helpers of the end-to-end and reliability scripts (sourced, not
# run): start and stop encoder-server on free ports, checks that fail with the
# server's log, metrics scrapes, Node.js and npm packages. Everything is on 127.0.0.1; every wait is
# bounded.
#
# The sourcing script sets: name (for messages), work (a temporary directory),
# server_bin, client_bin, cli_bin; the reliability scripts also probe_bin and
# summary (the JSON lines file). client_flags holds the flags encoder-client
# needs to reach the server (TLS), used by the health wait. A script that runs
# other processes adds their pids to extra_pids (killed by cleanup) and their
# logs in $work to extra_logs (shown by fail beside the server's).

server_pid=""
port=""
metrics_port=""
extra_pids=()
extra_logs=()
client_flags=()

# take_arguments ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI RELIABILITY_PROBE SUMMARY_JSONL:
# every script's arguments, and a scratch directory.
take_arguments() {
  server_bin=$1
  client_bin=$2
  cli_bin=$3
  probe_bin=$4
  summary=$5
  work=$(mktemp -d)
}
log() { echo "$name: $*"; }
fail() {
  echo "$name: FAIL: $*" >&2
  if [ -f "$work/server.log" ]; then tail -n 20 "$work/server.log" | sed 's/^/  server log: /' >&2; fi
  local file
  for file in "${extra_logs[@]}"; do
    if [ -f "$work/$file" ]; then tail -n 20 "$work/$file" | sed "s/^/  $file: /" >&2; fi
  done
  exit 1
}
require_tools() {  # require_tools TOOL...: fail unless each is on PATH
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null ||
      fail "$tool not found: install it (scripts/setup installs the test packages)"
  done
}
check() {  # check DESCRIPTION COMMAND...: fail unless the command succeeds
  local what=$1
  shift
  "$@" || fail "$what"
}
# check_memory DESCRIPTION COMMAND...: a memory bound, for the plain build.
# Under ASan (scripts/test stage sanitize sets ENCODER_TEST_SANITIZED=1) RSS is
# not the server's: redzones and the freed-memory quarantine inflate it.
check_memory() {
  if [ "${ENCODER_TEST_SANITIZED:-0}" = 1 ]; then
    log "not checked under a sanitizer: $1"
    return 0
  fi
  check "$@"
}
# load_seconds FULL SHORT: how long a load phase runs. Under a sanitizer
# (ENCODER_TEST_SANITIZED=1) every call costs several times more and the
# release stage has already run the full phases, so the sanitizer run makes
# the same assertions over SHORT seconds; FULL otherwise.
load_seconds() {
  if [ "${ENCODER_TEST_SANITIZED:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi
}
# Is the jq expression over the numbers a, b, c true?
holds() { jq -en --argjson a "$2" --argjson b "${3:-0}" --argjson c "${4:-0}" "$1" >/dev/null; }
load_average() { cut -d' ' -f1-3 /proc/loadavg; }
# Appends one JSON object (a jq expression over $ARGS.named) to the summary file.
record() { jq -cn "$@" >>"$summary"; }

cleanup() {
  if [ -n "$server_pid" ]; then kill -9 "$server_pid" 2>/dev/null || true; fi
  for pid in "${extra_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  jobs -p | xargs -r kill -9 2>/dev/null || true
  rm -rf "$work"
}

# install_npm_packages DIR: Node.js and npm (Debian's, when missing), and DIR's
# pinned npm packages (npm ci --ignore-scripts), again only when DIR's
# package-lock.json changed. Tests calling it hold ctest's RESOURCE_LOCK
# system_packages (apt-get, and one npm ci at a time in DIR).
install_npm_packages() {
  local dir=$1 stamp want
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    log "installing nodejs and npm"
    local sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
      --no-install-recommends nodejs npm >/dev/null
  fi
  stamp="$dir/node_modules/.package-lock.sha256"
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "npm ci in $dir"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$want" >"$stamp"
  fi
}

make_model() {  # make_model DIR HIDDEN LAYERS HEADS INTERMEDIATE
  "$cli_bin" make-model --out "$1" --hidden "$2" --layers "$3" --heads "$4" --intermediate "$5" \
    --max-position 128 --seed 7 >/dev/null
}

# start_server MODEL [FLAGS...]: on free ports (read from the log), HTTP off
# unless FLAGS has --http-port (its default, 8080, would collide between
# tests run in parallel), waits (bounded) for health SERVING. Sets
# server_pid, port, metrics_port.
start_server() {
  local model=$1
  shift
  : >"$work/server.log"
  "$server_bin" --model "$model" --host 127.0.0.1 --port 0 --metrics-port 0 --http-port 0 "$@" \
    2>"$work/server.log" &
  server_pid=$!
  port=""
  for _ in $(seq 1 600); do
    port=$(sed -n 's/.*serving on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$work/server.log")
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || fail "the server exited while starting"
    sleep 0.1
  done
  [ -n "$port" ] || fail "the server did not start listening within 60 s"
  metrics_port=$(sed -n 's/.*metrics on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics.*/\1/p' "$work/server.log")
  [ -n "$metrics_port" ] || fail "the server did not log its metrics port"
  for _ in $(seq 1 100); do
    if [ "$("$client_bin" health --target "127.0.0.1:$port" --timeout 2s "${client_flags[@]}" \
      2>/dev/null)" = SERVING ]; then
      return 0
    fi
    sleep 0.1
  done
  fail "health never became SERVING"
}

# Sends SIGTERM and returns the server's exit status.
stop_server() {
  kill -TERM "$server_pid"
  local status=0
  wait "$server_pid" || status=$?
  server_pid=""
  return "$status"
}

# One value of the server's /metrics ("" if absent), e.g. metric 'encoder_queue_tokens'.
scrape() { curl -fsS --max-time 5 "http://127.0.0.1:$metrics_port/metrics" 2>/dev/null || true; }
# Per-model series carry model="NAME": the name alone matches it too.
metric() {
  # The series' model label is left out of the comparison (one model served).
  awk -v n="$2" '{ s = $1; sub(/model="[^"]*",?/, "", s); sub(/,}$/, "}", s); sub(/{}$/, "", s) }
    s == n {print $2}' <<<"$1" | head -n 1
}
# The engine's cost per token between two scrapes (microseconds), from the
# server's own batch histograms: shows whether the engine itself slowed down.
engine_us_per_token() {  # engine_us_per_token METRICS_BEFORE METRICS_AFTER
  jq -n "1e6 * ($(metric "$2" encoder_batch_duration_seconds_sum) - $(metric "$1" encoder_batch_duration_seconds_sum)) /
    ($(metric "$2" encoder_batch_tokens_sum) - $(metric "$1" encoder_batch_tokens_sum))"
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# Samples the server's RSS and queue every 0.5 s into $1 until the server
# exits or $2 seconds pass: "<VmRSS kB> <queue tokens> <in flight> <open fds>".
sample_server() {
  local out=$1 seconds=$2 text
  for _ in $(seq 1 $((seconds * 2))); do
    kill -0 "$server_pid" 2>/dev/null || break
    text=$(scrape)
    echo "$(rss_kib "$server_pid") $(metric "$text" encoder_queue_tokens) \
$(metric "$text" encoder_inflight_requests) $(metric "$text" process_open_fds)" >>"$out"
    sleep 0.5
  done
}

# Is anything listening on 127.0.0.1:$1 (IPv4 or IPv6 tables)?
listening() {
  local hex
  hex=$(printf ':%04X' "$1")
  awk -v h="$hex" '$2 ~ h"$" && $4 == "0A" {found=1} END {exit !found}' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# A port nothing uses (IPv4 or IPv6 tables).
free_port() {
  local p hex
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 30000))
    hex=$(printf ':%04X' "$p")
    if ! awk -v h="$hex" '$2 ~ h"$" {found=1} END {exit !found}' /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}
