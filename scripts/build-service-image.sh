#!/usr/bin/env bash
# Builds the image liveness-lab/service:<version> with Docker alone: service/Dockerfile compiles the jar
# in a Java 25 JDK image (Maven wrapper, dependencies from Maven Central) and runs it on a Java 25 JRE.
# No JDK or Maven on this machine. Skips the build when the image already holds the current sources
# built on the same two bases.
#
# Usage: scripts/build-service-image.sh [--base IMAGE] [--jdk IMAGE] [--force]
#   --base IMAGE  runtime base image (default: $BASE_IMAGE, else JRE_BASE_IMAGE from scripts/versions.env)
#   --jdk IMAGE   build-stage image with a JDK >= 21 (default: $JDK_IMAGE, else JDK_BASE_IMAGE from there)
#   --force       rebuild even when the image is up to date
# Environment: BASE_IMAGE, JDK_IMAGE (as above).
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail
. "$(dirname "$0")/lib/common.sh"

base=${BASE_IMAGE:-$JRE_BASE_IMAGE}
jdk=${JDK_IMAGE:-$JDK_BASE_IMAGE}
force=
while [ $# -gt 0 ]; do
  case $1 in
    --base) [ $# -ge 2 ] || die "--base needs an image name" "e.g. --base $LOCAL_JRE_BASE_IMAGE"; base=$2; shift 2 ;;
    --jdk) [ $# -ge 2 ] || die "--jdk needs an image name" "e.g. --jdk $LOCAL_JDK_BASE_IMAGE"; jdk=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h | --help) ll_usage; exit 0 ;;
    *) ll_usage >&2; die "unknown argument '$1'" "see --help" ;;
  esac
done

image=$SERVICE_IMAGE:$SERVICE_VERSION
check_service_version || exit 1

need_cmd docker "install Docker: Docker Desktop on macOS (https://docs.docker.com/desktop/), Docker Engine on Linux (scripts/cluster-up.sh installs it on Debian as root)"

require_image "runtime base" "$base" --base "$LOCAL_JRE_BASE_IMAGE"
require_image "build-stage (JDK)" "$jdk" --jdk "$LOCAL_JDK_BASE_IMAGE"
# The image is current when it was built from these exact sources in this JDK image onto this base:
# the label names all three (the sources hash, then the two bases' image IDs).
sources=$(ll_sources_hash service)-$(image_id12 "$jdk")-$(image_id12 "$base")
image_up_to_date "$image" "$sources" "$force" && exit 0
build_image build-service-image "$image" "$sources" --build-arg "JDK_IMAGE=$jdk" --build-arg "BASE_IMAGE=$base" "$LL_ROOT/service"
