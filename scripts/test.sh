#!/usr/bin/env bash
# Runs liveness-lab's test suites and says, per suite, whether it passed and how long it took.
# Installs what the suites need on a fresh machine (shellcheck and bats from Debian; the JDK is found, not
# installed: see the error it prints).
#
# Usage: scripts/test.sh [SUITE...]
#   SUITE: lint | docs | service | chart | cluster | locust | e2e | multinode | registry | all (default: all)
#     lint     shellcheck, no GNU-only construct or sed escape in the scripts users run, scripts/libexec on
#              macOS's python3 3.9 (vermin), ruff on the Python, the bash check, this runner (scripts/tests/lint/)
#     docs     the scripts, options and --set values the READMEs and docs/ show exist (scripts/tests/test_docs.py)
#     service  the Spring Boot service: ./mvnw verify (probes under load, BlockHound, bad input)
#     chart    helm-unittest suites, ct lint, kube-linter, helm-docs' table (chart/tests/, run by scripts/test-chart.sh)
#     cluster  cluster-up plans and argument errors, kind-config.yaml, the user's scripts as a Mac runs them, no
#              cluster (bats: scripts/tests/*.bats), and
#              the helpers in Python those scripts run (pytest: scripts/tests/test_tools.py, where the tools
#              come from; test_runc_wrapper.py; test_pod_network.py; test_macos_userland.py, the macOS
#              simulation's own test)
#     locust   pins and lock files, locustfile, report builder, Pods tab (scripts/test-locust.sh)
#     e2e      the real kind cluster: up, helm test, the lab's quick scenarios, the tabs, down (pytest:
#              locust/tests/e2e, run by scripts/test-e2e.sh)
#     multinode a kind cluster of three nodes: the pod network between them, two releases in two namespaces
#              running their demos at once with the load from inside the cluster (pytest:
#              locust/tests/multinode, run by scripts/test-multinode.sh)
#     registry the laptop's registry path, simulated on 127.0.0.1: the e2e again with every image pulled
#              from a local registry and every tool downloaded (pytest: locust/tests/registry, run by
#              scripts/test-registry.sh; root, Linux)
# The service suite runs beside the suites that need no cluster, and so does, when e2e or multinode is to
# run, the build of the cluster's images (scripts/cluster-up.sh --images-only at the lowest CPU priority, log
# test-images.log), which the first cluster suite waits for; LIVENESS_LAB_TEST_SERIAL=1 runs each alone.
# Logs: one per suite under $LIVENESS_LAB_LOGS (default ~/.cache/liveness-lab/logs/test-<suite>.log).
# Counts: each suite's runner writes JUnit XML into $LIVENESS_LAB_LOGS/junit/<suite>/ (bats, pytest,
# Surefire, helm-unittest); a suite's line says how many test cases it ran, and the last line, "N passed,
# N failed", sums them over the suites (scripts/tests/run_suites.py). A suite that exits non-zero counts
# at least one failure; one that reports no test, or only skipped ones, fails.
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail
. "$(dirname "$0")/lib/common.sh"

# bats_suite PATH: the bats files at PATH, with bats-core, bats-support and bats-assert from Debian, BWK
# awk for the macOS userland and PyYAML for the kind configs; JUnit XML for the count.
bats_suite() {
  ensure_pkg bats bats
  ensure_pkg original-awk original-awk
  [ -r /usr/lib/bats/bats-support/load.bash ] && [ -r /usr/lib/bats/bats-assert/load.bash ] ||
    apt_install bats-support bats-assert || die "could not install bats-support and bats-assert" "apt-get install bats-support bats-assert"
  python3 -c 'import yaml' 2>/dev/null || apt_install python3-yaml || die "could not install PyYAML" "apt-get install python3-yaml"
  local rc=0 _
  mkdir -p "$LIVENESS_LAB_JUNIT"
  bats --timing --report-formatter junit --output "$LIVENESS_LAB_JUNIT" "$1" || rc=$?
  # bats writes the report from a process of its own, which may still be writing when bats has exited.
  for _ in $(seq 20); do grep -q '</testsuites>' "$LIVENESS_LAB_JUNIT/report.xml" 2>/dev/null && break; sleep 0.5; done
  return "$rc"
}

# ensure_vermin: vermin VERMIN_VERSION first on PATH, from a venv under the cache (pip, PyPI).
ensure_vermin() {
  local venv=$LL_CACHE/vermin-$VERMIN_VERSION
  if [ ! -x "$venv/bin/vermin" ]; then
    python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv && python3 -m venv "$venv"; } ||
      die "could not make a Python venv for vermin" "apt-get install python3-venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "vermin==$VERMIN_VERSION" ||
      die "pip could not install vermin $VERMIN_VERSION" "check that PyPI answers (pip config list)"
  fi
  PATH=$venv/bin:$PATH
}

suite_lint() {
  ensure_pkg shellcheck shellcheck
  # The shells a user may start the scripts with by mistake (sh and dash are Debian's own).
  ensure_pkg zsh zsh
  ensure_pkg mksh mksh
  ensure_vermin
  # ruff: a pin of requirements-dev.txt, in the dev .venv.
  # shellcheck source=lib/venv.sh
  . "$LL_LIB/venv.sh"
  ensure_locust_venv dev
  bats_suite "$LL_ROOT/scripts/tests/lint"
}

# suite_cluster: the bats files of scripts/tests/ (the cluster scripts and the libraries they source, no
# cluster), then the pytest files of the helpers in scripts/libexec/ that those scripts run.
suite_cluster() {
  local rc=0
  # The simulated Mac's bash 3.2 is built once from Debian's bash source (scripts/tests/macos_userland.py).
  ensure_pkg gcc gcc
  ensure_pkg make make
  bats_suite "$LL_ROOT/scripts/tests" || rc=$?
  # shellcheck source=lib/venv.sh
  . "$LL_LIB/venv.sh"
  ensure_locust_venv dev
  "$LL_VENV/bin/python" -m pytest -v -p no:cacheprovider --junitxml "$LIVENESS_LAB_JUNIT/pytest.xml" \
    "$LL_ROOT"/scripts/tests/test_{tools,runc_wrapper,pod_network,macos_userland}.py || rc=$?
  return "$rc"
}

suite_docs() {
  # shellcheck source=lib/tools.sh
  . "$LL_LIB/tools.sh"
  # shellcheck source=lib/venv.sh
  . "$LL_LIB/venv.sh"
  use_tools_bin
  ensure_helm
  ensure_locust_venv dev
  "$LL_VENV/bin/python" -m pytest -v -p no:cacheprovider --junitxml "$LIVENESS_LAB_JUNIT/pytest.xml" "$LL_ROOT/scripts/tests/test_docs.py"
}

suite_service() {
  find_jdk
  echo "JDK: $JAVA_HOME ($(java_major "$JAVA_HOME/bin/java"))"
  check_service_version # the Dockerfile's base images: locust/tests/test_pins.py
  local started=$LIVENESS_LAB_JUNIT/.started rc=0
  mkdir -p "$LIVENESS_LAB_JUNIT" && touch "$started"
  (cd "$LL_ROOT/service" && ./mvnw -B -ntp verify) || rc=$?
  # Surefire's (and Failsafe's) reports of this run, not those an earlier run left in target/.
  find "$LL_ROOT/service/target" -path '*-reports/TEST-*.xml' -newer "$started" -exec cp {} "$LIVENESS_LAB_JUNIT/" \; 2>/dev/null || true
  return "$rc"
}

# One suite, for the runner (its log, timing and count are the runner's); the others live in scripts/test-SUITE.sh.
suite=${LL_TEST_SUITE:-}
unset LL_TEST_SUITE
case $suite in
  "") ;;
  lint | docs | service | cluster) "suite_$suite"; exit ;;
  *) exec "$LL_ROOT/scripts/test-$suite.sh" ;;
esac
case " $* " in *" -h "* | *" --help "*) ll_usage; exit 0 ;; esac
exec python3 "$LL_ROOT/scripts/tests/run_suites.py" "$LL_ROOT/scripts/test.sh" "$LL_LOGS" "$@"
