"""Two releases in two namespaces of the three-node cluster (docs/workshop.md): the one cluster-up installs
(liveness-lab in liveness-lab) and a participant's (bob in ws-bob: chart/ci/shared-cluster-values.yaml, no
NodePorts, two Locust workers, the images cluster-up loaded). Their objects do not collide: every object of
each is in its own namespace, and the only cluster-scoped ones are the kubelet-probe grant cluster-up turns
on for its own release (locust.kubeletProbeMetrics.enabled: nodes are cluster-scoped), named with the
release's namespace; their RBAC binds only their own ServiceAccount. Their
scripted demos run at the same time with the load from inside the cluster (--load cluster), each holding
its own lock, and both PASS: the blocking pod killed by its liveness probe within its window, the
reactive pod 0 failed."""

from __future__ import annotations

import json
import threading
import time

import pytest
from e2e import kind

from liveness_lab.base import exits
from liveness_lab.demo import cluster_lock as lock

SECOND = {"release": "bob", "namespace": "ws-bob"}
FIRST = {"release": kind.RELEASE, "namespace": kind.NAMESPACE}
RESTRICTED = [f"pod-security.kubernetes.io/{mode}=restricted" for mode in ("enforce", "warn", "audit")]
# The first kill comes 11-16 s into the load, the restart it makes about 35 s in (2026-11-28: 14.8 and 15.1 s,
# +34 s): a 40 s hold and 10 s of quiet see both, as the e2e's release-change run does.
DEMO_ARGS = ["--load", "cluster", "--ramp", "2", "--hold", "40", "--quiet", "10"]
CLUSTER_SCOPED = [
    "clusterroles",
    "clusterrolebindings",
    "priorityclasses",
    "storageclasses",
    "validatingwebhookconfigurations",
    "mutatingwebhookconfigurations",
    "customresourcedefinitions",
]


def instance(release: str) -> str:
    return f"app.kubernetes.io/instance={release}"


@pytest.fixture(scope="module")
def second_release(cluster, tmp_path_factory):
    """bob in ws-bob, as a workshop participant installs it, with the images of this cluster (no pull
    Secret: a values file, as `--set imagePullSecrets=null` would stay null in a later --reuse-values)."""
    ns = SECOND["namespace"]
    local = tmp_path_factory.mktemp("bob") / "local-images.yaml"
    local.write_text("imagePullSecrets: []\n")
    kind.kubectl("create", "namespace", ns)
    kind.kubectl("label", "namespace", ns, "--overwrite", *RESTRICTED)
    kind.run(
        [
            kind.tool("helm"),
            "install",
            SECOND["release"],
            str(kind.REPO / "chart"),
            "--kube-context",
            kind.CONTEXT,
            "--namespace",
            ns,
            "-f",
            str(kind.REPO / "chart" / "ci" / "shared-cluster-values.yaml"),
            "--set",
            f"image.repository={kind.VERSIONS['SERVICE_IMAGE']}",
            "--set",
            f"locust.image.repository={kind.VERSIONS['LOCUST_IMAGE']}",
            "-f",
            str(local),
            "--wait",
            "--timeout",
            "5m",
        ],
        timeout=400,
    )
    return SECOND


def objects_of(release: str) -> list[tuple[str, str, str]]:
    """(kind, namespace or "", name) of every object labelled with RELEASE's instance, namespaced or not."""
    kinds = "deployments,services,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets,networkpolicies"
    found = kind.kubectl_json("get", kinds, "--all-namespaces", "-l", instance(release))["items"]
    found += kind.kubectl_json("get", ",".join(CLUSTER_SCOPED), "-l", instance(release))["items"]
    return sorted((o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in found)


def kubelet_probe_grant(obj: tuple[str, str, str], release: dict) -> bool:
    """The ClusterRole and its binding of locust.kubeletProbeMetrics (chart/templates/locust-kubelet-*.yaml):
    cluster-scoped, their name starts with the release's namespace so two releases cannot share one."""
    k, ns, name = obj
    named = name.startswith(f"{release['namespace']}-") and name.endswith("-kubelet-probes")
    return k in ("ClusterRole", "ClusterRoleBinding") and not ns and named


def test_the_two_releases_objects_do_not_collide(second_release):
    mine = {r["release"]: objects_of(r["release"]) for r in (FIRST, SECOND)}
    for r in (FIRST, SECOND):
        objs = mine[r["release"]]
        assert any(k == "Deployment" for k, _, _ in objs), f"{r['release']} has no Deployment: {objs}"
        elsewhere = [o for o in objs if o[1] != r["namespace"] and not kubelet_probe_grant(o, r)]
        assert not elsewhere, f"{r['release']}'s objects outside {r['namespace']} (or cluster-scoped): {elsewhere}"
    assert not set(mine[FIRST["release"]]) & set(mine[SECOND["release"]])


def test_each_releases_rbac_binds_only_its_own_serviceaccount_in_its_namespace(second_release):
    for r in (FIRST, SECOND):
        bindings = kind.kubectl_json("-n", r["namespace"], "get", "rolebindings", "-l", instance(r["release"]))["items"]
        assert bindings, f"{r['release']} has no RoleBinding"
        for b in bindings:
            assert b["roleRef"]["kind"] == "Role", b["roleRef"]
            subjects = {(s["kind"], s.get("namespace")) for s in b["subjects"]}
            assert subjects == {("ServiceAccount", r["namespace"])}, f"{r['release']}: {b['metadata']['name']} binds {b['subjects']}"
        for b in kind.kubectl_json("get", "clusterrolebindings", "-l", instance(r["release"]))["items"]:
            subjects = {(s["kind"], s.get("namespace")) for s in b["subjects"]}
            assert subjects == {("ServiceAccount", r["namespace"])}, f"{r['release']}: {b['metadata']['name']} binds {b['subjects']}"


def locks_held() -> dict[str, bool]:
    return {
        r["release"]: bool(
            kind.kubectl(
                "-n", r["namespace"], "get", "configmap", lock.lock_name(r["release"]), "--ignore-not-found", "-o", "name"
            ).stdout.strip()
        )
        for r in (FIRST, SECOND)
    }


def test_both_demos_at_once_with_the_load_from_inside_the_cluster_pass(second_release, request, tmp_path):
    results, outs, both_locked = {}, {}, []

    def demo(r):
        outs[r["release"]] = tmp_path / r["release"]
        results[r["release"]] = kind.run_streamed(
            [kind.SCRIPTS / "demo.sh", *DEMO_ARGS, "--namespace", r["namespace"], "--release", r["release"], "--out", outs[r["release"]]],
            kind.logs_dir() / f"multinode-demo-{r['release']}.log",
            request.config,
            1200,
        )

    threads = [threading.Thread(target=demo, args=(r,)) for r in (FIRST, SECOND)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        if all(locks_held().values()):
            both_locked.append(time.monotonic())
        time.sleep(5)
    for t in threads:
        t.join()

    summary = {}
    for r in (FIRST, SECOND):
        name = r["release"]
        verdict = json.loads((outs[name] / "verdict.json").read_text()) if (outs[name] / "verdict.json").exists() else {}
        variants = verdict.get("variants", {})
        nodes = {
            p["metadata"]["name"]: p["spec"].get("nodeName")
            for p in kind.kubectl_json("-n", r["namespace"], "get", "pods", "-l", instance(name))["items"]
        }
        summary[name] = {
            "exit": results[name].returncode,
            "verdict": verdict.get("verdict"),
            "first kill s": variants.get("blocking", {}).get("firstLivenessKillS"),
            "kill window": verdict.get("killWindows", {}).get("blocking"),
            "reactive failed": variants.get("reactive", {}).get("failures"),
            "nodes": nodes,
        }
    # Kept beside the suite's logs: the figures of the run (docs/multinode.md), passed or failed.
    (kind.logs_dir() / "multinode-demos.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    assert both_locked, "the two demos never held their locks at the same time: they did not run at once"
    for name, s in summary.items():
        assert s["exit"] == exits.PASS, f"{name}: {s}; {results[name].describe()}"
        assert s["verdict"] == "PASS" and s["reactive failed"] == 0, f"{name}: {s}"
