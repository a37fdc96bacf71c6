#!/usr/bin/env bats
# What the scripts meet on a Mac. First in a user's clone: the files Finder leaves in it change no image's
# source hash, in a git clone or a ZIP download (ll_sources_hash, scripts/lib/common.sh), and no two paths
# differ only in case. Then the user's scripts run as a Mac runs them (test_helper.bash's on_mac: uname
# Darwin arm64, id 501, /bin/bash 3.2 first on PATH with Homebrew's bash chosen by hand, the Python a Mac
# user installs, BSD's tools), through the branches a Mac takes: the Docker Desktop messages, the brew
# hints, the no-registry path refused, the tools' darwin/arm64 downloads, the JDK from java_home. Docker
# and kind are stand-ins (stub_docker): a Docker Desktop that is stopped, or one that reports its VM. The
# simulation itself (scripts/tests/macos_userland.py) is tested by scripts/tests/test_macos_userland.py.

load test_helper

setup_file() {
  use_macos_userland
  use_a_mac
}

setup() {
  STUBS=$BATS_TEST_TMPDIR/stubs
  stub_docker "$STUBS"
  MAC_PATH=$STUBS:$MAC_PATH
  export LIVENESS_LAB_CACHE=$BATS_TEST_TMPDIR/cache LIVENESS_LAB_LOGS=$BATS_TEST_TMPDIR/logs
}

teardown() {
  rm -f "$ROOT/locust/.DS_Store" "$ROOT/service/src/._Main.java" "$ROOT/locust/tests/_hash_probe.py" "$ROOT/locust/liveness_lab/base/_hash_probe.py"
}

# Else every cluster-up on a Mac would rebuild, reload and restart every pod.
@test "files Finder makes in a clone (.DS_Store, ._*) change no image's source hash" {
  local before after
  # shellcheck disable=SC2016 # the program is for the Mac's bash
  before=$(on_mac_bash '. "$1/scripts/lib/common.sh" && ll_sources_hash locust service' "$ROOT")
  [ -n "$before" ]
  touch "$ROOT/locust/.DS_Store" "$ROOT/service/src/._Main.java"
  # shellcheck disable=SC2016
  after=$(on_mac_bash '. "$1/scripts/lib/common.sh" && ll_sources_hash locust service' "$ROOT")
  assert_equal "$after" "$before"
}

# GitHub's "Download ZIP" has no .git: the hash comes from find, which must leave out what .gitignore does.
@test "outside a git clone (a ZIP download), Finder's files, the demo's __pycache__ and webui/dist change no source hash" {
  local copy=$BATS_TEST_TMPDIR/zip before after
  mkdir -p "$copy"
  git -C "$ROOT" archive HEAD locust service | tar -x -C "$copy"
  cp -R "$ROOT/scripts" "$ROOT/.gitignore" "$copy/" # the scripts under test, as they are in this tree
  run git -C "$copy" rev-parse --is-inside-work-tree
  assert_failure # else the git path is what would be tested
  # shellcheck disable=SC2016 # the program is for the Mac's bash
  before=$(on_mac_bash 'cd "$1" && . scripts/lib/common.sh && ll_sources_hash locust service' "$copy")
  [ -n "$before" ]
  mkdir -p "$copy/locust/liveness_lab/__pycache__" "$copy/locust/webui/dist" "$copy/locust/wheels"
  touch "$copy/locust/.DS_Store" "$copy/service/src/._Main.java" "$copy/locust/liveness_lab/__pycache__/demo.cpython-312.pyc" \
    "$copy/locust/webui/dist/index.html" "$copy/locust/wheels/gevent-26.9.0-cp312-cp312-macosx_11_0_universal2.whl"
  # shellcheck disable=SC2016
  after=$(on_mac_bash 'cd "$1" && . scripts/lib/common.sh && ll_sources_hash locust service' "$copy")
  assert_equal "$after" "$before"
  echo "changed" >>"$copy/locust/locustfile.py" # a source file still counts
  # shellcheck disable=SC2016
  run on_mac_bash 'cd "$1" && . scripts/lib/common.sh && ll_sources_hash locust service' "$copy"
  refute_output "$before"
}

# Else a change to a test or to the lab's own code rebuilds the Locust image (a minute and a half) and
# restarts its pods at the next cluster-up, though nothing in the image changed.
@test "the Locust image's sources are what locust/.dockerignore lets in: a new test changes no hash, a new module does" {
  local before after
  # shellcheck disable=SC2016 # the program is for the Mac's bash
  local hash='. "$1/scripts/lib/common.sh" && mapfile -t c < <(ll_context_paths locust) && ll_sources_hash "${c[@]}"'
  before=$(on_mac_bash "$hash" "$ROOT")
  [ -n "$before" ]
  echo "def test_nothing(): pass" >"$ROOT/locust/tests/_hash_probe.py"
  after=$(on_mac_bash "$hash" "$ROOT")
  assert_equal "$after" "$before"
  echo "X = 1" >"$ROOT/locust/liveness_lab/base/_hash_probe.py"
  run on_mac_bash "$hash" "$ROOT"
  assert_success
  refute_output "$before"
}

# A Mac's file system does not tell them apart.
@test "no two paths of the repository differ only in case" {
  run bash -c "cd '$ROOT' && git ls-files | LC_ALL=C sort -f | uniq -di"
  assert_success
  assert_output ""
}

@test "the simulated Mac: Darwin on arm64, user 501, bash 3.2 first on PATH, Homebrew's bash chosen by hand" {
  # shellcheck disable=SC2016 # a program for the Mac's sh
  run env PATH="$MAC_PATH" sh -c 'uname -s; uname -m; id -u; bash -c "echo \$BASH_VERSION"; python3 -c "import sys; print(sys.version_info[:2])"'
  assert_success
  assert_line --index 0 Darwin
  assert_line --index 1 arm64
  assert_line --index 2 501
  assert_line --index 3 --regexp '^3\.2\.[0-9]+\(' # the stand-in's 3.2.57, or LIVENESS_LAB_SIM_BASH32's
  assert_line --index 4 "(3, 12)"
  # shellcheck disable=SC2016,SC2153 # a program for that bash; MAC_BASH comes from use_a_mac
  run "$MAC_BASH" -c 'echo "${BASH_VERSINFO[0]}"'
  [ "$output" -ge 5 ] || fail "the bash chosen by hand is $output"
}

# Issue 41, trap 1: the check passed in the bash chosen by hand, then the steps and the heartbeat started
# `bash` from PATH: 3.2, after minutes of pulls.
@test "bash 3.2 first on PATH, Homebrew's chosen by hand: the steps, child scripts and the heartbeat run the chosen bash" {
  # shellcheck disable=SC2016 # the program is for the Mac's bash
  run on_mac_bash '. "$1/scripts/lib/common.sh"
    LIVENESS_LAB_HEARTBEAT=1 step slow sleep 3
    step child "$1/scripts/build-webui.sh" --help
    step inner bash -c "echo inner bash \${BASH_VERSINFO[0]}.\${BASH_VERSINFO[1]}"
    cat "$LL_LOGS/child.log" "$LL_LOGS/inner.log"' "$ROOT"
  assert_success
  assert_output --partial "slow still running"
  assert_output --partial "Usage: scripts/build-webui.sh"
  assert_output --regexp "inner bash ([5-9]|4\.[1-9])"
  refute_output --partial "needs bash >= 4"
}

@test "cluster-up with bash 3.2 itself: stops at once, naming brew and the bash to choose" {
  run env PATH="$MAC_PATH" bash "$ROOT/scripts/cluster-up.sh" --dry-run
  assert_failure 1
  assert_output --partial "needs bash >= 4.1; this is bash 3.2"
  assert_output --partial "brew install bash"
  assert_output --partial "/opt/homebrew/bin/bash"
}

# Issue 41, trap 3: `docker info` reports the VM kernel's MemTotal, a little under what Docker Desktop gave.
@test "Docker Desktop's memory: 4 GiB given (3.84 reported) passes, 3 GiB warns with the setting; 1 CPU warns" {
  # LIVENESS_LAB_REGISTRY=maybe stops cluster-up right after the resources check, before anything is done.
  STUB_INFO="4 4123000000" LIVENESS_LAB_REGISTRY=maybe run on_mac cluster-up.sh
  assert_failure 1
  assert_output --partial "docker: daemon answers"
  assert_output --partial "LIVENESS_LAB_REGISTRY must be yes, no or auto"
  refute_output --partial "warning:"
  STUB_INFO="4 3060000000" LIVENESS_LAB_REGISTRY=maybe run on_mac cluster-up.sh
  assert_output --partial "warning: Docker has 2.8 GiB of memory"
  assert_output --partial "the demo needs 4 GiB (Docker Desktop: Settings > Resources > Memory)"
  STUB_INFO="1 8300000000" LIVENESS_LAB_REGISTRY=maybe run on_mac cluster-up.sh
  assert_output --partial "warning: Docker has 1 CPU(s); the demo needs 2 (Docker Desktop: Settings > Resources > CPUs)"
  refute_output --partial "GiB of memory"
}

@test "Docker Desktop stopped: cluster-up says to start it" {
  run on_mac cluster-up.sh
  assert_failure 1
  assert_output --partial "error: no Docker daemon answers"
  assert_output --partial "start Docker Desktop (open -a Docker)"
}

@test "the no-registry path is refused on a Mac at once, saying why and what to do" {
  LIVENESS_LAB_REGISTRY=no run on_mac cluster-up.sh --dry-run
  assert_failure 1
  assert_output --partial "as root on Debian-like Linux only; this is Darwin"
  assert_output --partial "LIVENESS_LAB_REGISTRY unset or =yes"
  run on_mac cluster-up.sh --dry-run --airgap
  assert_failure 1
  assert_output --partial "this is Darwin"
}

@test "a Mac whose registry check fails stops, offering both choices (not root: no local builds by itself)" {
  STUB_PULL=fails run on_mac cluster-up.sh --dry-run
  assert_failure 1
  assert_output --partial "the registry check failed"
  assert_output --partial "LIVENESS_LAB_REGISTRY=yes"
  refute_output --partial "mode:"
}

# The plan of a Mac with no kind, helm or kubectl of its own: the darwin/arm64 downloads, no runc wrapper
# (Docker Desktop's VM has CAP_SYS_RESOURCE), no cgroup v1 patch asked of a stopped daemon.
@test "a Mac's plan: the darwin/arm64 downloads, no runc wrapper, no cgroup v1 patch" {
  local bin=$BATS_TEST_TMPDIR/mac-bin cmd userland
  mkdir -p "$bin"
  for cmd in sh env cat tr cut head tail mkdir rm ln chmod dirname basename ls pwd sleep curl git; do
    ln -s "$(command -v "$cmd")" "$bin/$cmd"
  done
  # The simulated Mac's own folder (uname, id, bash 3.2, python3, BSD's tools), then those basics: no
  # kind, helm, kubectl or docker at all.
  userland=$(dirname "$(PATH=$MAC_PATH command -v uname)")
  MAC_PATH=$userland:$bin LIVENESS_LAB_REGISTRY=yes run on_mac cluster-up.sh --dry-run
  assert_success
  assert_output --regexp "  kind: +$KIND_VERSION: download https://github.com/kubernetes-sigs/kind/releases/download/$KIND_VERSION/kind-darwin-arm64"
  assert_output --regexp "  helm: +$HELM_VERSION: download https://get.helm.sh/helm-$HELM_VERSION-darwin-arm64.tar.gz"
  assert_output --regexp "  kubectl: +$KUBERNETES_VERSION: download https://dl.k8s.io/release/$KUBERNETES_VERSION/bin/darwin/arm64/kubectl"
  assert_output --regexp "runc wrapper: +not needed"
  refute_output --partial "failCgroupV1"
}

# Issue 41, trap 2: gevent has macOS wheels from CPython 3.12 on; with 3.11 pip compiles it.
@test "a Mac's Python 3.11: Locust's venv is refused before anything is installed, naming 3.12 and brew" {
  local py311
  py311=$(command -v python3.11) || skip "no python3.11 here"
  # shellcheck disable=SC2016 # the program is for the Mac's bash
  LIVENESS_LAB_PYTHON=$py311 run on_mac_bash '. "$1/scripts/lib/common.sh"; . "$LL_LIB/venv.sh"; LL_VENV=$2; ensure_locust_venv runtime' \
    "$ROOT" "$BATS_TEST_TMPDIR/venv"
  assert_failure 1
  assert_output --partial "Locust needs 3.12 or newer on macOS"
  assert_output --partial "brew install python"
  [ ! -e "$BATS_TEST_TMPDIR/venv" ] || fail "a venv was made"
  # shellcheck disable=SC2016
  LIVENESS_LAB_PYTHON=/nonexistent/python3 run on_mac_bash '. "$1/scripts/lib/common.sh"; . "$LL_LIB/venv.sh"; ensure_locust_venv runtime' "$ROOT"
  assert_failure 1
  assert_output --partial "install Python 3.12 or newer: brew install python"
}

# macOS keeps its JDKs where /usr/libexec/java_home says; find_jdk asks it (the test suite's JDK).
@test "a Mac's JDK: find_jdk takes /usr/libexec/java_home's answer" {
  [ "$(id -u)" = 0 ] && command -v unshare >/dev/null || skip "needs root and unshare, to put a java_home at /usr/libexec"
  local jdk='' d
  for d in /usr/lib/jvm/*; do
    [ -x "$d/bin/javac" ] && "$d/bin/java" -XshowSettings:properties -version 2>&1 |
      grep -qE 'java\.specification\.version = (2[1-9]|[3-9][0-9])' && { jdk=$d; break; }
  done
  [ -n "$jdk" ] || skip "no JDK >= 21 under /usr/lib/jvm"
  mkdir -p "$BATS_TEST_TMPDIR/Library/Java/JavaVirtualMachines/temurin-25.jdk/Contents" "$BATS_TEST_TMPDIR/libexec"
  ln -s "$jdk" "$BATS_TEST_TMPDIR/Library/Java/JavaVirtualMachines/temurin-25.jdk/Contents/Home"
  printf '#!/bin/sh\n# macOS java_home stand-in\necho %s\n' "$BATS_TEST_TMPDIR/Library/Java/JavaVirtualMachines/temurin-25.jdk/Contents/Home" \
    >"$BATS_TEST_TMPDIR/libexec/java_home"
  chmod +x "$BATS_TEST_TMPDIR/libexec/java_home"
  # shellcheck disable=SC2016 # the program is for the Mac's bash, in a mount namespace of its own
  run unshare -m "$MAC_BASH" -c 'mount --bind "$2" /usr/libexec && unset JAVA_HOME &&
    PATH=$MAC_PATH && . "$1/scripts/lib/common.sh" && find_jdk && echo "JAVA_HOME=$JAVA_HOME"' bash "$ROOT" "$BATS_TEST_TMPDIR/libexec"
  assert_success
  assert_output "JAVA_HOME=$BATS_TEST_TMPDIR/Library/Java/JavaVirtualMachines/temurin-25.jdk/Contents/Home"
}
