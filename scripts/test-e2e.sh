#!/usr/bin/env bash
# End-to-end test on a real kind cluster, the pytest suite locust/tests/e2e/ in the repository's .venv:
# scripts/cluster-up.sh, then the node and every kube-system pod Ready, each NodePort of the release
# answering on 127.0.0.1, the chart on the cluster (server-side dry-run, restricted Pod Security, rollouts,
# `helm test`), a second cluster-up that changes nothing, the lab's two quick scenarios (each prediction
# must hold) or a shortened scripted demo whose verdict must pass, the Locust Pods and Live tabs against
# the live cluster, a demo right after `helm upgrade --set latencyMs=500` (it must run at 500 ms and
# pass), and the Workshop tab (step 1 on a real kill, Skip, Reset, the instructor's table, the master's
# Role); then scripts/cluster-down.sh (also when a test fails). A failing test carries the cluster's pods,
# its last 30 events and each not-ready pod's description and last log lines (locust/tests/e2e/conftest.py).
#
# Usage: scripts/test-e2e.sh [--keep] [--no-lab] [--help] [-- CLUSTER-UP-ARGS...]
#   --keep     leave the cluster up afterwards
#   --no-lab   a shortened scripted demo instead of the lab's two quick scenarios (baseline and
#              servlet, scripts/lab.sh --quick, about 7 minutes) and the latency change: the registry suite's e2e
#
# Environment: the LIVENESS_LAB_* settings of scripts/cluster-up.sh pass through, plus
#   LIVENESS_LAB_E2E_WAIT=300s   how long kube-system pods may take to become Ready
#   LIVENESS_LAB_E2E_PARTICIPANT_HELM=   a second Helm release (as v3.22.0) the workshop's any-order test runs
#                                the shown commands with, after the pinned one (test_9c)
# One test, or pytest's own options: cd locust && ../.venv/bin/python -m pytest tests/e2e -k NAME
# [--keep-cluster] [--no-lab] [--cluster-up-arg=ARG]. Ends with pytest's summary; exits non-zero when a
# test failed or none passed. With LIVENESS_LAB_JUNIT=DIR (set by scripts/test.sh) also DIR/pytest.xml.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/venv.sh"

PYTEST_ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --keep) PYTEST_ARGS+=(--keep-cluster) ;;
    --no-lab) PYTEST_ARGS+=(--no-lab) ;;
    -h | --help) ll_usage; exit 0 ;;
    --) shift; for arg in "$@"; do PYTEST_ARGS+=("--cluster-up-arg=$arg"); done; break ;;
    *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
  esac
  shift
done

# The Pods and Live tabs are looked at in Debian's Chromium, driven by Playwright (never a downloaded browser).
# LL_E2E_TESTS: other paths under locust/, space-separated, instead of tests/e2e (scripts/test-multinode.sh
# runs its own suite; the registry suite the cluster and scripted-run files only), no browser installed.
[ -n "${LL_E2E_TESTS:-}" ] || ensure_pkg chromium chromium
read -r -a tests <<<"${LL_E2E_TESTS:-tests/e2e}"
exec_pytest "${tests[@]}" ${PYTEST_ARGS[@]+"${PYTEST_ARGS[@]}"}
