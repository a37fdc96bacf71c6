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
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# The same arguments as scripts/test-e2e.sh (but --no-lab), which runs the suite.
case " $* " in
  *" -h "* | *" --help "*) ll_usage; exit 0 ;;
  *" --no-lab "*) printf 'error: unknown argument: --no-lab\n  fix: see %s --help\n' "$0" >&2; exit 2 ;;
esac
LL_E2E_TESTS=tests/multinode exec "$LL_ROOT/scripts/test-e2e.sh" "$@"
