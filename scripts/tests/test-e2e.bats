#!/usr/bin/env bats
# scripts/test-e2e.sh's and scripts/test-multinode.sh's arguments, without running them (they need Docker
# and make a cluster).

setup_file() {
  load test_helper
  use_macos_userland
}

setup() {
  load test_helper
}

@test "an unknown argument: exit 2, the error and its fix on stderr, nothing on stdout" {
  refuses_unknown_argument test-e2e.sh
  refuses_unknown_argument test-multinode.sh
}

@test "--help prints each one's usage" {
  run "$ROOT/scripts/test-e2e.sh" --help
  assert_success
  assert_line --regexp "^Usage: scripts/test-e2e.sh "
  run "$ROOT/scripts/test-multinode.sh" --help
  assert_success
  assert_line --regexp "^Usage: scripts/test-multinode.sh "
}

@test "test-multinode.sh refuses --no-lab (the e2e's option, not its)" {
  run --separate-stderr "$ROOT/scripts/test-multinode.sh" --no-lab
  assert_failure 2
  # shellcheck disable=SC2154 # run --separate-stderr sets $stderr
  [[ $stderr == *"unknown argument: --no-lab"* ]] || fail "stderr: $stderr"
}
