"""On-cluster checks of the installed release: `scripts/test-chart.sh --cluster`, after scripts/cluster-up.sh,
with the pinned helm and kubectl on PATH. The API server accepts every object the chart renders with the
release's own values, the namespace enforces the restricted Pod Security Standard and no running pod
violates it, every Deployment is rolled out, and `helm test` passes.

Environment (defaults): LIVENESS_LAB_KUBE_CONTEXT=kind-liveness-lab, LIVENESS_LAB_NAMESPACE=liveness-lab,
LIVENESS_LAB_RELEASE=liveness-lab, LIVENESS_LAB_HELM_TEST_TIMEOUT=5m (helm test and each rollout).
"""

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VERSIONS = dict(re.findall(r"^([A-Z_]+)=(\S*)", (REPO / "scripts/versions.env").read_text(), re.M))
CONTEXT = os.environ.get("LIVENESS_LAB_KUBE_CONTEXT", f"kind-{VERSIONS['KIND_CLUSTER_NAME']}")
NAMESPACE = os.environ.get("LIVENESS_LAB_NAMESPACE", "liveness-lab")
RELEASE = os.environ.get("LIVENESS_LAB_RELEASE", "liveness-lab")
TIMEOUT = os.environ.get("LIVENESS_LAB_HELM_TEST_TIMEOUT", "5m")


def run(*args) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    print(done.stdout, done.stderr)
    assert done.returncode == 0, f"{' '.join(map(str, args))} exited {done.returncode}: {done.stderr}"
    return done


def kube(*args):
    return run("kubectl", "--context", CONTEXT, "--namespace", NAMESPACE, *args)


def helm(*args):
    return run("helm", "--kube-context", CONTEXT, "--namespace", NAMESPACE, *args)


def test_server_accepts_the_chart_rendered_with_the_release_values(tmp_path):
    """Schemas, defaulting, admission (Pod Security warnings) on every object, and Helm's own server-side
    dry-run of an upgrade (lookups, ownership of existing objects)."""
    values = tmp_path / "values.yaml"
    values.write_text(helm("get", "values", RELEASE, "--output", "yaml").stdout)
    # --skip-tests: the test pods of an earlier `helm test` are still there, and a Pod's spec is immutable.
    rendered = tmp_path / "release.yaml"
    rendered.write_text(
        run(
            "helm",
            "template",
            RELEASE,
            REPO / "chart",
            "--namespace",
            NAMESPACE,
            "--kube-version",
            VERSIONS["KUBERNETES_VERSION"],
            "--values",
            values,
            "--skip-tests",
        ).stdout
    )
    kube(
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=test-chart",
        "--dry-run=server",
        "--filename",
        rendered,
    )
    helm(
        "upgrade",
        RELEASE,
        REPO / "chart",
        "--values",
        values,
        "--take-ownership",
        "--dry-run=server",
    )


def test_namespace_enforces_restricted_and_no_pod_violates_it():
    """The API server checks every pod of a namespace only when its enforce level or version changes, so
    the dry-run names an explicit version (the namespace says `latest`): its warnings list the violating pods."""
    level = kube(
        "get",
        "namespace",
        NAMESPACE,
        "-o",
        r"jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}",
    ).stdout
    assert level == "restricted", f"namespace {NAMESPACE} enforces {level or 'nothing'}"
    version = ".".join(VERSIONS["KUBERNETES_VERSION"].split(".")[:2])
    warnings = kube(
        "label",
        "--dry-run=server",
        "--overwrite",
        "namespace",
        NAMESPACE,
        "pod-security.kubernetes.io/enforce=restricted",
        f"pod-security.kubernetes.io/enforce-version={version}",
    ).stderr
    assert warnings.strip() == "", f"pods violating restricted:{version}: {warnings}"


def test_every_deployment_is_rolled_out():
    deployments = kube("get", "deployment", "-l", f"app.kubernetes.io/instance={RELEASE}", "-o", "name").stdout.split()
    assert deployments, f"release {RELEASE} has no Deployment in {NAMESPACE}"
    for deployment in deployments:
        kube("rollout", "status", deployment, "--timeout", TIMEOUT)


def test_helm_test_passes():
    helm("test", RELEASE, "--logs", "--timeout", TIMEOUT)
