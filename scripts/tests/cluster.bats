#!/usr/bin/env bats
# scripts/lib/cluster.sh without a cluster: the kind config cluster-up derives from kind-config.yaml for
# each mode and host (render_kind_config), in macOS's userland, parsed by a YAML parser (PyYAML: Debian's
# python3-yaml, which scripts/test.sh installs; without it these tests fail). Docker is a stand-in that
# answers nothing, so the host's cgroup version is read from /sys/fs/cgroup.

load test_helper

setup() {
  stub_docker "$BATS_TEST_TMPDIR/stubs"
  PATH=$BATS_TEST_TMPDIR/stubs:$PATH
  # shellcheck source=../lib/common.sh
  . "$ROOT/scripts/lib/common.sh"
  # shellcheck source=../lib/tools.sh
  . "$ROOT/scripts/lib/tools.sh"
  # shellcheck source=../lib/docker.sh
  . "$ROOT/scripts/lib/docker.sh"
  # shellcheck source=../lib/cluster.sh
  . "$ROOT/scripts/lib/cluster.sh"
  export LL_CACHE=$BATS_TEST_TMPDIR/cache LL_LOGS=$BATS_TEST_TMPDIR/logs LL_TOOLS=$BATS_TEST_TMPDIR/clone/.tools
}

# kind_cluster FILE: FILE parsed as YAML is a kind Cluster; prints its networking section as JSON.
kind_cluster() {
  python3 -c 'import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["kind"] == "Cluster", d.get("kind")
print(json.dumps(d.get("networking", {}), sort_keys=True))' "$1"
}

@test "air-gapped: kind-config.yaml plus disableDefaultCNI, still a kind Cluster" {
  render_kind_config airgap "$BATS_TEST_TMPDIR/kind-airgap.yaml"
  run grep -A1 '^networking:$' "$BATS_TEST_TMPDIR/kind-airgap.yaml"
  assert_line '  disableDefaultCNI: true'
  run kind_cluster "$BATS_TEST_TMPDIR/kind-airgap.yaml"
  assert_success
  assert_output --partial '"disableDefaultCNI": true'
}

@test "registry: no disableDefaultCNI; failCgroupV1 false only on a cgroup v1 host; a kind Cluster" {
  render_kind_config registry "$BATS_TEST_TMPDIR/kind-registry.yaml"
  run cat "$BATS_TEST_TMPDIR/kind-registry.yaml"
  refute_output --partial disableDefaultCNI
  if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
    refute_output --partial failCgroupV1
  else
    assert_output --partial 'failCgroupV1: false'
  fi
  run kind_cluster "$BATS_TEST_TMPDIR/kind-registry.yaml"
  assert_success
  refute_output --partial disableDefaultCNI
}

@test "a restart cap: one KubeletConfiguration patch for every node, with failCgroupV1 on a cgroup v1 host too" {
  local mode
  for mode in airgap registry; do
    render_kind_config "$mode" "$BATS_TEST_TMPDIR/kind-$mode.yaml" 1 60
    run python3 -c 'import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
patches = [yaml.safe_load(p) for p in d["kubeadmConfigPatches"]]
print(json.dumps(patches, sort_keys=True))' "$BATS_TEST_TMPDIR/kind-$mode.yaml"
    assert_success
    if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
      assert_output '[{"crashLoopBackOff": {"maxContainerRestartPeriod": "60s"}, "kind": "KubeletConfiguration"}]'
    else
      assert_output '[{"crashLoopBackOff": {"maxContainerRestartPeriod": "60s"}, "failCgroupV1": false, "kind": "KubeletConfiguration"}]'
    fi
  done
  render_kind_config registry "$BATS_TEST_TMPDIR/kind-none.yaml"
  run cat "$BATS_TEST_TMPDIR/kind-none.yaml"
  refute_output --partial crashLoopBackOff
}

# shellcheck disable=SC2317 # the stand-ins below are called by check_restart_cap
@test "a reused cluster with another restart cap is refused, naming both and the fix; the same cap, or none asked, passes" {
  cluster_nodes() { echo liveness-lab-control-plane; }
  # /configz as the kind cluster's v1.37 kubelet answers it (locust/tests/fixtures/kubelet/): the default
  # cap printed, 5m0s.
  kube() { cat "$ROOT/locust/tests/fixtures/kubelet/configz-default.json"; }
  run check_restart_cap 60
  assert_failure
  assert_output --partial "error: cluster liveness-lab exists with the kubelet's restart cap 5m0s on liveness-lab-control-plane; 60s asked for"
  assert_output --partial "fix: a kubelet's configuration is set when kind creates the cluster: scripts/cluster-down.sh, then scripts/cluster-up.sh --max-restart-period 60"
  run check_restart_cap ""
  assert_success
  # The same answer with the cap --max-restart-period 60 sets, as Go prints 60 s (not recorded).
  kube() { sed 's/"maxContainerRestartPeriod":"5m0s"/"maxContainerRestartPeriod":"1m0s"/' "$ROOT/locust/tests/fixtures/kubelet/configz-default.json"; }
  run check_restart_cap 60
  assert_success
  run check_restart_cap 45
  assert_failure
  assert_output --partial "restart cap 1m0s on liveness-lab-control-plane; 45s asked for"
  kube() { return 1; }
  run check_restart_cap 60
  assert_success
  assert_output --partial "the kubelet's configuration could not be read"
}

@test "a kind-config.yaml without a networking section is refused for the air-gapped path" {
  mkdir -p "$BATS_TEST_TMPDIR/root/scripts"
  grep -v '^networking:$' "$ROOT/kind-config.yaml" >"$BATS_TEST_TMPDIR/root/kind-config.yaml"
  LL_ROOT=$BATS_TEST_TMPDIR/root run render_kind_config airgap "$BATS_TEST_TMPDIR/kind-airgap.yaml"
  assert_failure
  assert_output --partial "kind-config.yaml has no 'networking:' section to extend"
}

@test "workers: appended to kind-config.yaml's nodes list, no port mapping on them, the control plane's kept" {
  local mode
  for mode in airgap registry; do
    render_kind_config "$mode" "$BATS_TEST_TMPDIR/kind-$mode.yaml" 2
    run python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(" ".join(n["role"] + ("+ports" if n.get("extraPortMappings") else "") for n in d["nodes"]))' "$BATS_TEST_TMPDIR/kind-$mode.yaml"
    assert_success
    assert_output "control-plane+ports worker worker"
  done
  render_kind_config registry "$BATS_TEST_TMPDIR/kind-one.yaml"
  run grep -c 'role:' "$BATS_TEST_TMPDIR/kind-one.yaml"
  assert_output 1
}

@test "workers asked for, but kind-config.yaml has no top-level nodes list: refused, saying so" {
  mkdir -p "$BATS_TEST_TMPDIR/root/scripts"
  sed 's/^nodes:$/machines:/' "$ROOT/kind-config.yaml" >"$BATS_TEST_TMPDIR/root/kind-config.yaml"
  LL_ROOT=$BATS_TEST_TMPDIR/root run render_kind_config registry "$BATS_TEST_TMPDIR/kind.yaml" 2
  assert_failure
  assert_output --partial "kind-config.yaml has no top-level 'nodes:' list to add 2 worker(s) to"
}

# shellcheck disable=SC2317 # the stand-ins below are called by reuse_cluster
@test "a cluster that is up with another number of workers is not reused: the error says how many and the fix" {
  cluster_nodes() { printf '%s\n' liveness-lab-control-plane liveness-lab-worker; }
  run reuse_cluster 2
  assert_failure
  assert_output --partial "error: cluster liveness-lab exists with 1 worker node(s); 2 asked for (--workers / LIVENESS_LAB_WORKERS)"
  assert_output --partial "fix: run scripts/cluster-down.sh first"
  cluster_nodes() { echo liveness-lab-control-plane; }
  api_answers() { return 0; }
  run reuse_cluster 0
  assert_success
  assert_output --partial "exists, reused (1 node(s)"
}

# shellcheck disable=SC2317 # the docker stand-ins below are called by unmapped_host_ports
@test "a cluster created before kind-config.yaml mapped a port: the unmapped ports are named, none when all are there" {
  docker() { printf '%s\n' "30080/tcp -> 127.0.0.1:30080" "30081/tcp -> 127.0.0.1:30081" "30082/tcp -> 127.0.0.1:30082" \
    "30083/tcp -> 127.0.0.1:30083" "30089/tcp -> 127.0.0.1:8089" "6443/tcp -> 127.0.0.1:41234"; }
  run unmapped_host_ports liveness-lab-control-plane
  assert_output "30084 30085 30086" # the servlet variants' ports, added to kind-config.yaml later
  docker() { awk '$1 == "hostPort:" { print $2 "/tcp -> 127.0.0.1:" $2 }' "$ROOT/kind-config.yaml"; }
  run unmapped_host_ports liveness-lab-control-plane
  assert_output ""
  docker() { return 1; } # Docker cannot say: no warning made up
  run unmapped_host_ports liveness-lab-control-plane
  assert_output ""
}

# Issue 50: one cluster at a time (they would share 127.0.0.1's NodePorts); cluster-up stops before it builds.
@test "check_cluster_kubernetes: a cluster of another release is refused naming both and the fix; the same passes" {
  ll_select_kubernetes 1.36 --kubernetes-version
  STUB_CLUSTER_VERSION=$KUBERNETES_1_35_VERSION run check_cluster_kubernetes
  assert_failure 1
  assert_output --partial "error: cluster liveness-lab runs Kubernetes $KUBERNETES_1_35_VERSION; $KUBERNETES_1_36_VERSION asked for (--kubernetes-version)"
  assert_output --partial "fix: one cluster at a time (each maps 127.0.0.1's ports of kind-config.yaml): scripts/cluster-down.sh && scripts/cluster-up.sh --kubernetes-version 1.36; or keep it: --kubernetes-version 1.35"
  STUB_CLUSTER_VERSION=$KUBERNETES_1_36_VERSION run check_cluster_kubernetes
  assert_success
  run check_cluster_kubernetes # no cluster
  assert_success
}

# Issue 50: Helm 4 installs a new release server-side; then the lab's actions (a scale put back, an
# environment variable put back) make the next helm upgrade or rollback that changes the field fail with a
# conflict. cluster-up's release is applied client-side on Helm 4 too; Helm 3 has no such flag.
@test "helm_apply_flags: --server-side=false on Helm 4, nothing on Helm 3" {
  local v
  for v in v4.3.1 v4.0.0 v3.22.0 v3.17.0; do
    printf '#!/bin/sh\necho %s\n' "$v" >"$BATS_TEST_TMPDIR/stubs/helm"
    chmod +x "$BATS_TEST_TMPDIR/stubs/helm"
    run helm_apply_flags
    assert_success
    case $v in
      v4.*) assert_output "--server-side=false" ;;
      *) assert_output "" ;;
    esac
  done
}
