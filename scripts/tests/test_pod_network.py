"""scripts/libexec/pod_network.py without a cluster: docker and kubectl are stand-ins. The CNI config a
node gets, the routes it gets (none again when they are there), and which pods it deletes: those with an
address outside their node's podCIDR, not host-network pods nor pods already being deleted."""

import importlib.util
import ipaddress
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "libexec" / "pod_network.py"
BAKED = {
    "cniVersion": "1.0.0",
    "name": "liveness-lab",
    "plugins": [
        {"type": "ptp", "ipMasq": True, "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]]}},
        {"type": "portmap", "capabilities": {"portMappings": True}},
    ],
}


@pytest.fixture
def pn(monkeypatch):
    spec = importlib.util.spec_from_file_location("pod_network", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Node:
    """One node container: its conflist and routes, as docker exec sees them."""

    def __init__(self):
        self.conf, self.routes, self.calls = json.dumps(BAKED), {}, []

    def run(self, *cmd, stdin=None):
        self.calls.append(cmd)
        if cmd[:2] == ("ip", "route") and cmd[2] == "show":
            return self.routes.get(cmd[3], "")
        if cmd[:3] == ("ip", "route", "replace"):
            self.routes[cmd[3]] = f"{cmd[3]} via {cmd[5]} dev eth0"
            return ""
        if cmd[0] == "sh" and "ls" in cmd[2]:
            return "/etc/cni/net.d/10-liveness-lab.conflist\n"
        if cmd[0] == "cat":
            return self.conf
        if cmd[0] == "sh":  # the write: cat > tmp && mv
            self.conf = stdin
            return ""
        raise AssertionError(cmd)


def test_a_worker_gets_its_own_range_and_routes_once(pn, monkeypatch):
    worker = Node()

    def docker(*cmd, stdin=None):
        args = [c for c in cmd[2:] if c != "-i"]  # docker exec [-i] NODE COMMAND...
        assert cmd[:2] == ("docker", "exec") and args[0] == "w1", cmd
        return worker.run(*args[1:], stdin=stdin)

    monkeypatch.setattr(pn, "run", docker)
    pn.fit_conflist("w1", "10.244.2.0/24")
    assert json.loads(worker.conf)["plugins"][0]["ipam"]["ranges"] == [[{"subnet": "10.244.2.0/24"}]]
    other = {"name": "cp", "cidr": "10.244.0.0/24", "ip": "172.18.0.2"}
    pn.route("w1", other)
    assert worker.routes == {"10.244.0.0/24": "10.244.0.0/24 via 172.18.0.2 dev eth0"}
    before = len(worker.calls)
    pn.fit_conflist("w1", "10.244.2.0/24")
    pn.route("w1", other)
    assert not [c for c in worker.calls[before:] if c[0] == "sh" and "mv" in c[2] or "replace" in c], "changed what was right already"


def test_only_pods_addressed_outside_their_nodes_range_are_wrong(pn, monkeypatch):
    def pod(name, node, ip, host=False, deleting=False):
        meta = {"namespace": "kube-system", "name": name, **({"deletionTimestamp": "now"} if deleting else {})}
        return {"metadata": meta, "spec": {"nodeName": node, "hostNetwork": host}, "status": {"podIP": ip}}

    pods = [
        pod("coredns-a", "w1", "10.244.0.3"),
        pod("coredns-b", "cp", "10.244.0.2"),
        pod("kube-proxy", "w1", "172.18.0.3", host=True),
        pod("old", "w1", "10.244.0.4", deleting=True),
        pod("pending", "w1", None),
        pod("app", "w1", "10.244.2.5"),
    ]
    monkeypatch.setattr(pn, "kubectl_json", lambda context, *args: {"items": pods})
    cidrs = {"cp": ipaddress.ip_network("10.244.0.0/24"), "w1": ipaddress.ip_network("10.244.2.0/24")}
    assert pn.wrong_pods("ctx", cidrs) == [("kube-system", "coredns-a", "w1", "10.244.0.3")]


def test_a_node_without_a_host_local_config_is_an_error_with_the_fix(pn, monkeypatch):
    monkeypatch.setattr(pn, "run", lambda *cmd, stdin=None: "" if "ls" in " ".join(cmd) else "{}")
    with pytest.raises(SystemExit) as e:
        pn.fit_conflist("w1", "10.244.2.0/24")
    assert "has no CNI config with a host-local IPAM" in str(e.value) and "fix:" in str(e.value)
