#!/usr/bin/env bash
# The registry path of scripts/cluster-up.sh, proven on a machine that no container registry or
# download site answers: a simulation on 127.0.0.1, as a pytest suite (locust/tests/registry). Debian's
# docker-registry stands in for Docker Hub (as Docker's registry mirror) holding stand-ins of the
# official images, built from the locally built ones and pushed under Docker Hub's names (kindest/node,
# eclipse-temurin JRE and JDK, locustio/locust); a local file server stands in for the kind, helm and
# kubectl release downloads (checksum files in the official formats). Then the real end-to-end test
# (scripts/test-e2e.sh) runs on a copy of the working tree with an empty cache and a PATH without Go,
# kind, helm, kubectl or a JDK, as a Mac (scripts/tests/macos_userland.py --mac: macOS's userland, uname
# Darwin arm64, id 501, bash 3.2 first on PATH with the scripts run by the bash chosen by hand, the Python a
# Mac user installs), so every image must be pulled, every tool downloaded (for darwin/arm64) and the jar
# built inside Docker; a second scripts/cluster-up.sh must restart no pod, from the tree and from a ZIP
# download of it with Finder's files and __pycache__ planted. Linux, root,
# Docker Engine on this machine (dockerd is reloaded with SIGHUP for the mirror setting, never
# restarted). What this proves and what it does not: docs/laptop.md, "What the simulation proves and
# does not prove".
#
# Usage: scripts/test-registry.sh [--keep] [--no-e2e] [--down] [--purge] [--help] [-- PYTEST-ARGS...]
#   --keep     leave the cluster, the registry, the file server and the mirror setting up afterwards
#   --no-e2e   stop after the stand-ins, the file server and the mirror (no cluster is created)
#   --down     stop what a --keep run left (cluster, registry, file server, mirror setting) and exit
#   --purge    like --down, and also remove the registry's storage, the stand-in images and the
#              simulation's caches (<cache>/registry-sim)
#   -- ARGS    passed to pytest, e.g. -- -k standin
#
# Environment (defaults):
#   LIVENESS_LAB_CACHE=~/.cache/liveness-lab   the Go-built tools served as downloads, and
#                                              registry-sim/ (registry storage, tree copy, e2e cache)
#   LIVENESS_LAB_SIM_REGISTRY_PORT=5000        first port tried for the registry (the next free one is taken)
#   LIVENESS_LAB_SIM_FILES_PORT=8780           first port tried for the file server
#   the LIVENESS_LAB_* settings of scripts/test-e2e.sh pass through, except LIVENESS_LAB_REGISTRY
#   (unset: the detection is under test), LIVENESS_LAB_CACHE, _DOWNLOAD_MIRROR and _NODE_IMAGE (set here)
# Logs: <logs>/registry-sim-*.log; the e2e's own under <cache>/registry-sim/e2e-cache/logs, its JUnit
# XML in <logs>/registry-sim-e2e-junit (not counted again as this suite's). Ends with pytest's summary;
# exits non-zero when any test fails. With LIVENESS_LAB_JUNIT=DIR (scripts/test.sh) pytest also writes
# DIR/pytest.xml.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/venv.sh"

PYTEST_ARGS=()
DOWN=
while [ $# -gt 0 ]; do
  case $1 in
    --keep) PYTEST_ARGS+=(--registry-keep) ;;
    --no-e2e) PYTEST_ARGS+=(--registry-no-e2e) ;;
    --down) DOWN=--down ;;
    --purge) DOWN=--purge ;;
    -h | --help) ll_usage; exit 0 ;;
    --) shift; PYTEST_ARGS+=("$@"); break ;;
    *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
  esac
  shift
done

if [ "$(uname -s)" != Linux ] || [ "$(id -u)" != 0 ]; then
  die "scripts/test-registry.sh runs as root on Linux (it installs a package and reloads dockerd)"
fi
docker info >/dev/null 2>&1 || die "no Docker daemon answers" "start it (scripts/cluster-up.sh does, as root on Debian)"
ensure_pkg curl curl # on the e2e's PATH (a test checks it is there)
# The e2e's user is not root as the scripts see it (id -u says 501): what it needs from Debian is installed here.
ensure_pkg chromium chromium
ensure_pkg gcc gcc # the simulated Mac's bash 3.2, built once from Debian's bash source
ensure_pkg make make

if [ -n "$DOWN" ]; then
  # The standard library only: no venv needed to clean up.
  cd "$LL_ROOT/locust" && exec "${LIVENESS_LAB_PYTHON:-python3}" tests/registry/registry_sim.py "$DOWN"
fi
exec_pytest tests/registry ${PYTEST_ARGS[@]+"${PYTEST_ARGS[@]}"}
