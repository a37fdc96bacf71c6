# shellcheck shell=bash
# The tools liveness-lab needs, checked and where safe installed, each with one line saying what it
# found: Docker (started here if needed), kind, helm and kubectl at the pinned versions. Tools that do
# not match are built into the git-ignored $LL_TOOLS/bin, which is put first on PATH.
# Source after common.sh and gobuild.sh.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_DOCKERD_WAIT=60   seconds to wait for a dockerd started here to answer

mkdir -p "$LL_TOOLS/bin"
case ":$PATH:" in *":$LL_TOOLS/bin:"*) ;; *) PATH="$LL_TOOLS/bin:$PATH" ;; esac
export PATH

LL_RUNC_WRAPPER=/usr/local/libexec/liveness-lab/runc

# tool_version NAME: the version a tool on PATH reports (v1.2.3), or nothing.
tool_version() {
  case $1 in
    kind) "$2" version 2>/dev/null | awk '{print $2}' ;;
    helm) "$2" version --template '{{.Version}}' 2>/dev/null ;;
    kubectl) "$2" version --client 2>/dev/null | sed -n 's/^Client Version: //p' ;;
  esac
}

# use_tool_on_path NAME VERSION: true when some NAME on PATH reports VERSION; links it into
# $LL_TOOLS/bin so that it wins over other versions.
use_tool_on_path() {
  local name=$1 want=$2 candidate
  while read -r candidate; do
    [ "$(tool_version "$name" "$candidate")" = "$want" ] || continue
    if [ "$candidate" != "$LL_TOOLS/bin/$name" ]; then ln -sf "$candidate" "$LL_TOOLS/bin/$name"; fi
    log "$name $want: $candidate"
    return 0
  done < <(type -ap "$name" | awk '!seen[$0]++')
  return 1
}

# build_kind DIR: kind KIND_VERSION into DIR.
build_kind() { go_install_into "$1" "sigs.k8s.io/kind@$KIND_VERSION"; }

ensure_kind() {
  use_tool_on_path kind "$KIND_VERSION" && return 0
  cached_tool kind "$KIND_VERSION" build_kind
  use_tool_on_path kind "$KIND_VERSION" || die "kind $KIND_VERSION did not install"
}

# build_helm DIR: helm HELM_VERSION into DIR, with the version stamps of Helm's own Makefile, so
# `helm version` and the default Kubernetes version of `helm template` are what a release reports
# ('go install' alone leaves them at the module's placeholders).
build_helm() {
  local minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  GOBIN=$1 CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
      -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor \
      -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

ensure_helm() {
  use_tool_on_path helm "$HELM_VERSION" && return 0
  cached_tool helm "$HELM_VERSION" build_helm
  use_tool_on_path helm "$HELM_VERSION" || die "helm $HELM_VERSION did not install"
}

# ensure_kubectl [NODE-CONTAINER]: kubectl of the cluster's own version: one on PATH, else the one
# built with the node image, else (on Linux) the node's own copy, else built from the Go module
# proxy (only kubectl, a few minutes).
ensure_kubectl() {
  local node=${1:-} cached=$LL_CACHE/kubernetes-$KUBERNETES_VERSION/bin/kubectl
  use_tool_on_path kubectl "$KUBERNETES_VERSION" && return 0
  if [ -x "$cached" ]; then
    ln -sf "$cached" "$LL_TOOLS/bin/kubectl"
  elif [ -n "$node" ] && [ "$(uname -s)" = Linux ] &&
    docker cp "$node:/usr/bin/kubectl" "$LL_TOOLS/bin/kubectl" >/dev/null 2>&1; then
    log "kubectl: copied from the node $node"
  else
    ensure_go
    step "build-kubectl-$KUBERNETES_VERSION" build_kubernetes "$KUBERNETES_VERSION" kubectl
    ln -sf "$cached" "$LL_TOOLS/bin/kubectl"
  fi
  use_tool_on_path kubectl "$KUBERNETES_VERSION" || die "kubectl $KUBERNETES_VERSION did not install"
}

# host_has_cap_sys_resource: CAP_SYS_RESOURCE (bit 24) in this process's capability bounding set.
# Without it 'docker run --privileged' fails ("unable to apply caps") and so does every pod sandbox.
host_has_cap_sys_resource() {
  local bnd
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  [ -n "$bnd" ] && (((16#$bnd >> 24) & 1))
}

# host_on_cgroup_v1: no unified cgroup hierarchy at /sys/fs/cgroup (kubelet >= 1.35 refuses v1
# unless told otherwise).
host_on_cgroup_v1() { [ ! -e /sys/fs/cgroup/cgroup.controllers ]; }

# install_runc_wrapper: Docker's default runtime becomes a runc wrapper that drops CAP_SYS_RESOURCE
# and keeps oom_score_adj within reach (see scripts/lib/runc-wrapper.sh).
install_runc_wrapper() {
  local conf=/etc/docker/daemon.json tmp
  ensure_pkg jq jq
  install -D -m 0755 "$LL_ROOT/scripts/lib/runc-wrapper.sh" "$LL_RUNC_WRAPPER"
  mkdir -p /etc/docker
  tmp=$(mktemp)
  { [ -s "$conf" ] && cat "$conf" || echo '{}'; } |
    jq --arg path "$LL_RUNC_WRAPPER" \
      '.runtimes["liveness-lab-runc"] = {path: $path} | .["default-runtime"] = "liveness-lab-runc"' >"$tmp"
  mv "$tmp" "$conf"
  log "runc wrapper: this host lacks CAP_SYS_RESOURCE, so Docker's default runtime is $LL_RUNC_WRAPPER"
}

# start_dockerd: dockerd in the background (for machines without systemd), log in $LL_LOGS.
start_dockerd() {
  local waited=0 limit=${LIVENESS_LAB_DOCKERD_WAIT:-60}
  mkdir -p "$LL_LOGS"
  log "starting dockerd (log: $LL_LOGS/dockerd.log)"
  # setsid: the daemon outlives this script and a Ctrl-C in its terminal.
  setsid /usr/sbin/dockerd >>"$LL_LOGS/dockerd.log" 2>&1 </dev/null &
  until docker info >/dev/null 2>&1; do
    sleep 1
    waited=$((waited + 1))
    [ "$waited" -lt "$limit" ] || die "dockerd did not answer within ${limit}s" "read $LL_LOGS/dockerd.log"
  done
}

# ensure_docker: a Docker daemon that answers; as root on Debian, installs docker.io and starts it.
ensure_docker() {
  local runtime
  if docker info >/dev/null 2>&1; then
    runtime=$(docker info --format '{{.DefaultRuntime}}' 2>/dev/null)
    log "docker: daemon answers (server $(docker version --format '{{.Server.Version}}' 2>/dev/null), runtime $runtime)"
    if ! host_has_cap_sys_resource && [ "$runtime" != liveness-lab-runc ]; then
      warn "this host lacks CAP_SYS_RESOURCE and Docker's default runtime is '$runtime': kind's node will fail to start."
      warn "fix: stop dockerd, run this script again as root (it sets up the runc wrapper and starts dockerd)"
    fi
    return 0
  fi
  is_root_debian || die "no Docker daemon answers" \
    "install Docker (https://docs.docker.com/engine/install/) and start it, then run this again"
  if [ ! -x /usr/sbin/dockerd ]; then
    log "docker: installing Debian's docker.io"
    apt_install docker.io || die "could not install docker.io" "apt-get install docker.io"
  fi
  command -v docker >/dev/null || die "docker CLI missing after installing docker.io" "apt-get install docker.io"
  host_has_cap_sys_resource || install_runc_wrapper
  pgrep -x dockerd >/dev/null && die "a dockerd is running but does not answer" "read $LL_LOGS/dockerd.log or stop it"
  start_dockerd
  log "docker: started dockerd (server $(docker version --format '{{.Server.Version}}'))"
}
