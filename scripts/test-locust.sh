#!/usr/bin/env bash
# Tests the Locust side (locust/): that the pins agree (tests/test_pins.py: the Dockerfiles' base images,
# the locust pin, the lock files against the requirements files), the locustfile swarming
# the real service jar, the report builder on recorded runs (verdict both ways), and the Pods tab in
# headless Chromium, the Live tab's JSON on recorded API JSON and the tab itself in headless Chromium,
# the Workshop tab on a replayed run, and every stock tab of the UI build against the pinned Locust.
# Run by `scripts/test.sh locust`. Installs what it needs: the .venv from locust/requirements-dev.lock,
# the service jar (Maven wrapper, when missing), Debian's chromium (driven by Playwright; no browser is
# ever downloaded), the web UI bundle (scripts/build-webui.sh: Node.js and the npm registry) and helm (the
# workshop's tests render the chart with it, as the Locust master does: scripts/lib/tools.sh).
#
# Usage: scripts/test-locust.sh [PYTEST-ARGS...]     e.g. -k pods_tab
#
# Environment (defaults):
#   LIVENESS_LAB_SCREENSHOTS=<pytest tmp>   where the Pods tab screenshot goes
# Uses 127.0.0.1 ports 18080-18085 (and one free port the kernel picks, the master's for its worker). Ends with pytest's "N passed" line; with LIVENESS_LAB_JUNIT=DIR (set
# by scripts/test.sh) pytest also writes DIR/pytest.xml.
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/venv.sh"; . "$LL_LIB/webui.sh"; . "$LL_LIB/tools.sh"

# ensure_service_jar: the service's runnable jar, built with the Maven wrapper when it is not there. With
# LL_SERVICE_BESIDE=1 (scripts/test.sh runs the service suite's `mvnw verify` in service/ at the same time)
# it is built from a copy of the sources under the cache, so the two builds never share service/target.
ensure_service_jar() {
  local src=$LL_ROOT/service
  find_jdk
  if [ "${LL_SERVICE_BESIDE:-}" = 1 ]; then
    src=$LL_CACHE/build/service-beside
    rm -rf "$src" && mkdir -p "$src"
    (cd "$LL_ROOT/service" && cp -R pom.xml mvnw .mvn src "$src/")
  fi
  LIVENESS_LAB_SERVICE_JAR=$src/target/liveness-lab-service.jar
  if [ ! -f "$LIVENESS_LAB_SERVICE_JAR" ]; then
    step "build-service-jar" bash -c "cd '$src' && ./mvnw -B -ntp -q package -DskipTests"
  fi
  export LIVENESS_LAB_SERVICE_JAR JAVA_HOME
}

main() {
  case ${1:-} in
    -h | --help) ll_usage; exit 0 ;;
  esac
  ensure_locust_venv dev
  use_tools_bin
  ensure_helm
  ensure_service_jar
  ensure_pkg chromium chromium
  # The web UI bundle with the Live tab: the local Locust of the tests serves it (locustfile.py).
  build_locust_webui
  exec_pytest "$@"
}

main "$@"
