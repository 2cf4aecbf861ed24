# Sourced by run.sh and connections.sh: the benchmark's model (MiniLM-L6
# shape, random weights; ENCODER_BENCH_MODEL=tiny: hidden 32, 1 layer, so
# that the engine's time is small beside the transports') in $work/model, and
# start_server PORT [FLAGS...]: encoder-server on it (gRPC on 50151, metrics
# on any port, --threads ENCODER_BENCH_THREADS or 1), waiting for /health.
# Needs $build and $work; sets server_pid.
if [ "${ENCODER_BENCH_MODEL:-minilm}" = tiny ]; then
  shape=(--hidden 32 --layers 1 --heads 4 --intermediate 64)
else
  shape=(--hidden 384 --layers 6 --heads 12 --intermediate 1536)
fi
"$build/engine/encoder-cli" make-model --out "$work/model" "${shape[@]}" --seed 1 >/dev/null
start_server() {
  local http_port=$1
  shift
  "$build/server/app/encoder-server" --model "$work/model" --host 127.0.0.1 --port 50151 \
    --metrics-port 0 --http-port "$http_port" --threads "${ENCODER_BENCH_THREADS:-1}" "$@" \
    2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$http_port/health" >/dev/null && return 0
    sleep 0.1
  done
  echo "the server did not start: $(cat "$work/server.log")" >&2
  exit 1
}
