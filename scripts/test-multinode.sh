#!/usr/bin/env bash
# The multinode suite, pytest locust/tests/multinode/ in the repository's .venv: scripts/cluster-up.sh
# --workers 2 (a control plane and two workers; the no-registry path where no registry answers), then the
# three nodes Ready with their own pod ranges, every node routing the other nodes' ranges, a pod on each
# node reaching a pod and a Service by name on every other node, the control plane's NodePorts reaching the
# release on the workers; a second release (bob in ws-bob, docs/workshop.md's way) whose objects, RBAC and
# lock do not collide with the first's; both releases' demos at the same time with --load cluster, both
# PASS; then scripts/cluster-down.sh (also when a test fails). About 8 minutes with warm caches. A failing
# test carries the cluster's state (the e2e suite's hook, locust/tests/e2e/conftest.py).
#
# Usage: scripts/test-multinode.sh [--keep] [--help] [-- CLUSTER-UP-ARGS...]
#   --keep     leave the cluster up afterwards
#
# Environment: the LIVENESS_LAB_* settings of scripts/cluster-up.sh pass through.
# One test, or pytest's own options: cd locust && ../.venv/bin/python -m pytest tests/multinode -k NAME
# [--keep-cluster] [--cluster-up-arg=ARG]. Exits non-zero when a test failed or none passed. With
# LIVENESS_LAB_JUNIT=DIR (set by scripts/test.sh) also DIR/pytest.xml.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/venv.sh"

PYTEST_ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --keep) PYTEST_ARGS+=(--keep-cluster) ;;
    -h | --help) ll_usage; exit 0 ;;
    --) shift; for arg in "$@"; do PYTEST_ARGS+=("--cluster-up-arg=$arg"); done; break ;;
    *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
  esac
  shift
done

exec_pytest tests/multinode ${PYTEST_ARGS[@]+"${PYTEST_ARGS[@]}"}
