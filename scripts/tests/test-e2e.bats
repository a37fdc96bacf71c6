#!/usr/bin/env bats
# scripts/test-e2e.sh's arguments, without running it (it needs Docker and makes a cluster).

setup_file() {
  load test_helper
  use_macos_userland
}

setup() {
  load test_helper
}

@test "an unknown argument: exit 2, the error and its fix on stderr, nothing on stdout" {
  "$ROOT/scripts/test-e2e.sh" --no-such-flag >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || echo "$?" >"$BATS_TEST_TMPDIR/rc"
  run cat "$BATS_TEST_TMPDIR/rc"
  assert_output 2
  run cat "$BATS_TEST_TMPDIR/err"
  assert_output --partial "unknown argument: --no-such-flag"
  assert_output --partial "fix:"
  [ ! -s "$BATS_TEST_TMPDIR/out" ]
}

@test "--help prints the usage" {
  run "$ROOT/scripts/test-e2e.sh" --help
  assert_success
  assert_line --regexp "^Usage: scripts/test-e2e.sh "
}
