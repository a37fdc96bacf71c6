#!/usr/bin/env bats
# scripts/demo.sh, scripts/lab.sh and scripts/workshop.sh, the wrappers users type (the logic is python -m
# liveness_lab, tested in locust/tests/): a usage error exits 3, never 1 or 2 (a verdict), and --help says
# the exit codes, in macOS's userland.

load test_helper

@test "an unknown argument exits 3 (a usage error), with the error and its fix on stderr" {
  refuses_unknown_argument demo.sh 3
  refuses_unknown_argument lab.sh 3
  refuses_unknown_argument workshop.sh 3
}

@test "--help names the exit codes and the flags" {
  local script
  for script in demo.sh lab.sh workshop.sh; do
    run "$ROOT/scripts/$script" --help
    assert_success
    assert_output --regexp "3 +usage or set-up error"
  done
  run "$ROOT/scripts/demo.sh" --help
  assert_output --partial -- "--no-stop-swarm"
  run "$ROOT/scripts/workshop.sh" --help
  assert_output --partial -- "--context NAME"
}

@test "workshop.sh with a context the kubeconfig lacks exits 3, saying how to list the contexts" {
  printf 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n' >"$BATS_TEST_TMPDIR/kubeconfig"
  KUBECONFIG=$BATS_TEST_TMPDIR/kubeconfig run --separate-stderr "$ROOT/scripts/workshop.sh" --context nowhere
  assert_failure 3
  assert_output ""
  # shellcheck disable=SC2154 # run --separate-stderr sets $stderr
  [[ $stderr == *"no kubeconfig context nowhere"* && $stderr == *"kubectl config get-contexts"* ]] || fail "stderr: $stderr"
}
