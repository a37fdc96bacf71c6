#!/usr/bin/env bash
# Builds the Locust web UI bundle with the Live tab into locust/webui/dist/ (git-ignored): npm ci from
# locust/webui/package-lock.json, then vite. A Locust started from locust/ serves it when it is there
# (locustfile.py sets --build-path); the image builds its own copy (locust/Dockerfile, Node stage), or
# takes this one where no container registry answers (scripts/build-locust-image.sh decides).
#
# Usage: scripts/build-webui.sh
# Needs Node.js NODE_MIN_VERSION (scripts/versions.env) or newer with npm, and the npm registry; as root on
# Debian it installs Debian's nodejs and npm when they are missing. Skips the build when dist/ is current,
# and copies the bundle from ~/.cache/liveness-lab/webui-dist-<sources> when a clone of the same sources built it.
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
# shellcheck source=lib/webui.sh
. "$LL_LIB/webui.sh"

case ${1:-} in
  -h | --help) ll_usage; exit 0 ;;
  "") ;;
  *) ll_usage >&2; die "unknown argument '$1'" "see --help" ;;
esac
build_locust_webui
