"""Shared fixtures: the real service jar in blocking and reactive modes on 127.0.0.1, and helpers.

The jar is $LIVENESS_LAB_SERVICE_JAR (scripts/test-locust.sh builds it with the Maven wrapper when it
is missing) run by $JAVA_HOME/bin/java. Ports 18080-18085 are this suite's: 18080 blocking, 18081
reactive, 18082 a closed port standing in for an unreachable Kubernetes API, 18083 Locust's web UI,
18084 and 18085 the web UIs of the Live tab's tests.
"""

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import locust  # noqa: F401  (first: see below)
import pytest

from liveness_lab.base import ui_token

# Locust's gevent patches the standard library as it is imported, which must come before anything imports
# ssl or urllib3 (else RecursionError). pytest imports every test module before it runs one, so a whole run
# is patched anyway; importing Locust first, here, keeps a run of some modules working in any order.
LOCUST_DIR = Path(__file__).resolve().parents[1]
REPO = LOCUST_DIR.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PORTS = {"blocking": 18080, "reactive": 18081}
CLOSED_PORT = 18082
WEB_UI_PORT = 18083
LIVE_WEB_UI_PORT = 18084
REPLAY_WEB_UI_PORT = 18085
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(autouse=True)
def scratch_ledger(tmp_path_factory, monkeypatch):
    """No test reads or writes the repository's ledger (locust/ledger/): each gets an empty one of its own,
    through the setting the lab reads (a test that names its folder still passes it)."""
    monkeypatch.setenv("LIVENESS_LAB_LEDGER", str(tmp_path_factory.mktemp("ledger")))


# Debian's Chromium, never a browser Playwright downloads; flags for a container without a display.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# The token a local Locust of this suite's requires (LIVENESS_LAB_UI_TOKEN, as the chart's master has one),
# and each web UI's token by its base URL: web_read, web_post, wait_http and the browser pages send it.
UI_TOKEN = "token-of-the-tests-release"
TOKENS: dict[str, str] = {}


def use_token(web_ui: str, token: str | None) -> None:
    """WEB_UI requires TOKEN from now on (None: it is open)."""
    if token:
        TOKENS[web_ui.rstrip("/")] = token
    else:
        TOKENS.pop(web_ui.rstrip("/"), None)


def auth_headers(url: str) -> dict[str, str]:
    """The header a request to URL sends: the token of the web UI it is on, if that has one."""
    found = next((t for base, t in TOKENS.items() if url == base or url.startswith(base + "/") or url.startswith(base + "?")), None)
    return ui_token.bearer(found)


def login_url(web_ui: str, path: str = "/") -> str:
    """WEB_UI's PATH as a browser opens it the first time: with the token in the link when it has one, as
    scripts/cluster-up.sh prints it (the master sets its session cookie and drops the token from the URL)."""
    token = TOKENS.get(web_ui.rstrip("/"))
    if not token:
        return web_ui + path
    return web_ui + path + ("&" if "?" in path else "?") + urllib.parse.urlencode({ui_token.QUERY: token})


# The suites that need a cluster (they make one): collected only when asked for by path, e.g.
# `pytest tests/e2e` (scripts/test-e2e.sh), never by `pytest` with the default testpaths (scripts/test-locust.sh).
CLUSTER_SUITES = tuple(Path(__file__).resolve().parent / suite for suite in ("e2e", "registry", "multinode"))


def pytest_ignore_collect(collection_path, config):
    if collection_path not in CLUSTER_SUITES:
        return None
    asked = [(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args]
    return not any(a == collection_path or collection_path in a.parents for a in asked) or None


@contextlib.contextmanager
def pods_tab_page(web_ui: str, tab: str = "Pods", viewport=(1280, 720)):
    """A page of headless Chromium (Debian's) on TAB (Pods, Live...) of the Locust web UI at WEB_UI."""
    sync_api = pytest.importorskip("playwright.sync_api")
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} missing: scripts/test-locust.sh installs Debian's chromium"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            page.goto(login_url(web_ui), timeout=30000)
            page.get_by_role("tab", name=tab).click(timeout=30000)
            yield page
        finally:
            browser.close()


def closed_port_kubeconfig(path: Path) -> Path:
    """A kubeconfig at PATH whose API server is CLOSED_PORT on loopback: the Kubernetes API unreachable."""
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n"
        f"clusters: [{{name: nowhere, cluster: {{server: 'https://127.0.0.1:{CLOSED_PORT}', insecure-skip-tls-verify: true}}}}]\n"
        "users: [{name: nobody, user: {token: none}}]\n"
        "contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody, namespace: liveness-lab}}]\n"
    )
    return path


@pytest.fixture
def chart_settings():
    """The chart's settings per variant, as report.settings reads them from recorded Deployments."""
    from liveness_lab.report import settings

    return settings.settings_by_variant(json.loads((FIXTURES / "deployments.json").read_text()))


def web_post(web_ui: str, path: str, **form) -> int:
    """POST a form to Locust's web UI (e.g. /swarm, /stop), with its token; its HTTP status."""
    data = urllib.parse.urlencode(form, doseq=True).encode()
    with urllib.request.urlopen(urllib.request.Request(web_ui + path, data=data, headers=auth_headers(web_ui)), timeout=10) as r:
        return r.status


def web_swarm(web_ui: str, wait_s: float = 60, **form) -> dict:
    """POST /swarm (as web_post) and Locust's answer, asserted a start. A master with no worker connected
    refuses in words (locust_ext/swarm_guard.py: "wait a few seconds and start again"), which this does, as
    its message says, for at most WAIT_S seconds (a worker restarts and reconnects after a rollout of the
    master); then it fails with the message, not 30 s later as tabs that never open."""
    from liveness_lab.locust_ext.swarm_guard import NO_WORKER

    data = urllib.parse.urlencode(form, doseq=True).encode()
    deadline, started = time.monotonic() + wait_s, time.monotonic()
    while True:
        with urllib.request.urlopen(urllib.request.Request(web_ui + "/swarm", data=data, headers=auth_headers(web_ui)), timeout=10) as r:
            answer = json.load(r)
        if answer.get("message") != NO_WORKER or time.monotonic() > deadline:
            break
        time.sleep(2)
    if time.monotonic() - started > 1:
        print(f"the master had no worker: the swarm started after {time.monotonic() - started:.0f} s of asking again")
    assert answer.get("success") is True, f"the master did not start the swarm: {answer.get('message')}"
    # Started means its users spawn: the state the tabs wait for (Locust shows them once a swarm runs).
    deadline, stats = time.monotonic() + 20, {}
    while time.monotonic() < deadline:
        stats = web_read(web_ui, "/stats/requests")
        if stats.get("state") in ("spawning", "running"):
            return answer
        time.sleep(1)
    workers = [(w.get("id"), w.get("state")) for w in stats.get("workers") or []]
    raise AssertionError(f"the swarm was accepted but never ran: state {stats.get('state')!r}, workers {workers}")


def web_read(web_ui: str, path: str):
    """GET a JSON answer of Locust's web UI, with its token."""
    with urllib.request.urlopen(urllib.request.Request(web_ui + path, headers=auth_headers(web_ui)), timeout=10) as r:
        return json.load(r)


def wait_http(url: str, timeout: float, proc: subprocess.Popen | None = None) -> None:
    """Until URL answers 2xx (with the token of its web UI, if any), at most TIMEOUT seconds (loopback only)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=auth_headers(url)), timeout=2) as r:
                if 200 <= r.status < 300:
                    return
        except Exception as e:  # not up yet
            last = e
        time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout}s: {last}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def services(tmp_path_factory):
    """{variant: base URL} of the service jar running in blocking and reactive modes."""
    jar = os.environ.get("LIVENESS_LAB_SERVICE_JAR", str(REPO / "service/target/liveness-lab-service.jar"))
    java = Path(os.environ.get("JAVA_HOME", "/usr")) / "bin/java"
    if not Path(jar).exists():
        pytest.fail(f"service jar {jar} is missing: run scripts/test-locust.sh, which builds it")
    logs = tmp_path_factory.mktemp("service-logs")
    procs = {}
    try:
        for mode, port in PORTS.items():
            log = open(logs / f"{mode}.log", "w")
            # 4 event loops, as the chart pins them: more than 4 requests in flight block a blocking pod.
            procs[mode] = subprocess.Popen(
                [
                    str(java),
                    "-Xmx256m",
                    "-XX:TieredStopAtLevel=1",
                    "-Dreactor.netty.ioWorkerCount=4",
                    "-jar",
                    jar,
                    f"--server.port={port}",
                    "--server.address=127.0.0.1",
                ],
                env={**os.environ, "APP_MODE": mode},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        for mode, port in PORTS.items():
            wait_http(f"http://127.0.0.1:{port}/livez", 120, procs[mode])
        yield {mode: f"http://127.0.0.1:{port}" for mode, port in PORTS.items()}
    finally:
        for proc in procs.values():
            stop(proc)


def locust_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "locust", "-f", str(LOCUST_DIR / "locustfile.py"), *args]


def run_env(services: dict, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVENESS_LAB_")}
    env.update({f"LIVENESS_LAB_{v.upper()}_HOST": url for v, url in services.items()})
    env.update(extra)
    return env


# The planted case of the claim that can fail (issue 67): the recorded baseline run with its reactive pod
# given the blocking pod's liveness failures and kills (the same events at the same times, the same restart
# counts), the machine as recorded (86 % busy on average, under the 90 % line).
PLANTED_FROM, PLANTED_TO = "liveness-lab-blocking-7c76b4cdd9-hm9lj", "liveness-lab-reactive-765464457-4zxhn"


def reactive_killed_like_blocking(folder: Path) -> Path:
    """A copy of fixtures/lab-baseline at FOLDER whose reactive pod was killed as its blocking pod was."""
    import shutil

    shutil.copytree(FIXTURES / "lab-baseline", folder)
    records = [json.loads(x) for x in (folder / "timeline.jsonl").read_text().splitlines() if x.strip()]
    out = []
    for r in records:
        out.append(r)
        if r["kind"] == "event" and r["pod"] == PLANTED_FROM:
            out.append({**r, "uid": r["uid"] + "-planted", "pod": PLANTED_TO, "variant": "reactive"})
        elif r["kind"] == "pods":
            by_name = {p["name"]: p for p in r["pods"]}
            if PLANTED_FROM in by_name and PLANTED_TO in by_name:
                fields = ("ready", "restarts", "waiting", "lastTerminatedReason", "lastTerminatedExitCode", "lastTerminatedAt")
                by_name[PLANTED_TO].update({k: by_name[PLANTED_FROM][k] for k in fields})
    (folder / "timeline.jsonl").write_text("\n".join(json.dumps(r) for r in out) + "\n")
    return folder
