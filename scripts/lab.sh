#!/usr/bin/env bash
# The lab (issue 13): runs the scenario catalogue in locust/liveness_lab/lab/scenarios/ (one YAML file per probe lesson:
# a chart values overlay, the variants to swarm, the load, the predicted outcome) on the kind cluster
# that scripts/cluster-up.sh brought up, one helm upgrade, scripted demo, judgement and rollback per
# scenario, and writes reports/lab-<timestamp>/ with matrix.md and matrix.html. The lab itself is
# Python, `python -m liveness_lab lab` (locust/liveness_lab/lab/runner.py); this prepares helm and the repository's
# .venv and execs it with the same flags.
#
# Usage: scripts/lab.sh [--only LIST] [--quick] [--repeat N] [--out DIR]
#        scripts/lab.sh --help     what each flag does, the environment it reads, the exit codes
# Exit codes: 0 every prediction held, 1 one did not, 2 a run could not tell (and none failed), 3 usage
# or set-up error (locust/liveness_lab/base/exits.py).
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/venv.sh"
LL_DIE_STATUS=3
use_tools_bin
case " $* " in
  *" -h "* | *" --help "*) ;;
  *) ensure_helm ;; # the lab upgrades and rolls back the release with it
esac
exec_liveness_lab lab.sh lab "$@"
