#!/usr/bin/env bats
# scripts/lib/webui.sh's bundle of the web UI (build_locust_webui), into a copy's dist/ (LL_WEBUI), never the
# tree's own: a clone whose sources a clone before it built takes the bundle from the cache, without Node.js.

load test_helper

setup() {
  # shellcheck source=../lib/common.sh
  . "$ROOT/scripts/lib/common.sh"
  # shellcheck source=../lib/webui.sh
  . "$ROOT/scripts/lib/webui.sh"
  export LL_CACHE=$BATS_TEST_TMPDIR/cache
  LL_WEBUI=$BATS_TEST_TMPDIR/webui
  mkdir -p "$LL_WEBUI" "$BATS_TEST_TMPDIR/stubs"
  cp "$ROOT/locust/webui/package-lock.json" "$LL_WEBUI/"
  # Node.js and npm that fail the test if anything runs them.
  for tool in node npm; do
    printf '#!/bin/sh\necho "%s was run: $*" >&2\nexit 99\n' "$tool" >"$BATS_TEST_TMPDIR/stubs/$tool"
    chmod +x "$BATS_TEST_TMPDIR/stubs/$tool"
  done
  PATH=$BATS_TEST_TMPDIR/stubs:$PATH
}

@test "a bundle of the same sources in the cache is copied in, with its stamp, and nothing is built" {
  local want
  want=$(ll_sources_hash locust/webui)
  mkdir -p "$LL_CACHE/webui-dist-$want"
  echo "<html>cached</html>" >"$LL_CACHE/webui-dist-$want/index.html"
  echo "$want" >"$LL_CACHE/webui-dist-$want/.sources"
  run build_locust_webui
  assert_success
  assert_output --partial "from the cache ($LL_CACHE/webui-dist-$want)"
  refute_output --partial "was run"
  assert_equal "$(cat "$LL_WEBUI/dist/index.html")" "<html>cached</html>"
  run build_locust_webui # the stamp now says it is current
  assert_output --partial "is up to date (sources $want)"
}

@test "a bundle of other sources in the cache is not taken: the build runs (here, on the stub node that fails)" {
  mkdir -p "$LL_CACHE/webui-dist-0000000000000000"
  echo "<html>other</html>" >"$LL_CACHE/webui-dist-0000000000000000/index.html"
  run build_locust_webui
  assert_failure
  assert_output --partial "cannot build the web UI bundle: node does not run"
  [ ! -e "$LL_WEBUI/dist/index.html" ]
}
