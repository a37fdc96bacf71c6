# shellcheck shell=bash source-path=SCRIPTDIR
# Shared helpers for liveness-lab's scripts: logging, timed steps with log files, tool checks, the
# JDK finder and the pinned versions. Source it; it changes nothing by itself.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_CACHE=~/.cache/liveness-lab   caches (Kubernetes binaries, images), keyed by version
#   LIVENESS_LAB_LOGS=<cache>/logs             one log file per step

# ll_check_bash MAJOR MINOR: stop unless this bash (${BASH_VERSINFO[0]}, [1]) is 4.1 or newer: macOS's
# /bin/bash is 3.2, and the scripts use mapfile and $BASHPID (4.0) and `exec {fd}>` (4.1: bash 4.0 dies
# at the first one with "exec: {fd}: not found").
ll_check_bash() {
  [ "$1" -gt 4 ] || { [ "$1" -eq 4 ] && [ "${2:-0}" -ge 1 ]; } && return 0
  printf 'error: liveness-lab needs bash >= 4.1; this is bash %s.%s (%s)\n' "$1" "${2:-0}" "${BASH:-?}" >&2
  # shellcheck disable=SC2016 # the command to type, not to expand
  printf '  fix: on macOS: brew install bash, then run it again with Homebrew'"'"'s bash first on PATH (%s) or by its path: /opt/homebrew/bin/bash %s (Intel Macs: /usr/local/bin/bash)\n' \
    'eval "$(brew shellenv)"' "$0" >&2
  return 1
}
ll_check_bash "${BASH_VERSINFO[0]:-0}" "${BASH_VERSINFO[1]:-0}" || exit 1

LL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The sourced libraries, this one's folder: a script sources the others as "$LL_LIB/NAME.sh".
LL_LIB=$LL_ROOT/scripts/lib
export LL_ROOT LL_LIB
# shellcheck source=scripts/versions.env
. "$LL_ROOT/scripts/versions.env"
LL_CACHE=${LIVENESS_LAB_CACHE:-$HOME/.cache/liveness-lab}
LL_LOGS=${LIVENESS_LAB_LOGS:-$LL_CACHE/logs}
LL_TOOLS=$LL_ROOT/.tools
export LL_CACHE LL_LOGS LL_TOOLS

# Where the release is, kind's: its cluster's context, namespace and Helm release. Their one place in
# bash: cluster-up.sh makes this release; the scripted runs' wrappers hand them, or the user's
# LIVENESS_LAB_KUBE_CONTEXT, LIVENESS_LAB_NAMESPACE and LIVENESS_LAB_RELEASE, to Python
# (exec_liveness_lab), whose defaults (locust/liveness_lab/base/coordinates.py) are the same.
LL_KUBE_CONTEXT=kind-$KIND_CLUSTER_NAME
LL_NAMESPACE=liveness-lab
LL_RELEASE=liveness-lab
export LL_KUBE_CONTEXT LL_NAMESPACE LL_RELEASE

# The Kubernetes release of this run: scripts/versions.env's default (KUBERNETES_VERSION, KIND_NODE_IMAGE,
# ETCD_VERSION, COREDNS_VERSION) until ll_select_kubernetes picks another minor's pins into those names;
# LL_KUBERNETES_FROM says who asked for it (an option, a setting, or the default).
# KUBERNETES_GO: the Go toolchain its build needs (empty: this machine's go). LL_DEFAULT_*: the default's
# pins, kept (the registry check asks for the default's node image where a minor has none published).
KUBERNETES_GO=
LL_KUBERNETES_FROM="the default"
LL_DEFAULT_KUBERNETES_VERSION=$KUBERNETES_VERSION LL_DEFAULT_NODE_IMAGE=$KIND_NODE_IMAGE
LL_DEFAULT_ETCD_VERSION=$ETCD_VERSION LL_DEFAULT_COREDNS_VERSION=$COREDNS_VERSION

# ll_kubernetes_minor RELEASE: "1.37" of v1.37.0 (or 1.37.0, v1.37, 1.38.0-beta.0); nothing when it is not one.
ll_kubernetes_minor() {
  local v=${1#v}
  v=$(printf '%s\n' "$v" | sed -n 's/^\([0-9][0-9]*\)\.\([0-9][0-9]*\)\(\.[0-9][0-9]*\(-[0-9A-Za-z.]*\)\{0,1\}\)\{0,1\}$/\1.\2/p')
  printf '%s' "$v"
}

# ll_kubernetes_pin MINOR KEY: scripts/versions.env's KEY (VERSION, NODE_IMAGE, ETCD, COREDNS, GO) of a
# supported MINOR: the unsuffixed key of the default minor, KUBERNETES_<M>_<m>_KEY of the others.
ll_kubernetes_pin() {
  local minor=$1 key=$2 name
  if [ "$minor" = "$(ll_kubernetes_minor "$LL_DEFAULT_KUBERNETES_VERSION")" ]; then
    case $key in
      VERSION) echo "$LL_DEFAULT_KUBERNETES_VERSION" ;;
      NODE_IMAGE) echo "$LL_DEFAULT_NODE_IMAGE" ;;
      ETCD) echo "$LL_DEFAULT_ETCD_VERSION" ;;
      COREDNS) echo "$LL_DEFAULT_COREDNS_VERSION" ;;
      GO) echo "" ;;
    esac
    return 0
  fi
  name=KUBERNETES_${minor//./_}_$key
  echo "${!name:-}"
}

# ll_kubernetes_supported: the supported minors as a user reads them: "1.35 (v1.35.8), ..., 1.38 (v1.38.0-beta.0,
# a pre-release)", the default marked.
ll_kubernetes_supported() {
  local minor release out=""
  for minor in ${KUBERNETES_MINORS//,/ }; do
    release=$(ll_kubernetes_pin "$minor" VERSION)
    case $release in
      "$LL_DEFAULT_KUBERNETES_VERSION") release+=", the default" ;;
      *-*) release+=", a pre-release" ;;
    esac
    out+="${out:+, }$minor ($release)"
  done
  echo "$out"
}

# ll_select_kubernetes WANT FROM: this run's Kubernetes is the supported minor WANT names ("1.36", "v1.36",
# or its pinned release "v1.36.4"): its pins go into KUBERNETES_VERSION, KIND_NODE_IMAGE (empty: kind
# publishes none), ETCD_VERSION, COREDNS_VERSION and KUBERNETES_GO, and LL_KUBERNETES_VERSION is exported
# (scripts/libexec/tools.py: the kubectl to match). Anything else stops with exit 2, naming FROM (the option
# or setting it came from) and the supported list.
ll_select_kubernetes() {
  local want=$1 from=$2 minor release
  minor=$(ll_kubernetes_minor "$want")
  case ",$KUBERNETES_MINORS," in
    *",$minor,"*) ;;
    *) LL_DIE_STATUS=2 die "$from: Kubernetes '$want' is not one cluster-up runs" \
      "give a minor or its release: $(ll_kubernetes_supported) (scripts/versions.env)" ;;
  esac
  release=$(ll_kubernetes_pin "$minor" VERSION)
  [ -n "$release" ] || die "scripts/versions.env lists $minor in KUBERNETES_MINORS but pins no KUBERNETES_${minor//./_}_VERSION"
  case v${want#v} in
    "v$minor" | "$release") ;;
    *) LL_DIE_STATUS=2 die "$from: Kubernetes $want is not pinned: cluster-up runs $minor as $release" \
      "--kubernetes-version $minor (or $release); the supported ones: $(ll_kubernetes_supported)" ;;
  esac
  KUBERNETES_VERSION=$release
  KIND_NODE_IMAGE=$(ll_kubernetes_pin "$minor" NODE_IMAGE)
  ETCD_VERSION=$(ll_kubernetes_pin "$minor" ETCD)
  COREDNS_VERSION=$(ll_kubernetes_pin "$minor" COREDNS)
  # shellcheck disable=SC2034 # read by gobuild.sh, cluster.sh and cluster-up.sh
  KUBERNETES_GO=$(ll_kubernetes_pin "$minor" GO) LL_KUBERNETES_FROM=$from
  LL_KUBERNETES_VERSION=$release
  export LL_KUBERNETES_VERSION
}

# ll_use_this_bash: `bash` names the bash that passed ll_check_bash for everything this script starts:
# the steps' scripts (`#!/usr/bin/env bash`), the heartbeat, Python's subprocesses. On a Mac whose PATH
# has /bin/bash 3.2 first (a shell that never ran `brew shellenv`: cron, an IDE's run configuration,
# `ssh mac cmd`) while Homebrew's bash was chosen by its path, they would start 3.2 and stop at its
# check, after the minutes of pulls before the first build. When PATH's bash is another one, a folder
# holding only a link to this one goes first on PATH (.tools/bash, git-ignored); nothing else moves.
ll_use_this_bash() {
  local this=$BASH
  case $this in /*) ;; *) this=$PWD/$this ;; esac
  [ "$(command -v bash 2>/dev/null)" -ef "$this" ] && return 0
  if ! { mkdir -p "$LL_TOOLS/bash" && ln -sfn "$this" "$LL_TOOLS/bash/bash"; }; then
    printf 'error: could not link %s into %s\n' "$this" "$LL_TOOLS/bash" >&2
    exit 1
  fi
  PATH=$LL_TOOLS/bash:$PATH
  export PATH
}
ll_use_this_bash

ll_now() { date +%s; }

# ll_usage: the running script's header comment (line 2 up to its first line of code: the any-shell check
# that bash runs it, then `set -o`), without the comment marks and shellcheck directives: every script's --help.
ll_usage() {
  awk 'NR == 1 { next } !/^#/ { exit } /^# shellcheck/ { next } { sub(/^# ?/, ""); print }' "$0"
}

LL_START=${LL_START:-$(ll_now)}

# log MESSAGE: a progress line on stderr, with the seconds since the script started.
log() { printf '[%4ss] %s\n' "$(($(ll_now) - LL_START))" "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
# die MESSAGE [HOW-TO-FIX]: the error and what to do about it, then exit LL_DIE_STATUS (default 1; the
# scripted runs' wrappers set 3, their code for set-up errors: locust/liveness_lab/base/exits.py).
die() {
  printf 'error: %s\n' "$1" >&2
  [ $# -gt 1 ] && printf '  fix: %s\n' "$2" >&2
  exit "${LL_DIE_STATUS:-1}"
}

# step NAME COMMAND...: runs COMMAND with its output in $LL_LOGS/NAME.log, says how long it took,
# and on failure prints the log's path and its last lines.
step() {
  local name=$1 started rc logfile
  shift
  mkdir -p "$LL_LOGS"
  logfile=$LL_LOGS/$name.log
  started=$(ll_now)
  log "$name ... (log: $logfile)"
  ll_start_heartbeat "$name" "$started"
  # eval: the command does not inherit the heartbeat's pipe (a daemon it started would hold it open).
  if eval '"$@"' '>"$logfile"' '2>&1' "$LL_HEARTBEAT_FD>&-"; then
    ll_heartbeat_stop
    log "$name done in $(($(ll_now) - started))s"
  else
    rc=$?
    ll_heartbeat_stop
    printf 'error: step %s failed (exit %s) after %ss; log: %s\n--- last lines ---\n' \
      "$name" "$rc" "$(($(ll_now) - started))" "$logfile" >&2
    tail -n 25 "$logfile" >&2
    return "$rc"
  fi
}

LL_HEARTBEAT_FD=
# ll_start_heartbeat NAME STARTED: every LIVENESS_LAB_HEARTBEAT seconds (default 60), says that a long
# step is still running, so a 10-minute build does not look like a hang. The heartbeat reads a pipe
# that this shell holds open: closing it (ll_heartbeat_stop, or this shell's death) ends it at once.
# No signals: a stopped subshell would run the script's EXIT trap, inherited from it.
ll_start_heartbeat() {
  # shellcheck disable=SC2016 # the program is for the inner bash
  exec {LL_HEARTBEAT_FD}> >(exec "$BASH" -c 'every=$1 name=$2 started=$3 base=$4
    while :; do
      read -r -t "$every" _ && continue
      [ $? -gt 128 ] || exit 0 # end of input, not a time-out: the step is over
      now=$(date +%s)
      printf "[%4ss]   %s still running (%ss)\n" "$((now - base))" "$name" "$((now - started))" >&2
    done' heartbeat "${LIVENESS_LAB_HEARTBEAT:-60}" "$1" "$2" "$LL_START")
}
ll_heartbeat_stop() {
  [ -n "$LL_HEARTBEAT_FD" ] || return 0
  exec {LL_HEARTBEAT_FD}>&-
  LL_HEARTBEAT_FD=
}

# kill_tree PID: ends a background job and everything it started (a plain kill would leave its
# children running: background jobs of scripts ignore Ctrl-C).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

# ll_install_hint DEBIAN-PACKAGES BREW-FORMULAE: the command that installs a missing tool here: Homebrew's
# on macOS, apt-get on Debian-like Linux.
ll_install_hint() {
  if [ "$(uname -s)" = Darwin ]; then
    echo "brew install $2"
  elif [ -r /etc/debian_version ]; then
    echo "apt-get install $1"
  else
    echo "install $1 with your distribution's package manager"
  fi
}

# need_cmd COMMAND HOW-TO-GET: stop with a clear message when COMMAND is missing.
need_cmd() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' is not installed" "$2"
}

# java_major JAVA: the feature version of a java binary (17, 21, 25...), or nothing.
java_major() {
  "$1" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n 1
}

# resolve_link FILE: FILE with every symlink followed (no GNU readlink -f on macOS).
resolve_link() {
  local file=$1 target n=0
  while [ -L "$file" ] && [ "$n" -lt 20 ]; do
    target=$(readlink "$file")
    case $target in /*) file=$target ;; *) file=$(dirname "$file")/$target ;; esac
    n=$((n + 1))
  done
  echo "$(cd "$(dirname "$file")" 2>/dev/null && pwd -P)/$(basename "$file")"
}

# find_jdk: sets JAVA_HOME to a JDK >= $JAVA_RELEASE for the test suite (images build the jar in a JDK
# image and need none): JAVA_HOME first, then the javac on PATH, macOS's java_home, /usr/lib/jvm/*.
find_jdk() {
  local candidate major javac
  javac=$(command -v javac 2>/dev/null || true)
  [ -z "$javac" ] || javac=$(dirname "$(dirname "$(resolve_link "$javac")")")
  for candidate in ${JAVA_HOME:+"$JAVA_HOME"} ${javac:+"$javac"} \
    $( [ -x /usr/libexec/java_home ] && /usr/libexec/java_home -v "$JAVA_RELEASE+" 2>/dev/null) /usr/lib/jvm/*; do
    [ -x "$candidate/bin/javac" ] || continue
    major=$(java_major "$candidate/bin/java")
    if [ -n "$major" ] && [ "$major" -ge "$JAVA_RELEASE" ]; then
      export JAVA_HOME=$candidate
      export PATH="$JAVA_HOME/bin:$PATH"
      return 0
    fi
  done
  die "no JDK >= $JAVA_RELEASE found (looked at JAVA_HOME='${JAVA_HOME:-}', javac on PATH, /usr/libexec/java_home and /usr/lib/jvm/*); the test suite needs one, cluster-up does not" \
    "install one, e.g. 'apt-get install openjdk-21-jdk-headless' (Debian trixie), 'brew install openjdk@21' (macOS) or a Temurin 21/25 JDK, or set JAVA_HOME to it"
}

# ll_sha256 [FILE...]: "HASH  NAME" lines for the files, or the hash of standard input, with
# sha256sum (Linux) or shasum (macOS).
ll_sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi # portable: checked first
}

# ll_find_sources PATH...: the files under PATHs (relative to the repository root, which is the current
# folder), NUL-separated, without what the repository's .gitignore files name (this one's and those one
# folder down): outside a git clone (GitHub's "Download ZIP") Finder's .DS_Store and ._* files, the
# demo's own __pycache__, webui/dist... would change the sources hash. "NAME/" prunes a folder of that
# name anywhere, "DIR/NAME/" that folder under the .gitignore's own; "NAME" leaves out files so named.
ll_find_sources() {
  local ignore dir pattern prune=() skip=()
  for ignore in .gitignore */.gitignore; do
    [ -f "$ignore" ] || continue
    dir=$(dirname "$ignore")
    while IFS= read -r pattern || [ -n "$pattern" ]; do
      case $pattern in "" | "#"*) continue ;; esac
      [ "$dir" = . ] || case $pattern in */*) pattern=$dir/$pattern ;; esac
      case $pattern in
        */*/) prune+=(-o -path "${pattern%/}") ;;
        */) prune+=(-o -name "${pattern%/}") ;;
        */*) skip+=(! -path "$pattern") ;;
        *) skip+=(! -name "$pattern") ;;
      esac
    done <"$ignore"
  done
  find "$@" \( -name .git ${prune[@]+"${prune[@]}"} \) -prune -o -type f ${skip[@]+"${skip[@]}"} -print0
}

# ll_sources_hash PATH...: 16 hex digits naming the contents of every file under PATHs (relative to the
# repository root), git-ignored files left out: an image built from them carries it as a label, so an
# unchanged source tree is never built or loaded again.
ll_sources_hash() {
  (
    cd "$LL_ROOT" || exit 1
    local f files=()
    while IFS= read -r -d '' f; do [ -f "$f" ] && files+=("$f"); done < <(
      if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard -- "$@"
      else
        ll_find_sources "$@"
      fi | LC_ALL=C sort -z -u)
    [ ${#files[@]} -gt 0 ] || exit 1
    ll_sha256 "${files[@]}"
  ) | ll_sha256 | cut -c1-16
}

# ll_context_paths DIR: what an image built from DIR (relative to the repository root) is made of, for its
# sources hash: the files and folders DIR's .dockerignore lets into the build context (its "!" lines after
# its "*"), those that exist, and the .dockerignore itself. Tests and tools beside them change no image.
ll_context_paths() {
  local pattern path
  echo "$1/.dockerignore"
  while IFS= read -r pattern || [ -n "$pattern" ]; do
    case $pattern in '!'*) ;; *) continue ;; esac
    for path in "$LL_ROOT/$1/"${pattern#!}; do # the pattern's glob, as Docker reads it
      path=${path%/} # a folder as a path that find's -name and -path (ll_find_sources) can prune
      [ -e "$path" ] && echo "${path#"$LL_ROOT"/}"
    done
  done <"$LL_ROOT/$1/.dockerignore"
}

# is_root_debian: true when this script may install Debian packages itself.
is_root_debian() { [ "$(id -u)" = 0 ] && [ -r /etc/debian_version ] && command -v apt-get >/dev/null; }

LL_APT_UPDATED=
# apt_install PACKAGE...: installs Debian packages (root on Debian only), running 'apt-get update' once.
apt_install() {
  is_root_debian || die "missing packages: $*" "install them with your package manager ($*)"
  if [ -z "$LL_APT_UPDATED" ]; then
    apt_locked update -qq >/dev/null || return 1
    LL_APT_UPDATED=1
  fi
  apt_locked install -y -qq --no-install-recommends "$@" >/dev/null
}

# apt_locked ARGS...: apt-get, one at a time among our scripts (scripts/test.sh builds the cluster's images
# beside its other suites, and both may install packages: apt-get refuses a held lock at once).
apt_locked() {
  DEBIAN_FRONTEND=noninteractive flock --timeout 900 /var/lock/liveness-lab-apt apt-get "$@" # portable: Debian as root only (apt_install)
}

# ensure_pkg COMMAND PACKAGE: the command, installing its Debian package when it is missing.
ensure_pkg() {
  command -v "$1" >/dev/null 2>&1 && return 0
  log "installing $2 (for $1)"
  apt_install "$2" || die "could not install $2 (needed for $1)" "apt-get install $2"
}

# check_service_version: service/pom.xml's version is SERVICE_VERSION (the image tag comes from it), or
# says which differs and returns 1.
check_service_version() {
  local pom_version
  pom_version=$(sed -n 's|^  <version>\(.*\)</version>|\1|p' "$LL_ROOT/service/pom.xml" | head -n 1)
  [ "$pom_version" = "$SERVICE_VERSION" ] && return 0
  printf 'error: service/pom.xml has version %s but scripts/versions.env has SERVICE_VERSION=%s\n  fix: make them equal: the image tag comes from the project version\n' \
    "$pom_version" "$SERVICE_VERSION" >&2
  return 1
}

# require_image ROLE IMAGE OPTION LOCAL-IMAGE: IMAGE is here or can be pulled, else stop with the fix.
require_image() {
  docker image inspect "$2" >/dev/null 2>&1 && return 0
  log "pulling $1 image $2"
  docker pull "$2" >/dev/null 2>&1 && return 0
  die "$1 image '$2' is neither present nor pullable" \
    "where no registry answers, build the local one first (scripts/cluster-up.sh does), or pass $3 $4 if it is built already"
}

# image_id12 IMAGE: 12 hex digits of a local IMAGE's ID (the base images' part of a sources label).
image_id12() { docker image inspect --format '{{.Id}}' "$1" | cut -c8-19; }

# url_answers URL: the site of URL answers from here within 10 s, whatever its status (python3: no curl
# needed); a name that does not resolve or a refused connection, as on a machine without internet, fails.
url_answers() {
  python3 -c 'import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=10)
except urllib.error.HTTPError:
    pass' "$1" >/dev/null 2>&1
}

# image_up_to_date IMAGE SOURCES FORCE: IMAGE carries the io.livenesslab.sources label SOURCES (it was
# built from them) and FORCE is empty; says so.
image_up_to_date() {
  [ -z "$3" ] && [ "$(docker image inspect --format '{{ index .Config.Labels "io.livenesslab.sources" }}' "$1" 2>/dev/null)" = "$2" ] &&
    log "image $1 is up to date (sources $2)"
}

# build_image NAME IMAGE SOURCES DOCKER-BUILD-ARG...: `docker build` of IMAGE, labelled with SOURCES.
build_image() {
  local name=$1 image=$2 sources=$3
  shift 3
  # buildx adds provenance attestations by default, which makes every build's digest differ; without
  # them identical builds give identical digests. The legacy builder (Docker 20.10, no buildx) ignores it.
  # --label on the command line: the legacy builder takes it as the final layer, after every cached one.
  BUILDX_NO_DEFAULT_ATTESTATIONS=1 step "$name" docker build --label "io.livenesslab.sources=$sources" -t "$image" "$@"
  log "built $image ($(docker image inspect --format '{{.Size}}' "$image" | awk '{ printf "%d MB", $1 / 1000000 }'))"
}
