#!/usr/bin/env bash
# Builds the service jar (Maven wrapper, a JDK >= 21 found by itself) and the image
# liveness-lab/service:<version> on a Java 25 JRE base. Skips both when the image already holds
# the current sources.
#
# Usage: scripts/build-service-image.sh [--base IMAGE] [--force]
#   --base IMAGE  runtime base image (default: $BASE_IMAGE, else JRE_BASE_IMAGE from scripts/versions.env)
#   --force       rebuild even when the image is up to date
# Environment: BASE_IMAGE, JAVA_HOME (a JDK >= 21; else the newest suitable one in /usr/lib/jvm).
set -o errexit -o nounset -o pipefail
. "$(dirname "$0")/lib/common.sh"

usage() { sed -n '2,10s/^# \{0,1\}//p' "$0"; }

base=${BASE_IMAGE:-$JRE_BASE_IMAGE}
force=
while [ $# -gt 0 ]; do
  case $1 in
    --base) [ $# -ge 2 ] || die "--base needs an image name" "e.g. --base $LOCAL_JRE_BASE_IMAGE"; base=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" "see --help" ;;
  esac
done

image=$SERVICE_IMAGE:$SERVICE_VERSION
check_service_version || exit 1

need_cmd docker "install Docker (scripts/cluster-up.sh does it on Debian as root)"
docker image inspect "$base" >/dev/null 2>&1 || docker pull "$base" >/dev/null 2>&1 ||
  die "base image '$base' is neither present nor pullable" \
    "where no registry answers, build the local one first: scripts/cluster-up.sh does, or pass --base $LOCAL_JRE_BASE_IMAGE"

# The image is current when it was built from these exact sources on this base.
sources=$(cd "$LL_ROOT" && { git ls-files -s service 2>/dev/null || true; find service/src service/pom.xml service/Dockerfile -type f -exec sha256sum {} +; } |
  sha256sum | cut -c1-16)-$(docker image inspect --format '{{.Id}}' "$base" | cut -c8-19)
built=$(docker image inspect --format '{{ index .Config.Labels "io.livenesslab.sources" }}' "$image" 2>/dev/null || true)
if [ -z "$force" ] && [ "$built" = "$sources" ]; then
  log "image $image is up to date (sources $sources)"
  exit 0
fi

find_jdk
log "JDK: $JAVA_HOME"
step build-service-jar "$LL_ROOT/service/mvnw" -f "$LL_ROOT/service/pom.xml" -B -q package -DskipTests
# --label on the command line: the legacy builder (no buildx here) takes it as the final layer.
step build-service-image docker build --build-arg "BASE_IMAGE=$base" --label "io.livenesslab.sources=$sources" \
  -t "$image" "$LL_ROOT/service"
log "built $image on $base"
