#!/usr/bin/env bash
# One version everywhere, on 127.0.0.1 only: --version of encoder-server,
# encoder-client and encoder-cli prints "<program> <version>" alone (exit 0,
# nothing else: not Abseil's "Debug build" line), where <version> is
# CMake's project version (given by ctest, not taken from the binaries) and,
# in a git checkout, "+g" and 7 hex digits of a commit of this repository,
# optionally "-dirty"; the three agree; a server then answers the same string
# in HTTP /info's "version", gRPC GetModelInfo's server_version and the
# encoder_build_info metric (whose revision is that commit in full).
#
# Usage: e2e_version.sh ENCODER_SERVER ENCODER_CLIENT ENCODER_CLI PROJECT_VERSION SOURCE_DIR
set -euo pipefail
server_bin=$1
client_bin=$2
cli_bin=$3
project_version=$4
root=$5

name=e2e_version
work=$(mktemp -d)
# shellcheck source=../support/e2e_lib.sh
source "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
require_tools curl jq

pattern="^${project_version//./\\.}(\\+g[0-9a-f]{7}(-dirty)?)?\$"
version=""
for program in "$server_bin" "$client_bin" "$cli_bin"; do
  program_name=$(basename "$program")
  status=0
  "$program" --version >"$work/version.out" 2>"$work/version.err" || status=$?
  check "$program_name --version exits 0 (got $status)" test "$status" -eq 0
  check "$program_name --version prints nothing on stderr: $(cat "$work/version.err")" \
    test ! -s "$work/version.err"
  check "$program_name --version is one line: $(cat "$work/version.out")" \
    test "$(wc -l <"$work/version.out")" -eq 1
  line=$(cat "$work/version.out")
  check "$program_name --version starts with its name: $line" test "${line%% *}" = "$program_name"
  this=${line#* }
  check "$program_name's version $this matches $pattern" grep -qE "$pattern" <<<"$this"
  [ -z "$version" ] || check "$program_name says $this, another binary $version" test "$this" = "$version"
  version=$this
done
log "--version: $version"

revision=unknown
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
  [ "$(git -C "$root" rev-parse --show-toplevel)" -ef "$root" ]; then
  check "built from a git checkout: the version names the commit ($version)" \
    grep -qE '\+g[0-9a-f]{7}' <<<"$version"
  short=$(sed -E 's/.*\+g([0-9a-f]{7}).*/\1/' <<<"$version")
  check "the version's commit $short is a commit of $root" \
    git -C "$root" cat-file -e "$short^{commit}"
  revision=$(git -C "$root" rev-parse "$short^{commit}")
fi

make_model "$work/model" 32 1 2 64
http=$(free_port) || fail "no free port"
start_server "$work/model" --http-port "$http"

info_version=$(curl -fsS --max-time 10 "http://127.0.0.1:$http/info" | jq -r .version)
check "HTTP /info's version is $version (got $info_version)" test "$info_version" = "$version"
grpc_version=$("$client_bin" info --target "127.0.0.1:$port" | jq -r .server_version)
check "GetModelInfo's server_version is $version (got $grpc_version)" \
  test "$grpc_version" = "$version"
build_info=$(scrape | grep '^encoder_build_info{' || true)
check "encoder_build_info is 1 with the version and revision $revision: $build_info" \
  grep -qxF "encoder_build_info{version=\"$version\",revision=\"$revision\"} 1" <<<"$build_info"

status=0
stop_server || status=$?
check "SIGTERM ends the server with 0 (got $status)" test "$status" -eq 0
echo "e2e_version: all checks passed ($version)"
