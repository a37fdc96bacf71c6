# shellcheck shell=bash
# check(), for the test scripts that print one line per check (scripts/test-e2e.sh,
# scripts/test-registry.sh): "ok    NAME    Ns" or "FAIL  NAME    Ns", counted in PASSED and FAILED.
# The command's own output goes where the script's does. Source after scripts/lib/common.sh.

PASSED=0
FAILED=0

# check NAME COMMAND...: runs COMMAND, prints its line and returns COMMAND's status.
check() {
  local name=$1 started rc=0
  shift
  started=$(ll_now)
  "$@" || rc=$?
  if [ "$rc" = 0 ]; then
    PASSED=$((PASSED + 1))
    printf 'ok    %-62s %4ss\n' "$name" "$(($(ll_now) - started))"
  else
    FAILED=$((FAILED + 1))
    printf 'FAIL  %-62s %4ss\n' "$name" "$(($(ll_now) - started))"
  fi
  return "$rc"
}
