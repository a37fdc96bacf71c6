#!/usr/bin/env bash
# Quick checks of the cluster scripts that need no cluster and no Docker (a few seconds): the plan
# cluster-up.sh prints where a registry answers and where none does, argument errors, the kind config
# and its derived copies, the scripted runs' wrappers (usage errors exit 3), and shellcheck of every
# cluster script. The cluster lock and the swarm check are tested in locust/tests/test_orchestration.py;
# the real cluster by scripts/test-e2e.sh.
#
# Usage: scripts/test-cluster.sh [--help]
# Ends with "N passed, N failed"; exits non-zero when any check fails.
# The tests' subshells re-source versions.env: KIND_VERSION and the rest keep their values (SC2031).
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib disable=SC2031
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/lib/common.sh"; . "$ROOT/scripts/lib/checks.sh"; . "$ROOT/scripts/libexec/macos-userland.sh"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Everything below runs in macOS's userland as far as Debian can imitate it (BWK awk, BSD date, sed -i,
# wc and paste, no timeout, nproc or sha256sum: scripts/libexec/macos-userland.sh), because the scripts
# under test are the ones users run on their Macs.
ensure_pkg original-awk original-awk
make_userland "$OUT/macos-bin"
PATH=$OUT/macos-bin:$(path_without_gnu_only "$PATH" "$OUT/macos-farm")
export PATH
# Each check's output goes to a log, shown when it fails.
CHECK_LOGS=$OUT/logs

case ${1:-} in
  "") ;;
  -h | --help) ll_usage; exit 0 ;;
  *) die "unknown argument: $1" "see $0 --help" ;;
esac

# plan REGISTRY [ARGS...]: the dry-run plan with the registry answer forced.
plan() {
  local answer=$1
  shift
  LIVENESS_LAB_REGISTRY=$answer "$ROOT/scripts/cluster-up.sh" --dry-run "$@"
}

# shellcheck source=versions.env
. "$ROOT/scripts/versions.env"

plan_with_registry() {
  plan yes >"$OUT/p" && cat "$OUT/p" &&
    grep -q "mode: *registry" "$OUT/p" &&
    grep -qF "node image:    $KIND_NODE_IMAGE (pulled)" "$OUT/p" &&
    grep -qF "JRE base:      $JRE_BASE_IMAGE (pulled)" "$OUT/p" &&
    ! grep -q "disableDefaultCNI" "$OUT/p"
}

plan_without_registry() {
  plan no >"$OUT/p" && cat "$OUT/p" &&
    grep -q "mode: *airgap" "$OUT/p" &&
    grep -qF "node image:    $LOCAL_NODE_IMAGE:$KUBERNETES_VERSION (built here" "$OUT/p" &&
    grep -qF "JRE base:      $LOCAL_JRE_BASE_IMAGE (built here" "$OUT/p" &&
    grep -qF "Locust base:   $LOCAL_PYTHON_BASE_IMAGE (built here" "$OUT/p" &&
    grep -q "disableDefaultCNI" "$OUT/p"
}

airgap_flag_wins() { plan yes --airgap >"$OUT/p" && grep -q "mode: *airgap (--airgap given)" "$OUT/p"; }

# The automatic check must decide within its 20 s limit whatever the network does.
auto_decides() {
  ll_timeout 60 "$ROOT/scripts/cluster-up.sh" --dry-run >"$OUT/p" && grep -E "mode: *(registry|airgap)" "$OUT/p"
}

dry_run_changes_nothing() {
  local before after
  before=$(docker ps -aq 2>/dev/null | sort)
  plan no >/dev/null
  after=$(docker ps -aq 2>/dev/null | sort)
  [ "$before" = "$after" ]
}

bad_registry_setting_fails() {
  ! plan maybe >"$OUT/o" 2>"$OUT/e" && grep -q "LIVENESS_LAB_REGISTRY must be" "$OUT/e"
}

# unknown_argument_fails SCRIPT: exit 2, the error and its fix on stderr, nothing on stdout.
unknown_argument_fails() {
  local rc=0
  "$ROOT/scripts/$1" --no-such-flag >"$OUT/o" 2>"$OUT/e" || rc=$?
  cat "$OUT/e"
  [ "$rc" = 2 ] && [ ! -s "$OUT/o" ] && grep -q "unknown argument: --no-such-flag" "$OUT/e" && grep -q "fix:" "$OUT/e"
}

help_works() { "$ROOT/scripts/$1" --help >"$OUT/h" && grep -q "^Usage: scripts/$1" "$OUT/h"; }

# kind-config.yaml maps every NodePort of the chart (each `nodePort:` of chart/values.yaml: the variants'
# and Locust's), on 127.0.0.1 only; Locust's web UI on the host's 8089.
kind_config_ports() {
  local f=$ROOT/kind-config.yaml port ports
  grep -q '^name: liveness-lab$' "$f" && grep -q 'apiServerAddress: "127.0.0.1"' "$f" &&
    [ "$(grep -c 'role: control-plane' "$f")" = 1 ] && [ "$(grep -c 'role:' "$f")" = 1 ] || return 1
  ports=$(sed -n 's/^ *nodePort: \([0-9][0-9]*\)$/\1/p' "$ROOT/chart/values.yaml")
  [ -n "$ports" ] || { echo "no nodePort in chart/values.yaml"; return 1; }
  for port in $ports; do
    grep -A1 "containerPort: $port\b" "$f" | grep -q "hostPort: [0-9]" || { echo "nodePort $port is not mapped"; return 1; }
  done
  grep -A1 'containerPort: 30089\b' "$f" | grep -q 'hostPort: 8089$' || { echo "the Locust web UI is not on 8089"; return 1; }
  [ "$(grep -c 'listenAddress: "127.0.0.1"' "$f")" = "$(grep -c 'containerPort:' "$f")" ]
}

# render MODE: the derived kind config of cluster.sh for MODE.
render() { in_tools_lib render_kind_config "$1" "$OUT/kind-$1.yaml"; }

derived_config_airgap() {
  render airgap && cat "$OUT/kind-airgap.yaml" &&
    grep -A1 '^networking:$' "$OUT/kind-airgap.yaml" | grep -q '^  disableDefaultCNI: true$' &&
    yaml_parses "$OUT/kind-airgap.yaml"
}

derived_config_registry() {
  render registry && ! grep -q disableDefaultCNI "$OUT/kind-registry.yaml" &&
    if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
      ! grep -q failCgroupV1 "$OUT/kind-registry.yaml"
    else
      grep -q 'failCgroupV1: false' "$OUT/kind-registry.yaml"
    fi && yaml_parses "$OUT/kind-registry.yaml"
}

# yaml_parses FILE: a YAML parser accepts it (PyYAML when present; else only the shape is checked).
yaml_parses() {
  if python3 -c 'import yaml' 2>/dev/null; then
    python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d["kind"] == "Cluster"' "$1"
  fi
}

# in_tools_lib COMMAND...: COMMAND in a subshell that has sourced the tool and cluster libraries, with
# a new clone's .tools in $OUT/clone, the cache in $OUT/cache and logs in $OUT/logs.
in_tools_lib() {
  (
    export LL_CACHE=$OUT/cache LL_LOGS=$OUT/logs LL_TOOLS=$OUT/clone/.tools
    # shellcheck source=lib/tools.sh
    . "$ROOT/scripts/lib/tools.sh"
    # shellcheck source=lib/cluster.sh
    . "$ROOT/scripts/lib/cluster.sh"
    use_tools_bin
    "$@"
  )
}

# The rule for using the user's own tools (docs/laptop.md, "kind, helm and kubectl"), one case per line: NAME VERSION ok|no.
compatibility_rule() {
  local name version want got fails=0
  while read -r name version want; do
    got=no
    in_tools_lib tool_compatible "$name" "$version" && got=ok
    [ "$got" = "$want" ] || { echo "$name $version: $got, want $want"; fails=1; }
  done <<EOF
kind v0.33.0 ok
kind v0.34.1 ok
kind v0.32.0 no
kind v1.0.0 no
helm v3.16.4 no
helm v3.17.0 ok
helm v3.22.0 ok
helm v4.0.1 ok
kubectl v1.36.3 ok
kubectl v1.37.0 ok
kubectl v1.38.0 ok
kubectl v1.35.9 no
kubectl v1.39.0 no
kubectl garbage no
EOF
  return "$fails"
}

# fake_release DIR VERSION: a kind "release" (a script that reports VERSION) laid out as the official
# download under DIR, with its published checksum file.
fake_release() {
  local dir=$1/github.com/kubernetes-sigs/kind/releases/download/$KIND_VERSION file
  file=kind-$(uname -s | tr '[:upper:]' '[:lower:]')-amd64
  mkdir -p "$dir"
  printf '#!/bin/sh\necho "kind %s go1 linux/amd64"\n' "$2" >"$dir/$file"
  (cd "$dir" && ll_sha256 "$file" >"$file.sha256sum")
}

# serve DIR: a file server for DIR on a free port of 127.0.0.1; sets SERVER_PID and SERVER_URL.
serve() {
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 -m http.server --bind 127.0.0.1 --directory "$1" "$port" >"$OUT/http.log" 2>&1 &
  SERVER_PID=$!
  SERVER_URL=http://127.0.0.1:$port
  local _
  for _ in $(seq 50); do curl -s -o /dev/null "$SERVER_URL/" && return 0; sleep 0.1; done
  echo "file server did not start"
  return 1
}

# A tool that is missing is downloaded from its release (here a local mirror of it) and its SHA-256 is
# checked: a matching file is linked into .tools/bin, a file that does not match its published
# checksum is refused and nothing is linked.
download_verified() {
  local rc=0 release=$OUT/release
  rm -rf "$OUT/cache" "$OUT/clone" "$release"
  fake_release "$release" "$KIND_VERSION"
  serve "$release" || return 1
  PATH=/usr/bin:/bin LIVENESS_LAB_DOWNLOAD_MIRROR=$SERVER_URL LL_TOOL_DOWNLOADS=yes in_tools_lib ensure_kind 2>&1 &&
    [ "$("$OUT/clone/.tools/bin/kind" version)" = "kind $KIND_VERSION go1 linux/amd64" ] || rc=1
  rm -rf "$OUT/cache" "$OUT/clone"
  echo "tampered" >>"$(ls "$release"/github.com/kubernetes-sigs/kind/releases/download/*/kind-*[!m])"
  if PATH=/usr/bin:/bin LIVENESS_LAB_DOWNLOAD_MIRROR=$SERVER_URL LL_TOOL_DOWNLOADS=yes in_tools_lib ensure_kind 2>"$OUT/e"; then
    rc=1
  fi
  cat "$OUT/e" "$OUT"/logs/download-kind-*.log
  grep -q "could not download kind" "$OUT/e" && grep -q "SHA-256 mismatch" "$OUT"/logs/download-kind-*.log &&
    [ ! -e "$OUT/clone/.tools/bin/kind" ] || rc=1
  kill "$SERVER_PID"
  return "$rc"
}

# A laptop: no GNU timeout, no Go, other versions of kind, helm and kubectl on PATH, a registry that
# answers: the plan takes the registry path and says where every tool comes from, none built with Go.
laptop_plan() {
  local bin=$OUT/laptop-bin cmd
  rm -rf "$bin" && mkdir -p "$bin"
  # The host's commands, less the GNU timeout and Go.
  for cmd in bash sh env cat sed awk grep tr cut sort head tail uname mkdir rm ln dirname basename id \
    python3 curl git date mktemp ls wc pwd readlink sleep; do
    ln -s "$(command -v "$cmd")" "$bin/$cmd"
  done
  printf '#!/bin/sh\necho "kind v0.31.0 go1 darwin/arm64"\n' >"$bin/kind"
  printf '#!/bin/sh\necho "v4.0.1"\n' >"$bin/helm"
  printf '#!/bin/sh\necho "Client Version: v1.29.4"\n' >"$bin/kubectl"
  chmod +x "$bin"/kind "$bin"/helm "$bin"/kubectl
  PATH=$bin LIVENESS_LAB_CACHE=$OUT/empty-cache LIVENESS_LAB_REGISTRY=yes "$ROOT/scripts/cluster-up.sh" --dry-run >"$OUT/p" || return 1
  cat "$OUT/p"
  grep -q "mode: *registry" "$OUT/p" &&
    grep -qE "^  kind: +$KIND_VERSION: download https://github.com/kubernetes-sigs/kind/releases/download/$KIND_VERSION/kind-" "$OUT/p" &&
    grep -qE "^  helm: +v4.0.1 on PATH" "$OUT/p" &&
    grep -qE "^  kubectl: +$KUBERNETES_VERSION: download https://dl.k8s.io/release/$KUBERNETES_VERSION/bin/" "$OUT/p" &&
    ! grep -qi "build with go" "$OUT/p"
}

# Off root Debian (here: as the user nobody), a registry check that fails stops with what was tried and
# the choice, instead of switching to the local builds.
no_silent_switch() {
  local rc=0
  command -v setpriv >/dev/null || { echo "setpriv (util-linux) is missing"; return 1; }
  cp -r "$ROOT" "$OUT/repo-copy" && chmod -R a+rX "$OUT" && chmod a+x "$(dirname "$OUT")"
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp LIVENESS_LAB_CACHE=/tmp/ll-nobody-cache \
    "$OUT/repo-copy/scripts/cluster-up.sh" --dry-run >"$OUT/o" 2>"$OUT/e" || rc=$?
  cat "$OUT/e"
  [ "$rc" = 1 ] && grep -q "the registry check failed" "$OUT/e" &&
    grep -q "LIVENESS_LAB_REGISTRY=yes" "$OUT/e" && grep -q "LIVENESS_LAB_REGISTRY=no" "$OUT/e" &&
    ! grep -q "mode:" "$OUT/o"
}

# ensure_kind_offline: ensure_kind for a new clone in $OUT/clone, with the cache in $OUT/cache and Go
# taken off PATH (so that a build, if attempted, fails).
ensure_kind_offline() {
  # A closed port on 127.0.0.1 for the download: nothing leaves this machine.
  LIVENESS_LAB_DOWNLOAD_MIRROR=http://127.0.0.1:9 PATH=/usr/bin:/bin in_tools_lib ensure_kind
}

# A tool in the version-keyed cache is linked into a new clone's .tools/bin, not built again; a cached
# binary of another version is not used; without the cached binary the build is attempted (and fails
# here for want of Go), which shows that the cache is what skipped it.
# shellcheck disable=SC2031 # the subshell re-reads versions.env; KIND_VERSION is the same value
cached_tool_reused() {
  local cache=$OUT/cache version
  for version in "$KIND_VERSION" v0.0.1; do
    mkdir -p "$cache/kind-$version/bin"
    printf '#!/bin/sh\necho "kind %s go1 linux/amd64"\n' "$version" >"$cache/kind-$version/bin/kind"
    chmod +x "$cache/kind-$version/bin/kind"
  done
  ensure_kind_offline &&
    [ "$(readlink "$OUT/clone/.tools/bin/kind")" = "$cache/kind-$KIND_VERSION/bin/kind" ] &&
    [ ! -e "$OUT/logs/build-kind-$KIND_VERSION.log" ] || return 1
  rm -rf "${cache:?}/kind-$KIND_VERSION" "$OUT/clone"
  ! ensure_kind_offline 2>"$OUT/e" && cat "$OUT/e" && grep -q "'go' is not installed" "$OUT/e"
}

# The scripted runs' wrappers: a usage error is exit 3 (never 1, a verdict), --help names the flags and
# the exit codes. The lock and the swarm check are Python now: locust/tests/test_orchestration.py.
demo_arguments() {
  local rc=0 script
  for script in demo.sh lab.sh; do
    rc=0
    "$ROOT/scripts/$script" --no-such-flag >"$OUT/o" 2>"$OUT/e" || rc=$?
    cat "$OUT/e"
    [ "$rc" = 3 ] && grep -q "error: unknown argument: --no-such-flag" "$OUT/e" && grep -q "fix: see" "$OUT/e" || return 1
    "$ROOT/scripts/$script" --help | grep -q "3 *usage or set-up error" || return 1
  done
  "$ROOT/scripts/demo.sh" --help | grep -q -- "--no-stop-swarm"
}

# macos_userland: the suite runs where macOS's awk would (BWK awk, which refuses the "[=" bracket GNU awk
# took), without GNU's timeout and sha256sum, with BSD date's -r.
macos_userland() {
  awk -version 2>&1 | grep -q "awk version" || { echo "awk is not BWK awk: $(command -v awk)"; return 1; }
  ! awk 'BEGIN { x = "a[b"; sub(/[[=].*/, "", x) }' 2>/dev/null || { echo "BWK awk accepted '[='"; return 1; }
  local tool
  for tool in timeout sha256sum nproc; do
    if command -v "$tool" >/dev/null; then echo "GNU-only $tool on PATH: $(command -v "$tool")"; return 1; fi
  done
  [ "$(date -u -r 86400 +%Y-%m-%d)" = 1970-01-02 ] && ! date -d @0 >/dev/null 2>&1
}

# airgap_refused_off_debian: the no-registry path stops at once on macOS, saying why and what to do.
airgap_refused_off_debian() {
  mkdir -p "$OUT/darwin"
  # shellcheck disable=SC2016 # a script's text
  printf '#!/bin/sh\n[ "$1" = -s ] && { echo Darwin; exit 0; }\nexec /usr/bin/uname "$@"\n' >"$OUT/darwin/uname"
  chmod +x "$OUT/darwin/uname"
  ! PATH=$OUT/darwin:$PATH plan no >"$OUT/o" 2>"$OUT/e" && cat "$OUT/e" &&
    grep -q "as root on Debian-like Linux only; this is Darwin" "$OUT/e" && grep -q "LIVENESS_LAB_REGISTRY unset or =yes" "$OUT/e" &&
    ! PATH=$OUT/darwin:$PATH plan yes --airgap >/dev/null 2>&1
}

# mac_files_change_no_hash: the files Finder leaves in a clone (.DS_Store, AppleDouble ._*) change no
# image's source hash (else every cluster-up on a Mac would rebuild, reload and restart every pod), and no
# two paths differ only in case (a Mac's file system does not tell them apart).
mac_files_change_no_hash() {
  local before after same_case
  before=$(ll_sources_hash locust service)
  touch "$ROOT/locust/.DS_Store" "$ROOT/service/src/._Main.java"
  after=$(ll_sources_hash locust service)
  rm -f "$ROOT/locust/.DS_Store" "$ROOT/service/src/._Main.java"
  echo "sources hash without / with .DS_Store and ._Main.java: $before / $after"
  [ -n "$before" ] && [ "$before" = "$after" ] || return 1
  same_case=$(cd "$ROOT" && git ls-files | LC_ALL=C sort -f | uniq -di)
  [ -z "$same_case" ] || { echo "paths that differ only in case: $same_case"; return 1; }
}

shellcheck_clean() {
  command -v shellcheck >/dev/null || { echo "shellcheck is not installed (apt-get install shellcheck)"; return 1; }
  (cd "$ROOT" && shellcheck -x scripts/cluster-up.sh scripts/cluster-down.sh scripts/test-e2e.sh \
    scripts/test-cluster.sh scripts/lib/*.sh scripts/libexec/*.sh)
}

check "dry-run plan where a registry answers" plan_with_registry || true
check "dry-run plan where no registry answers" plan_without_registry || true
check "--airgap builds locally even where a registry answers" airgap_flag_wins || true
check "automatic registry check decides" auto_decides || true
check "dry-run starts no container" dry_run_changes_nothing || true
check "LIVENESS_LAB_REGISTRY=maybe is refused" bad_registry_setting_fails || true
check "cluster-up.sh: unknown argument" unknown_argument_fails cluster-up.sh || true
check "cluster-down.sh: unknown argument" unknown_argument_fails cluster-down.sh || true
check "test-e2e.sh: unknown argument" unknown_argument_fails test-e2e.sh || true
check "cluster-up.sh --help" help_works cluster-up.sh || true
check "cluster-down.sh --help" help_works cluster-down.sh || true
check "test-e2e.sh --help" help_works test-e2e.sh || true
check "kind-config.yaml maps the chart's NodePorts on 127.0.0.1" kind_config_ports || true
check "derived kind config, air-gapped" derived_config_airgap || true
check "derived kind config, registry" derived_config_registry || true
check "tools cached by version are reused by a new clone" cached_tool_reused || true
check "which kind, helm and kubectl on PATH are used" compatibility_rule || true
check "a missing tool is downloaded and its SHA-256 checked" download_verified || true
check "laptop dry-run: registry path, no tool built with Go" laptop_plan || true
check "off root Debian a failed registry check stops" no_silent_switch || true
check "demo.sh, lab.sh: unknown argument exits 3, --help says the exit codes" demo_arguments || true
check "the scripts meet macOS's userland here (BWK awk, BSD date, no GNU-only tools)" macos_userland || true
check "the no-registry path refuses macOS, says why and what to do" airgap_refused_off_debian || true
check "files a Mac makes in a clone change no source hash; no case-only path clash" mac_files_change_no_hash || true
check "shellcheck" shellcheck_clean || true

checks_summary 0
