#!/usr/bin/env bats
# scripts/lib/tools.sh: which kind, helm and kubectl on PATH are used (tool_compatible), the version-keyed
# cache, and the verified download, for a new clone (its .tools in the test's folder, the cache and logs
# too), in macOS's userland. Downloads come from a file server on 127.0.0.1 laid out as the release site.

load test_helper

setup() {
  # shellcheck source=../lib/common.sh
  . "$ROOT/scripts/lib/common.sh"
  # shellcheck source=../lib/tools.sh
  . "$ROOT/scripts/lib/tools.sh"
  export LL_CACHE=$BATS_TEST_TMPDIR/cache LL_LOGS=$BATS_TEST_TMPDIR/logs LL_TOOLS=$BATS_TEST_TMPDIR/clone/.tools
  use_tools_bin
  SERVER_PID=
}

teardown() {
  [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true
}

@test "kind on PATH: the pinned minor or newer, within v0" {
  tool_compatible kind v0.33.0
  tool_compatible kind v0.34.1
  run tool_compatible kind v0.32.0
  assert_failure
  run tool_compatible kind v1.0.0
  assert_failure
}

@test "helm on PATH: 3.17 or newer, or Helm 4" {
  tool_compatible helm v3.17.0
  tool_compatible helm v3.22.0
  tool_compatible helm v4.0.1
  run tool_compatible helm v3.16.4
  assert_failure
}

@test "kubectl on PATH: within one minor of the cluster's Kubernetes" {
  tool_compatible kubectl v1.36.3
  tool_compatible kubectl v1.37.0
  tool_compatible kubectl v1.38.0
  run tool_compatible kubectl v1.35.9
  assert_failure
  run tool_compatible kubectl v1.39.0
  assert_failure
  run tool_compatible kubectl garbage
  assert_failure
}

# ensure_kind_offline: ensure_kind with Go off PATH (a build, if attempted, fails) and the download
# pointed at a closed port of 127.0.0.1 (nothing leaves this machine).
ensure_kind_offline() {
  LIVENESS_LAB_DOWNLOAD_MIRROR=http://127.0.0.1:9 PATH=/usr/bin:/bin ensure_kind
}

@test "a tool cached by version is linked into a new clone, not built; another version's is not used" {
  local version
  for version in "$KIND_VERSION" v0.0.1; do
    mkdir -p "$LL_CACHE/kind-$version/bin"
    printf '#!/bin/sh\necho "kind %s go1 linux/amd64"\n' "$version" >"$LL_CACHE/kind-$version/bin/kind"
    chmod +x "$LL_CACHE/kind-$version/bin/kind"
  done
  run ensure_kind_offline
  assert_success
  run readlink "$LL_TOOLS/bin/kind"
  assert_output "$LL_CACHE/kind-$KIND_VERSION/bin/kind"
  [ ! -e "$LL_LOGS/build-kind-$KIND_VERSION.log" ]
  # Without the cached binary the build is attempted, and fails for want of Go: the cache skipped it.
  rm -rf "${LL_CACHE:?}/kind-$KIND_VERSION" "$LL_TOOLS"
  use_tools_bin
  run ensure_kind_offline
  assert_failure
  assert_output --partial "'go' is not installed"
}

# fake_release DIR VERSION: a kind "release" (a script that reports VERSION) laid out as the official
# download under DIR, with its published checksum file.
fake_release() {
  local dir=$1/github.com/kubernetes-sigs/kind/releases/download/$KIND_VERSION file
  file=kind-$(ll_os)-$(ll_arch)
  mkdir -p "$dir"
  printf '#!/bin/sh\necho "kind %s go1 linux/amd64"\n' "$2" >"$dir/$file"
  (cd "$dir" && ll_sha256 "$file" >"$file.sha256sum")
  RELEASE_FILE=$dir/$file
}

# serve DIR: a file server for DIR on a free port of 127.0.0.1; sets SERVER_PID and SERVER_URL.
serve() {
  local port _
  port=$(free_port)
  python3 -m http.server --bind 127.0.0.1 --directory "$1" "$port" >"$BATS_TEST_TMPDIR/http.log" 2>&1 3>&- &
  SERVER_PID=$!
  SERVER_URL=http://127.0.0.1:$port
  for _ in $(seq 50); do curl -s -o /dev/null "$SERVER_URL/" && return 0; sleep 0.1; done
  fail "the file server did not start: $(cat "$BATS_TEST_TMPDIR/http.log")"
}

# ensure_kind_downloaded: ensure_kind on the registry path (download, no build), from the file server.
ensure_kind_downloaded() {
  PATH=/usr/bin:/bin LIVENESS_LAB_DOWNLOAD_MIRROR=$SERVER_URL LL_TOOL_DOWNLOADS=yes ensure_kind
}

@test "a missing tool is downloaded from its release, its SHA-256 checked, and linked" {
  fake_release "$BATS_TEST_TMPDIR/release" "$KIND_VERSION"
  serve "$BATS_TEST_TMPDIR/release"
  run ensure_kind_downloaded
  assert_success
  assert_output --partial "SHA-256 verified"
  run "$LL_TOOLS/bin/kind" version
  assert_output "kind $KIND_VERSION go1 linux/amd64"
}

@test "a download that does not match its published SHA-256 is refused, and nothing is linked" {
  fake_release "$BATS_TEST_TMPDIR/release" "$KIND_VERSION"
  echo "tampered" >>"$RELEASE_FILE"
  serve "$BATS_TEST_TMPDIR/release"
  run ensure_kind_downloaded
  assert_failure
  assert_output --partial "could not download kind"
  run cat "$LL_LOGS"/download-kind-*.log
  assert_output --partial "SHA-256 mismatch"
  [ ! -e "$LL_TOOLS/bin/kind" ]
}
