# shellcheck shell=bash
# check(), the one way the test scripts run a check and print its line: "ok    NAME    Ns" or
# "FAIL  NAME    Ns", counted in PASSED and FAILED. Needs nothing else sourced.
#
# Two ways to treat a check's own output:
#   CHECK_LOGS unset  the output goes where the script's does, and the check runs in this shell (it may
#                     set variables for later checks); it fails when COMMAND returns non-zero
#                     (scripts/test-e2e.sh, scripts/test-registry.sh).
#   CHECK_LOGS=DIR    the output goes to DIR/NAME.log, shown (its last 30 lines) only when the check
#                     fails, and COMMAND runs in a subshell with errexit, so a check function fails at
#                     its first failing command (scripts/test-chart.sh, scripts/test-cluster.sh).

PASSED=0
FAILED=0

# check NAME COMMAND...: runs COMMAND, prints its line and returns COMMAND's status.
check() {
  local name=$1 started rc=0 logfile='' errexit=0
  shift
  started=$SECONDS
  if [ -n "${CHECK_LOGS:-}" ]; then
    mkdir -p "$CHECK_LOGS"
    logfile=$CHECK_LOGS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '-').log
    # A subshell with errexit, outside any `if` or `||`: there bash would ignore errexit in the function.
    case $- in *e*) errexit=1 ;; esac
    set +o errexit
    (
      set -o errexit
      "$@"
    ) >"$logfile" 2>&1
    rc=$?
    [ "$errexit" = 0 ] || set -o errexit
  else
    "$@" || rc=$?
  fi
  if [ "$rc" = 0 ]; then
    PASSED=$((PASSED + 1))
    printf 'ok    %-62s %4ss\n' "$name" "$((SECONDS - started))"
  else
    FAILED=$((FAILED + 1))
    printf 'FAIL  %-62s %4ss%s\n' "$name" "$((SECONDS - started))" "${logfile:+ (log: $logfile)}"
    [ -z "$logfile" ] || tail -n 30 "$logfile" | sed 's/^/      /'
  fi
  return "$rc"
}

# checks_summary [RC]: "N passed, N failed"; fails when a check failed or RC (the script's own status
# besides the checks, default 0) is not 0.
checks_summary() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" = 0 ] && [ "${1:-0}" = 0 ]
}
