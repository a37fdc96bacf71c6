# shellcheck shell=bash
# The Locust web UI bundle with the Live tab (locust/webui/: Locust's locust-ui library and our tab),
# built with npm from package-lock.json into locust/webui/dist/ (git-ignored), which the Locust master
# serves with --build-path. Source after scripts/lib/common.sh.
#
# Where a container registry answers, the image builds the bundle in its own Node stage (NODE_IMAGE in
# scripts/versions.env) and nothing here is needed; where none does, the host builds it before the
# image build (as it downloads the offline wheels) and the image copies it in.

LL_WEBUI=$LL_ROOT/locust/webui

# node_problem: says why the host's Node.js cannot build the bundle and returns 1, or returns 0.
node_problem() {
  local version
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then echo "node and npm are not installed"; return 1; fi
  version=$(node -p 'process.versions.node' 2>/dev/null) || { echo "node does not run"; return 1; }
  # Vite 8 needs NODE_MIN_VERSION (20.19; Debian trixie's nodejs is 20.19.2, bookworm's 18 is too old).
  node -e 'const [a, b] = process.argv[1].split(".").map(Number), [x, y] = process.versions.node.split(".").map(Number);
           process.exit(x > a || (x === a && y >= b) ? 0 : 1)' "$NODE_MIN_VERSION" ||
    { echo "node is $version, the build needs $NODE_MIN_VERSION or newer"; return 1; }
}

# ensure_node: Node.js NODE_MIN_VERSION or newer with npm on this machine (Debian's packages when root
# on Debian and they are missing), or dies saying how to get it.
ensure_node() {
  local problem
  problem=$(node_problem) && return 0
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    is_root_debian && { log "installing Debian's nodejs and npm"; apt_install nodejs npm || true; }
    problem=$(node_problem) && return 0
  fi
  die "cannot build the web UI bundle: $problem" \
    "install Node.js $NODE_MIN_VERSION or newer with npm (Debian trixie: apt-get install nodejs npm; macOS: brew install node)"
}

# build_locust_webui: locust/webui/dist/ from package-lock.json (npm ci: exactly the locked packages,
# integrity checked; install scripts off, none is needed to bundle; again only when the lock changed).
# Skipped when dist/ was built from the current sources (its .sources stamp); copied from the cache when a
# clone of the same sources built it before ($LL_CACHE/webui-dist-<sources>: a fresh clone's npm ci and
# build take about a minute).
build_locust_webui() {
  local want lock cached
  want=$(ll_sources_hash locust/webui)
  lock=$(ll_sha256 <"$LL_WEBUI/package-lock.json" | cut -c1-16)
  cached=$LL_CACHE/webui-dist-$want
  if [ -f "$LL_WEBUI/dist/index.html" ] && [ "$(cat "$LL_WEBUI/dist/.sources" 2>/dev/null)" = "$want" ]; then
    log "web UI bundle locust/webui/dist is up to date (sources $want)"
    return 0
  fi
  if [ -f "$cached/index.html" ] && rm -rf "$LL_WEBUI/dist" && cp -R "$cached" "$LL_WEBUI/dist"; then
    log "web UI bundle locust/webui/dist from the cache ($cached)"
    return 0
  fi
  ensure_node
  (
    cd "$LL_WEBUI" || exit 1
    if [ "$(cat node_modules/.liveness-lab-lock 2>/dev/null)" != "$lock" ]; then
      npm ci --no-audit --no-fund --ignore-scripts --loglevel=error && echo "$lock" >node_modules/.liveness-lab-lock
    fi && npm run --silent build
  ) || die "the web UI bundle did not build (above)" "check that the npm registry answers (npm ping), then run it again"
  echo "$want" >"$LL_WEBUI/dist/.sources"
  log "built locust/webui/dist ($(du -sk "$LL_WEBUI/dist" | awk '{ print $1 }') KiB)"
  if ! { mkdir -p "$LL_CACHE" && rm -rf "$cached.new" "$cached" && cp -R "$LL_WEBUI/dist" "$cached.new" && mv "$cached.new" "$cached"; }; then
    warn "could not keep the web UI bundle in $cached (the next clone builds it again)"
  fi
}
