#!/usr/bin/env bash
# Builds the image liveness-lab/locust:<tag> from locust/Dockerfile: the locustfile, the Pods and Live tabs
# (the web UI bundle, locust/webui/) and the report modules on a Python base, with exactly the packages
# of locust/requirements.lock in /opt/venv. Skips the build when the image already holds the current
# sources of what locust/.dockerignore lets into it, built on the same base. The web UI bundle is built
# in the Dockerfile's Node stage on NODE_IMAGE (scripts/versions.env) when that image is here or can be
# pulled; otherwise on this machine first (scripts/build-webui.sh: Node.js NODE_MIN_VERSION or newer, npm
# registry), and copied in. The image's helm (HELM_VERSION, which the master runs for the Workshop tab's
# Skip and Reset) is downloaded by the Dockerfile's helm stage where get.helm.sh answers; otherwise fetched
# here through LIVENESS_LAB_DOWNLOAD_MIRROR (Linux on the Docker machine's CPU, SHA-256 checked) or built
# here with Go (the Linux CPU of the Docker machine must be this machine's) and copied in.
#
# Usage: scripts/build-locust-image.sh [--base IMAGE] [--offline-wheels] [--force]
#   --base IMAGE      base image (default: $BASE_IMAGE, else LOCUST_BASE_IMAGE from scripts/versions.env;
#                     LOCAL_PYTHON_BASE_IMAGE, liveness-lab/python:3-trixie, where no registry answers)
#   --offline-wheels  download the lock's wheels on this machine first (for the base's Python, CPU and
#                     glibc) and install them offline: for builds whose pip cannot reach PyPI (no network
#                     in builds, or a TLS proxy whose CA the base image does not trust)
#   --force           rebuild even when the image is up to date
# Environment: BASE_IMAGE (as above); LIVENESS_LAB_PYTHON (the host's python3 for --offline-wheels, 3.11+).
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail
. "$(dirname "$0")/lib/common.sh"
# shellcheck source=lib/venv.sh
. "$LL_ROOT/scripts/lib/venv.sh"
# shellcheck source=lib/webui.sh
. "$LL_ROOT/scripts/lib/webui.sh"
# shellcheck source=lib/tools.sh
. "$LL_ROOT/scripts/lib/tools.sh"

base=${BASE_IMAGE:-$LOCUST_BASE_IMAGE}
offline=
force=
while [ $# -gt 0 ]; do
  case $1 in
    --base) [ $# -ge 2 ] || die "--base needs an image name" "e.g. --base $LOCAL_PYTHON_BASE_IMAGE"; base=$2; shift 2 ;;
    --offline-wheels) offline=1; shift ;;
    --force) force=1; shift ;;
    -h | --help) ll_usage; exit 0 ;;
    *) ll_usage >&2; die "unknown argument '$1'" "see --help" ;;
  esac
done

image=$LOCUST_IMAGE:$LOCUST_IMAGE_TAG
# The image installs the lock: one behind requirements*.txt would build the old versions.
locust_lock_problems "$LL_ROOT/$LOCUST_LOCK" "$LL_ROOT/$LOCUST_REQUIREMENTS" >&2 ||
  die "$LOCUST_LOCK does not match $LOCUST_REQUIREMENTS (above)" \
    "regenerate it: bash -c '. scripts/lib/common.sh && . scripts/lib/venv.sh && lock_locust_requirements'"

need_cmd docker "install Docker: Docker Desktop on macOS (https://docs.docker.com/desktop/), Docker Engine on Linux (scripts/cluster-up.sh installs it on Debian as root)"
require_image base "$base" --base "$LOCAL_PYTHON_BASE_IMAGE"
# The image is current when it was built from these exact sources onto this base: the label names both
# (the hash of what locust/.dockerignore lets into the image, then the base's image ID; the tests and the
# lab's own code are not in it). How pip got the wheels does not matter: their hashes are the lock's.
mapfile -t context < <(ll_context_paths locust)
sources=$(ll_sources_hash "${context[@]}")-$(image_id12 "$base")-helm-$HELM_VERSION
image_up_to_date "$image" "$sources" "$force" && exit 0

# The Node stage needs NODE_IMAGE; where no registry answers, the host builds the bundle and the stage
# runs on the base image (already here) only to check it.
webui=(--build-arg "NODE_IMAGE=$NODE_IMAGE")
if ! docker image inspect "$NODE_IMAGE" >/dev/null 2>&1 && ! docker pull "$NODE_IMAGE" >/dev/null 2>&1; then
  log "$NODE_IMAGE cannot be pulled: building the web UI bundle on this machine"
  step locust-webui build_locust_webui
  webui=(--build-arg "NODE_IMAGE=$base" --build-arg WEBUI_PREBUILT=1)
fi

# image_helm: the pinned helm for the image in locust/.helm/: Linux on the Docker machine's CPU, from
# LIVENESS_LAB_DOWNLOAD_MIRROR when one is set (scripts/libexec/tools.py download, SHA-256 checked), else
# built here with Go (build_helm) when the Docker machine is this Linux machine's CPU; cached under the
# version and platform. It fails otherwise (a Mac without get.helm.sh or a mirror).
image_helm() {
  local arch here dir
  arch=$(docker info --format '{{.Architecture}}' 2>/dev/null) || return 1
  here=$(uname -m)
  case $arch in x86_64 | amd64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; esac
  case $here in x86_64 | amd64) here=amd64 ;; aarch64 | arm64) here=arm64 ;; esac
  dir=$LL_CACHE/helm-image-$HELM_VERSION-linux-$arch
  if [ ! -x "$dir/helm" ] && [ -n "${LIVENESS_LAB_DOWNLOAD_MIRROR:-}" ]; then
    LIVENESS_LAB_HELM_VERSION=$HELM_VERSION LL_START=$LL_START \
      python3 "$LL_ROOT/scripts/libexec/tools.py" download helm --platform "linux/$arch" --into "$dir" || return 1
  fi
  if [ ! -x "$dir/helm" ]; then
    if [ "$(uname -s)" != Linux ] || [ "$here" != "$arch" ]; then
      die "get.helm.sh does not answer and the Docker machine (linux/$arch) is not this machine's CPU: no helm for the image" \
        "let the build reach get.helm.sh, set LIVENESS_LAB_DOWNLOAD_MIRROR, or build the image on a Linux machine of that CPU"
    fi
    if [ -x "$LL_CACHE/helm-$HELM_VERSION/bin/helm" ]; then
      mkdir -p "$dir" && cp "$LL_CACHE/helm-$HELM_VERSION/bin/helm" "$dir/helm"  # cluster-up's own build or download
    else
      ensure_go
      build_helm "$dir"
    fi
  fi
  mkdir -p "$LL_ROOT/locust/.helm"
  cp "$dir/helm" "$LL_ROOT/locust/.helm/helm"
}

helm=(--build-arg "HELM_VERSION=$HELM_VERSION")
rm -rf "$LL_ROOT/locust/.helm"
if ! url_answers "https://get.helm.sh/helm-$HELM_VERSION-linux-amd64.tar.gz.sha256sum"; then
  log "get.helm.sh does not answer: helm $HELM_VERSION for the image from ${LIVENESS_LAB_DOWNLOAD_MIRROR:-this machine (built with Go)}"
  step locust-helm image_helm
  helm+=(--build-arg HELM_PREBUILT=1)
fi

wheels=()
if [ -n "$offline" ]; then
  step locust-wheels prepare_locust_wheels "$base"
  wheels=(--build-arg WHEELS=wheels)
fi
build_image docker-build-locust "$image" "$sources" --build-arg "BASE_IMAGE=$base" "${webui[@]}" "${helm[@]}" \
  ${wheels[@]+"${wheels[@]}"} "$LL_ROOT/locust"
