#!/usr/bin/env bash
# Makes the base images the Dockerfile names, docker.io/library/debian:bookworm
# and docker.io/library/debian:bookworm-slim, when podman does not have them:
# no registry is reachable here, so they are built with debootstrap the way
# the official images are (variant minbase; "slim" drops documentation, man
# pages and locales and keeps dpkg from installing them again) and imported.
#
# The root file systems are cached as tarballs, so a rerun on the same machine
# only imports them (seconds) instead of running debootstrap (a minute or two).
#   ENCODER_IMAGE_CACHE  cache directory (default /var/cache/encoder-deploy)
#   DEBIAN_MIRROR        mirror for debootstrap (default http://deb.debian.org/debian)
#   REBUILD_BASES=1      ignore the cache and the existing images
set -euo pipefail

suite=bookworm
cache="${ENCODER_IMAGE_CACHE:-/var/cache/encoder-deploy}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
full_ref="docker.io/library/debian:$suite"
slim_ref="docker.io/library/debian:$suite-slim"
full_tar="$cache/debian-$suite-minbase.tar"
slim_tar="$cache/debian-$suite-slim.tar"

log() { echo "base_images: $*" >&2; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9  # one builder at a time on this machine

if [ "${REBUILD_BASES:-0}" != 1 ] && podman image exists "$full_ref" &&
   podman image exists "$slim_ref"; then
  log "have $full_ref and $slim_ref"
  exit 0
fi

# The apt and dpkg settings of the official images (debuerreotype).
configure_rootfs() {
  local root="$1"
  rm -f "$root/etc/apt/sources.list" "$root/etc/resolv.conf" "$root/etc/hostname"
  mkdir -p "$root/etc/apt/sources.list.d"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true";' >"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' \
    >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
  echo 'force-unsafe-io' >"$root/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin \
    "$root/var/cache/apt/archives/"*.deb "$root/var/log/"*.log "$root/dev/"* "$root/tmp/"*
}

slimify() {
  local root="$1"
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root/usr/share/groff/"* "$root/usr/share/info/"* "$root/usr/share/linda/"* \
    "$root/usr/share/lintian/overrides/"* "$root/usr/share/locale/"* "$root/usr/share/man/"*
}

if [ "${REBUILD_BASES:-0}" = 1 ] || [ ! -s "$full_tar" ] || [ ! -s "$slim_tar" ]; then
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  }
  work="$(mktemp -d "$cache/rootfs.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  log "debootstrap --variant=minbase $suite (cached afterwards in $cache)"
  start=$SECONDS
  debootstrap --variant=minbase "$suite" "$work/full" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    exit 1
  }
  log "debootstrap took $((SECONDS - start)) s"
  configure_rootfs "$work/full"
  cp -a "$work/full" "$work/slim"
  slimify "$work/slim"
  tar --numeric-owner --xattrs -C "$work/full" -cf "$full_tar.tmp" . && mv "$full_tar.tmp" "$full_tar"
  tar --numeric-owner --xattrs -C "$work/slim" -cf "$slim_tar.tmp" . && mv "$slim_tar.tmp" "$slim_tar"
fi

changes=(--change 'CMD ["bash"]'
         --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
podman import -q "${changes[@]}" "$full_tar" "$full_ref" >/dev/null
podman import -q "${changes[@]}" "$slim_tar" "$slim_ref" >/dev/null
log "imported $full_ref ($(du -h "$full_tar" | cut -f1)) and $slim_ref ($(du -h "$slim_tar" | cut -f1))"
