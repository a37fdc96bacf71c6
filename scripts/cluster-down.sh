#!/usr/bin/env bash
# Deletes the liveness-lab kind cluster (a no-op when there is none) and keeps the build caches, so the
# next scripts/cluster-up.sh takes minutes, not the first run's hour.
#
# Usage: scripts/cluster-down.sh [--purge] [--help]
#   --purge   also remove the caches (~/.cache/liveness-lab), the locally built images and .tools/
#
# Environment (defaults):
#   LIVENESS_LAB_CACHE=~/.cache/liveness-lab   the caches --purge removes
# shellcheck source-path=SCRIPTDIR
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

# shellcheck source=lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

PURGE=0
parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --purge) PURGE=1 ;;
      -h | --help) ll_usage; exit 0 ;;
      *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
    esac
    shift
  done
}

# kind_cmd: the pinned kind from .tools/bin, else any kind on PATH (deleting works across versions).
kind_cmd() {
  if [ -x "$LL_TOOLS/bin/kind" ]; then echo "$LL_TOOLS/bin/kind"; else command -v kind || true; fi
}

delete_cluster() {
  local kind
  kind=$(kind_cmd)
  if [ -z "$kind" ] || ! docker info >/dev/null 2>&1; then
    log "no kind or no Docker daemon: no cluster to delete"
    return 0
  fi
  if "$kind" get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER_NAME"; then
    step delete-cluster "$kind" delete cluster --name "$KIND_CLUSTER_NAME"
  else
    log "cluster $KIND_CLUSTER_NAME: not there, nothing to delete"
  fi
}

# purge: everything cluster-up.sh built or downloaded, except Docker itself and Go's module cache.
purge() {
  local images
  if docker info >/dev/null 2>&1; then
    # Everything built here carries the liveness-lab.recipe label; the demo's own images are liveness-lab/*.
    images=$({
      docker image ls --filter label=liveness-lab.recipe --format '{{.Repository}}:{{.Tag}}'
      docker image ls --format '{{.Repository}}:{{.Tag}}' | grep '^liveness-lab/' || true
    } | sort -u)
    # shellcheck disable=SC2086 # one argument per image
    [ -z "$images" ] || docker image rm $images >/dev/null
    # An array's length, not wc: BSD wc pads its count with spaces.
    local removed=()
    [ -z "$images" ] || mapfile -t removed <<<"$images"
    log "removed local images: ${#removed[@]}"
  fi
  rm -rf "$LL_CACHE" "$LL_TOOLS"
  log "removed $LL_CACHE and $LL_TOOLS"
}

main() {
  parse_args "$@"
  delete_cluster
  [ "$PURGE" = 0 ] || purge
}

main "$@"
