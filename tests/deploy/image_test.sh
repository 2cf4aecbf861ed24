#!/usr/bin/env bash
# container_image: builds the repository's Dockerfile with podman, starts
# encoder-server from the image's own file system, and checks it from outside.
#
#   image_test.sh --client PATH/encoder-client --cli PATH/encoder-cli [--work DIR]
#
# Docker's engine does not run on these machines and `podman run` cannot
# start containers here, so the test does what a runtime would: it mounts the
# image (podman image mount, read-only), starts the image's ENTRYPOINT with
# the image's Env and User under chroot in a private mount namespace (with
# /proc, /dev, /sys, a tmpfs /tmp and the model directory on /models), then,
# from the host: health turns SERVING, encode and info answer, the image's
# own HEALTHCHECK command passes, and SIGTERM stops the server cleanly (exit 0).
# It also checks that every shared library resolves in the runtime image, and
# reports the image size.
#
# Needs root (podman storage, mounts, chroot); installs podman and debootstrap
# when missing. The base images come from base_images.sh (cached).
#   IMAGE_TAG   tag of the built image (default localhost/encoder-server:ctest)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
client="" cli="" work="${TMPDIR:-/tmp}/encoder-image-test"
while [ $# -gt 0 ]; do
  case "$1" in
    --client) client="$2"; shift 2 ;;
    --cli) cli="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "image_test: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$client" ] && [ -x "$cli" ] || {
  echo "image_test: --client and --cli must name the built encoder-client and encoder-cli" >&2
  exit 2
}
tag="${IMAGE_TAG:-localhost/encoder-server:ctest}"

passed=0
failed=0
t0=$SECONDS
step_start=$SECONDS
log() { echo "image_test: $*"; }
ok() { passed=$((passed + 1)); echo "ok - $* ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }
fail() {
  failed=$((failed + 1))
  echo "not ok - $*"
  echo "$passed passed, $failed failed"
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  fail "needs root: podman storage, mounts and chroot (CI runs as root)"
fi

# ---- tools -------------------------------------------------------------------
missing=()
for p in podman debootstrap uidmap fuse-overlayfs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null
fi
ok "tools: $(podman --version)"

# ---- base images -------------------------------------------------------------
bash "$here/base_images.sh" || fail "base images (debootstrap + podman import)"
ok "base images docker.io/library/debian:bookworm and :bookworm-slim"

# ---- build -------------------------------------------------------------------
mkdir -p "$work"
revision="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
old_id="$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)"
log "podman build -t $tag (log: $work/build.log)"
created="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
# The same values as --label too: buildah 1.28 reuses a cached LABEL step even
# when the build arguments in it changed.
metadata=()
for pair in "VERSION version ctest" "REVISION revision $revision" "CREATED created $created"; do
  read -r arg label value <<<"$pair"
  metadata+=(--build-arg "$arg=$value" --label "org.opencontainers.image.$label=$value")
done
if ! podman build --isolation=chroot --pull=never --format docker "${metadata[@]}" \
      -t "$tag" -f "$root/Dockerfile" "$root" >"$work/build.log" 2>&1; then
  tail -n 60 "$work/build.log"
  fail "podman build of the Dockerfile"
fi
new_id="$(podman image inspect --format '{{.Id}}' "$tag")"
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
  podman rmi "$old_id" >/dev/null 2>&1 || true  # the previous run's image, now untagged
fi
ok "podman build --isolation=chroot --pull=never ($(grep -c '^\[[0-9]/[0-9]\] STEP' "$work/build.log") steps, $(grep -c -- '--> Using cache' "$work/build.log") cached)"

# ---- image metadata ----------------------------------------------------------
inspect() { podman image inspect --format "$1" "$tag"; }
user="$(inspect '{{.Config.User}}')"
case "$user" in
  "" | root | 0 | 0:* | root:*) fail "image runs as root (User=\"$user\")" ;;
esac
[[ "$user" == *:* ]] || user="$user:$user"
mapfile -t entrypoint < <(inspect '{{range .Config.Entrypoint}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t cmd < <(inspect '{{range .Config.Cmd}}{{println .}}{{end}}' | sed '/^$/d')
mapfile -t image_env < <(inspect '{{range .Config.Env}}{{println .}}{{end}}' | sed '/^$/d')
ports="$(inspect '{{range $p, $v := .Config.ExposedPorts}}{{$p}} {{end}}')"
health_kind="$(inspect '{{if .HealthCheck}}{{index .HealthCheck.Test 0}}{{end}}')"
health_cmd="$(inspect '{{if .HealthCheck}}{{index .HealthCheck.Test 1}}{{end}}')"
[[ "${entrypoint[*]}" == *encoder-server* ]] || fail "ENTRYPOINT is not encoder-server: ${entrypoint[*]}"
[[ " $ports " == *" 50051/tcp "* && " $ports " == *" 8081/tcp "* && " $ports " == *" 8080/tcp "* ]] ||
  fail "EXPOSE lacks 50051/tcp, 8081/tcp or 8080/tcp: $ports"
[ "$health_kind" = CMD-SHELL ] && [[ "$health_cmd" == *"encoder-client health"* ]] ||
  fail "HEALTHCHECK is not 'encoder-client health' (got: $health_kind $health_cmd)"
printf '%s\n' "${image_env[@]}" | grep -q '^ENCODER_MODEL=/models/' ||
  fail "ENCODER_MODEL does not point under /models"
for label in title description version revision created; do
  value="$(inspect "{{index .Labels \"org.opencontainers.image.$label\"}}")"
  [ -n "$value" ] || fail "OCI label org.opencontainers.image.$label missing"
done
[ "$(inspect '{{index .Labels "org.opencontainers.image.revision"}}')" = "$revision" ] ||
  fail "OCI label org.opencontainers.image.revision is not $revision"
ok "metadata: User=$user, ENTRYPOINT ${entrypoint[*]}, EXPOSE $ports, HEALTHCHECK, OCI labels"

# ---- a model -----------------------------------------------------------------
models="$work/models"
rm -rf "$models"
model_path="$(printf '%s\n' "${image_env[@]}" | sed -n 's/^ENCODER_MODEL=//p')"
model_dir="$models/${model_path#/models/}"
"$cli" make-model --out "$model_dir" --hidden 64 --layers 2 --heads 4 --intermediate 128 --seed 7 \
  >/dev/null || fail "encoder-cli make-model"
chmod -R a+rX "$models"
ok "model at $model_path (random weights, hidden 64, 2 layers)"

# ---- start from the image's file system ---------------------------------------
server_pid=""
mounted=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  [ -z "$mounted" ] || podman image umount "$tag" >/dev/null 2>&1 || true
}
trap cleanup EXIT
image_root="$(podman image mount "$tag")"
mounted=1
[ -d "$image_root/models" ] || fail "the image has no /models directory to mount the model on"

for binary in /usr/local/bin/encoder-server /usr/local/bin/encoder-client; do
  unresolved="$(chroot "$image_root" ldd "$binary" | grep 'not found' || true)"
  [ -z "$unresolved" ] || fail "$binary in the image: unresolved libraries: $unresolved"
done
ok "every shared library of encoder-server and encoder-client resolves in the runtime image"

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {  # free_port [TAKEN...]: a port nothing listens on, none of TAKEN
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 30000))
    if ! listening "$port" && [[ " $* " != *" $port "* ]]; then
      echo "$port"
      return 0
    fi
  done
  return 1
}
port="$(free_port)"
metrics_port="$(free_port "$port")"
http_port="$(free_port "$port" "$metrics_port")"
env_file="$work/env"
# The image's Env, plus what `docker run -e` would add: the ports (the shared
# host may already use the defaults), the threads as Kubernetes would set them.
{
  printf '%s\n' "${image_env[@]}"
  echo "HOME=/nonexistent"
  echo "HOSTNAME=encoder-image-test"
  echo "ENCODER_PORT=$port"
  echo "ENCODER_METRICS_PORT=$metrics_port"
  echo "ENCODER_HTTP_PORT=$http_port"
  echo "ENCODER_THREADS=$(nproc)"
} >"$env_file"

log "starting ${entrypoint[*]} ${cmd[*]:-} as $user from $image_root (log: $work/server.log)"
unshare --mount --propagation private \
  bash "$here/run_in_image.sh" "$image_root" "$models" "$env_file" "$user" \
  "${entrypoint[@]}" "${cmd[@]}" >"$work/server.log" 2>&1 &
server_pid=$!

# ---- from outside: health, encode, info ----------------------------------------
target="127.0.0.1:$port"
serving=""
for _ in $(seq 1 240); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    cat "$work/server.log"
    fail "the server exited before it served"
  fi
  if "$client" health --target "$target" --timeout 2s >/dev/null 2>&1; then
    serving=1
    break
  fi
  sleep 0.5
done
[ -n "$serving" ] || { cat "$work/server.log"; fail "health did not turn SERVING within 120 s"; }
ok "health SERVING on $target (encoder-client health from the host)"

encoded="$("$client" encode --target "$target" "hello from the image" "a second input")" ||
  fail "encode from the host"
lines="$(printf '%s\n' "$encoded" | grep -c '"embedding"' || true)"
[ "$lines" = 2 ] || fail "encode answered $lines embeddings for 2 inputs: ${encoded:0:300}"
ok "encode answered 2 embeddings ($(printf '%s\n' "$encoded" | head -n1 | tr ',' '\n' | wc -l) values each)"

"$client" info --target "$target" >"$work/info.json" || fail "info from the host"
ok "info: $(tr -d '\n' <"$work/info.json" | cut -c1-160)"

# /metrics on the metrics port, once the server serves it (the metrics issue):
# until then nothing listens there and the check is skipped, not failed.
if listening "$metrics_port"; then
  command -v curl >/dev/null || fail "curl is needed to read /metrics"
  curl -fsS --max-time 5 "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics.txt" ||
    fail "GET /metrics on the metrics port"
  grep -q '^# TYPE encoder_' "$work/metrics.txt" || fail "/metrics has no encoder_* family"
  ok "/metrics answers on the metrics port ($(grep -c '^# TYPE' "$work/metrics.txt") families)"
else
  echo "skip - nothing listens on the metrics port yet: /metrics not checked"
fi

# The image's own HEALTHCHECK, run as the runtime would: in the container's
# mount namespace, as its user, with its environment.
mapfile -t run_env <"$env_file"
nsenter --mount="/proc/$server_pid/ns/mnt" -- \
  env -i "${run_env[@]}" /usr/sbin/chroot --userspec="$user" "$image_root" \
  /bin/sh -c "$health_cmd" >"$work/healthcheck.log" 2>&1 ||
  { cat "$work/healthcheck.log"; fail "the image's HEALTHCHECK command failed while serving"; }
ok "the image's HEALTHCHECK passes: $health_cmd"

# ---- graceful stop -------------------------------------------------------------
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" = 0 ] || { tail -n 20 "$work/server.log"; fail "SIGTERM: the server exited $status"; }
grep -q "stopped: all queued and running work finished" "$work/server.log" ||
  fail "SIGTERM: no clean-stop line in the server log"
ok "SIGTERM: clean shutdown, exit 0"

# ---- size ----------------------------------------------------------------------
size="$(inspect '{{.Size}}')"
base_size="$(podman image inspect --format '{{.Size}}' docker.io/library/debian:bookworm-slim)"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB (%.0f MB)", b / 1048576, b / 1e6 }'; }
echo "image $tag: $(mib "$size"); base debian:bookworm-slim $(mib "$base_size")"
podman history --format '{{.Size}}\t{{.CreatedBy}}' "$tag" |
  awk -F'\t' '$1 !~ /^0 ?B$/ { printf "  %10s  %s\n", $1, substr($2, 1, 100) }' | head -n 8
echo "$size" >"$work/image-size-bytes"

echo "container_image took $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
