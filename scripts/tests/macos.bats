#!/usr/bin/env bats
# What the scripts meet in a user's clone on a Mac: the files Finder leaves in it change no image's source
# hash (ll_sources_hash, scripts/lib/common.sh), and no two paths differ only in case. The macOS userland
# these files run in (scripts/tests/macos_userland.py) is tested by scripts/tests/test_macos_userland.py.

load test_helper

setup() {
  # shellcheck source=../lib/common.sh
  . "$ROOT/scripts/lib/common.sh"
}

teardown() {
  rm -f "$ROOT/locust/.DS_Store" "$ROOT/service/src/._Main.java"
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
