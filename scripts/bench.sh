#!/usr/bin/env bash
# Benchmark: every mode of the service against Little's law, side by side in one run (docs/benchmark.md).
# Each mode in its own JVM pinned to one CPU, vegeta (open loop, constant rate) on the other, the same
# warm-up for all, then each scenario offered to each mode, recorded by JFR; writes reports/bench-<timestamp>/
# (results.jsonl, table.md, cpu.md, memory.md, chart.png, profile-*, machine.txt, logs/). Linux only.
# The bench itself is Python, `python -m liveness_lab bench` (locust/liveness_lab/bench/run.py); this finds
# a JDK, builds vegeta with Go (scripts/lib/gobuild.sh), prepares the .venv and execs it with the same flags.
#
# Usage: scripts/bench.sh [--duration SECONDS] [--modes LIST] [--scenarios LIST] [--quick]
#                         [--idle-connections N] [--soak MINUTES] [--baseline REF] [--service-args ARGS] [--no-floor]
#        scripts/bench.sh --memory [--held LIST] [--modes LIST] [--quick] [--baseline REF] [--service-args ARGS] [--no-floor]
#                    heap per waiting request instead of the scenarios (requests-memory.md)
#        scripts/bench.sh --help     what each flag does and the exit codes
# Exit codes: 0 measured, 3 usage or set-up error (locust/liveness_lab/base/exits.py).
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/gobuild.sh"; . "$LL_LIB/venv.sh"
LL_DIE_STATUS=3

# ensure_vegeta: $LIVENESS_LAB_VEGETA, built once into the cache, keyed by version.
ensure_vegeta() {
  local dir=$LL_CACHE/vegeta-$VEGETA_VERSION
  [ -x "$LIVENESS_LAB_VEGETA" ] && return 0
  ensure_go
  # The proxy refuses vegeta's version list, so 'go install' fails: build it in a scratch module.
  scratch_module "$dir/module" liveness-lab/build/vegeta
  (cd "$dir/module" && GOFLAGS=-mod=mod go get "github.com/tsenart/vegeta/v12@$VEGETA_VERSION" &&
    go_static build -trimpath -o "$LIVENESS_LAB_VEGETA" github.com/tsenart/vegeta/v12)
}

export LIVENESS_LAB_CACHE=$LL_CACHE LIVENESS_LAB_VEGETA=$LL_CACHE/vegeta-$VEGETA_VERSION/bin/vegeta
# Not on --help; elsewhere than Linux the Python says why it cannot run.
case " $* " in
  *" -h "* | *" --help "*) ;;
  *) [ "$(uname -s)" != Linux ] || { find_jdk; step bench-vegeta ensure_vegeta; } ;;
esac
exec_liveness_lab bench.sh bench "$@"
