#!/usr/bin/env bash
# Brings up the liveness-lab kind cluster and installs the chart: the one command from a machine with
# Docker (or, as root on Debian, not even that) to the demo running. Where a container registry answers,
# the official kind node image and base images are pulled; where none does, every image is built
# locally from the Go module proxy and Debian packages (the first time about 25 minutes on 2 cores,
# then cached under ~/.cache/liveness-lab). Safe to re-run: an existing cluster is reused, a
# half-finished build resumes, an unchanged release is left alone.
#
# Usage: scripts/cluster-up.sh [--airgap] [--dry-run] [--help]
#   --airgap    build every image locally even where a registry answers
#   --dry-run   print the plan (registry or air-gapped, images, steps) and change nothing
#
# Environment (defaults):
#   LIVENESS_LAB_REGISTRY=auto           yes | no: take this answer instead of asking the registry
#   LIVENESS_LAB_CACHE=~/.cache/liveness-lab   build caches and step logs (logs/)
#   LIVENESS_LAB_DEBIAN_MIRROR=<host's apt sources>   Debian mirror for the local builds
#   LIVENESS_LAB_HELM_TIMEOUT=10m        how long helm waits for every pod to be Ready
#   LIVENESS_LAB_NODE_WAIT=300s          how long to wait for the node to be Ready
# shellcheck source-path=SCRIPTDIR
set -o errexit -o nounset -o pipefail

LL_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib
# shellcheck source=lib/common.sh
. "$LL_LIB/common.sh"
# shellcheck source=lib/gobuild.sh
. "$LL_LIB/gobuild.sh"
# shellcheck source=lib/tools.sh
. "$LL_LIB/tools.sh"
# shellcheck source=lib/airgap.sh
. "$LL_LIB/airgap.sh"
# shellcheck source=lib/cluster.sh
. "$LL_LIB/cluster.sh"
# shellcheck source=lib/venv.sh
. "$LL_LIB/venv.sh"

usage() { sed -n '2,/^set -o/{/^set -o/d;s/^# \{0,1\}//;p}' "$0"; }

AIRGAP=0
DRY_RUN=0
parse_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --airgap) AIRGAP=1 ;;
      --dry-run) DRY_RUN=1 ;;
      -h | --help) usage; exit 0 ;;
      *) printf 'error: unknown argument: %s\n  fix: see %s --help\n' "$1" "$0" >&2; exit 2 ;;
    esac
    shift
  done
}

MODE=
MODE_REASON=
# decide_mode: "registry" (pull official images) or "airgap" (build them here), and why.
decide_mode() {
  if [ "$AIRGAP" = 1 ]; then
    MODE=airgap MODE_REASON="--airgap given"
    return 0
  fi
  case ${LIVENESS_LAB_REGISTRY:-auto} in
    yes) MODE=registry MODE_REASON="LIVENESS_LAB_REGISTRY=yes" ;;
    no) MODE=airgap MODE_REASON="LIVENESS_LAB_REGISTRY=no" ;;
    auto)
      if registry_answers "$KIND_NODE_IMAGE"; then
        MODE=registry MODE_REASON="the registry answers for $KIND_NODE_IMAGE"
      else
        MODE=airgap MODE_REASON="no container registry answers for $KIND_NODE_IMAGE"
      fi ;;
    *) die "LIVENESS_LAB_REGISTRY must be yes, no or auto (it is '$LIVENESS_LAB_REGISTRY')" ;;
  esac
}

node_image() { if [ "$MODE" = registry ]; then echo "$KIND_NODE_IMAGE"; else local_node_image; fi; }
jre_base() { if [ "$MODE" = registry ]; then echo "$JRE_BASE_IMAGE"; else echo "$LOCAL_JRE_BASE_IMAGE"; fi; }
python_base() { if [ "$MODE" = registry ]; then echo "$LOCUST_BASE_IMAGE"; else echo "$LOCAL_PYTHON_BASE_IMAGE"; fi; }
how() { if [ "$MODE" = registry ]; then echo "pulled"; else echo "built here: $1"; fi; }

print_plan() {
  local mirror=
  [ "$MODE" = airgap ] && mirror=$(debian_mirror 2>/dev/null || echo "none found: set LIVENESS_LAB_DEBIAN_MIRROR")
  cat <<EOF
plan for kind cluster '$KIND_CLUSTER_NAME' (Kubernetes $KUBERNETES_VERSION, kind $KIND_VERSION, helm $HELM_VERSION)
  mode:          $MODE ($MODE_REASON)
  node image:    $(node_image) ($(how "Kubernetes, etcd $ETCD_VERSION, CoreDNS $COREDNS_VERSION, containerd $CONTAINERD_VERSION, CNI plugins $CNI_PLUGINS_VERSION from the Go module proxy"))
  JRE base:      $(jre_base) ($(how "debootstrap $LOCAL_BASE_SUITE + $LL_JRE_PACKAGES"))
  Locust base:   $(python_base) ($(how "debootstrap $LOCAL_BASE_SUITE + $LL_PYTHON_PACKAGES"))
EOF
  [ -n "$mirror" ] && echo "  Debian mirror: $mirror"
  cat <<EOF
  kind config:   kind-config.yaml$(config_additions_summary)
  runc wrapper:  $(if host_has_cap_sys_resource; then echo "not needed"; else echo "needed: this host lacks CAP_SYS_RESOURCE"; fi)
  cluster:       $(if cluster_exists 2>/dev/null; then echo "exists: reuse it"; else echo "create"; fi)
  service image: $SERVICE_IMAGE:$SERVICE_VERSION on $(jre_base) ($(if [ -x "$LL_ROOT/scripts/build-service-image.sh" ]; then echo "scripts/build-service-image.sh"; else echo "skipped: scripts/build-service-image.sh is not there yet"; fi))
  locust image:  $LOCUST_IMAGE:$LOCUST_IMAGE_TAG on $(python_base) ($(if [ -f "$LL_ROOT/locust/Dockerfile" ]; then echo "locust/Dockerfile"; else echo "skipped: locust/Dockerfile is not there yet"; fi))
  chart:         $(if chart_present; then echo "helm upgrade --install liveness-lab ./chart -n liveness-lab --wait, once every image it names is built"; else echo "skipped: chart/Chart.yaml is not there yet"; fi)
EOF
}

# config_additions_summary: what the derived kind config adds to kind-config.yaml on this host.
config_additions_summary() {
  local extra=()
  host_on_cgroup_v1 && extra+=("kubelet failCgroupV1: false (host on cgroup v1)")
  [ "$MODE" = airgap ] && extra+=("disableDefaultCNI (the local node image has a static network)")
  [ ${#extra[@]} -eq 0 ] || printf ' + %s' "${extra[@]}"
}

# prepare_images: the node image and the base images, pulled or built.
prepare_images() {
  if [ "$MODE" = registry ]; then
    pull_if_missing "$KIND_NODE_IMAGE"
    pull_if_missing "$JRE_BASE_IMAGE"
    [ ! -f "$LL_ROOT/locust/Dockerfile" ] || pull_if_missing "$LOCUST_BASE_IMAGE"
    return 0
  fi
  local node=1
  if node_image_current; then
    node=0
    log "node image $(local_node_image): up to date"
  else
    ensure_go
    ensure_static_cc
  fi
  # Debian trees (network and disk bound) in the background while Go compiles (CPU bound).
  (
    step "build-jre-image" build_jre_image
    step "build-python-image" build_python_image
    [ "$node" = 0 ] || step "prepare-node-tree" prepare_node_tree
  ) &
  LL_BG_PID=$!
  [ "$node" = 0 ] || build_node_binaries
  wait "$LL_BG_PID" || { LL_BG_PID=; die "building the Debian trees failed (see the step log above)"; }
  LL_BG_PID=
  [ "$node" = 0 ] || step "build-node-image-$KUBERNETES_VERSION" build_node_image
}

# build_app_images: the service and Locust images, on the base images of this mode.
build_app_images() {
  if [ -x "$LL_ROOT/scripts/build-service-image.sh" ]; then
    step "build-service-image" env BASE_IMAGE="$(jre_base)" "$LL_ROOT/scripts/build-service-image.sh"
  else
    log "service image: skipped, scripts/build-service-image.sh is not there yet"
  fi
  if [ -f "$LL_ROOT/locust/Dockerfile" ]; then
    # Where no registry answers, the build's own pip may not reach PyPI either (no trusted CA for this
    # machine's TLS proxy in the base): the wheels are downloaded on the host and installed offline.
    [ "$MODE" = registry ] || step "locust-wheels" prepare_locust_wheels "$(python_base)"
    # Docker's layer cache makes this a no-op when locust/ has not changed.
    step "build-locust-image" docker build --build-arg "BASE_IMAGE=$(python_base)" \
      -t "$LOCUST_IMAGE:$LOCUST_IMAGE_TAG" "$LL_ROOT/locust"
  else
    log "locust image: skipped, locust/Dockerfile is not there yet"
  fi
}

MISSING_IMAGES=()
# load_app_images: every image the chart names (or, without a chart, the service image) into the
# node; the ones not built yet are listed in MISSING_IMAGES.
load_app_images() {
  local image images
  if chart_present; then
    ensure_helm
    images=$(chart_images "$KUBERNETES_VERSION")
  else
    images=$SERVICE_IMAGE:$SERVICE_VERSION
  fi
  for image in $images; do
    if docker image inspect "$image" >/dev/null 2>&1; then
      load_image "$image"
    elif [ "$MODE" = registry ] && [ "${image#liveness-lab/}" = "$image" ]; then
      log "image $image: the node pulls it"
    else
      MISSING_IMAGES+=("$image")
    fi
  done
}

print_next_steps() {
  if [ "$CHART_INSTALLED" = 0 ]; then
    printf '\nthe kind cluster %s is up (%ss), without the chart (see above).\n' "$KIND_CLUSTER_NAME" "$(($(ll_now) - LL_START))"
    printf '  tear down:          scripts/cluster-down.sh\n'
    return 0
  fi
  cat <<EOF

liveness-lab is up ($(($(ll_now) - LL_START))s).
  Locust web UI:      http://127.0.0.1:8089
  watch the pods:     kubectl get pods -n liveness-lab -w
  scripted demo:      scripts/demo.sh
  variants:           http://127.0.0.1:30080 (blocking)  :30081 (reactive)  :30082 (offloaded)  :30083 (virtual)
  tear down:          scripts/cluster-down.sh  (keeps the build caches; --purge removes them)
EOF
}

CHART_INSTALLED=0
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
    print_plan
    return 0
  fi
  trap on_exit EXIT
  trap 'exit 130' INT TERM
  ensure_docker
  decide_mode
  print_plan >&2
  ensure_kind
  prepare_images
  create_cluster "$(node_image)" "$MODE"
  build_app_images
  load_app_images
  if ! chart_present; then
    log "chart: chart/Chart.yaml is not there yet; the cluster is up without it"
  elif [ ${#MISSING_IMAGES[@]} -gt 0 ]; then
    log "chart: not installed, these images it names are not built yet: ${MISSING_IMAGES[*]}; the cluster is up without it"
  else
    install_chart
    CHART_INSTALLED=1
  fi
  print_next_steps
}

main "$@"
