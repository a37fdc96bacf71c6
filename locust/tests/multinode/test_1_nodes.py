"""scripts/cluster-up.sh --workers 2: three nodes, each with its own pod range, and a pod network between
them: every node routes every other node's podCIDR via that node's IP, each node's CNI config gives
addresses from its own podCIDR, and a pod on each node reaches a pod and a Service (by its DNS name) on
every other node. The release's NodePorts, mapped on the control plane only, reach its pods on the workers."""

from __future__ import annotations

import ipaddress
import json
import time

import pytest
from e2e import kind

from . import netcheck

NODES = 1 + 2  # tests/multinode/conftest.py's WORKERS


def test_cluster_up(cluster_up):
    assert cluster_up.returncode == 0, cluster_up.describe()
    print(f"cluster-up of {NODES} nodes: {cluster_up.seconds:.0f} s")


@pytest.fixture(scope="module")
def nodes(cluster) -> list[dict]:
    """[{name, cidr, ip, ready, roles}] of every node."""
    found = []
    for n in kind.kubectl_json("get", "nodes")["items"]:
        found.append(
            {
                "name": n["metadata"]["name"],
                "cidr": n["spec"].get("podCIDR"),
                "ip": next((a["address"] for a in n["status"]["addresses"] if a["type"] == "InternalIP"), None),
                "ready": next((c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready"), None),
                "control_plane": "node-role.kubernetes.io/control-plane" in n["metadata"].get("labels", {}),
            }
        )
    return found


def docker_exec(node: str, *cmd: str) -> str:
    return kind.run(["docker", "exec", node, *cmd]).stdout


def test_three_nodes_ready_each_with_its_own_pod_range(nodes):
    assert len(nodes) == NODES and sum(n["control_plane"] for n in nodes) == 1, nodes
    assert all(n["ready"] == "True" for n in nodes), nodes
    cidrs = [ipaddress.ip_network(n["cidr"]) for n in nodes]
    assert all(not a.overlaps(b) for i, a in enumerate(cidrs) for b in cidrs[i + 1 :]), f"overlapping pod ranges: {cidrs}"


def test_every_node_routes_every_other_nodes_pod_range_via_its_ip(nodes):
    missing = []
    for node in nodes:
        for other in nodes:
            if other is node:
                continue
            route = docker_exec(node["name"], "ip", "route", "show", other["cidr"]).strip()
            if not route.startswith(f"{other['cidr']} via {other['ip']}"):
                missing.append(f"{node['name']}: {other['cidr']} via {other['ip']} ({other['name']}); has: {route or 'no route'}")
    assert not missing, "\n".join(missing)


def test_each_nodes_cni_config_gives_addresses_from_its_own_range(nodes):
    """Where kindnetd runs (kind's own node image) it writes the config itself: nothing to check here."""
    if kind.kubectl("-n", "kube-system", "get", "daemonset", "kindnet", "--ignore-not-found", "-o", "name").stdout.strip():
        pytest.skip("kindnetd runs: it writes each node's CNI config")
    for node in nodes:
        for path in docker_exec(node["name"], "sh", "-c", "ls /etc/cni/net.d/*.conflist").split():
            conf = json.loads(docker_exec(node["name"], "cat", path))
            ranges = [p["ipam"].get("ranges") for p in conf["plugins"] if p.get("ipam", {}).get("type") == "host-local"]
            assert ranges == [[[{"subnet": node["cidr"]}]]], f"{node['name']}:{path}: host-local ranges {ranges}, podCIDR {node['cidr']}"


def test_no_pod_has_an_address_outside_its_nodes_range(nodes):
    cidrs = {n["name"]: ipaddress.ip_network(n["cidr"]) for n in nodes}
    wrong = [
        f"{p['metadata']['namespace']}/{p['metadata']['name']} on {p['spec']['nodeName']}: {p['status']['podIP']}"
        for p in kind.kubectl_json("get", "pods", "--all-namespaces")["items"]
        if not p["spec"].get("hostNetwork")
        and p["status"].get("podIP")
        and p["spec"].get("nodeName") in cidrs
        and ipaddress.ip_address(p["status"]["podIP"]) not in cidrs[p["spec"]["nodeName"]]
    ]
    assert not wrong, f"pods outside their node's podCIDR ({cidrs}): {wrong}"


@pytest.fixture(scope="module")
def netcheck_pods(nodes):
    """A netcheck pod (and Service) on every node: {index: (pod ip, node name)}."""
    netcheck.apply([n["name"] for n in nodes])
    pods = kind.kubectl_json("-n", netcheck.NAMESPACE, "get", "pods", "-l", "app=netcheck")["items"]
    yield {int(p["metadata"]["labels"]["netcheck"]): (p["status"]["podIP"], p["spec"]["nodeName"]) for p in pods}
    netcheck.delete()


def test_a_pod_on_each_node_reaches_pods_and_services_on_the_other_nodes(netcheck_pods):
    assert len({node for _, node in netcheck_pods.values()}) == NODES, netcheck_pods
    # A Service answers once its endpoints reach every node's kube-proxy, which may lag the pods' Ready by
    # seconds on a busy machine (until then kube-proxy refuses: ECONNREFUSED): what fails is asked again,
    # for up to 60 s.
    todo = {}
    for i in netcheck_pods:
        others = [j for j in netcheck_pods if j != i]
        todo[i] = [f"http://{netcheck_pods[j][0]}:{netcheck.PORT}/" for j in others]
        todo[i] += [f"http://netcheck-{j}.{netcheck.NAMESPACE}.svc.cluster.local/" for j in others]  # DNS, then a Service
    deadline = time.monotonic() + 60
    while True:
        failed = {}
        for i, urls in todo.items():
            answers = netcheck.fetch_from(f"netcheck-{i}", urls)
            failed[i] = {url: answer for url, answer in answers.items() if answer != "200"}
        todo = {i: list(f) for i, f in failed.items() if f}
        if not todo or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert not todo, "\n".join(f"from {netcheck_pods[i][1]}: {url} -> {answer}" for i, f in failed.items() for url, answer in f.items())


def test_the_control_planes_nodeports_reach_the_release_on_the_workers(nodes):
    """kind keeps the control plane tainted when there are workers: the release runs on the workers, and
    kind-config.yaml's mappings (control plane only) reach it through kube-proxy."""
    control_plane = next(n["name"] for n in nodes if n["control_plane"])
    pods = kind.kubectl_json("-n", kind.NAMESPACE, "get", "pods", "-l", kind.RELEASE_SELECTOR)["items"]
    on = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods}
    assert on and control_plane not in on.values(), f"release pods by node: {on}"
    for name, node_port in sorted(kind.chart_node_ports().items()):
        port = kind.host_port(node_port)
        status, waited = kind.http_status(f"http://127.0.0.1:{port}/")
        assert status is not None, f"127.0.0.1:{port} ({name}, NodePort {node_port}) did not answer within {waited:.0f} s"
