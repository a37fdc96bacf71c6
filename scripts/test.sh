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
#     cluster  cluster-up plans and argument errors, no cluster (scripts/test-cluster.sh)
#     locust   locustfile, report builder, Pods tab (scripts/test-locust.sh)
#     e2e      the real kind cluster: up, helm test, a short demo, down (scripts/test-e2e.sh)
#     registry the laptop's registry path, simulated on 127.0.0.1: the e2e again with every image pulled
#              from a local registry and every tool downloaded (scripts/test-registry.sh; root, Linux)
# Logs: one per suite under $LIVENESS_LAB_LOGS (default ~/.cache/liveness-lab/logs/test-<suite>.log).
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

suite_lint() {
  ensure_pkg shellcheck shellcheck
  local scripts=() probe found
  mapfile -t scripts < <(cd "$LL_ROOT" && { git ls-files '*.sh' .ci/run 2>/dev/null; find scripts -name '*.sh'; } | sort -u)
  (cd "$LL_ROOT" && shellcheck -x -P SCRIPTDIR "${scripts[@]}")
  echo "shellcheck: ${#scripts[@]} scripts clean"
  # The check itself must catch what it is for.
  probe=$(mktemp)
  # shellcheck disable=SC2016 # the planted lines are text, not code
  printf '%s\n' 'timeout 5 docker pull x' 'cpus=$(nproc)' "sed -i 's/a/b/' f" 'x=$(readlink -f y)' \
    'date -u -d "@$t"' 'tac log | head' 'setsid dockerd &' >"$probe"
  found=$(gnu_only_lines "$probe" | wc -l | tr -d ' ')
  rm -f "$probe"
  [ "$found" = 7 ] || { echo "the GNU-only check found $found of 7 planted constructs"; return 1; }
  local script
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
  local major
  for major in 3 5; do
    (ll_check_bash "$major" 2>/dev/null) && [ "$major" = 3 ] && { echo "the bash check let bash 3 through"; return 1; }
    (ll_check_bash "$major" 2>/dev/null) || [ "$major" = 3 ] || { echo "the bash check refused bash 5"; return 1; }
  done
  echo "bash check: refuses bash 3 with the fix, lets bash 5 through"
}

suite_service() {
  find_jdk
  echo "JDK: $JAVA_HOME ($(java_major "$JAVA_HOME/bin/java"))"
  check_service_version || return 1
  local dockerfile_base dockerfile_jdk
  dockerfile_base=$(sed -n 's/^ARG BASE_IMAGE=//p' "$LL_ROOT/service/Dockerfile")
  [ "$dockerfile_base" = "$JRE_BASE_IMAGE" ] ||
    { echo "service/Dockerfile BASE_IMAGE $dockerfile_base != JRE_BASE_IMAGE $JRE_BASE_IMAGE in scripts/versions.env"; return 1; }
  dockerfile_jdk=$(sed -n 's/^ARG JDK_IMAGE=//p' "$LL_ROOT/service/Dockerfile")
  [ "$dockerfile_jdk" = "$JDK_BASE_IMAGE" ] ||
    { echo "service/Dockerfile JDK_IMAGE $dockerfile_jdk != JDK_BASE_IMAGE $JDK_BASE_IMAGE in scripts/versions.env"; return 1; }
  (cd "$LL_ROOT/service" && ./mvnw -B -ntp verify)
}

# The suites that live in a script of their own.
suite_script() { "$LL_ROOT/scripts/test-$1.sh"; }

run_suite() {
  local suite=$1 logfile started rc=0
  logfile=$LL_LOGS/test-$suite.log
  started=$(ll_now)
  printf '%-8s running (log: %s)\n' "$suite" "$logfile"
  case $suite in
    lint | service) "suite_$suite" >"$logfile" 2>&1 || rc=$? ;;
    *) suite_script "$suite" >"$logfile" 2>&1 || rc=$? ;;
  esac
  local took=$(($(ll_now) - started))
  # A suite's "summary:" lines (e.g. helm-unittest's own totals, from scripts/test-chart.sh) are shown here.
  sed -n 's/^summary: /  /p' "$logfile"
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
PASSED=() FAILED=()
for suite in "${suites[@]}"; do run_suite "$suite"; done

echo "${#PASSED[@]} passed, ${#FAILED[@]} failed"
[ ${#FAILED[@]} -eq 0 ]
