#!/usr/bin/env bats
# What the scripts meet on a user's Mac: the macOS userland the other files run in
# (scripts/libexec/macos-userland.sh) is what it claims, the files Finder leaves in a clone change no
# image's source hash (ll_sources_hash, scripts/lib/common.sh), and no two paths differ only in case.

load test_helper

setup() {
  # shellcheck source=../lib/common.sh
  . "$ROOT/scripts/lib/common.sh"
}

teardown() {
  rm -f "$ROOT/locust/.DS_Store" "$ROOT/service/src/._Main.java"
}

@test "awk is BWK awk, which refuses the '[=' GNU awk takes" {
  run awk -version
  assert_output --partial "awk version"
  run awk 'BEGIN { x = "a[b"; sub(/[[=].*/, "", x) }'
  assert_failure
}

@test "no GNU timeout, sha256sum or nproc on PATH" {
  run command -v timeout sha256sum nproc
  assert_failure
  assert_output ""
}

@test "date is BSD date: -r SECONDS, no -d" {
  run date -u -r 86400 +%Y-%m-%d
  assert_output 1970-01-02
  run date -d @0
  assert_failure
}

# Else every cluster-up on a Mac would rebuild, reload and restart every pod.
@test "files Finder makes in a clone (.DS_Store, ._*) change no image's source hash" {
  local before after
  before=$(ll_sources_hash locust service)
  [ -n "$before" ]
  touch "$ROOT/locust/.DS_Store" "$ROOT/service/src/._Main.java"
  after=$(ll_sources_hash locust service)
  assert_equal "$after" "$before"
}

# A Mac's file system does not tell them apart.
@test "no two paths of the repository differ only in case" {
  run bash -c "cd '$ROOT' && git ls-files | LC_ALL=C sort -f | uniq -di"
  assert_success
  assert_output ""
}
