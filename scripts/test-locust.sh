#!/usr/bin/env bash
# Tests the Locust side (locust/): the locustfile swarming the real service jar, the report builder on
# recorded runs (verdict both ways), and the Pods tab in headless Chromium. Run by `scripts/test.sh
# locust`. Installs what it needs: the .venv with locust/requirements-dev.txt, the service jar (Maven
# wrapper, when missing) and Debian's chromium (driven by Playwright; no browser is ever downloaded).
#
# Usage: scripts/test-locust.sh [PYTEST-ARGS...]     e.g. -k pods_tab
#
# Environment (defaults):
#   LIVENESS_LAB_SCREENSHOTS=<pytest tmp>   where the Pods tab screenshot goes
# Uses 127.0.0.1 ports 18080-18083. Ends with pytest's "N passed" line.
# shellcheck source-path=SCRIPTDIR
set -o errexit -o nounset -o pipefail

LL_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib
# shellcheck source=lib/common.sh
. "$LL_LIB/common.sh"
# shellcheck source=lib/venv.sh
. "$LL_LIB/venv.sh"

# check_pins: the Locust base image tag, the Dockerfile's default and the locust pin agree.
check_pins() {
  local pinned dockerfile_base
  pinned=$(sed -n 's/^locust==//p' "$LL_ROOT/$LOCUST_REQUIREMENTS")
  [ "${LOCUST_BASE_IMAGE##*:}" = "$pinned" ] ||
    die "LOCUST_BASE_IMAGE $LOCUST_BASE_IMAGE (scripts/versions.env) does not match locust==$pinned ($LOCUST_REQUIREMENTS)" \
      "give both the same Locust version"
  dockerfile_base=$(sed -n 's/^ARG BASE_IMAGE=//p' "$LL_ROOT/locust/Dockerfile")
  [ "$dockerfile_base" = "$LOCUST_BASE_IMAGE" ] ||
    die "locust/Dockerfile BASE_IMAGE $dockerfile_base != LOCUST_BASE_IMAGE $LOCUST_BASE_IMAGE" "edit locust/Dockerfile"
  echo "pins: locust $pinned, base image $LOCUST_BASE_IMAGE"
}

# ensure_service_jar: the service's runnable jar, built with the Maven wrapper when it is not there.
ensure_service_jar() {
  LIVENESS_LAB_SERVICE_JAR=$LL_ROOT/service/target/liveness-lab-service.jar
  find_jdk
  if [ ! -f "$LIVENESS_LAB_SERVICE_JAR" ]; then
    step "build-service-jar" bash -c "cd '$LL_ROOT/service' && ./mvnw -B -ntp -q package -DskipTests"
  fi
  export LIVENESS_LAB_SERVICE_JAR JAVA_HOME
}

main() {
  case ${1:-} in
    -h | --help) sed -n '2,/^# shellcheck/{/^# shellcheck/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
  esac
  check_pins
  ensure_locust_venv dev
  ensure_service_jar
  ensure_pkg chromium chromium
  cd "$LL_ROOT/locust"
  "$LL_VENV/bin/python" -m pytest -v "$@"
}

main "$@"
