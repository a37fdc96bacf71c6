"""The chart on the cluster (what scripts/test-chart.sh's static checks cannot see): the API server accepts
everything it renders, the namespace enforces the restricted Pod Security Standard that every running pod
meets, every Deployment is rolled out, and `helm test` passes."""

import os

import yaml

from . import kind

CHART = kind.REPO / "chart"
# How long `helm test` and each rollout may take.
TEST_TIMEOUT = os.environ.get("LIVENESS_LAB_HELM_TEST_TIMEOUT", "5m")


def test_the_api_server_accepts_the_rendered_chart(cluster, tmp_path):
    """A server-side dry-run of every object the chart renders with the release's own values (schemas,
    defaulting, admission, Pod Security warnings), then Helm's own server-side dry-run of an upgrade
    (lookups, ownership of the existing objects)."""
    values = tmp_path / "release-values.yaml"
    values.write_text(kind.helm("get", "values", kind.RELEASE, "--output", "yaml").stdout)
    rendered = tmp_path / "release.yaml"
    # --skip-tests: the test pods of an earlier `helm test` are still there, and a Pod's spec is immutable.
    rendered.write_text(kind.helm("template", kind.RELEASE, str(CHART), "--kube-version", kind.KUBERNETES_VERSION,
                                  "--values", str(values), "--skip-tests").stdout)
    assert any(yaml.safe_load_all(rendered.read_text())), "the chart rendered nothing"
    kind.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=test-e2e", "--dry-run=server",
                 "--namespace", kind.NAMESPACE, "--filename", str(rendered))
    kind.helm("upgrade", kind.RELEASE, str(CHART), "--values", str(values), "--take-ownership", "--dry-run=server")


def test_the_namespace_enforces_restricted_pod_security_and_no_pod_violates_it(cluster):
    """The API server checks every pod of a namespace only when its enforce level or version changes, so
    the dry-run names an explicit version (the namespace says `latest`): its warnings list the violators."""
    labels = kind.kubectl_json("get", "namespace", kind.NAMESPACE)["metadata"].get("labels", {})
    assert labels.get("pod-security.kubernetes.io/enforce") == "restricted", f"namespace {kind.NAMESPACE}'s labels: {labels}"
    version = ".".join(kind.KUBERNETES_VERSION.split(".")[:2])
    out = kind.kubectl("label", "--dry-run=server", "--overwrite", "namespace", kind.NAMESPACE,
                       "pod-security.kubernetes.io/enforce=restricted", f"pod-security.kubernetes.io/enforce-version={version}")
    assert not out.stderr.strip(), f"pods violating restricted:{version}:\n{out.stderr}"


def test_every_deployment_of_the_release_is_rolled_out(cluster):
    deployments = kind.kubectl("-n", kind.NAMESPACE, "get", "deployment", "-l", kind.RELEASE_SELECTOR, "-o", "name").stdout.split()
    assert deployments, f"no Deployment labelled {kind.RELEASE_SELECTOR} in {kind.NAMESPACE}"
    for deployment in deployments:
        kind.kubectl("-n", kind.NAMESPACE, "rollout", "status", deployment, "--timeout", TEST_TIMEOUT, timeout=3600)


def test_helm_test_passes(cluster):
    out = kind.helm("test", kind.RELEASE, "--logs", "--timeout", TEST_TIMEOUT, timeout=3600)
    print(out.stdout)
