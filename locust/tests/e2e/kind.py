"""The kind cluster as the e2e tests see it: its names, the tools scripts/cluster-up.sh installs into the
tree's .tools/bin, kubectl and helm on its context, kind-config.yaml's port mappings, the commands that
take minutes (their output streamed to the terminal and kept in a log file) and the diagnostics a
failing test carries.

Nothing here needs kind, helm or kubectl on PATH: the cluster's tools are the tree's .tools/bin (put first
on PATH, as scripts/lib/tools.sh's use_tools_bin does), there once cluster-up has run. No GNU-only tool
either: HTTP is urllib, parsing is Python's.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml

from liveness_lab.base import coordinates, variants
from liveness_lab.base.settle import DEFAULT_SETTLE_S, SETTLE_ENV, settle_problems
from liveness_lab.demo import release as rel
from liveness_lab.demo.no_other_load import release_master

REPO = Path(__file__).resolve().parents[3]
TOOLS_BIN = REPO / ".tools" / "bin"
SCRIPTS = REPO / "scripts"


def versions_env(path: Path = SCRIPTS / "versions.env") -> dict[str, str]:
    """scripts/versions.env's KEY=value lines (the file says it is kept readable by Python)."""
    pairs = (re.match(r"^([A-Z][A-Z0-9_]*)=(.*)$", line.strip()) for line in path.read_text().splitlines())
    return {m[1]: m[2].strip('"') for m in pairs if m}


VERSIONS = versions_env()
# scripts/lib/common.sh's LL_KUBE_CONTEXT, LL_NAMESPACE and LL_RELEASE: where cluster-up installs the chart
# (liveness_lab.base.coordinates has the same defaults: tests/test_coordinates.py).
CONTEXT = f"kind-{VERSIONS['KIND_CLUSTER_NAME']}"
NAMESPACE = coordinates.DEFAULT_NAMESPACE
RELEASE = coordinates.DEFAULT_RELEASE
RELEASE_SELECTOR = f"app.kubernetes.io/instance={RELEASE}"


def logs_dir() -> Path:
    """$LIVENESS_LAB_LOGS, else <LIVENESS_LAB_CACHE or ~/.cache/liveness-lab>/logs (scripts/lib/common.sh's LL_LOGS)."""
    if os.environ.get("LIVENESS_LAB_LOGS"):
        return Path(os.environ["LIVENESS_LAB_LOGS"])
    return Path(os.environ.get("LIVENESS_LAB_CACHE") or Path.home() / ".cache" / "liveness-lab") / "logs"


def use_tools_bin(environ=os.environ) -> None:
    """scripts/lib/tools.sh's use_tools_bin: .tools/bin first on PATH, the user's own PATH kept in LL_USER_PATH
    (cluster-up's plan checks the commands it prints for the user against that one)."""
    path = environ.get("PATH", "")
    environ.setdefault("LL_USER_PATH", path)
    if str(TOOLS_BIN) not in path.split(os.pathsep):
        environ["PATH"] = f"{TOOLS_BIN}{os.pathsep}{path}"


class ToolMissing(Exception):
    pass


def tool(name: str) -> str:
    found = shutil.which(name, path=f"{TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        raise ToolMissing(f"{name} is neither in {TOOLS_BIN} nor on PATH: scripts/cluster-up.sh installs it there")
    return found


def run(cmd: list[str], timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    """CMD with its output captured; on failure (CHECK) an AssertionError naming the command and its stderr."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)}: exit {proc.returncode}\n{(proc.stderr or proc.stdout).strip()[-3000:]}")
    return proc


def kubectl(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    return run([tool("kubectl"), "--context", CONTEXT, *args], timeout=timeout, check=check)


def kubectl_json(*args: str, timeout: float = 120) -> dict:
    return json.loads(kubectl(*args, "-o", "json", timeout=timeout).stdout)


def helm(*args: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess:
    """helm on the release's context and namespace."""
    return run([tool("helm"), *args, "--kube-context", CONTEXT, "--namespace", NAMESPACE], timeout=timeout, check=check)


def helm_values(release: str = RELEASE, namespace: str = NAMESPACE) -> dict:
    """The release's own values as Helm stores them (`helm get values`)."""
    done = run([tool("helm"), "get", "values", release, "-o", "yaml", "--kube-context", CONTEXT, "--namespace", namespace])
    return yaml.safe_load(done.stdout) or {}


def host_port(node_port: int, kind_config: Path = REPO / "kind-config.yaml") -> int | None:
    """The 127.0.0.1 port kind-config.yaml maps NODE_PORT to (the Locust UI's differs), or None."""
    config = yaml.safe_load(kind_config.read_text())
    for node in config.get("nodes") or []:
        for mapping in node.get("extraPortMappings") or []:
            if mapping.get("containerPort") == node_port:
                return mapping.get("hostPort")
    return None


def chart_node_ports(values: Path = REPO / "chart" / "values.yaml") -> dict[str, int]:
    """{name: nodePort} of what the chart's default values expose on a NodePort (cluster-up installs the
    chart with them): every enabled variant of the variant table, and Locust's web UI."""
    v = yaml.safe_load(values.read_text())
    if not v.get("nodePorts", {}).get("enabled", True):
        return {}
    # Deployed as the chart decides (chart/templates/_helpers.tpl): allVariants, or enabled with its mode on
    # the chosen `stack`; base/variants.py reads the same table the same way.
    table = variants.load({"LIVENESS_LAB_VALUES": str(values)})
    ports = {x.name: x.node_port for x in table if x.enabled or v.get("allVariants")}
    if v.get("locust", {}).get("enabled"):
        ports["locust"] = v["locust"]["nodePort"]
    return ports


def http_status(url: str, wait_s: float = 60) -> tuple[int | None, float]:
    """(HTTP status, seconds waited) of URL on loopback, asked every 2 s until something answers or WAIT_S
    passed (None: nothing answered). A Service refuses connections while its only pod is not Ready, which
    a freshly started JVM may briefly be."""
    started = time.monotonic()
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.status, time.monotonic() - started
        except urllib.error.HTTPError as e:  # an answer all the same
            return e.code, time.monotonic() - started
        except OSError:
            if time.monotonic() - started >= wait_s:
                return None, time.monotonic() - started
            time.sleep(2)


@dataclass
class Streamed:
    cmd: list[str]
    returncode: int
    log: Path
    seconds: float
    timed_out: bool = False

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def describe(self) -> str:
        how = f"timed out after {self.seconds:.0f} s" if self.timed_out else f"exit {self.returncode} after {self.seconds:.0f} s"
        return f"{' '.join(map(str, self.cmd))}: {how}; log: {self.log}; last lines:\n{self.tail()}"


def stop_group(proc: subprocess.Popen, grace_s: float = 30) -> None:
    """Ends PROC and what it started (its own session): SIGTERM, so scripts run their traps (the scripted
    runs give the cluster lock back and restore the release), then SIGKILL after GRACE_S."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=wait_s)


def run_streamed(cmd: list, log: Path, config, timeout: float, env: dict | None = None) -> Streamed:
    """CMD with its output shown as it comes (pytest's capture suspended: the run takes minutes, and its
    progress lines belong in the suite's log) and kept in LOG; ended after TIMEOUT seconds."""
    log.parent.mkdir(parents=True, exist_ok=True)
    capman = config.pluginmanager.getplugin("capturemanager")
    started = time.monotonic()
    timed_out = threading.Event()
    with open(log, "w") as out, capman.global_and_fixture_disabled() if capman else contextlib.nullcontext():
        print(f"\n$ {' '.join(map(str, cmd))}  (log: {log})", flush=True)
        proc = subprocess.Popen(
            [str(c) for c in cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
            start_new_session=True,
        )
        timer = threading.Timer(timeout, lambda: (timed_out.set(), stop_group(proc)))
        timer.start()
        try:
            for line in proc.stdout:
                out.write(line)
                sys.stdout.write(line)
                sys.stdout.flush()
            proc.wait()
        finally:
            timer.cancel()
            stop_group(proc)  # interrupted (Ctrl-C): pytest stops, so does the command
    return Streamed(cmd, proc.returncode, log, time.monotonic() - started, timed_out.is_set())


def pod_states() -> list[tuple[str, str, int]]:
    """(name, uid, restarts) of every pod of the release, sorted; pods being deleted left out (the first
    cluster-up's rollout may still be ending: 40 s of grace)."""
    pods = kubectl_json("-n", NAMESPACE, "get", "pods", "-l", RELEASE_SELECTOR)["items"]
    return sorted(
        (p["metadata"]["name"], p["metadata"]["uid"], sum(c.get("restartCount", 0) for c in p["status"].get("containerStatuses") or []))
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
    )


def not_ready_pods() -> list[tuple[str, str]]:
    """(namespace, name) of every pod in the cluster with a container not ready, finished pods left out."""
    found = []
    for p in kubectl_json("get", "pods", "--all-namespaces")["items"]:
        if p["status"].get("phase") == "Succeeded":
            continue
        statuses = p["status"].get("containerStatuses") or []
        if not statuses or not all(c.get("ready") for c in statuses):
            found.append((p["metadata"]["namespace"], p["metadata"]["name"]))
    return found


MAX_PODS_DESCRIBED = 6


def diagnostics() -> list[tuple[str, str]]:
    """(title, text) sections on the cluster's state for a failing test: nodes and pods, the last 30
    events, and each not-ready pod's description and last log lines. Never raises: a section says what
    could not be read."""
    sections = []

    def section(title, fn):
        try:
            sections.append((title, fn()))
        except (Exception, subprocess.TimeoutExpired) as e:  # the cluster may be gone or half made
            sections.append((title, f"(could not read: {str(e).strip()[-500:]})"))

    section(
        "kubernetes: nodes and pods",
        lambda: (
            kubectl("get", "nodes", "-o", "wide", timeout=20).stdout
            + "\n"
            + kubectl("get", "pods", "--all-namespaces", "-o", "wide", timeout=20).stdout
            + f"\nstep logs: {logs_dir()}"
        ),
    )
    section(
        "kubernetes: events, last 30",
        lambda: "\n".join(kubectl("get", "events", "--all-namespaces", "--sort-by=.lastTimestamp", timeout=20).stdout.splitlines()[-30:]),
    )
    try:
        pods = not_ready_pods()
    except (Exception, subprocess.TimeoutExpired) as e:
        return [*sections, ("kubernetes: pods not ready", f"(could not list: {str(e).strip()[-500:]})")]
    if not pods:
        sections.append(("kubernetes: pods not ready", "none: every pod's containers are ready"))
    for ns, name in pods[:MAX_PODS_DESCRIBED]:
        section(
            f"pod {ns}/{name} (not ready): kubectl describe",
            lambda ns=ns, name=name: kubectl("-n", ns, "describe", "pod", name, timeout=20).stdout,
        )
        section(
            f"pod {ns}/{name} (not ready): logs, last 20 lines",
            lambda ns=ns, name=name: (
                kubectl("-n", ns, "logs", name, "--all-containers", "--tail=20", timeout=20, check=False).stdout or "(no log lines)"
            ),
        )
    if len(pods) > MAX_PODS_DESCRIBED:
        sections.append(("kubernetes: more pods not ready", "\n".join(f"{ns}/{name}" for ns, name in pods[MAX_PODS_DESCRIBED:])))
    return sections


def wait_master(web_ui: str, read, wait_s: float = 180) -> dict:
    """The workshop's JSON (READ is conftest.web_read) once the master has rolled out, its old pod gone, and
    it serves the tab. An upgrade that changes the master's settings (latencyMs is one: the master's env
    has it) rolls the Locust pods out, and the first request after `helm upgrade --wait` can still reach
    the old master as it closes (CI, 2026-11-29: RemoteDisconnected on test_9c's restore)."""
    deadline, last = time.time() + wait_s, None
    kubectl("rollout", "status", f"deployment/{RELEASE}-locust", "-n", NAMESPACE, f"--timeout={wait_s:.0f}s", timeout=wait_s + 10)
    while time.time() < deadline:
        pods = kubectl_json("get", "pods", "-n", NAMESPACE, "-l", f"{RELEASE_SELECTOR},app.kubernetes.io/component=locust")
        leaving = [p["metadata"]["name"] for p in pods["items"] if p["metadata"].get("deletionTimestamp")]
        try:
            if not leaving:
                return read(web_ui, "/liveness-lab/workshop")
            last = f"master pod(s) still terminating: {leaving}"
        except Exception as e:  # the new master not serving yet
            last = e
        time.sleep(2)
    raise AssertionError(f"{web_ui}/liveness-lab/workshop did not answer within {wait_s:.0f} s: {last}")


# As the scripted run and the workshop's master judge it (base.settle): every pod Ready this long.
SETTLE_S = float(os.environ.get(SETTLE_ENV, DEFAULT_SETTLE_S))
SETTLE_WAIT_S = 300
# The Locust master's and workers' component labels (chart/templates/_helpers.tpl), for wait_settled.
LOCUST_COMPONENTS = ("locust", "locust-worker")
# The release with its Locust: what a test that swarms from the in-cluster master waits to settle.
WITH_LOCUST = ("blocking", "reactive", *LOCUST_COMPONENTS)


def master_without_worker() -> list[str]:
    """What keeps the release's Locust master from swarming: no answer, or no connected worker (a worker
    whose master a rollout replaced reconnects a few seconds after both are Ready: seen, a test that swarmed
    then found "the release's Locust master has no worker"). Empty when it counts one."""
    status = release_master(rel.ClusterApi(CONTEXT, NAMESPACE, RELEASE), environ={}).status()
    return [] if status is not None and status.workers else [f"the Locust master counts no worker yet: {status}"]


def wait_settled(why: str, variant_names: tuple[str, ...] = ("blocking", "reactive")) -> float:
    """Until the variants have settled (rolled out, no pod terminating, every pod Ready SETTLE_S seconds; with
    Locust's workers among them, a worker connected to the master too):
    a test that loads the cluster starts on a quiet one, not beside a JVM that an earlier test's kill is
    restarting (on 2 cores its start-up takes the CPU the load needs). Seconds waited."""
    started = time.time()
    problems = ["not read yet"]
    while time.time() < started + SETTLE_WAIT_S:
        deps = kubectl_json("get", "deployments", "-n", NAMESPACE, "-l", RELEASE_SELECTOR)
        pods = kubectl_json("get", "pods", "-n", NAMESPACE, "-l", RELEASE_SELECTOR)
        problems = settle_problems(deps, pods, list(variant_names), time.time(), SETTLE_S)
        if not problems and "locust-worker" in variant_names:
            problems = master_without_worker()
        if not problems:
            return time.time() - started
        time.sleep(2)
    raise AssertionError(f"{why}: the release did not settle within {SETTLE_WAIT_S} s: {problems}")
