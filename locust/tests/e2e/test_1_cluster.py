"""scripts/cluster-up.sh brings up a working cluster: it succeeds, the node and every kube-system pod are
Ready, and each NodePort of the release answers on 127.0.0.1 through kind-config.yaml's mapping."""

import os

import pytest

from . import kind

NODE_PORTS = sorted(kind.chart_node_ports().items(), key=lambda item: item[1])


def test_cluster_up(cluster_up):
    assert cluster_up.returncode == 0, cluster_up.describe()


def test_the_node_is_ready(cluster):
    nodes = kind.kubectl_json("get", "nodes")["items"]
    ready = {
        n["metadata"]["name"]: next((c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready"), "no condition") for n in nodes
    }
    assert ready and set(ready.values()) == {"True"}, f"Ready conditions: {ready}"


def test_every_kube_system_pod_is_ready(cluster):
    wait = os.environ.get("LIVENESS_LAB_E2E_WAIT", "300s")
    kind.kubectl("-n", "kube-system", "wait", "--for=condition=Ready", "pod", "--all", f"--timeout={wait}", timeout=3600)


@pytest.fixture(scope="module")
def release_node_ports(cluster) -> set[int]:
    services = kind.kubectl_json("-n", kind.NAMESPACE, "get", "services")["items"]
    return {p["nodePort"] for s in services for p in s["spec"].get("ports", []) if p.get("nodePort")}


def test_the_release_has_the_nodeports_of_the_charts_values(release_node_ports):
    """The parameters below come from chart/values.yaml: the release on the cluster must have those and no other."""
    assert release_node_ports == {port for _, port in NODE_PORTS}, (
        f"NodePorts of the release: {sorted(release_node_ports)}; of chart/values.yaml (enabled variants, Locust): {NODE_PORTS}"
    )


@pytest.mark.parametrize(("name", "node_port"), NODE_PORTS, ids=[f"{name}-{port}" for name, port in NODE_PORTS])
def test_the_nodeport_answers_on_loopback(release_node_ports, name, node_port):
    assert node_port in release_node_ports, f"the release has no Service on NodePort {node_port} ({name})"
    port = kind.host_port(node_port)
    assert port, f"NodePort {node_port} ({name}) is not mapped in kind-config.yaml: add it to extraPortMappings on 127.0.0.1"
    status, waited = kind.http_status(f"http://127.0.0.1:{port}/")
    print(f"127.0.0.1:{port}/ ({name}, NodePort {node_port}) -> HTTP {status} after {waited:.0f} s")
    assert status is not None, f"nothing answered HTTP on 127.0.0.1:{port} ({name}, NodePort {node_port}) within {waited:.0f} s"
