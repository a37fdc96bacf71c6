"""The end-to-end suite on a real kind cluster: one cluster for the whole session.

    scripts/test-e2e.sh [--keep] [--no-lab] [-- CLUSTER-UP-ARGS...]      (what scripts/test.sh e2e runs)
    cd locust && ../.venv/bin/python -m pytest tests/e2e [--keep-cluster] [--no-lab] [--cluster-up-arg=ARG]... [-k ...]

The session fixture ``cluster_up`` runs scripts/cluster-up.sh (with the --cluster-up-arg values) once,
before the first test that needs the cluster, and scripts/cluster-down.sh after the last one, unless
--keep-cluster (a failing cluster-down is an error of the last test's teardown). The tests run in the
order of the bash script they replace, which matters: the modules are numbered, and run in that order
(pytest collects a folder's files by name), their tests in the order they are written.

A failing test carries the cluster's state at the moment it failed, as sections of its report (terminal
and JUnit XML alike): nodes and pods, the last 30 events, and each not-ready pod's description and last
log lines. A failing cluster-up stops the session (nothing after it can tell anything). A session in
which no test passed fails, even when nothing failed: every test skipped has shown nothing.

Environment: the LIVENESS_LAB_* settings of scripts/cluster-up.sh pass through to it, plus
    LIVENESS_LAB_E2E_WAIT=300s   how long kube-system pods may take to become Ready
    LIVENESS_LAB_E2E_PARTICIPANT_HELM=   a second Helm release for test_9c's shown commands (as v3.22.0)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import use_token

from liveness_lab.base import ui_token

from . import kind

CLUSTER_UP_TIMEOUT_S = 3600  # a first no-registry cluster-up builds every image: 15-20 minutes on 2 cores
CLUSTER_DOWN_TIMEOUT_S = 600
TOUCHED = pytest.StashKey[bool]()
PASSED = pytest.StashKey[int]()


def pytest_addoption(parser):
    group = parser.getgroup("liveness-lab e2e (tests/e2e)")
    group.addoption("--keep-cluster", action="store_true", help="leave the cluster up after the session")
    group.addoption(
        "--no-lab",
        action="store_true",
        help="a shortened scripted demo instead of the lab's two quick scenarios (and no latency-change run)",
    )
    group.addoption(
        "--cluster-up-arg", action="append", default=[], metavar="ARG", help="an argument for scripts/cluster-up.sh (repeat for several)"
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "lab: runs unless --no-lab (the lab's quick scenarios, the latency change)")
    config.addinivalue_line("markers", "no_lab: runs only with --no-lab (the shortened scripted demo)")
    config.stash[PASSED] = 0
    # The cluster's context for everything this process and its children run (liveness_lab.kube.Kube, the
    # scripted runs), and the tree's tools first on PATH.
    os.environ.update(LIVENESS_LAB_KUBE_CONTEXT=kind.CONTEXT, LIVENESS_LAB_NAMESPACE=kind.NAMESPACE)
    kind.use_tools_bin()


def pytest_collection_modifyitems(config, items):
    """--no-lab picks the tests of one kind of scripted run: the others are deselected, not skipped."""
    unwanted = "lab" if config.getoption("no_lab") else "no_lab"
    deselected = [item for item in items if item.get_closest_marker(unwanted)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


@pytest.fixture(scope="session")
def suite_name() -> str:
    """The suite's name, the prefix of its logs (e2e-cluster-up.log): a suite that reuses these fixtures
    (tests/multinode) overrides it."""
    return "e2e"


@pytest.fixture(scope="session")
def cluster_up(request, suite_name):
    """scripts/cluster-up.sh's run (kind.Streamed), whatever its outcome; scripts/cluster-down.sh afterwards
    unless --keep-cluster."""
    config = request.config
    config.stash[TOUCHED] = True

    def down():
        if not config.getoption("keep_cluster"):
            result = kind.run_streamed(
                [kind.SCRIPTS / "cluster-down.sh"], kind.logs_dir() / f"{suite_name}-cluster-down.log", config, CLUSTER_DOWN_TIMEOUT_S
            )
            assert result.returncode == 0, f"cluster-down failed: {result.describe()}"

    try:
        result = kind.run_streamed(
            [kind.SCRIPTS / "cluster-up.sh", *config.getoption("cluster_up_arg")],
            kind.logs_dir() / f"{suite_name}-cluster-up.log",
            config,
            CLUSTER_UP_TIMEOUT_S,
        )
    except BaseException:  # interrupted: no teardown would run for a fixture not set up
        down()
        raise
    yield result
    down()


@pytest.fixture(scope="session")
def cluster(cluster_up):
    """The cluster with the release, as scripts/cluster-up.sh left it; fails the test when cluster-up failed."""
    if cluster_up.returncode != 0:
        pytest.fail(f"no cluster: scripts/cluster-up.sh failed (test_cluster_up says how): {cluster_up.describe()}", pytrace=False)
    return cluster_up


@pytest.fixture(scope="session")
def up_args(request) -> list[str]:
    return request.config.getoption("cluster_up_arg")


@pytest.fixture(scope="session")
def web_ui_token(cluster) -> str:
    """The release's web UI token, from the Secret the chart made (<release>-ui, key token)."""
    secret = kind.kubectl_json("-n", kind.NAMESPACE, "get", "secret", ui_token.secret_name(kind.RELEASE))
    token = ui_token.from_secret(secret)
    assert token, f"Secret {ui_token.secret_name(kind.RELEASE)} holds no token: {sorted(secret.get('data') or {})}"
    return token


@pytest.fixture(scope="session")
def web_ui(cluster, web_ui_token) -> str:
    """The in-cluster Locust master's web UI on 127.0.0.1: its NodePort (chart/values.yaml) through
    kind-config.yaml's mapping (http://127.0.0.1:8089). Every route needs the release's token: the suite's
    clients send it (conftest.use_token: web_read, web_post, the browser's first page is the link)."""
    node_port = kind.chart_node_ports().get("locust")
    assert node_port, "chart/values.yaml does not expose Locust on a NodePort (locust.enabled, nodePorts.enabled)"
    port = kind.host_port(node_port)
    assert port, f"Locust's NodePort {node_port} is not mapped in kind-config.yaml"
    url = f"http://127.0.0.1:{port}"
    use_token(url, web_ui_token)
    return url


@pytest.fixture
def settled_release(cluster):
    """The release settled, its Locust master and workers too, before a test that looks at the web UI or
    swarms from it: an earlier test's rollout (the lab's rollback after its servlet scenario replaces the
    variants and both Locust Deployments) leaves JVMs starting and a worker that lost its master restarting
    (seen: the tabs did not render within 30 s and the master had no worker)."""
    waited = kind.wait_settled("before the web UI's test", kind.WITH_LOCUST)
    print(f"the release and its Locust settled after {waited:.0f} s")


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the tab tests' screenshots go: the logs folder, kept after the run."""
    path = kind.logs_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report gets the cluster's state (kind.diagnostics) as sections of its failure, which
    the terminal and the JUnit XML both show; a failing cluster-up stops the session."""
    report = yield
    if report.failed and item.config.stash.get(TOUCHED, False):
        for title, text in kind.diagnostics():
            if hasattr(report.longrepr, "addsection"):
                report.longrepr.addsection(title, text.rstrip())
            else:  # a plain-text failure: sections of the report itself
                report.sections.append((title, text))
    if report.failed and item.originalname == "test_cluster_up":
        # As -x does it: the session ends as failed (exit 1), the cluster's teardown still runs.
        item.session.shouldfail = "scripts/cluster-up.sh failed: the other tests cannot tell anything"
    if report.when == "call" and report.passed:
        item.config.stash[PASSED] += 1
    return report


def pytest_sessionfinish(session, exitstatus):
    """No test passed (all skipped or deselected): the session fails, whatever pytest would say."""
    if exitstatus == pytest.ExitCode.OK and nothing_passed(session.config):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def nothing_passed(config) -> bool:
    return not config.option.collectonly and config.stash.get(PASSED, 0) == 0


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if exitstatus == pytest.ExitCode.OK and nothing_passed(config):
        terminalreporter.write_line("FAILED: no e2e test passed; a run that shows nothing fails (tests/e2e/conftest.py)", red=True)
