#!/usr/bin/env bash
# Brings up the liveness-lab kind cluster and installs the chart: the one command from a machine with
# Docker (or, as root on Debian, not even that) to the demo running. Where a container registry answers,
# the official kind node image and base images are pulled and kind, helm and kubectl are taken from
# PATH when compatible or downloaded (checked against their published SHA-256); where none does, every
# image is built locally from the Go module proxy and Debian packages (the first time 29 to 62 minutes on
# 2 cores, measured fresh: Kubernetes' own build 11 to 38 of them, then etcd, CoreDNS, containerd and crictl
# about 10, the service and Locust images about 6; docs/no-registry.md. Then cached under
# ~/.cache/liveness-lab: later runs take about a minute). Safe to re-run: an existing cluster is reused,
# a half-finished build resumes, an unchanged image or release is left alone and no pod restarts.
# Needs bash >= 4.1 (macOS: brew install bash).
#
# Usage: scripts/cluster-up.sh [--kubernetes-version V] [--airgap] [--workers N] [--max-restart-period SECONDS]
#                              [--images-only] [--dry-run] [--help]
#   --kubernetes-version V
#               the Kubernetes of the cluster: a minor of KUBERNETES_MINORS in scripts/versions.env (1.35,
#               1.36, 1.37, the default, and 1.38, a pre-release until it ships) or its pinned release
#               (v1.36.4): kind's published node image of that release, pinned by digest, where a registry
#               answers (where kind publishes none, `kind build node-image --type release` builds it), built
#               here with that release's etcd and CoreDNS where none does. One cluster at a time: one that
#               runs another release is refused with the fix (scripts/cluster-down.sh first); the node
#               images of several releases stay side by side, so switching back takes about a minute
#   --airgap    build every image locally even where a registry answers
#   --workers N N worker nodes besides the control plane (default: LIVENESS_LAB_WORKERS, else 0: one
#               node). The NodePorts stay mapped on the control plane and reach pods on every node.
#               Where no kindnetd runs (the local node image), each node's CNI config and the routes
#               between the nodes' pod ranges are set from the host (scripts/libexec/pod_network.py).
#   --max-restart-period SECONDS
#               every kubelet caps the CrashLoopBackOff delay at SECONDS (1-300) instead of its default
#               300: crashLoopBackOff.maxContainerRestartPeriod in a KubeletConfiguration patch of the
#               derived kind config (KEP-5593, beta and on by default from Kubernetes 1.35). Set when the
#               cluster is created; a cluster that exists with another cap is refused (the lab's
#               backoff-cap-short scenario needs 60; docs/lab.md, "The back-off cap")
#   --images-only
#               pull or build the node image and the base images (and kind, helm and kubectl), then stop: no
#               cluster, no image of ours, no chart. To fill the cache ahead of time (laptops before a
#               workshop); scripts/test.sh runs it beside the suites that need no cluster
#   --dry-run   print the plan (registry or not, images, tools and where each comes from) and change nothing
#
# Environment (defaults):
#   LIVENESS_LAB_KUBERNETES_VERSION=     the Kubernetes when --kubernetes-version is not given (empty: 1.37)
#   LIVENESS_LAB_WORKERS=0               worker nodes when --workers is not given
#   LIVENESS_LAB_MAX_RESTART_PERIOD=     seconds, when --max-restart-period is not given (empty: the kubelet's 300)
#   LIVENESS_LAB_REGISTRY=auto           yes | no: take this answer instead of asking the registry
#   LIVENESS_LAB_REGISTRY_WAIT=30        seconds the registry check waits for a first answer
#   LIVENESS_LAB_NODE_IMAGE=<the release's node image of scripts/versions.env>   the kind node image to pull
#   LIVENESS_LAB_HELM_VERSION=           a Helm release to use instead of HELM_VERSION (Helm 4), 3.17 or newer:
#                                        v3.22.0 runs on Helm 3 (that release only, from PATH, the cache or its download)
#   LIVENESS_LAB_DOWNLOAD_MIRROR=        fetch tool releases https://HOST/PATH from MIRROR/HOST/PATH
#   LIVENESS_LAB_CACHE=~/.cache/liveness-lab   build caches, downloaded tools and step logs (logs/)
#   LIVENESS_LAB_DEBIAN_MIRROR=<host's apt sources>   Debian mirror for the local builds
#   LIVENESS_LAB_HELM_TIMEOUT=10m        how long helm waits for every pod to be Ready
#   LIVENESS_LAB_NODE_WAIT=300s          how long to wait for the node to be Ready
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/lib
[ -n "${BASH_VERSION:-}" ] || { printf 'error: %s needs bash >= 4.1, not this shell\n  fix: run it as %s (its first line picks bash) or as: bash %s\n' "$0" "$0" "$0" >&2; exit 1; }
set -o errexit -o nounset -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"; . "$LL_LIB/tools.sh"; . "$LL_LIB/docker.sh"; . "$LL_LIB/airgap.sh"; . "$LL_LIB/cluster.sh"; . "$LL_LIB/venv.sh"
use_tools_bin

AIRGAP=0
KUBE_WANT=${LIVENESS_LAB_KUBERNETES_VERSION:-}
KUBE_FROM=LIVENESS_LAB_KUBERNETES_VERSION
DRY_RUN=0
IMAGES_ONLY=0
WORKERS=${LIVENESS_LAB_WORKERS:-0}
WORKERS_FROM=LIVENESS_LAB_WORKERS
MAX_RESTART=${LIVENESS_LAB_MAX_RESTART_PERIOD:-}
MAX_RESTART_FROM=LIVENESS_LAB_MAX_RESTART_PERIOD
parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --kubernetes-version)
        [ $# -ge 2 ] || LL_DIE_STATUS=2 die "--kubernetes-version needs a version" "e.g. --kubernetes-version 1.36; the supported ones: $(ll_kubernetes_supported)"
        KUBE_WANT=$2 KUBE_FROM=--kubernetes-version
        shift ;;
      --kubernetes-version=*) KUBE_WANT=${1#--kubernetes-version=} KUBE_FROM=--kubernetes-version ;;
      --airgap) AIRGAP=1 ;;
      --workers)
        [ $# -ge 2 ] || LL_DIE_STATUS=2 die "--workers needs a number" "e.g. --workers 2 (one control plane and two workers)"
        WORKERS=$2 WORKERS_FROM=--workers
        shift ;;
      --workers=*) WORKERS=${1#--workers=} WORKERS_FROM=--workers ;;
      --max-restart-period)
        [ $# -ge 2 ] || LL_DIE_STATUS=2 die "--max-restart-period needs a number of seconds" "e.g. --max-restart-period 60"
        MAX_RESTART=$2 MAX_RESTART_FROM=--max-restart-period
        shift ;;
      --max-restart-period=*) MAX_RESTART=${1#--max-restart-period=} MAX_RESTART_FROM=--max-restart-period ;;
      --dry-run) DRY_RUN=1 ;;
      --images-only) IMAGES_ONLY=1 ;;
      -h | --help) ll_usage; exit 0 ;;
      *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
    esac
    shift
  done
  case $WORKERS in
    [0-9]) ;;
    *) LL_DIE_STATUS=2 die "$WORKERS_FROM must be a number of worker nodes from 0 to 9 (it is '$WORKERS')" "e.g. --workers 2; 0 (the default) is one node" ;;
  esac
  case $MAX_RESTART in
    "") ;;
    [1-9] | [1-9][0-9] | [1-2][0-9][0-9] | 300) ;;
    *) LL_DIE_STATUS=2 die "$MAX_RESTART_FROM must be a whole number of seconds from 1 to 300 (it is '$MAX_RESTART')" \
      "e.g. --max-restart-period 60; leave it out for the kubelet's default, 300" ;;
  esac
  # The release's pins (scripts/versions.env), then the user's node image, which replaces its published one.
  if [ -n "$KUBE_WANT" ] || [ "$KUBE_FROM" = --kubernetes-version ]; then ll_select_kubernetes "$KUBE_WANT" "$KUBE_FROM"; fi
  KIND_NODE_IMAGE=${LIVENESS_LAB_NODE_IMAGE:-$KIND_NODE_IMAGE}
}

# describe_nodes: the plan's nodes line.
describe_nodes() {
  if [ "$WORKERS" = 0 ]; then
    echo "1: the control plane runs everything (--workers N adds workers)"
  else
    printf '%s: a control plane and %s worker(s) (%s); the NodePorts mapped on the control plane, kube-proxy forwards to pods on any node; pod network: %s\n' \
      "$((WORKERS + 1))" "$WORKERS" "$WORKERS_FROM" "$(describe_pod_network)"
  fi
}
describe_pod_network() {
  if [ "$MODE" = registry ]; then
    echo "kind's kindnetd (or, with the local node image, each node's CNI config and routes set from the host)"
  else
    echo "each node's CNI config and routes to the other nodes' pod ranges, set from the host (no kindnetd)"
  fi
}

MODE=
MODE_REASON=
# decide_mode: "registry" (pull official images, download tools) or "airgap" (build them here), and
# why. A failed registry check never switches silently, except as root on Debian (our machines), where
# building everything locally is what the no-registry path is for.
decide_mode() {
  if [ "$AIRGAP" = 1 ]; then
    MODE=airgap MODE_REASON="--airgap given"
  else
    # Asked with this release's published node image, else (a pre-release) with the default's.
    local probe=${KIND_NODE_IMAGE:-$LL_DEFAULT_NODE_IMAGE}
    case ${LIVENESS_LAB_REGISTRY:-auto} in
      yes) MODE=registry MODE_REASON="LIVENESS_LAB_REGISTRY=yes" ;;
      no) MODE=airgap MODE_REASON="LIVENESS_LAB_REGISTRY=no" ;;
      auto)
        if registry_answers "$probe"; then
          MODE=registry MODE_REASON="a pull of $probe is answered: $REGISTRY_ANSWER"
        elif is_root_debian; then
          MODE=airgap MODE_REASON="no container registry answers for $probe: $REGISTRY_ANSWER"
        else
          die "the registry check failed: 'docker pull $probe' said: $REGISTRY_ANSWER" \
            "if Docker can pull images here (a Docker Hub rate limit or a slow network fails this check too), run again with LIVENESS_LAB_REGISTRY=yes; to build every image locally instead (root on Debian, with Go, gcc and debootstrap; 29 to 62 minutes on 2 cores the first time), LIVENESS_LAB_REGISTRY=no"
        fi ;;
      *) die "LIVENESS_LAB_REGISTRY must be yes, no or auto (it is '$LIVENESS_LAB_REGISTRY')" ;;
    esac
  fi
  [ "$MODE" = registry ] || refuse_airgap_elsewhere
  # Tools: downloaded where registries answer (download sites do too), built with Go where none does.
  if [ "$MODE" = registry ]; then LL_TOOL_DOWNLOADS=yes; else LL_TOOL_DOWNLOADS=no; fi
  export LL_TOOL_DOWNLOADS
}

# refuse_airgap_elsewhere: the no-registry path runs only as root on Debian-like Linux. It builds
# Kubernetes and every image from source with Debian's tools (apt-get, debootstrap, gcc -static,
# sha256sum) and may reconfigure this machine's dockerd; anywhere else it would fail half-way with a
# message about a missing tool. Stop before anything is done, saying why and what to do instead.
refuse_airgap_elsewhere() {
  local os why
  os=$(uname -s)
  if [ "$os" != Linux ]; then
    why="this is $os"
  elif [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1; then
    why="this Linux is not Debian-like (no /etc/debian_version and apt-get)"
  elif [ "$(id -u)" != 0 ]; then
    why="it must run as root (it installs Debian packages and may set Docker's runtime)"
  else
    return 0
  fi
  die "the no-registry path ($MODE_REASON) builds Kubernetes and every image from source with Debian's tools, as root on Debian-like Linux only; $why" \
    "where Docker can pull images (a laptop with internet), run without --airgap and with LIVENESS_LAB_REGISTRY unset or =yes: the official images are pulled; otherwise run it on a Debian or Ubuntu machine as root"
}

# node_image: the node image of this run: the release's published one, pulled; where kind publishes none (a
# pre-release), the one `kind build node-image --type release` makes of it; where no registry answers, ours.
node_image() {
  if [ "$MODE" = airgap ]; then
    local_node_image
  else
    echo "${KIND_NODE_IMAGE:-$LOCAL_NODE_IMAGE:$KUBERNETES_VERSION-kind}"
  fi
}
jre_base() { if [ "$MODE" = registry ]; then echo "$JRE_BASE_IMAGE"; else echo "$LOCAL_JRE_BASE_IMAGE"; fi; }
jdk_base() { if [ "$MODE" = registry ]; then echo "$JDK_BASE_IMAGE"; else echo "$LOCAL_JDK_BASE_IMAGE"; fi; }
python_base() { if [ "$MODE" = registry ]; then echo "$LOCUST_BASE_IMAGE"; else echo "$LOCAL_PYTHON_BASE_IMAGE"; fi; }
how() { if [ "$MODE" = registry ]; then echo "pulled"; else echo "built here: $1"; fi; }

# decide_kubectl, kubectl_deferred: on the no-registry path kubectl is built with the node image's
# Kubernetes, so it is resolved after the images rather than built twice. Decided once, before the
# images: once the node image is built, the cache has kubectl and tool_source would say so.
KUBECTL_DEFERRED=0
decide_kubectl() {
  local how
  read -r how _ <<<"$(tool_source kubectl)"
  if [ "$MODE" = airgap ] && [ "$how" = build ]; then KUBECTL_DEFERRED=1; fi
}
kubectl_deferred() { [ "$KUBECTL_DEFERRED" = 1 ]; }

# describe_kubectl: the plan's kubectl line.
# describe_kubelet: whether this release's kubelet carries kubernetes#141155 (versions.env).
describe_kubelet() {
  case ",$KUBELET_STARTUP_REGRESSION," in
    *",$KUBERNETES_VERSION,"*) echo "$KUBERNETES_VERSION carries kubernetes#141155: a container restarted after a liveness kill is probed for liveness before its startup probe passes (docs/kubernetes-versions.md)" ;;
    *) echo "$KUBERNETES_VERSION: without kubernetes#141155 (fixed in v1.38.0-beta.0)" ;;
  esac
}

describe_kubectl() {
  if kubectl_deferred; then echo "$KUBERNETES_VERSION: built with the node image's Kubernetes"; else describe_tool kubectl; fi
}

# describe_docker: the machine Docker runs on, as Docker sees it.
describe_docker() {
  local resources
  resources=$(docker_resources 2>/dev/null) || true
  if [ -z "$resources" ]; then
    echo "no daemon answers yet$(is_root_debian && echo ": Debian's docker.io is installed and started")"
    return 0
  fi
  # shellcheck disable=SC2086 # "CPUS MIB" splits into two words
  set -- $resources
  echo "$(docker info --format '{{.OperatingSystem}}' 2>/dev/null), $1 CPUs, $(($2 / 1024)) GiB, cgroup v$(docker info --format '{{.CgroupVersion}}' 2>/dev/null)"
}

print_plan() {
  local mirror=
  [ "$MODE" = airgap ] && mirror=$(debian_mirror 2>/dev/null || echo "none found: set LIVENESS_LAB_DEBIAN_MIRROR")
  cat <<EOF
plan for kind cluster '$KIND_CLUSTER_NAME' (Kubernetes $KUBERNETES_VERSION)
  kubernetes:    $KUBERNETES_VERSION ($LL_KUBERNETES_FROM; supported: $(ll_kubernetes_supported))
  kubelet:       $(describe_kubelet)
  mode:          $MODE ($MODE_REASON)
  docker:        $(describe_docker)
  kind:          $(describe_tool kind)
  helm:          $(describe_tool helm)
  kubectl:       $(describe_kubectl)
  node image:    $(node_image) ($(describe_node_image))
  JRE base:      $(jre_base) ($(how "debootstrap $LOCAL_BASE_SUITE + $LL_JRE_PACKAGES"))
  JDK base:      $(jdk_base) ($(how "debootstrap $LOCAL_BASE_SUITE + $LL_JDK_PACKAGES"))
  Locust base:   $(python_base) ($(how "debootstrap $LOCAL_BASE_SUITE + $LL_PYTHON_PACKAGES"))
EOF
  [ -n "$mirror" ] && echo "  Debian mirror: $mirror"
  cat <<EOF
  kind config:   kind-config.yaml$(config_additions_summary)
  nodes:         $(describe_nodes)
  runc wrapper:  $(if host_has_cap_sys_resource; then echo "not needed"; else echo "needed: this host lacks CAP_SYS_RESOURCE"; fi)
  cluster:       $(describe_cluster)
  service image: $(unless_images_only "$SERVICE_IMAGE:$SERVICE_VERSION, built in $(jdk_base) onto $(jre_base) (scripts/build-service-image.sh)")
  locust image:  $(unless_images_only "$LOCUST_IMAGE:$LOCUST_IMAGE_TAG on $(python_base) (scripts/build-locust-image.sh)")
  chart:         $(unless_images_only "helm upgrade --install liveness-lab ./chart -n liveness-lab --wait (client-side apply, on Helm 4 too), when it changed")
EOF
}

# unless_images_only TEXT: a plan line's TEXT, or that --images-only leaves it out.
unless_images_only() { if [ "$IMAGES_ONLY" = 1 ]; then echo "none (--images-only)"; else echo "$1"; fi; }

# describe_node_image: where the plan's node image comes from.
describe_node_image() {
  if [ "$MODE" = airgap ]; then
    how "Kubernetes $KUBERNETES_VERSION${KUBERNETES_GO:+ (with Go $KUBERNETES_GO, GOTOOLCHAIN)}, etcd $ETCD_VERSION, CoreDNS $COREDNS_VERSION, containerd $CONTAINERD_VERSION, CNI plugins $CNI_PLUGINS_VERSION from the Go module proxy"
  elif [ -n "$KIND_NODE_IMAGE" ]; then
    how ""
  else
    echo "built here by kind $KIND_VERSION: kind build node-image --type release $KUBERNETES_VERSION (kind publishes no image of a pre-release; it downloads the release and pulls kind's base image)"
  fi
}

# describe_cluster: the plan's cluster line: created, reused, or refused (another Kubernetes runs in it).
# Asked of the kind the run would use (on PATH or in the cache), not of an earlier run's link in
# .tools/bin, which nothing has re-linked in a dry run.
describe_cluster() {
  local have how binary kind=kind
  [ "$IMAGES_ONLY" = 0 ] || { unless_images_only; return 0; }
  read -r how binary _ <<<"$(tool_source kind)"
  case $how in path | cache) kind=$binary ;; esac
  "$kind" get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER_NAME" || { echo "create"; return 0; }
  have=$(cluster_kubernetes_version)
  if [ -z "$have" ] || [ "$have" = "$KUBERNETES_VERSION" ]; then
    echo "exists${have:+ (Kubernetes $have)}: reuse it"
  else
    echo "exists with Kubernetes $have, not $KUBERNETES_VERSION: refused (one cluster at a time: scripts/cluster-down.sh first)"
  fi
}

# resolve_tools: kind, helm and kubectl before anything is created, so a missing tool stops the run
# before the cluster or the images exist.
resolve_tools() {
  ensure_kind
  ensure_helm
  kubectl_deferred || ensure_kubectl
}

# config_additions_summary: what the derived kind config adds to kind-config.yaml on this host.
config_additions_summary() {
  local extra=()
  host_on_cgroup_v1 && extra+=("kubelet failCgroupV1: false (host on cgroup v1)")
  [ "$MODE" = airgap ] && extra+=("disableDefaultCNI (the local node image has a static network)")
  [ "$WORKERS" = 0 ] || extra+=("$WORKERS worker node(s)")
  [ -z "$MAX_RESTART" ] || extra+=("kubelet crashLoopBackOff.maxContainerRestartPeriod ${MAX_RESTART}s ($MAX_RESTART_FROM)")
  [ ${#extra[@]} -eq 0 ] || printf ' + %s' "${extra[@]}"
}

# prepare_images: the node image and the base images, pulled or built.
prepare_images() {
  if [ "$MODE" = registry ]; then
    if [ -n "$KIND_NODE_IMAGE" ]; then
      pull_if_missing "$KIND_NODE_IMAGE"
    elif docker image inspect "$(node_image)" >/dev/null 2>&1; then
      log "node image $(node_image): present"
    else
      step "build-node-image-$KUBERNETES_VERSION" kind build node-image --type release "$KUBERNETES_VERSION" --image "$(node_image)"
    fi
    pull_if_missing "$JRE_BASE_IMAGE"
    pull_if_missing "$JDK_BASE_IMAGE"
    pull_if_missing "$LOCUST_BASE_IMAGE"
    return 0
  fi
  local node=1
  if node_image_current; then
    node=0
    log "node image $(local_node_image): up to date"
  else
    ensure_go
    ensure_static_cc
    ensure_pkg python3 python3 # the node tree's containerd spec (airgap.sh); this path is root on Debian
  fi
  # Debian trees (network and disk bound) in the background while Go compiles (CPU bound).
  (
    step "build-jre-image" build_jre_image
    step "build-jdk-image" build_jdk_image
    step "build-python-image" build_python_image
    [ "$node" = 0 ] || step "prepare-node-tree" prepare_node_tree
  ) &
  LL_BG_PID=$!
  [ "$node" = 0 ] || build_node_binaries
  wait "$LL_BG_PID" || { LL_BG_PID=; die "building the Debian trees failed (see the step log above)"; }
  LL_BG_PID=
  [ "$node" = 0 ] || step "build-node-image-$KUBERNETES_VERSION" build_node_image
}

# build_app_images: the service and Locust images, on the base images of this mode. Each script skips
# its build when the image already carries the hash of its sources.
build_app_images() {
  step "build-service-image" "$LL_ROOT/scripts/build-service-image.sh" --base "$(jre_base)" --jdk "$(jdk_base)"
  if [ "$MODE" = registry ]; then
    step "build-locust-image" "$LL_ROOT/scripts/build-locust-image.sh" --base "$(python_base)"
  else
    # Where no registry answers, the build's own pip may not reach PyPI either: the wheels are
    # downloaded on the host and installed offline.
    step "build-locust-image" "$LL_ROOT/scripts/build-locust-image.sh" --base "$(python_base)" --offline-wheels
  fi
}

# load_app_images: the two images of ours into the node (the chart renders exactly these: the chart
# suite's chart/tests/test_chart.py ties them to scripts/versions.env; official ones are pulled by the node).
load_app_images() {
  load_image "$SERVICE_IMAGE:$SERVICE_VERSION"
  load_image "$LOCUST_IMAGE:$LOCUST_IMAGE_TAG"
}

# lower_build_priority: with LL_BUILD_NICE (scripts/tests/run_suites.py, which builds the images beside
# test suites that time probes), this run and what it starts from here on, dockerd excepted (started
# before, in its own session), yield the CPU: nice, and the session's autogroup's nice, which is what
# Linux weighs between sessions (sched(7), "The autogroup feature").
lower_build_priority() {
  [ -n "${LL_BUILD_NICE:-}" ] || return 0
  renice -n "$LL_BUILD_NICE" -p "$$" >/dev/null 2>&1 || true
  { [ -w "/proc/$$/autogroup" ] && echo "$LL_BUILD_NICE" >"/proc/$$/autogroup"; } 2>/dev/null || true
}

# print_next_steps: where to look, with commands that work as printed (a tool that the user's PATH
# does not find, or finds at another version, is printed with its path under .tools/bin).
print_next_steps() {
  local kubectl helm urls token
  kubectl=$(print_tool kubectl)
  helm=$(print_tool helm)
  # The web UI wants the release's token (its Secret <release>-ui, the chart's only Secret of component
  # locust): the link carries it, and the master turns it into a session cookie (locust/README.md).
  token=$(kube -n "$LL_NAMESPACE" get secrets -l "app.kubernetes.io/instance=$LL_RELEASE,app.kubernetes.io/component=locust" \
    -o go-template='{{range .items}}{{.data.token | base64decode}}{{end}}' 2>/dev/null) || token=
  urls=$(kube -n "$LL_NAMESPACE" get services -l "app.kubernetes.io/instance=$LL_RELEASE" \
    -o jsonpath='{range .items[*]}{.metadata.labels.app\.kubernetes\.io/component} {.spec.ports[0].nodePort}{"\n"}{end}' 2>/dev/null |
    awk '$2 != "" && $1 !~ /^locust/ { printf "%shttp://127.0.0.1:%s (%s)", sep, $2, $1; sep = "  " }')
  cat <<EOF

liveness-lab is up ($(($(ll_now) - LL_START))s).
  Locust web UI:      http://127.0.0.1:8089${token:+/?token=$token}
  watch the pods:     $kubectl --context $LL_KUBE_CONTEXT get pods -n $LL_NAMESPACE -w
  scripted demo:      scripts/demo.sh
  variants:           ${urls:-none deployed}
  tear down:          scripts/cluster-down.sh  (keeps the build caches; --purge removes them)
EOF
  [ "$kubectl" = kubectl ] && [ "$helm" = helm ] ||
    printf '  (the kind, helm and kubectl of this run are in %s: put it first on PATH to use them by name)\n' "$LL_TOOLS/bin"
}

LL_BG_PID=
on_exit() {
  local rc=$?
  # Subshells (background jobs) inherit this trap; only the script itself cleans up.
  [ "$BASHPID" = "$$" ] || return 0
  ll_heartbeat_stop
  if [ -n "$LL_BG_PID" ]; then kill_tree "$LL_BG_PID"; fi
  cleanup_build_container
  cleanup_half_created_cluster
  if [ "$rc" -ne 0 ]; then printf 'cluster-up failed after %ss; step logs are in %s\n' "$(($(ll_now) - LL_START))" "$LL_LOGS" >&2; fi
}

main() {
  parse_args "$@"
  if [ "$DRY_RUN" = 1 ]; then
    decide_mode
    decide_kubectl
    print_plan
    return 0
  fi
  trap on_exit EXIT
  trap 'exit 130' INT TERM
  ensure_docker
  check_docker_resources
  lower_build_priority
  decide_mode
  decide_kubectl
  print_plan >&2
  resolve_tools
  [ "$IMAGES_ONLY" = 1 ] || check_cluster_kubernetes # before any image is built for it
  prepare_images
  if kubectl_deferred; then ensure_kubectl; fi
  if [ "$IMAGES_ONLY" = 1 ]; then
    printf '\nthe images of Kubernetes %s are ready (%ss): %s and the base images; scripts/cluster-up.sh takes it from here\n' \
      "$KUBERNETES_VERSION" "$(($(ll_now) - LL_START))" "$(node_image)"
    return 0
  fi
  create_cluster "$(node_image)" "$MODE" "$WORKERS" "$MAX_RESTART"
  build_app_images
  load_app_images
  install_chart
  print_next_steps
}

main "$@"
