#!/usr/bin/env bash
# Tests the Locust side (locust/): first that the pins agree (the base image tag, the Dockerfile's
# default and the locust pin; the lock files and the requirements files), then the locustfile swarming
# the real service jar, the report builder on recorded runs (verdict both ways), and the Pods tab in
# headless Chromium, the Live tab's JSON on recorded API JSON and the tab itself in headless Chromium.
# Run by `scripts/test.sh locust`. Installs what it needs: the .venv from locust/requirements-dev.lock,
# the service jar (Maven wrapper, when missing), Debian's chromium (driven by Playwright; no browser is
# ever downloaded) and the web UI bundle (scripts/build-webui.sh: Node.js and the npm registry).
#
# Usage: scripts/test-locust.sh [PYTEST-ARGS...]     e.g. -k pods_tab
#
# Environment (defaults):
#   LIVENESS_LAB_SCREENSHOTS=<pytest tmp>   where the Pods tab screenshot goes
# Uses 127.0.0.1 ports 18080-18085. Ends with pytest's "N passed" line; with LIVENESS_LAB_JUNIT=DIR (set
# by scripts/test.sh) pytest also writes DIR/pytest.xml.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/venv.sh"; . "$LL_LIB/webui.sh"
. "$LL_ROOT/scripts/libexec/macos-userland.sh"

# check_pins: the Locust base image tag, the Dockerfile's default and the locust pin agree, and the lock
# files hold the requirements files' pins (the image and the .venv install the locks, so a pin changed
# without regenerating them would change nothing).
check_pins() {
  local pinned dockerfile_base
  pinned=$(sed -n 's/^locust==//p' "$LL_ROOT/$LOCUST_REQUIREMENTS")
  [ "${LOCUST_BASE_IMAGE##*:}" = "$pinned" ] ||
    die "LOCUST_BASE_IMAGE $LOCUST_BASE_IMAGE (scripts/versions.env) does not match locust==$pinned ($LOCUST_REQUIREMENTS)" \
      "give both the same Locust version"
  dockerfile_base=$(sed -n 's/^ARG BASE_IMAGE=//p' "$LL_ROOT/locust/Dockerfile")
  [ "$dockerfile_base" = "$LOCUST_BASE_IMAGE" ] ||
    die "locust/Dockerfile BASE_IMAGE $dockerfile_base != LOCUST_BASE_IMAGE $LOCUST_BASE_IMAGE" "edit locust/Dockerfile"
  [ "$(sed -n 's/^ARG NODE_IMAGE=//p' "$LL_ROOT/locust/Dockerfile")" = "$NODE_IMAGE" ] ||
    die "locust/Dockerfile NODE_IMAGE differs from NODE_IMAGE $NODE_IMAGE (scripts/versions.env)" "edit locust/Dockerfile"
  # With macOS's awk (BWK's): cluster-up runs this check before every Locust image build, on users' Macs.
  local PATH=$PATH macos
  ensure_pkg original-awk original-awk
  macos=$(mktemp -d)
  make_userland "$macos"
  PATH=$macos:$PATH
  { locust_lock_problems "$LL_ROOT/$LOCUST_LOCK" "$LL_ROOT/$LOCUST_REQUIREMENTS" &&
    locust_lock_problems "$LL_ROOT/$LOCUST_DEV_LOCK" "$LL_ROOT/$LOCUST_REQUIREMENTS" "$LL_ROOT/$LOCUST_DEV_REQUIREMENTS" \
      "$LL_ROOT/$LOCUST_LOCK"; } ||
    die "the lock files do not match the requirements files (above)" \
      "regenerate them: bash -c '. scripts/lib/common.sh && . scripts/lib/venv.sh && lock_locust_requirements'"
  check_lock_check
  echo "pins: (lock check with $(awk -version 2>&1 | head -n 1))"
  echo "pins: locust $pinned, base image $LOCUST_BASE_IMAGE; $(grep -c '^[a-z0-9]' "$LL_ROOT/$LOCUST_LOCK") packages in $LOCUST_LOCK," \
    "$(grep -c '^[a-z0-9]' "$LL_ROOT/$LOCUST_DEV_LOCK") in $LOCUST_DEV_LOCK, in step with the requirements"
  rm -rf "$macos"
}

# check_lock_check: the lock check catches what it is for, on copies: a pin moved without a new lock,
# a pin added, a lock without hashes.
check_lock_check() {
  local dir caught=0
  dir=$(mktemp -d)
  sed 's/^locust==.*/locust==2.0.0/' "$LL_ROOT/$LOCUST_REQUIREMENTS" >"$dir/moved.txt"
  { cat "$LL_ROOT/$LOCUST_REQUIREMENTS"; echo "six==1.17.0"; } >"$dir/added.txt"
  grep -v -e '--hash=' "$LL_ROOT/$LOCUST_LOCK" >"$dir/nohash.lock"
  locust_lock_problems "$LL_ROOT/$LOCUST_LOCK" "$dir/moved.txt" >/dev/null || caught=$((caught + 1))
  locust_lock_problems "$LL_ROOT/$LOCUST_LOCK" "$dir/added.txt" >/dev/null || caught=$((caught + 1))
  locust_lock_problems "$dir/nohash.lock" "$LL_ROOT/$LOCUST_REQUIREMENTS" >/dev/null || caught=$((caught + 1))
  rm -r "$dir"
  [ "$caught" = 3 ] || die "the lock check caught $caught of 3 planted differences" "fix locust_lock_problems in scripts/lib/venv.sh"
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
    -h | --help) ll_usage; exit 0 ;;
  esac
  check_pins
  ensure_locust_venv dev
  ensure_service_jar
  ensure_pkg chromium chromium
  # The web UI bundle with the Live tab: the local Locust of the tests serves it (locustfile.py).
  build_locust_webui
  cd "$LL_ROOT/locust"
  # With scripts/test.sh, also pytest's JUnit report, which the suite's count reads.
  "$LL_VENV/bin/python" -m pytest -v ${LIVENESS_LAB_JUNIT:+--junitxml "$LIVENESS_LAB_JUNIT/pytest.xml"} "$@"
}

main "$@"
