#!/usr/bin/env bash
# Runs liveness-lab's test suites and says, per suite, whether it passed and how long it took.
# Installs what the suites need on a fresh machine (shellcheck from Debian; the JDK is found, not
# installed: see the error it prints).
#
# Usage: scripts/test.sh [SUITE...]
#   SUITE: lint | docs | service | chart | cluster | locust | e2e | all (default: all)
#     lint     shellcheck of every script
#     docs     the READMEs' scripts, options and --set values exist (scripts/test-docs.sh)
#     service  the Spring Boot service: ./mvnw verify (probes under load, BlockHound, bad input)
#     chart    helm lint, template, schema, kube-linter (scripts/test-chart.sh)
#     cluster  cluster-up plans and argument errors, no cluster (scripts/test-cluster.sh)
#     locust   locustfile, report builder, Pods tab (scripts/test-locust.sh)
#     e2e      the real kind cluster: up, helm test, a short demo, down (scripts/test-e2e.sh)
# Logs: one per suite under $LIVENESS_LAB_LOGS (default ~/.cache/liveness-lab/logs/test-<suite>.log).
set -o errexit -o nounset -o pipefail
. "$(dirname "$0")/lib/common.sh"

ALL_SUITES=(lint docs service chart cluster locust e2e)

usage() { sed -n '2,17s/^# \{0,1\}//p' "$0"; }

suite_lint() {
  ensure_pkg shellcheck shellcheck
  local scripts=()
  mapfile -t scripts < <(cd "$LL_ROOT" && { git ls-files '*.sh' .ci/run 2>/dev/null; find scripts -name '*.sh'; } | sort -u)
  (cd "$LL_ROOT" && shellcheck -x -P SCRIPTDIR "${scripts[@]}")
  echo "shellcheck: ${#scripts[@]} scripts clean"
}

suite_service() {
  find_jdk
  echo "JDK: $JAVA_HOME ($(java_major "$JAVA_HOME/bin/java"))"
  check_service_version || return 1
  local dockerfile_base
  dockerfile_base=$(sed -n 's/^ARG BASE_IMAGE=//p' "$LL_ROOT/service/Dockerfile")
  [ "$dockerfile_base" = "$JRE_BASE_IMAGE" ] ||
    { echo "service/Dockerfile BASE_IMAGE $dockerfile_base != JRE_BASE_IMAGE $JRE_BASE_IMAGE in scripts/versions.env"; return 1; }
  (cd "$LL_ROOT/service" && ./mvnw -B -ntp verify)
}

# The suites that live in a script of their own.
suite_script() { "$LL_ROOT/scripts/test-$1.sh"; }

run_suite() {
  local suite=$1 logfile started rc=0
  logfile=$LL_LOGS/test-$suite.log
  if [ "$suite" != lint ] && [ "$suite" != service ] && [ ! -x "$LL_ROOT/scripts/test-$suite.sh" ]; then
    printf '%-8s not yet present (scripts/test-%s.sh does not exist)\n' "$suite" "$suite"
    ABSENT+=("$suite")
    return 0
  fi
  started=$(ll_now)
  printf '%-8s running (log: %s)\n' "$suite" "$logfile"
  case $suite in
    lint | service) "suite_$suite" >"$logfile" 2>&1 || rc=$? ;;
    *) suite_script "$suite" >"$logfile" 2>&1 || rc=$? ;;
  esac
  local took=$(($(ll_now) - started))
  if [ "$rc" = 0 ]; then
    printf '%-8s passed in %ss\n' "$suite" "$took"
    PASSED+=("$suite")
  else
    printf '%-8s FAILED in %ss (exit %s); last lines of %s:\n' "$suite" "$took" "$rc" "$logfile"
    tail -n 60 "$logfile" | sed 's/^/  | /'
    FAILED+=("$suite")
  fi
}

suites=()
for arg in "$@"; do
  case $arg in
    all) suites+=("${ALL_SUITES[@]}") ;;
    lint | docs | service | chart | cluster | locust | e2e) suites+=("$arg") ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown suite '$arg'" "choose from: ${ALL_SUITES[*]} all" ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || suites=("${ALL_SUITES[@]}")

mkdir -p "$LL_LOGS"
PASSED=() FAILED=() ABSENT=()
for suite in "${suites[@]}"; do run_suite "$suite"; done

[ ${#ABSENT[@]} -eq 0 ] || echo "not yet present: ${ABSENT[*]}"
echo "suites: ${#PASSED[@]} passed, ${#FAILED[@]} failed"
echo "${#PASSED[@]} passed, ${#FAILED[@]} failed"
[ ${#FAILED[@]} -eq 0 ]
