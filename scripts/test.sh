#!/usr/bin/env bash
# Runs liveness-lab's test suites and says, per suite, whether it passed and how long it took.
# Installs what the suites need on a fresh machine (shellcheck from Debian; the JDK is found, not
# installed: see the error it prints).
#
# Usage: scripts/test.sh [SUITE...]
#   SUITE: lint | docs | service | chart | cluster | locust | e2e | registry | all (default: all)
#     lint     shellcheck of every script
#     docs     the scripts, options and --set values the READMEs and docs/ show exist (scripts/test-docs.sh)
#     service  the Spring Boot service: ./mvnw verify (probes under load, BlockHound, bad input)
#     chart    helm-unittest suites, ct lint, kube-linter, helm-docs' table (scripts/test-chart.sh)
#     cluster  cluster-up plans and argument errors, tools, kind-config.yaml, no cluster (bats: scripts/tests/*.bats)
#     locust   locustfile, report builder, Pods tab (scripts/test-locust.sh)
#     e2e      the real kind cluster: up, helm test, a short demo, down (scripts/test-e2e.sh)
#     registry the laptop's registry path, simulated on 127.0.0.1: the e2e again with every image pulled
#              from a local registry and every tool downloaded (scripts/test-registry.sh; root, Linux)
# Logs: one per suite under $LIVENESS_LAB_LOGS (default ~/.cache/liveness-lab/logs/test-<suite>.log).
# Counts: each suite's runner writes JUnit XML into $LIVENESS_LAB_LOGS/junit/<suite>/ (bats, pytest,
# Surefire, helm-unittest, and scripts/lib/checks.sh for the shell checks); a suite's line says how many
# test cases it ran, and the last line, "N passed, N failed", sums them over the suites. A suite that
# exits non-zero counts at least one failure; one that reports no test, or only skipped ones, fails.
set -o errexit -o nounset -o pipefail
. "$(dirname "$0")/lib/common.sh"

ALL_SUITES=(lint docs service chart cluster locust e2e registry)

# The scripts a user runs on a laptop, and the libraries they source: they must work with macOS's BSD
# tools (and bash >= 4). airgap.sh, gobuild.sh and libexec/runc-wrapper.sh run only on the no-registry path
# (root on Debian); the test scripts and bench.sh are Linux-only and say so.
PORTABLE_SCRIPTS=(scripts/cluster-up.sh scripts/cluster-down.sh scripts/demo.sh scripts/lab.sh scripts/build-service-image.sh
  scripts/build-locust-image.sh scripts/lib/common.sh scripts/lib/tools.sh scripts/lib/cluster.sh
  scripts/lib/venv.sh scripts/lib/webui.sh scripts/build-webui.sh)
# GNU-only: coreutils timeout, nproc, date's %N, readlink -f, stat -c, sha256sum, install -D, cp --parents,
# base64 -w, sort -V; grep -P; sed -i without a suffix, sed's \n in a replacement and `p}` without `;`;
# xargs -r; find -printf; date -d; and the GNU tools a Mac lacks altogether (tac, shuf, numfmt, truncate,
# stdbuf, setsid, flock, getent, md5sum...). A line that needs one behind a check says so with a
# `# portable:` comment. The suites that run these scripts do so in macOS's userland as far as Debian can
# imitate it (scripts/libexec/macos-userland.sh), which catches what a pattern cannot.
GNU_ONLY='(^|[^[:alnum:]_.-])(timeout [0-9$]|nproc|date [^|;]*%N|date [^|;]*(-d |--date)|readlink -f|stat -c|sha256sum|sha1sum|sha512sum|md5sum|install -D|cp --parents|base64 -w|sort -V|grep -[[:alpha:]]*P|sed -i|sed [^|;]*\\n|sed [^|]*[;{][pd]}|xargs -r|find [^|;]*-printf|(tac|shuf|numfmt|truncate|stdbuf|setsid|flock|getent)( |$))'

# gnu_only_lines FILE...: the lines of FILEs that use a GNU-only construct.
gnu_only_lines() { grep -nE "$GNU_ONLY" "$@" | grep -v '# portable:' | grep -vE '^[^:]*:[0-9]+:[[:space:]]*#'; }

# The lint suite's checks (scripts/lib/checks.sh runs each with errexit; each logs under $LL_LOGS/lint/).
# lint_shellcheck: every script, the bats files and their helper.
lint_shellcheck() {
  local scripts=()
  mapfile -t scripts < <(cd "$LL_ROOT" && { git ls-files '*.sh' '*.bats' '*.bash' .ci/run 2>/dev/null; find scripts -name '*.sh' -o -name '*.bats' -o -name '*.bash'; } | sort -u)
  (cd "$LL_ROOT" && shellcheck -x -P SCRIPTDIR "${scripts[@]}")
  echo "shellcheck: ${#scripts[@]} scripts clean"
}

# lint_gnu_only_probe: the GNU-only check catches what it is for, on planted lines.
lint_gnu_only_probe() {
  local probe found
  probe=$(mktemp)
  # shellcheck disable=SC2016 # the planted lines are text, not code
  printf '%s\n' 'timeout 5 docker pull x' 'cpus=$(nproc)' "sed -i 's/a/b/' f" 'x=$(readlink -f y)' \
    'date -u -d "@$t"' 'tac log | head' 'setsid dockerd &' >"$probe"
  found=$(gnu_only_lines "$probe" | wc -l | tr -d ' ')
  rm -f "$probe"
  [ "$found" = 7 ] || { echo "the GNU-only check found $found of 7 planted constructs"; return 1; }
  echo "the GNU-only check found the 7 planted constructs"
}

# lint_portability: the scripts users run on macOS use no GNU-only construct.
lint_portability() {
  local script found
  for script in "${PORTABLE_SCRIPTS[@]}"; do
    [ -f "$LL_ROOT/$script" ] || { echo "$script is listed as user-facing but does not exist"; return 1; }
  done
  found=$(cd "$LL_ROOT" && { gnu_only_lines "${PORTABLE_SCRIPTS[@]}" || true; })
  if [ -n "$found" ]; then
    echo "$found"
    echo "GNU-only constructs in the scripts users run on macOS (above): use a portable form, or mark a guarded line with '# portable: why'"
    return 1
  fi
  echo "portability: ${#PORTABLE_SCRIPTS[@]} user-facing scripts use no GNU-only construct"
}

# lint_bash_check: ll_check_bash refuses bash 3 (macOS's /bin/bash) and lets bash 5 through.
lint_bash_check() {
  local major
  for major in 3 5; do
    (ll_check_bash "$major" 2>/dev/null) && [ "$major" = 3 ] && { echo "the bash check let bash 3 through"; return 1; }
    (ll_check_bash "$major" 2>/dev/null) || [ "$major" = 3 ] || { echo "the bash check refused bash 5"; return 1; }
  done
  echo "bash check: refuses bash 3 with the fix, lets bash 5 through"
}

suite_lint() {
  ensure_pkg shellcheck shellcheck
  # shellcheck source=lib/checks.sh
  . "$LL_LIB/checks.sh"
  CHECK_LOGS=$LL_LOGS/lint CHECK_SUITE=lint
  check "shellcheck: every script and bats file" lint_shellcheck
  check "the GNU-only check catches 7 planted constructs" lint_gnu_only_probe
  check "the scripts users run on macOS use no GNU-only construct" lint_portability
  check "bash 3 refused with the fix, bash 5 let through" lint_bash_check
  checks_summary 0
}

# suite_cluster: the bats files of scripts/tests/ (the cluster scripts and the libraries they source, no
# cluster), with bats-core, bats-support and bats-assert from Debian, BWK awk for the macOS userland and
# PyYAML for the kind configs.
suite_cluster() {
  ensure_pkg bats bats
  ensure_pkg original-awk original-awk
  [ -r /usr/lib/bats/bats-support/load.bash ] && [ -r /usr/lib/bats/bats-assert/load.bash ] ||
    apt_install bats-support bats-assert || die "could not install bats-support and bats-assert" "apt-get install bats-support bats-assert"
  python3 -c 'import yaml' 2>/dev/null || apt_install python3-yaml || die "could not install PyYAML" "apt-get install python3-yaml"
  mkdir -p "$LIVENESS_LAB_JUNIT"
  bats --timing --report-formatter junit --output "$LIVENESS_LAB_JUNIT" "$LL_ROOT/scripts/tests"
}

suite_service() {
  find_jdk
  echo "JDK: $JAVA_HOME ($(java_major "$JAVA_HOME/bin/java"))"
  check_service_version || return 1 # the Dockerfile's base images: locust/tests/test_pins.py
  local started=$LIVENESS_LAB_JUNIT/.started rc=0
  mkdir -p "$LIVENESS_LAB_JUNIT" && touch "$started"
  (cd "$LL_ROOT/service" && ./mvnw -B -ntp verify) || rc=$?
  # Surefire's (and Failsafe's) reports of this run, not those an earlier run left in target/.
  find "$LL_ROOT/service/target" -path '*-reports/TEST-*.xml' -newer "$started" -exec cp {} "$LIVENESS_LAB_JUNIT/" \; 2>/dev/null || true
  return "$rc"
}

# The suites that live in a script of their own.
suite_script() { "$LL_ROOT/scripts/test-$1.sh"; }

# suite_totals: "TESTS FAILED SKIPPED" of the suite's JUnit reports.
suite_totals() { python3 "$LL_ROOT/scripts/libexec/junit_totals.py" "$LIVENESS_LAB_JUNIT" || echo "0 0 0"; }

run_suite() {
  local suite=$1 logfile started rc=0 tests failed skipped passed problem='' counts
  logfile=$LL_LOGS/test-$suite.log
  started=$(ll_now)
  export LIVENESS_LAB_JUNIT=$LL_LOGS/junit/$suite
  rm -rf "$LIVENESS_LAB_JUNIT"
  printf '%-8s running (log: %s)\n' "$suite" "$logfile"
  # Not after `||`: there bash would ignore errexit in everything the suite runs.
  set +o errexit
  case $suite in
    lint | service | cluster) ("suite_$suite") >"$logfile" 2>&1 ;;
    *) suite_script "$suite" >"$logfile" 2>&1 ;;
  esac
  rc=$?
  set -o errexit
  local took=$(($(ll_now) - started))
  read -r tests failed skipped <<<"$(suite_totals)"
  passed=$((tests - failed - skipped))
  # A runner that failed without reporting a failing test (it stopped early) is one failure at least; a
  # suite that ran nothing, or skipped everything, has shown nothing.
  [ "$rc" = 0 ] || [ "$failed" -gt 0 ] || { failed=1; problem="no failing test reported"; }
  if [ "$tests" = 0 ]; then
    failed=$((failed > 0 ? failed : 1)) problem=${problem:-"no test reported"}
  elif [ "$tests" = "$skipped" ]; then
    failed=$((failed > 0 ? failed : 1)) problem=${problem:-"every test was skipped"}
  fi
  TESTS_PASSED=$((TESTS_PASSED + passed))
  TESTS_FAILED=$((TESTS_FAILED + failed))
  TESTS_SKIPPED=$((TESTS_SKIPPED + skipped))
  counts="$tests tests$([ "$skipped" = 0 ] || echo ", $skipped skipped")"
  # A suite's "summary:" lines (e.g. helm-unittest's own totals, from scripts/test-chart.sh) are shown here.
  sed -n 's/^summary: /  /p' "$logfile"
  if [ "$rc" = 0 ] && [ -z "$problem" ]; then
    printf '%-8s passed in %ss (%s)\n' "$suite" "$took" "$counts"
  else
    printf '%-8s FAILED in %ss (exit %s; %s, %s failed%s); last lines of %s:\n' "$suite" "$took" "$rc" "$counts" \
      "$failed" "${problem:+; $problem}" "$logfile"
    tail -n 60 "$logfile" | sed 's/^/  | /'
    FAILED_SUITES+=("$suite")
  fi
}

suites=()
for arg in "$@"; do
  case $arg in
    all) suites+=("${ALL_SUITES[@]}") ;;
    -h | --help) ll_usage; exit 0 ;;
    *)
      case " ${ALL_SUITES[*]} " in
        *" $arg "*) suites+=("$arg") ;;
        *) ll_usage >&2; die "unknown suite '$arg'" "choose from: ${ALL_SUITES[*]} all" ;;
      esac ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || suites=("${ALL_SUITES[@]}")

mkdir -p "$LL_LOGS"
FAILED_SUITES=() TESTS_PASSED=0 TESTS_FAILED=0 TESTS_SKIPPED=0
for suite in "${suites[@]}"; do run_suite "$suite"; done

[ ${#FAILED_SUITES[@]} -eq 0 ] || echo "failed suites: ${FAILED_SUITES[*]}"
echo "$TESTS_PASSED passed, $TESTS_FAILED failed$([ "$TESTS_SKIPPED" = 0 ] || echo " ($TESTS_SKIPPED skipped)")"
[ ${#FAILED_SUITES[@]} -eq 0 ]
