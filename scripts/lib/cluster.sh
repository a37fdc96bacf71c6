# shellcheck shell=bash
# The kind cluster and the chart: registry check, derived kind config, create-or-reuse, image loading,
# helm release. Source after common.sh, tools.sh and docker.sh.
#
# Environment it reads (with defaults):
#   LIVENESS_LAB_HELM_TIMEOUT=10m   how long helm waits for every pod to be Ready
#   LIVENESS_LAB_NODE_WAIT=300s     how long to wait for the node to be Ready

kube() { kubectl --context "$LL_KUBE_CONTEXT" "$@"; }

# registry_answers IMAGE: the image is here already, or the Docker daemon's pull of it gets as far as
# its layers (through the daemon, so its registry mirrors count). The pull is stopped there: this only
# asks. Where no registry can be reached the name does not resolve, so this fails within a second or
# two; LIVENESS_LAB_REGISTRY_WAIT (default 30) seconds is the most it waits for a first answer.
# REGISTRY_ANSWER holds the pull's last words.
REGISTRY_ANSWER=
registry_answers() {
  local line pid fd rc=1 wait=${LIVENESS_LAB_REGISTRY_WAIT:-30}
  REGISTRY_ANSWER=
  command -v docker >/dev/null 2>&1 || { REGISTRY_ANSWER="no docker command"; return 1; }
  docker image inspect "$1" >/dev/null 2>&1 && { REGISTRY_ANSWER="present locally"; return 0; }
  exec {fd}< <(docker pull "$1" 2>&1)
  pid=$!
  while IFS= read -r -t "$wait" -u "$fd" line; do
    REGISTRY_ANSWER=$line
    case $line in
      *"Pulling fs layer"* | *"Already exists"* | *Waiting* | *Downloading* | *"Digest: "* | *"Status: "*)
        rc=0
        break ;;
    esac
  done
  [ -n "$REGISTRY_ANSWER" ] || REGISTRY_ANSWER="no answer within ${wait}s"
  exec {fd}<&-
  kill "$pid" 2>/dev/null || true
  return "$rc"
}

pull_if_missing() {
  docker image inspect "$1" >/dev/null 2>&1 && { log "image $1: present"; return 0; }
  step "pull-$(echo "${1%%[@:]*}" | tr / _)" docker pull "$1"
}

cluster_exists() { kind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER_NAME"; }
api_answers() { kube get --raw /readyz >/dev/null 2>&1; }

# render_kind_config MODE OUT [WORKERS] [MAX_RESTART]: kind-config.yaml plus what this host and mode need,
# WORKERS (default 0) worker nodes after its control plane, and with MAX_RESTART (seconds) every kubelet's
# CrashLoopBackOff cap. The top-level file stays the same everywhere; the additions go to a derived copy.
# The workers get no port mapping: a NodePort answers on every node, so the control plane's mappings reach
# pods on any node through kube-proxy.
render_kind_config() {
  local mode=$1 out=$2 workers=${3:-0} max_restart=${4:-}
  mkdir -p "$(dirname "$out")"
  # The workers go at the end of the top-level 'nodes:' list (a line edit: no YAML is parsed here).
  awk -v workers="$workers" '
    function add_workers(  i) { for (i = 0; i < workers; i++) print "  - role: worker"; done = 1 }
    innodes && /^[^[:space:]#]/ { add_workers(); innodes = 0 }
    { print }
    /^nodes:[[:space:]]*$/ { innodes = 1 }
    END { if (innodes) add_workers(); if (workers > 0 && !done) exit 1 }
  ' "$LL_ROOT/kind-config.yaml" >"$out.tmp" || die "kind-config.yaml has no top-level 'nodes:' list to add $workers worker(s) to"
  if [ "$mode" = airgap ]; then
    # kindnetd's image cannot be had offline; the local node image brings a static CNI config, which
    # program_pod_network fits to each node.
    awk '{ print } /^networking:$/ { print "  disableDefaultCNI: true" }' "$out.tmp" >"$out"
    rm -f "$out.tmp"
    grep -q disableDefaultCNI "$out" || die "kind-config.yaml has no 'networking:' section to extend"
  else
    mv "$out.tmp" "$out"
  fi
  # One KubeletConfiguration patch for every node, with what this host and the options need.
  local kubelet=""
  # kubelet >= 1.35 refuses cgroup v1 unless told otherwise.
  if host_on_cgroup_v1; then kubelet+=$'\n    failCgroupV1: false'; fi
  # KEP-5593: the cap of the restart back-off, 300 s by default.
  [ -z "$max_restart" ] || kubelet+=$'\n    crashLoopBackOff:\n      maxContainerRestartPeriod: '"${max_restart}s"
  if [ -n "$kubelet" ]; then
    printf 'kubeadmConfigPatches:\n  - |\n    kind: KubeletConfiguration%s\n' "$kubelet" >>"$out"
  fi
}

# go_duration SECONDS: SECONDS as the kubelet prints a duration in its /configz (60 -> 1m0s, 45 -> 45s).
go_duration() {
  if [ "$1" -ge 60 ]; then echo "$(($1 / 60))m$(($1 % 60))s"; else echo "${1}s"; fi
}

# kubelet_restart_cap NODE: the crashLoopBackOff.maxContainerRestartPeriod NODE's kubelet runs with, as its
# /configz prints it ("1m0s"); "default" when it sets none; nothing when the kubelet does not answer.
kubelet_restart_cap() {
  local config
  config=$(kube get --raw "/api/v1/nodes/$1/proxy/configz" 2>/dev/null) || return 0
  case $config in
    *'"maxContainerRestartPeriod":"'*) config=${config#*\"maxContainerRestartPeriod\":\"}; echo "${config%%\"*}" ;;
    *) echo default ;;
  esac
}

# check_restart_cap MAX_RESTART: a reused cluster runs every kubelet with the cap asked for (nothing asked:
# not checked); else the error names the cap it has and the fix.
check_restart_cap() {
  local want=$1 node have
  [ -n "$want" ] || return 0
  for node in $(cluster_nodes); do
    have=$(kubelet_restart_cap "$node")
    if [ -z "$have" ]; then
      warn "node $node: the kubelet's configuration could not be read; its restart cap is not checked"
      continue
    fi
    [ "$have" = "$(go_duration "$want")" ] || die "cluster $KIND_CLUSTER_NAME exists with the kubelet's restart cap ${have/default/300 s (its default)} on $node; ${want}s asked for (--max-restart-period / LIVENESS_LAB_MAX_RESTART_PERIOD)" \
      "a kubelet's configuration is set when kind creates the cluster: scripts/cluster-down.sh, then scripts/cluster-up.sh --max-restart-period $want"
  done
}

# cluster_kubernetes_version: the Kubernetes release the existing cluster's control plane runs (its node
# image's /kind/version, in kind's images and ours alike); nothing when Docker cannot say (a stopped node).
cluster_kubernetes_version() {
  docker exec "$KIND_CLUSTER_NAME-control-plane" cat /kind/version 2>/dev/null | head -n 1 || true
}

# check_cluster_kubernetes: an existing cluster runs the Kubernetes of this run (KUBERNETES_VERSION), or
# cluster-up stops before it builds or changes anything, naming both and the fix. One cluster at a time:
# every cluster of this clone maps the same ports on 127.0.0.1 (kind-config.yaml), so two cannot run side
# by side; their node images can (one per release), which makes switching back a minute's work.
check_cluster_kubernetes() {
  local have
  cluster_exists || return 0
  have=$(cluster_kubernetes_version)
  [ -n "$have" ] && [ "$have" != "$KUBERNETES_VERSION" ] || return 0
  die "cluster $KIND_CLUSTER_NAME runs Kubernetes $have; $KUBERNETES_VERSION asked for ($LL_KUBERNETES_FROM)" \
    "one cluster at a time (each maps 127.0.0.1's ports of kind-config.yaml): scripts/cluster-down.sh && scripts/cluster-up.sh --kubernetes-version $(ll_kubernetes_minor "$KUBERNETES_VERSION"); or keep it: --kubernetes-version $(ll_kubernetes_minor "$have")"
}

LL_CREATING=0
# cleanup_half_created_cluster: after a failure or Ctrl-C during 'kind create', no node is left behind.
cleanup_half_created_cluster() {
  [ "$LL_CREATING" = 1 ] || return 0
  LL_CREATING=0
  log "removing the half-created cluster"
  kind delete cluster --name "$KIND_CLUSTER_NAME" >/dev/null 2>&1 || true
}

# cluster_nodes: the names of the cluster's node containers.
cluster_nodes() { kind get nodes --name "$KIND_CLUSTER_NAME" 2>/dev/null; }

# reuse_cluster WORKERS: an existing cluster, its nodes started again if Docker stopped them. A cluster
# with another number of workers than asked for is not changed: kind cannot add nodes to a cluster.
reuse_cluster() {
  local workers=$1 node=$KIND_CLUSTER_NAME-control-plane waited=0 have
  have=$(cluster_nodes | grep -c -- '-worker[0-9]*$' || true)
  [ "$have" = "$workers" ] || die "cluster $KIND_CLUSTER_NAME exists with $have worker node(s); $workers asked for (--workers / LIVENESS_LAB_WORKERS)" \
    "run scripts/cluster-down.sh first to create it with $workers, or ask for $have"
  if ! api_answers || [ -n "$(docker ps --filter "label=io.x-k8s.kind.cluster=$KIND_CLUSTER_NAME" --filter status=exited -q)" ]; then
    log "cluster $KIND_CLUSTER_NAME exists but a node is stopped; starting its nodes"
    # shellcheck disable=SC2046 # one word per node
    docker start $(cluster_nodes) >/dev/null 2>&1 || true
    until api_answers; do
      sleep 2
      waited=$((waited + 2))
      [ "$waited" -lt 120 ] || die "cluster $KIND_CLUSTER_NAME exists but does not answer" \
        "scripts/cluster-down.sh, then scripts/cluster-up.sh again"
    done
  fi
  log "cluster $KIND_CLUSTER_NAME: exists, reused ($((have + 1)) node(s), node image $(docker inspect --format '{{.Config.Image}}' "$node" 2>/dev/null))"
  local missing
  missing=$(unmapped_host_ports "$node")
  [ -z "$missing" ] || warn "cluster $KIND_CLUSTER_NAME was created before kind-config.yaml mapped 127.0.0.1:${missing// /, 127.0.0.1:}" \
    "(a port mapping is made with the cluster): what answers there in the cluster is reached from inside it only" \
    "(scripts/demo.sh then drives the in-cluster Locust); scripts/cluster-down.sh && scripts/cluster-up.sh maps them"
}

# unmapped_host_ports NODE: the host ports kind-config.yaml maps that NODE's container does not publish (a
# cluster created from an older kind-config.yaml), space-separated; nothing when Docker cannot say.
unmapped_host_ports() {
  local published port out=""
  published=$(docker port "$1" 2>/dev/null) || return 0
  [ -n "$published" ] || return 0
  while read -r port; do
    printf '%s\n' "$published" | grep -q ":$port\$" || out="$out $port"
  done < <(awk '$1 == "hostPort:" { print $2 }' "$LL_ROOT/kind-config.yaml")
  printf '%s' "${out# }"
}

# program_pod_network: where no kindnetd runs (the local node image: the no-registry path and the
# registry simulation), what kindnetd does on kind's own node image: each node's CNI config gets the
# node's own podCIDR, and every node a route to every other node's podCIDR via that node's IP; pods that
# got an address outside their node's podCIDR before that are deleted (their controllers recreate them).
# Idempotent, and run again on a reused cluster: Docker restarting a node loses its routes.
program_pod_network() {
  if [ -n "$(kube -n kube-system get daemonset kindnet -o name --ignore-not-found)" ]; then
    log "pod network: kindnetd runs (kind's node image)"
    return 0
  fi
  step pod-network python3 "$LL_ROOT/scripts/libexec/pod_network.py" "$LL_KUBE_CONTEXT"
}

# create_cluster IMAGE MODE [WORKERS] [MAX_RESTART]: the kind cluster, created or reused, with its nodes
# Ready and, where no kindnetd runs, its pod network programmed.
create_cluster() {
  local image=$1 mode=$2 workers=${3:-0} max_restart=${4:-} config=$LL_CACHE/generated/kind-config.yaml
  if cluster_exists; then
    reuse_cluster "$workers"
    check_cluster_kubernetes # again: a node Docker had stopped could not say before
    check_restart_cap "$max_restart"
  else
    render_kind_config "$mode" "$config" "$workers" "$max_restart"
    LL_CREATING=1
    step create-cluster kind create cluster --name "$KIND_CLUSTER_NAME" --config "$config" --image "$image"
    LL_CREATING=0
  fi
  step wait-node-ready kube wait --for=condition=Ready node --all --timeout="${LIVENESS_LAB_NODE_WAIT:-300s}"
  program_pod_network
}

LL_IMAGES_CHANGED=0
# node_image_label IMAGE: the io.livenesslab.sources label of IMAGE as the kind node's containerd has
# it, or nothing.
node_image_label() {
  docker exec "$KIND_CLUSTER_NAME-control-plane" crictl inspecti -o go-template \
    --template '{{index .info.imageSpec.config.Labels "io.livenesslab.sources"}}' "$1" 2>/dev/null || true
}

# load_image IMAGE: 'kind load' it unless the node already has it from the same sources. The decision is
# the image's sources label, never kind's output: with Docker's containerd image store kind never says
# "already present" (kind#4236), so every re-run would reload the images and restart every pod.
load_image() {
  local name want have
  name=load-$(echo "${1%%:*}" | tr / _)
  want=$(docker image inspect --format '{{index .Config.Labels "io.livenesslab.sources"}}' "$1" 2>/dev/null || true)
  have=$(node_image_label "$1")
  if [ -n "$want" ] && [ "$want" != "<no value>" ] && [ "$want" = "$have" ]; then
    log "image $1: already in the node (sources $want)"
    return 0
  fi
  step "$name" kind load docker-image "$1" --name "$KIND_CLUSTER_NAME"
  LL_IMAGES_CHANGED=1
}

# helm_flags: where the release lives.
helm_flags() { echo --namespace "$LL_NAMESPACE" --kube-context "$LL_KUBE_CONTEXT"; }

# release_exists: helm has a release of this name in the namespace, in whatever state.
release_exists() {
  # shellcheck disable=SC2046 # helm_flags is meant to split into words
  helm status "$LL_RELEASE" $(helm_flags) >/dev/null 2>&1
}

# release_deployed: the release's latest revision is deployed (helm's own status filter: no output to parse).
release_deployed() {
  # shellcheck disable=SC2046
  [ -n "$(helm list $(helm_flags) --deployed --short --filter "^$LL_RELEASE\$")" ]
}

# release_ever_deployed: some revision of the release reached "deployed" (it may have been superseded
# since). Helm keeps each revision in a Secret labelled owner=helm, name=<release>, status=<status> (its
# storage format since Helm 3, and Helm 4's): the API server's label selector answers, nothing is parsed.
release_ever_deployed() {
  [ -n "$(kube -n "$LL_NAMESPACE" get secrets -o name \
    -l "owner=helm,name=$LL_RELEASE,status in (deployed,superseded)" 2>/dev/null)" ]
}

# chart_description: what each upgrade of cluster-up's says of itself: the chart's sources hash, which the
# next run compares (workshop/helm.py keeps it on the Workshop tab's upgrades with the same chart).
chart_description() { echo "liveness-lab chart $(ll_sources_hash chart)"; }

# cluster_values: the values cluster-up sets on its own kind cluster, over the chart's and the user's: the
# Locust master may read the kubelets' probe counter (a ClusterRole for nodes/proxy: chart/values.yaml).
cluster_values() { echo --set locust.kubeletProbeMetrics.enabled=true; }

# release_up_to_date: the deployed release is what the chart renders now with the values it was given (a
# user's own `--set stack=servlet`, a workshop step's) and cluster-up's. Helm stores the manifest it
# applied (without hooks); `helm template` renders the same text from the same chart and values. The
# chart reads one thing from the cluster into its objects: the web UI's token, kept in its Secret
# (`lookup`, liveness-lab.uiToken), so the rendering asks the cluster (--dry-run=server, Helm >= 3.13 and
# 4); without it every rendering would make a new token and never match.
release_up_to_date() {
  local deployed planned
  release_deployed || return 1
  # The chart itself, NOTES.txt and the schema too, which the manifest does not show: each upgrade of
  # cluster-up's (and each of the Workshop tab's, with the release's own chart) says its hash.
  # shellcheck disable=SC2046
  helm history "$LL_RELEASE" $(helm_flags) --max 1 -o yaml | grep -q "$(chart_description)" || return 1
  # shellcheck disable=SC2046
  deployed=$(helm get manifest "$LL_RELEASE" $(helm_flags)) &&
    planned=$(helm template "$LL_RELEASE" "$LL_ROOT/chart" $(helm_flags) --dry-run=server --is-upgrade --skip-tests \
      -f <(helm get values "$LL_RELEASE" $(helm_flags) -o yaml) $(cluster_values)) &&
    [ "$deployed" = "$planned" ]
}

# label_namespace: the release's namespace, created if need be and labelled to enforce the restricted Pod
# Security Standard (the chart does not own its namespace by default: see chart/README.md).
label_namespace() {
  kube create namespace "$LL_NAMESPACE" --dry-run=client -o yaml | kube apply -f - >/dev/null
  kube label namespace "$LL_NAMESPACE" --overwrite pod-security.kubernetes.io/enforce=restricted \
    pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/audit=restricted >/dev/null
}

# helm_apply_flags: how the release's objects are applied: client-side, on Helm 4 too. Helm 4 applies a new
# release server-side (an existing one keeps the method it was installed with), and then a field that
# someone else changed through the API is theirs: the lab's actions scale Deployments and set their
# environment outside Helm (locust/liveness_lab/lab/actions.py), and after such a change, even one put back, the next `helm upgrade` or `helm rollback` that sets that
# field to another value fails ("Apply failed with 1 conflict: conflict with ... .spec.replicas"; seen
# with Helm 4.3.1 on a local API server). Client-side, Helm 4 patches with Helm 3's three-way merge, which
# those were written for; the lab's own upgrades follow the release's method.
helm_apply_flags() {
  case $(helm version --template '{{.Version}}' 2>/dev/null) in
    v3.*) ;;
    *) echo --server-side=false ;;
  esac
}

# install_chart: helm upgrade --install, only when something changed; pods of a release that was
# already there restart when 'kind load' brought a new image under the same tag. The release keeps the
# values its user gave it (--reset-then-reuse-values: the chart's defaults, then the release's own values,
# then cluster-up's). --take-ownership lets a user who sets namespace.manage=true adopt the namespace made
# here (the chart then renders it).
install_chart() {
  local existed=0 selector=app.kubernetes.io/instance=$LL_RELEASE timeout=${LIVENESS_LAB_HELM_TIMEOUT:-10m}
  ensure_helm
  step label-namespace label_namespace
  ! release_exists || existed=1
  if [ "$existed" = 1 ] && ! release_ever_deployed; then
    # A first install that failed half-way leaves a release that 'helm upgrade' cannot repair.
    # shellcheck disable=SC2046
    step helm-uninstall-failed helm uninstall "$LL_RELEASE" $(helm_flags) --wait
    existed=0
  fi
  if release_up_to_date; then
    log "chart: release $LL_RELEASE is up to date, not touched"
  else
    # shellcheck disable=SC2046
    step helm-upgrade helm upgrade --install "$LL_RELEASE" "$LL_ROOT/chart" $(helm_flags) $(helm_apply_flags) $(cluster_values) \
      --reset-then-reuse-values --description "$(chart_description)" --create-namespace --take-ownership --wait --timeout "$timeout"
  fi
  if [ "$existed" = 1 ] && [ "$LL_IMAGES_CHANGED" = 1 ]; then
    step restart-pods kube -n "$LL_NAMESPACE" rollout restart deployment -l "$selector"
  fi
  # Deployments, not pods: 'kubectl wait pod' would wait for ever on a pod that is going away.
  step wait-pods-ready kube -n "$LL_NAMESPACE" rollout status deployment -l "$selector" --timeout "$timeout"
}
