#!/usr/bin/env bats
# scripts/test-multinode.sh's arguments, without running it (it needs Docker and makes a cluster).

setup_file() {
  load test_helper
  use_macos_userland
}

setup() {
  load test_helper
}

@test "an unknown argument: exit 2, the error and its fix on stderr, nothing on stdout" {
  refuses_unknown_argument test-multinode.sh
}

@test "--help prints the usage" {
  run "$ROOT/scripts/test-multinode.sh" --help
  assert_success
  assert_line --regexp "^Usage: scripts/test-multinode.sh "
}
