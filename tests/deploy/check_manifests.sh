#!/usr/bin/env bash
# deploy_manifests: renders deploy/k8s (base, overlays, components) with
# deploy/check/render.mjs and validates every object with the npm packages
# kubernetes-models and @kubernetes-models/prometheus-operator, plus the
# deployment's own rules; broken manifests must fail (deploy/check/test/).
# Installs Node.js (Debian) and the pinned npm packages (npm ci) when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
check="$root/deploy/check"
start=$SECONDS

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "check_manifests: installing nodejs and npm"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    nodejs npm >/dev/null
fi

# node_modules is reinstalled only when package-lock.json changed.
stamp="$check/node_modules/.package-lock.sha256"
want="$(sha256sum "$check/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "check_manifests: npm ci in deploy/check"
  (cd "$check" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

cd "$check"
node check.mjs
node --test test/manifests.test.mjs
echo "deploy_manifests took $((SECONDS - start)) s"
