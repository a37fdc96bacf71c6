"""The chart's checks besides helm-unittest (the *_test.yaml suites beside this file), run by scripts/test-chart.sh with the pinned
helm, ct (with Yamale and yamllint), kube-linter and helm-docs first on PATH and CT_CONFIG_DIR set.

ct lint: yamllint, the Chart.yaml schema and `helm lint --strict` with each chart/ci/*-values.yaml, offline
(--charts names the chart, so no git remote is asked; no version-increment or maintainer check). kube-linter
on the rendering of every ci/ file (exceptions justified in chart/.kube-linter.yaml). helm-docs regenerates
chart/README.md's parameter table into a copy, which must equal the committed one. The images and
appVersion are scripts/versions.env's; the modes are Mode.java's. Two releases in two namespaces of one
cluster cannot collide (release_collisions.py, beside this file), and the checker catches each collision planted.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CHART = REPO / "chart"
VERSIONS = dict(re.findall(r"^([A-Z_]+)=(\S*)", (REPO / "scripts/versions.env").read_text(), re.M))
K8S = VERSIONS["KUBERNETES_VERSION"]
CI_VALUES = sorted(CHART.glob("ci/*-values.yaml"))


def run(*args, cwd=REPO) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def render(release="liveness-lab", namespace="liveness-lab", *args) -> str:
    return run(
        "helm",
        "template",
        release,
        CHART,
        "--namespace",
        namespace,
        "--kube-version",
        K8S,
        *args,
    )


def test_ct_lint():
    run(
        "ct",
        "lint",
        "--charts",
        "chart",
        "--validate-maintainers=false",
        "--check-version-increment=false",
        "--helm-lint-extra-args",
        f"--strict --namespace liveness-lab --kube-version {K8S}",
    )


def test_kube_linter(tmp_path):
    assert CI_VALUES, "no chart/ci/*-values.yaml"
    for values in CI_VALUES:
        (tmp_path / values.name).write_text(render("liveness-lab", "liveness-lab", "--values", values))
    run("kube-linter", "lint", "--config", CHART / ".kube-linter.yaml", tmp_path)


def test_helm_docs_table_is_current(tmp_path):
    """The template fails on a key without a `# --` comment; helm-docs then only logs a warning, so its log counts."""
    copy = tmp_path / "chart"
    shutil.copytree(CHART, copy)
    out = run(
        "helm-docs",
        "--chart-search-root",
        copy,
        "--template-files",
        "README.md.gotmpl",
        "--sort-values-order",
        "file",
    )
    assert not re.search(r"level=(warning|error|fatal)", out), out
    assert (copy / "README.md").read_text() == (CHART / "README.md").read_text(), (
        "chart/README.md is not what helm-docs generates: run helm-docs on chart/ (the command above) and commit the result"
    )


def test_images_and_app_version_are_the_pinned_ones():
    docs = yaml.safe_load_all(render("liveness-lab", "liveness-lab", "--set", "locust.enabled=true"))
    images = {c["image"] for d in docs if d and d["kind"] == "Deployment" for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {
        f"{VERSIONS['SERVICE_IMAGE']}:{VERSIONS['SERVICE_VERSION']}",
        f"{VERSIONS['LOCUST_IMAGE']}:{VERSIONS['LOCUST_IMAGE_TAG']}",
    }
    assert str(yaml.safe_load(run("helm", "show", "chart", CHART))["appVersion"]) == VERSIONS["SERVICE_VERSION"]


def test_modes_are_mode_java_and_helm_test_runs_httpcheck():
    java = REPO / "service/src/main/java/io/livenesslab/service"
    # Mode.java's constants, each with its stack: `SERVLET_ASYNC(Stack.SERVLET, ...` is servlet-async on servlet.
    found = re.findall(r"^\t([A-Z][A-Z0-9_]*)\(Stack\.([A-Z]+)\b", (java / "Mode.java").read_text(), re.M)
    constants = {c.lower().replace("_", "-"): stack.lower() for c, stack in found}
    values = yaml.safe_load(run("helm", "show", "values", CHART))
    assert constants and values["serviceModes"] == constants
    assert list(values["serviceModes"]) == list(constants)  # in Mode.java's order
    assert sorted(v["mode"] for v in values["variants"].values()) == sorted(constants)
    test_pod = render(
        "liveness-lab",
        "liveness-lab",
        "--show-only",
        "templates/tests/test-api-work.yaml",
    )
    # The test pods' HTTP check is urllib3's, in the Locust image: a package its lock pins.
    assert "image: liveness-lab/locust:" in test_pod and "import sys, urllib3" in test_pod
    assert re.search(r"^urllib3==", (REPO / "locust" / "requirements.lock").read_text(), re.M)


# Two releases as a workshop runs them (docs/workshop.md): the shared-cluster values, every template on.
SHARED = [
    "--values",
    CHART / "ci/shared-cluster-values.yaml",
    "--set",
    "allVariants=true,downstream.enabled=true,locust.enabled=true,namespace.manage=true",
]
CLUSTER_RBAC = (
    "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
    "metadata: {name: liveness-lab-locust}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n"
)


def collisions(tmp_path, alice: str, bob: str) -> subprocess.CompletedProcess:
    (tmp_path / "alice.yaml").write_text(alice)
    (tmp_path / "bob.yaml").write_text(bob)
    return subprocess.run(
        [
            sys.executable,
            HERE / "release_collisions.py",
            "alice",
            "ws-alice",
            tmp_path / "alice.yaml",
            "bob",
            "ws-bob",
            tmp_path / "bob.yaml",
        ],
        capture_output=True,
        text=True,
    )


def release(name, *args):
    return render(name, f"ws-{name}", *args)


def test_two_releases_do_not_collide(tmp_path):
    done = collisions(tmp_path, release("alice", *SHARED), release("bob", *SHARED))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "what,plant,finding",
    [
        (
            "the NodePorts of the kind defaults",
            lambda r, name: release(name),
            r"^both: nodePort 30080$",
        ),
        (
            "fullnameOverride=lab in both",
            lambda r, name: release(name, *SHARED, "--set", "fullnameOverride=lab"),
            r"name does not start with the release name 'bob'",
        ),
        (
            "a ClusterRoleBinding",
            lambda r, name: r + CLUSTER_RBAC,
            r"^both: cluster-scoped ClusterRoleBinding/liveness-lab-locust$",
        ),
        (
            "objects in namespace default",
            lambda r, name: re.sub(r"^  namespace: ws-bob$", "  namespace: default", r, flags=re.M),
            r"namespace 'default', not the release's 'ws-bob'",
        ),
    ],
    ids=["nodeports", "fullname", "clusterrbac", "elsewhere"],
)
def test_collision_checker_catches_planted(tmp_path, what, plant, finding):
    done = collisions(
        tmp_path,
        plant(release("alice", *SHARED), "alice"),
        plant(release("bob", *SHARED), "bob"),
    )
    assert done.returncode != 0, f"missed {what}: {done.stdout}"
    assert re.search(finding, done.stdout, re.M), f"{what}: no finding matches {finding!r}: {done.stdout}"


# kind-config.yaml, the cluster scripts/cluster-up.sh creates: it must reach every NodePort the chart renders.
KIND = yaml.safe_load((REPO / "kind-config.yaml").read_text())
MAPPINGS = [
    (m["containerPort"], m.get("hostPort"), m.get("listenAddress", "0.0.0.0"))
    for node in KIND["nodes"]
    for m in node.get("extraPortMappings", [])
]


def test_kind_config_one_node_named_liveness_lab_api_on_loopback():
    assert (KIND["kind"], KIND["name"], KIND["networking"]["apiServerAddress"]) == (
        "Cluster",
        "liveness-lab",
        "127.0.0.1",
    )
    assert [node["role"] for node in KIND["nodes"]] == ["control-plane"]


def test_kind_config_maps_every_node_port_the_chart_renders():
    docs = yaml.safe_load_all(
        render(
            "liveness-lab",
            "liveness-lab",
            "--set",
            "allVariants=true,locust.enabled=true",
        )
    )
    ports = {p["nodePort"] for d in docs if d and d["kind"] == "Service" for p in d["spec"]["ports"] if "nodePort" in p}
    assert ports, "the chart rendered no nodePort"
    assert ports <= {container for container, _, _ in MAPPINGS}, f"not mapped in kind-config.yaml: {ports - {m[0] for m in MAPPINGS}}"


def test_kind_config_maps_on_loopback_only_and_locust_ui_on_8089():
    assert MAPPINGS and all(address == "127.0.0.1" for _, _, address in MAPPINGS), MAPPINGS
    assert (30089, 8089, "127.0.0.1") in MAPPINGS


# The Workshop tab's steps (locust/liveness_lab/workshop/steps/): each is chart values, which Skip and the
# shown command apply through Helm alike. A step judged by another variant of its lab scenario (the
# reactive, virtual and servlet remedies run on the release's blocking Deployment) must run what the lab
# deployed for it; and the master's Role must let its helm upgrade every kind the chart renders.
sys.path.insert(0, str(REPO / "locust"))
from liveness_lab.workshop import change as workshop_change  # noqa: E402
from liveness_lab.workshop import course as workshop_course  # noqa: E402

WORKSHOP_STEPS = [s for s in workshop_course.load_steps() if s.values]


def variant_containers(tmp_path, values: dict) -> dict[str, dict]:
    """The variants' service containers the chart renders with VALUES, by variant."""
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    docs = yaml.safe_load_all(
        render("liveness-lab", "liveness-lab", "--values", tmp_path / "values.yaml", "--show-only", "templates/deployment.yaml")
    )
    return {d["metadata"]["labels"]["app.kubernetes.io/component"]: workshop_change.container_of(d) for d in docs if d}


@pytest.mark.parametrize("step", WORKSHOP_STEPS, ids=[s.name for s in WORKSHOP_STEPS])
def test_a_workshop_step_runs_on_its_deployment_what_the_lab_deployed_for_the_variant_it_is_judged_as(tmp_path, step):
    upgraded = variant_containers(tmp_path, step.values)
    lab = variant_containers(tmp_path, step.scenario.values)
    norm = workshop_change.normalize
    for mine, theirs in step.judge.items():
        assert norm(upgraded[mine]) == norm(lab[theirs]), (mine, theirs, workshop_change.differences(lab[theirs], upgraded[mine]))
    assert set(upgraded) == set(variant_containers(tmp_path, {})), "the step's values deploy other variants than the release's"


# Kind -> the resource a Role names (the chart's namespaced kinds; a new kind fails here until it is added).
RESOURCES = {
    "Deployment": ("apps", "deployments"),
    "Service": ("", "services"),
    "ServiceAccount": ("", "serviceaccounts"),
    "ConfigMap": ("", "configmaps"),
    "Secret": ("", "secrets"),
    "Role": ("rbac.authorization.k8s.io", "roles"),
    "RoleBinding": ("rbac.authorization.k8s.io", "rolebindings"),
    "NetworkPolicy": ("networking.k8s.io", "networkpolicies"),
    "PodDisruptionBudget": ("policy", "poddisruptionbudgets"),
}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}


def test_the_workshops_helm_may_upgrade_every_kind_the_chart_renders_in_its_namespace():
    """Skip and Reset run `helm upgrade` as the master's service account: it reads every object of the
    release and writes those that change, so the workshop's Role must cover each namespaced kind the chart
    can render (everything on: every ci/ values file, all variants, the downstream)."""
    docs = [d for f in CI_VALUES for d in yaml.safe_load_all(render("liveness-lab", "liveness-lab", "--values", f, "--skip-tests")) if d]
    kinds = {d["kind"] for d in docs} - CLUSTER_SCOPED
    role = next(d for d in yaml.safe_load_all(render()) if d and d["kind"] == "Role" and d["metadata"]["name"].endswith("workshop"))
    granted = {
        (g, r)
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        if {"get", "patch", "create", "delete"} <= set(rule["verbs"])
    }
    assert kinds <= set(RESOURCES), f"a kind the workshop's Role was not checked for: {sorted(kinds - set(RESOURCES))}"
    missing = sorted(k for k in kinds if RESOURCES[k] not in granted)
    assert not missing, f"the workshop's Role does not let helm upgrade {missing}"
