#!/usr/bin/env python3
"""The pod network of a kind cluster whose nodes run no kindnetd (the local node image), with the standard
library only: what kindnetd does on kind's own node image, done once from the host.

Usage: scripts/libexec/pod_network.py CONTEXT        (scripts/lib/cluster.sh, program_pod_network)

For every node (kubectl --context CONTEXT get nodes): its spec.podCIDR and InternalIP. Then, per node
container (docker exec):
  - its CNI config (the .conflist in /etc/cni/net.d with a host-local IPAM, baked into the node image for
    the first node's slice) gets the node's own podCIDR; containerd reads the directory again by itself;
  - a route to every other node's podCIDR via that node's IP (`ip route replace`: the nodes share kind's
    Docker network, one hop apart; what kindnetd's routes are).
Pods that got an address outside their node's podCIDR before that (a worker's first pods, CoreDNS on a
worker) are deleted: their controllers make new ones with the right address. Everything is idempotent: run
again on a cluster whose nodes Docker restarted (routes are lost then), it puts back what is missing.
Prints one line per change; exits 1 with the reason and the fix when a node has no podCIDR or no CNI config.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
import time

PODCIDR_WAIT_S = 60
WRONG_POD_ROUNDS = 20


def run(*cmd: str, stdin: str | None = None) -> str:
    result = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(
            f"error: `{' '.join(cmd)}` failed: {result.stderr.strip()}\n"
            "  fix: check that the cluster's nodes run (docker ps; kubectl get nodes), then run scripts/cluster-up.sh again"
        )
    return result.stdout


def kubectl_json(context: str, *args: str) -> dict:
    return json.loads(run("kubectl", "--context", context, *args, "-o", "json"))


def nodes(context: str) -> list[dict]:
    """[{name, cidr, ip}] of every node, once each has a podCIDR (kube-controller-manager gives it soon
    after the node registers)."""
    deadline = time.monotonic() + PODCIDR_WAIT_S
    while True:
        found, missing = [], []
        for item in kubectl_json(context, "get", "nodes")["items"]:
            name = item["metadata"]["name"]
            cidr = item["spec"].get("podCIDR")
            ip = next((a["address"] for a in item["status"].get("addresses", []) if a["type"] == "InternalIP"), None)
            (found if cidr and ip else missing).append({"name": name, "cidr": cidr, "ip": ip})
        if not missing:
            return found
        if time.monotonic() > deadline:
            raise SystemExit(
                f"error: node(s) {', '.join(n['name'] for n in missing)} have no podCIDR or InternalIP after {PODCIDR_WAIT_S}s\n"
                "  fix: kind's config must leave networking.podSubnet to kind (kube-controller-manager --allocate-node-cidrs); "
                "scripts/cluster-down.sh, then scripts/cluster-up.sh"
            )
        time.sleep(2)


def fit_conflist(node: str, cidr: str) -> None:
    """The node's host-local CNI config, its range set to CIDR (written only when it differs)."""
    names = run("docker", "exec", node, "sh", "-c", "ls /etc/cni/net.d/*.conflist 2>/dev/null || true").split()
    fitted = 0
    for path in names:
        conf = json.loads(run("docker", "exec", node, "cat", path))
        changed = False
        for plugin in conf.get("plugins", []):
            ipam = plugin.get("ipam", {})
            if ipam.get("type") != "host-local":
                continue
            fitted += 1
            want = [[{"subnet": cidr}]]
            if ipam.get("ranges") != want:
                ipam["ranges"] = want
                ipam.pop("subnet", None)
                changed = True
        if changed:
            # Written beside it and renamed: containerd never reads half a file.
            run(
                "docker",
                "exec",
                "-i",
                node,
                "sh",
                "-c",
                f"cat >'{path}.tmp' && mv '{path}.tmp' '{path}'",
                stdin=json.dumps(conf, indent=2) + "\n",
            )
            print(f"{node}: {path} now gives addresses from {cidr}")
    if not fitted:
        raise SystemExit(
            f"error: {node} has no CNI config with a host-local IPAM in /etc/cni/net.d (found: {' '.join(names) or 'none'})\n"
            "  fix: this runs on the local node image (scripts/lib/airgap.sh bakes the config); "
            "with kind's own node image kindnetd makes the network, and this is not run"
        )


def route(node: str, other: dict) -> None:
    have = run("docker", "exec", node, "ip", "route", "show", other["cidr"]).strip()
    want = f"{other['cidr']} via {other['ip']}"
    if not have.startswith(want):
        run("docker", "exec", node, "ip", "route", "replace", other["cidr"], "via", other["ip"])
        print(f"{node}: route {want} ({other['name']})")


def wrong_pods(context: str, cidrs: dict[str, ipaddress.IPv4Network]) -> list[tuple[str, str, str, str]]:
    """(namespace, name, node, ip) of each pod on the pod network whose address is outside its node's podCIDR."""
    wrong = []
    for pod in kubectl_json(context, "get", "pods", "--all-namespaces")["items"]:
        spec, status = pod["spec"], pod.get("status", {})
        node, ip = spec.get("nodeName"), status.get("podIP")
        if spec.get("hostNetwork") or pod["metadata"].get("deletionTimestamp") or not node or not ip or node not in cidrs:
            continue
        if ipaddress.ip_address(ip) not in cidrs[node]:
            wrong.append((pod["metadata"]["namespace"], pod["metadata"]["name"], node, ip))
    return wrong


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    context = argv[1]
    all_nodes = nodes(context)
    for node in all_nodes:
        fit_conflist(node["name"], node["cidr"])
        for other in all_nodes:
            if other is not node:
                route(node["name"], other)
    cidrs = {n["name"]: ipaddress.ip_network(n["cidr"]) for n in all_nodes}
    for _ in range(WRONG_POD_ROUNDS):
        wrong = wrong_pods(context, cidrs)
        if not wrong:
            break
        for namespace, name, node, ip in wrong:
            print(f"pod {namespace}/{name} on {node} has {ip}, outside {cidrs[node]}: deleted (its controller makes a new one)")
            run("kubectl", "--context", context, "-n", namespace, "delete", "pod", name, "--wait=false")
        time.sleep(3)
    else:
        raise SystemExit(
            f"error: pods still have addresses outside their node's podCIDR: {wrong}\n"
            "  fix: kubectl get pods -A -o wide; scripts/cluster-down.sh, then scripts/cluster-up.sh"
        )
    print(f"pod network: {len(all_nodes)} node(s), " + ", ".join(f"{n['name']} {n['cidr']} via {n['ip']}" for n in all_nodes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
