#!/usr/bin/env bash
# The instructor's view of a workshop (docs/workshop.md, issue 40): prints one line per participant's
# release, from every namespace that holds the workshop's ConfigMap (label
# app.kubernetes.io/component=workshop): namespace, release, the step on screen, done/total, when its
# Locust master last wrote, and the last check's state and reason. Read with your own kubeconfig; needs
# list on ConfigMaps in every namespace. The table is Python, `python -m liveness_lab workshop`
# (locust/liveness_lab/workshop/room.py); this prepares the repository's .venv and execs it.
#
# Usage: scripts/workshop.sh [--context NAME] [--json]
#        scripts/workshop.sh --help     what each flag does and the exit codes
#        watch -n 15 scripts/workshop.sh --context workshop     keeps the table on screen
# Environment: LIVENESS_LAB_KUBE_CONTEXT (default kind-liveness-lab), when --context is not given.
# Exit codes: 0 the table was printed, 3 usage or set-up error (no such context, the API refused).
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/venv.sh"
LL_DIE_STATUS=3
exec_liveness_lab workshop.sh workshop "$@"
