#!/usr/bin/env bash
# Runs a command from a mounted image's file system as a container runtime
# would, for hosts where `podman run` cannot start containers. Meant to run
# under `unshare --mount --propagation private`, so that its mounts vanish
# with the process:
#   unshare --mount --propagation private run_in_image.sh ROOT MODELS ENV_FILE USER CMD [ARGS...]
# ROOT (the image, mounted read-only: like readOnlyRootFilesystem) gets /proc,
# /dev, /sys (read-only), a tmpfs on /tmp, and MODELS mounted read-only on
# /models. CMD runs as USER (uid:gid) with exactly the environment in ENV_FILE
# (one NAME=value per line) and / as its working directory.
set -euo pipefail
root="$1" models="$2" env_file="$3" user="$4"
shift 4

mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -o remount,bind,ro "$root/sys" 2>/dev/null || true
mount -t tmpfs -o size=64m,mode=1777 tmpfs "$root/tmp"
mount --bind "$models" "$root/models"
mount -o remount,bind,ro "$root/models"

mapfile -t environment <"$env_file"
exec env -i "${environment[@]}" /usr/sbin/chroot --userspec="$user" "$root" "$@"
