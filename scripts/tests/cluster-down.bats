#!/usr/bin/env bats
# scripts/cluster-down.sh's arguments (deleting a cluster is scripts/test-e2e.sh's last step), in macOS's
# userland.

load test_helper

@test "an unknown argument: exit 2, the error and its fix on stderr, nothing on stdout" {
  refuses_unknown_argument cluster-down.sh
}

@test "--help prints the usage" {
  run "$ROOT/scripts/cluster-down.sh" --help
  assert_success
  assert_line "Usage: scripts/cluster-down.sh [--purge] [--help]"
}
