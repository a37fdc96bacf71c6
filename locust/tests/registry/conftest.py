"""The registry suite (scripts/test-registry.sh): the laptop's registry path, simulated on 127.0.0.1.

Session fixtures build the world (registry_sim.py says what each piece stands in for), each with a
teardown that undoes exactly what it started, from its pid file or marker, also when a test fails or the
run is interrupted (Ctrl-C, SIGTERM): the registry and the file server stopped, dockerd's mirror setting
taken out again, the stand-ins' Docker Hub names untagged, the cluster the e2e made deleted. With
--registry-keep (scripts/test-registry.sh --keep) nothing is undone; `scripts/test-registry.sh --down`
does it later.

Root on Linux with Docker Engine (dockerd is reloaded with SIGHUP for the mirror setting, never
restarted). Collected only when locust/tests/registry (or a file in it) is named on the command line:
`pytest` in locust/ (the locust suite) leaves it out.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from . import registry_sim as sim

HERE = Path(__file__).resolve().parent
# The inner e2e's files (under locust/): the cluster the registry path made, the chart's own checks on it
# (helm test in the Locust image, whose helm came from the mirror) and the short scripted demo.
E2E_FILES = ("tests/e2e/test_1_cluster.py", "tests/e2e/test_2_chart_on_cluster.py", "tests/e2e/test_4_scripted_run.py")
KEPT: dict[str, str] = {}


def pytest_addoption(parser):
    group = parser.getgroup("registry", "the registry suite (locust/tests/registry)")
    group.addoption(
        "--registry-keep", action="store_true", help="leave the cluster, the registry, the file server and the mirror setting up afterwards"
    )
    group.addoption(
        "--registry-no-e2e", action="store_true", help="stop after the stand-ins, the file server and the mirror (no cluster is created)"
    )


def _named_on_command_line(config) -> bool:
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path, config):
    # This suite sets dockerd's mirror and makes a cluster: never as part of another suite's collection.
    if (collection_path == HERE or HERE in collection_path.parents) and not _named_on_command_line(config):
        return True
    return None


def pytest_collection_modifyitems(config, items):
    if not config.getoption("registry_no_e2e", default=False):
        return
    deselected = [item for item in items if item.path.parent == HERE and item.path.name == "test_2_registry_path.py"]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


def pytest_terminal_summary(terminalreporter, config):
    if KEPT:
        terminalreporter.write_line("kept: " + ", ".join(f"{what} {where}" for what, where in KEPT.items()))
        terminalreporter.write_line("  stop them: scripts/test-registry.sh --down")


@dataclass
class Options:
    keep: bool
    no_e2e: bool


@pytest.fixture(scope="session")
def options(pytestconfig) -> Options:
    return Options(pytestconfig.getoption("registry_keep"), pytestconfig.getoption("registry_no_e2e"))


@pytest.fixture(scope="session")
def say(pytestconfig):
    """A progress line on the terminal (not captured): what a long step is doing, what teardown undid."""
    capman = pytestconfig.pluginmanager.getplugin("capturemanager")
    reporter = pytestconfig.pluginmanager.getplugin("terminalreporter")

    def say(text: str) -> None:
        with capman.global_and_fixture_disabled():
            reporter.write_line(f"  [registry] {text}")

    return say


@pytest.fixture(scope="session", autouse=True)
def fresh_start(say):
    """SIGTERM ends the run like Ctrl-C (the teardowns run); and a run that was killed outright left its
    processes and the mirror setting: start from nothing."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    sim.STATE.mkdir(parents=True, exist_ok=True)
    sim.LOGS.mkdir(parents=True, exist_ok=True)
    for said in (sim.stop_started("files"), sim.stop_started("registry"), sim.drop_mirror()):
        if "nothing" not in said and "none" not in said:
            say(f"left by an earlier run: {said}")
    yield
    signal.signal(signal.SIGTERM, previous)


def _undo(say, what: str, undo) -> None:
    try:
        say(f"teardown: {undo()}")
    except Exception as error:  # noqa: BLE001 - a teardown goes on with the rest, and says what failed
        say(f"teardown: {what} failed: {error}")


def _our_process(options, say, name: str, start, started: str, label: str, kept_as: str = "{}"):
    """A process of the simulation (START, pid file STATE/NAME.pid): started (STARTED said with where it
    answers), then stopped at the end, or with --keep listed as kept (LABEL, KEPT_AS); a start that fails
    stops what it may have left."""
    try:
        where = start()
    except BaseException:
        sim.stop_started(name)
        raise
    say(started.format(where))
    yield where
    if options.keep:
        KEPT[label] = kept_as.format(where)
    else:
        _undo(say, f"stopping the {label}", lambda: sim.stop_started(name))


@pytest.fixture(scope="session")
def registry(options, say):
    """HOST:PORT of Debian's docker-registry, our own process on 127.0.0.1."""
    yield from _our_process(
        options,
        say,
        "registry",
        sim.start_registry,
        f"docker-registry on {{}}, storage {sim.SIM / 'registry' / 'storage'} (log: {sim.log_path('registry')})",
        "registry",
        "{} (dockerd's mirror)",
    )


@pytest.fixture(scope="session")
def file_server(options, say):
    """URL of the file server holding kind, helm and kubectl as their official downloads."""
    yield from _our_process(
        options, say, "files", sim.start_file_server, f"serving {sim.FILES} on {{}} (log: {sim.log_path('files')})", "file server"
    )


@pytest.fixture(scope="session")
def local_images(say):
    """The locally built bases of the stand-ins (scripts/lib/airgap.sh's builders)."""
    for line in sim.ensure_local_images():
        say(line)


class Standins:
    """Each stand-in built and pushed once, on first use; a failure is kept and raised again."""

    def __init__(self, registry: str, say):
        self.registry, self.say, self._done = registry, say, {}

    def pushed(self, key: str) -> str:
        """The digest KEY's stand-in was pushed with."""
        if key not in self._done:
            try:
                self.say(sim.build_standin(key))
                self._done[key] = sim.push_standin(key, self.registry)
                self.say(f"pushed {self.registry}/{sim.STANDINS[key].hub_path}@{self._done[key]}")
            except Exception as error:
                self._done[key] = error
        if isinstance(self._done[key], Exception):
            raise sim.SimError(f"stand-in {sim.STANDINS[key].official}: {self._done[key]}")
        return self._done[key]


@pytest.fixture(scope="session")
def standins(registry, local_images, options, say):
    yield Standins(registry, say)
    if not options.keep:
        _undo(
            say,
            "untagging the Docker Hub names",
            lambda: "Docker Hub names untagged" + "".join(f"; could not untag {ref}" for ref in sim.remove_hub_refs()),
        )


@dataclass
class Mirror:
    url: str
    before: dict


@pytest.fixture(scope="session")
def mirror(registry, options, say):
    """The registry as dockerd's registry mirror for Docker Hub (daemon.json, SIGHUP)."""
    before = sim.read_daemon_json()
    url = f"http://{registry}"
    try:
        sim.set_mirror(url)
    except BaseException:
        sim.drop_mirror()
        raise
    say(f"dockerd's registry mirror: {url}")
    yield Mirror(url, before)
    if options.keep:
        KEPT["mirror setting"] = f"{url} in {sim.DAEMON_JSON}"
    else:
        _undo(say, "dropping the mirror", sim.drop_mirror)


@pytest.fixture(scope="session")
def tree(say):
    files = sim.copy_tree()
    say(f"{len(files)} files of {sim.REPO} in {sim.TREE}")
    return files


@dataclass
class InnerPath:
    path: str
    macos_missing: list[str]
    bash: str  # the bash the Mac user chooses by hand (Homebrew's): every script of the e2e is run with it


@pytest.fixture(scope="session")
def inner_path(say):
    """The e2e's PATH: the caller's, without Go, kind, helm, kubectl or a JDK, as a Mac (macOS's userland,
    uname Darwin arm64, id 501, bash 3.2 first, the Python a Mac user installs); and the bash chosen by hand."""
    path, missing, bash = sim.macos_path(sim.without_dev_tools(os.environ["PATH"]))
    sim.save_inner_path(path, bash)
    say(f"PATH={path}; scripts run with {bash}")
    return InnerPath(path, missing, bash)


@dataclass
class ClusterGuard:
    made: bool = False
    env: dict = field(default_factory=dict)
    bash: str = ""


@pytest.fixture(scope="session")
def cluster_guard(mirror, file_server, standins, options, say):
    """Deletes the cluster the e2e made (set up before it starts, so an interrupted e2e is cleaned up too)."""
    guard = ClusterGuard()
    yield guard
    if guard.made and sim.cluster_present():
        if options.keep:
            KEPT["cluster"] = f"{sim.CLUSTER} (tools in {sim.TREE / '.tools' / 'bin'})"
        else:
            _undo(say, "scripts/cluster-down.sh", lambda: sim.cluster_down(guard.env, guard.bash))


@dataclass
class E2E:
    rc: int
    env: dict
    log: Path
    files_log_start: int
    bash: str


def run_watched(say, name: str, argv: list[str], env: dict, log: Path, cwd: Path = sim.TREE) -> int:
    """ARGV in CWD (TREE) with its output in LOG, a line on the terminal each minute it runs; ended (SIGTERM,
    then SIGKILL) when this run is interrupted."""
    started = time.monotonic()
    say(f"{name} ... (log: {log})")
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            while True:
                try:
                    rc = proc.wait(timeout=60)
                    break
                except subprocess.TimeoutExpired:
                    say(f"{name} still running ({time.monotonic() - started:.0f}s)")
        except BaseException:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    say(f"{name}: exit {rc} after {time.monotonic() - started:.0f}s")
    return rc


@pytest.fixture(scope="session")
def e2e(cluster_guard, standins, file_server, tree, inner_path, say) -> E2E:
    """scripts/test-e2e.sh --keep --no-lab in the tree's copy, with an empty cache, as the registry path sees
    it: its cluster, chart and scripted-run files only (E2E_FILES). What runs on the pods once they are
    there (the lab's scenarios, the tabs, the workshop) proves nothing about where images and tools come
    from, and the main e2e runs it."""
    if sim.cluster_present():
        pytest.fail(
            f"a kind cluster '{sim.CLUSTER}' exists (another test or a demo?): it would be reused, not made "
            "by the registry path; fix: scripts/cluster-down.sh (or scripts/test-registry.sh --down after a "
            "--keep run), then run this again"
        )
    digests = {key: standins.pushed(key) for key in sim.STANDINS}
    node = sim.STANDINS["node"]
    node_ref = f"{node.name}:{node.tag}@{digests['node']}"
    env = sim.inner_env(inner_path.path, file_server, node_ref) | {"LL_E2E_TESTS": " ".join(E2E_FILES)}
    for folder in (sim.E2E_CACHE, sim.E2E_JUNIT):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    files_log = sim.log_path("files")
    start = files_log.stat().st_size if files_log.exists() else 0
    say(
        f"LIVENESS_LAB_NODE_IMAGE={node_ref} LIVENESS_LAB_DOWNLOAD_MIRROR={file_server} "
        f"LIVENESS_LAB_CACHE={sim.E2E_CACHE} (empty) LIVENESS_LAB_JUNIT={sim.E2E_JUNIT}"
    )
    cluster_guard.made, cluster_guard.env, cluster_guard.bash = True, env, inner_path.bash
    rc = run_watched(
        say,
        f"{inner_path.bash} scripts/test-e2e.sh --keep --no-lab",
        [inner_path.bash, "scripts/test-e2e.sh", "--keep", "--no-lab"],
        env,
        sim.log_path("e2e"),
    )
    return E2E(rc, env, sim.log_path("e2e"), start, inner_path.bash)
