#!/usr/bin/env bash
# The scripted run: swarms the chosen variants with the same offered load, records the pods and their
# events, writes reports/<timestamp>/ (report.html, plots, summary.md, raw data); its exit code is the
# verdict. Defaults (variants, latency, probes) come from the release in the cluster. The run itself is
# Python, `python -m liveness_lab demo` (locust/liveness_lab/demo/run.py); this prepares the repository's
# .venv and execs it with the same flags.
#
# Usage: scripts/demo.sh [--hold SECONDS] [--ramp SECONDS] [--quiet SECONDS] [--users N] [--rate R]
#                        [--latency-ms MS] [--variants LIST] [--out DIR] [--keep-pods] [--no-stop-swarm]
#        scripts/demo.sh --help     what each flag does, the environment it reads, the exit codes
# Exit codes: 0 PASS, 1 FAIL, 2 INCONCLUSIVE, 3 usage or set-up error (locust/liveness_lab/base/exits.py).
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/venv.sh"
LL_DIE_STATUS=3
# kind, helm and kubectl as cluster-up.sh installed them, for the cluster-up the run may start.
use_tools_bin
exec_liveness_lab demo.sh demo "$@"
