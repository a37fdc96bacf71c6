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

# require_image ROLE IMAGE LOCAL-IMAGE OPTION: IMAGE is here or can be pulled, else stop with the fix.
require_image() {
  docker image inspect "$2" >/dev/null 2>&1 && return 0
  log "pulling $1 image $2"
  docker pull "$2" >/dev/null 2>&1 && return 0
  die "$1 image '$2' is neither present nor pullable" \
    "where no registry answers, build the local one first (scripts/cluster-up.sh does), or pass $4 $3 if it is built already"
}
require_image "runtime base" "$base" "$LOCAL_JRE_BASE_IMAGE" --base
require_image "build-stage (JDK)" "$jdk" "$LOCAL_JDK_BASE_IMAGE" --jdk

# The image is current when it was built from these exact sources in this JDK image onto this base:
# the label names all three (the sources hash, then the two bases' image IDs).
base_id() { docker image inspect --format '{{.Id}}' "$1" | cut -c8-19; }
sources=$(ll_sources_hash service)-$(base_id "$jdk")-$(base_id "$base")
built=$(docker image inspect --format '{{ index .Config.Labels "io.livenesslab.sources" }}' "$image" 2>/dev/null || true)
if [ -z "$force" ] && [ "$built" = "$sources" ]; then
  log "image $image is up to date (sources $sources)"
  exit 0
fi

# buildx adds provenance attestations by default, which makes every build's digest differ; without
# them identical builds give identical digests. The legacy builder (Docker 20.10, no buildx) ignores it.
export BUILDX_NO_DEFAULT_ATTESTATIONS=1
# --label on the command line: the legacy builder takes it as the final layer, after every cached one.
step build-service-image docker build --build-arg "JDK_IMAGE=$jdk" --build-arg "BASE_IMAGE=$base" \
  --label "io.livenesslab.sources=$sources" -t "$image" "$LL_ROOT/service"
log "built $image in $jdk onto $base ($(docker image inspect --format '{{.Size}}' "$image" | awk '{ printf "%d MB", $1 / 1000000 }'))"
