# shellcheck shell=bash
# check(), the one way the shell test scripts run a check and print its line: "ok    NAME    Ns" or
# "FAIL  NAME    Ns", counted in PASSED and FAILED; checks_summary prints the totals and, for
# scripts/test.sh's count, writes the checks as JUnit XML. Needs nothing else sourced.
#
# Two ways to treat a check's own output:
#   CHECK_LOGS unset  the output goes where the script's does, and the check runs in this shell (it may
#                     set variables for later checks); it returns COMMAND's status, which the caller
#                     handles (`check ... || true`, `check ... || exit 1`: scripts/test-e2e.sh,
#                     scripts/test-registry.sh). There bash ignores errexit inside COMMAND: only its last
#                     command decides, so such a COMMAND says `|| return 1` after each step that matters.
#   CHECK_LOGS=DIR    the output goes to DIR/NAME.log, shown (its last 30 lines) only when the check
#                     fails, and COMMAND runs in a subshell with errexit, so it fails at its first failing
#                     command. For that, call check bare, never after `if`, `||`, `&&` or `!` (bash ignores
#                     errexit in everything such a call runs, subshells too): it returns 0 and counts a
#                     failure; a check called where errexit is ignored fails, saying so
#                     (scripts/test-chart.sh, scripts/test.sh's lint).
#
# Environment it reads:
#   LIVENESS_LAB_JUNIT=DIR   checks_summary writes DIR/SUITE.xml (set by scripts/test.sh)
#   CHECK_SUITE=<script name without .sh>   the suite's name in it

PASSED=0
FAILED=0
CHECK_RESULTS=()

# check_result NAME RC SECONDS [LOGFILE]: counts and prints one check's result.
check_result() {
  local name=$1 rc=$2 secs=$3 logfile=${4:-}
  CHECK_RESULTS+=("$rc $secs $name")
  if [ "$rc" = 0 ]; then
    PASSED=$((PASSED + 1))
    printf 'ok    %-62s %4ss\n' "$name" "$secs"
  else
    FAILED=$((FAILED + 1))
    printf 'FAIL  %-62s %4ss%s\n' "$name" "$secs" "${logfile:+ (log: $logfile)}"
    [ -z "$logfile" ] || tail -n 30 "$logfile" | sed 's/^/      /'
  fi
}

# check NAME COMMAND...: runs COMMAND and prints its line; returns COMMAND's status (CHECK_LOGS unset)
# or 0 (CHECK_LOGS set: see above).
check() {
  local name=$1 started rc=0 logfile='' errexit=0 ignored
  shift
  started=$SECONDS
  if [ -n "${CHECK_LOGS:-}" ]; then
    mkdir -p "$CHECK_LOGS"
    logfile=$CHECK_LOGS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '-').log
    case $- in *e*) errexit=1 ;; esac
    set +o errexit
    # Is errexit ignored here (a call after `if`, `||`, `&&` or `!`)? Then it is in COMMAND's subshell too.
    ignored=$(set -o errexit; false; echo yes)
    if [ "$ignored" = yes ]; then
      echo "check '$name' was called after if, ||, && or !, where bash ignores errexit in COMMAND: call check bare" >"$logfile"
      rc=3
    else
      (
        set -o errexit
        "$@"
      ) >"$logfile" 2>&1
      rc=$?
    fi
    [ "$errexit" = 0 ] || set -o errexit
  else
    "$@" || rc=$?
  fi
  check_result "$name" "$rc" "$((SECONDS - started))" "$logfile"
  if [ -n "${CHECK_LOGS:-}" ]; then return 0; fi
  return "$rc"
}

# xml_text TEXT: TEXT escaped for an XML attribute.
xml_text() { printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }

# checks_junit FILE SUITE: the checks so far as a JUnit XML test suite (one testcase per check).
checks_junit() {
  local result rc secs name
  {
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="%s" tests="%s" failures="%s">\n' \
      "$(xml_text "$2")" "$((PASSED + FAILED))" "$FAILED"
    for result in ${CHECK_RESULTS[@]+"${CHECK_RESULTS[@]}"}; do
      read -r rc secs name <<<"$result"
      printf '  <testcase classname="%s" name="%s" time="%s"' "$(xml_text "$2")" "$(xml_text "$name")" "$secs"
      if [ "$rc" = 0 ]; then echo '/>'; else printf '>\n    <failure message="exit %s"/>\n  </testcase>\n' "$rc"; fi
    done
    echo '</testsuite>'
  } >"$1"
}

# checks_summary [RC]: "N passed, N failed"; fails when a check failed or RC (the script's own status
# besides the checks, default 0) is not 0.
checks_summary() {
  local suite
  suite=${CHECK_SUITE:-$(basename "$0" .sh)}
  echo "$PASSED passed, $FAILED failed"
  if [ -n "${LIVENESS_LAB_JUNIT:-}" ]; then
    mkdir -p "$LIVENESS_LAB_JUNIT"
    checks_junit "$LIVENESS_LAB_JUNIT/$suite.xml" "$suite"
  fi
  [ "$FAILED" = 0 ] && [ "${1:-0}" = 0 ]
}
