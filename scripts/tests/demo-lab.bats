#!/usr/bin/env bats
# scripts/demo.sh and scripts/lab.sh, the wrappers users type (the logic is python -m liveness_lab, tested
# in locust/tests/): a usage error exits 3, never 1 or 2 (a verdict), and --help says the exit codes, in
# macOS's userland.

load test_helper

@test "an unknown argument exits 3 (a usage error), with the error and its fix on stderr" {
  refuses_unknown_argument demo.sh 3
  refuses_unknown_argument lab.sh 3
}

@test "--help names the exit codes and the flags" {
  local script
  for script in demo.sh lab.sh; do
    run "$ROOT/scripts/$script" --help
    assert_success
    assert_output --regexp "3 +usage or set-up error"
  done
  run "$ROOT/scripts/demo.sh" --help
  assert_output --partial -- "--no-stop-swarm"
}
