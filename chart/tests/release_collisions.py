"""Checks that two releases of the chart, rendered for two namespaces, can run in one cluster side by side.

Usage: python chart/tests/release_collisions.py RELEASE NAMESPACE RENDERED.yaml RELEASE NAMESPACE RENDERED.yaml
Run by chart/tests/test_chart.py (scripts/test-chart.sh) on two `helm template` renderings, with the
PyYAML of the .venv. Prints one line per finding; exits 0 when there is none, 1 when there are, 2 on bad
usage.

Two releases collide when they would create, change or delete the same object or a resource the
cluster has only once, or when one reaches into the other's namespace:
- a cluster-scoped object (Namespace, ClusterRole, ...) of the same kind and name in both renderings;
- a namespaced object without the release's namespace (it would land in another, or in whichever
  namespace the client happens to use);
- a namespaced object whose name does not start with `<release>-` (or is not the release name), so
  that two releases in one namespace would fight over it;
- RBAC beyond the namespace: any ClusterRole or ClusterRoleBinding, a RoleBinding that binds a
  ClusterRole or names a subject of another namespace;
- a nodePort both renderings use: a NodePort number is taken on every node of the cluster.
A kind in neither list below fails the check: a new kind has to be sorted in before it can pass.
"""

import sys
from collections import Counter
from dataclasses import dataclass

import yaml

# Kinds a Kubernetes API server serves per namespace, and cluster-wide (kubectl api-resources
# --namespaced=true/false), as far as a chart like this one could render them.
NAMESPACED = {
    "ConfigMap",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Endpoints",
    "EndpointSlice",
    "HorizontalPodAutoscaler",
    "Ingress",
    "Job",
    "Lease",
    "LimitRange",
    "NetworkPolicy",
    "PersistentVolumeClaim",
    "Pod",
    "PodDisruptionBudget",
    "ReplicaSet",
    "ResourceQuota",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "StatefulSet",
}
CLUSTER_SCOPED = {
    "APIService",
    "ClusterRole",
    "ClusterRoleBinding",
    "CSIDriver",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "PersistentVolume",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
}


@dataclass(frozen=True)
class Release:
    """One rendering: the release name and namespace it was rendered for, and its objects."""

    name: str
    namespace: str
    objects: list


def load(name, namespace, path):
    """The objects of one `helm template` output (empty documents dropped)."""
    with open(path, encoding="utf-8") as rendered:
        return Release(name, namespace, [doc for doc in yaml.safe_load_all(rendered) if doc])


def ident(obj):
    """KIND/NAME of an object, for the messages."""
    return f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}"


def node_ports(release):
    """The nodePort numbers the release's Services take."""
    return {
        port["nodePort"]
        for obj in release.objects
        if obj.get("kind") == "Service"
        for port in obj.get("spec", {}).get("ports", [])
        if "nodePort" in port
    }


def own_findings(release):
    """What makes one release reach beyond its namespace, or collide with another in the same one."""
    found = []
    for obj in release.objects:
        kind, meta = obj.get("kind"), obj.get("metadata", {})
        where = f"{release.name}: {ident(obj)}"
        if kind not in NAMESPACED | CLUSTER_SCOPED:
            found.append(f"{where}: kind {kind} is in neither list of {__file__}; sort it in")
            continue
        if kind in ("ClusterRole", "ClusterRoleBinding"):
            found.append(f"{where}: cluster-wide RBAC; a release may only grant within its namespace (Role, RoleBinding)")
        if kind not in NAMESPACED:
            continue
        if meta.get("namespace") != release.namespace:
            found.append(f"{where}: namespace {meta.get('namespace')!r}, not the release's {release.namespace!r}")
        name = meta.get("name", "")
        if name != release.name and not name.startswith(release.name + "-"):
            found.append(f"{where}: name does not start with the release name {release.name!r}")
        if kind == "RoleBinding":
            if obj.get("roleRef", {}).get("kind") != "Role":
                found.append(f"{where}: binds a {obj.get('roleRef', {}).get('kind')}, not a Role of its namespace")
            for subject in obj.get("subjects", []):
                if subject.get("kind") == "ServiceAccount" and subject.get("namespace") != release.namespace:
                    found.append(f"{where}: subject {subject.get('name')} in namespace {subject.get('namespace')!r}")
    return found


def shared_findings(first, second):
    """What two releases would both claim in one cluster: cluster-scoped names and nodePorts."""
    found = []
    for release in (first, second):
        counts = Counter((o.get("kind"), o["metadata"]["name"]) for o in release.objects if o.get("kind") in CLUSTER_SCOPED)
        found += [f"{release.name}: {kind}/{name} rendered {n} times" for (kind, name), n in counts.items() if n > 1]
    names = [{(o.get("kind"), o["metadata"]["name"]) for o in r.objects if o.get("kind") in CLUSTER_SCOPED} for r in (first, second)]
    found += [f"both: cluster-scoped {kind}/{name}" for kind, name in sorted(names[0] & names[1])]
    found += [f"both: nodePort {port}" for port in sorted(node_ports(first) & node_ports(second))]
    return found


def main(args):
    if len(args) != 6:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    first, second = load(*args[:3]), load(*args[3:])
    if first.namespace == second.namespace:
        print("the two renderings must be for two namespaces", file=sys.stderr)
        return 2
    found = own_findings(first) + own_findings(second) + shared_findings(first, second)
    for line in found:
        print(line)
    kinds = sorted({o.get("kind") for o in first.objects + second.objects})
    print(f"{len(first.objects)} + {len(second.objects)} objects ({', '.join(kinds)}): {len(found)} finding(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
