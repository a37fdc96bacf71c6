"""The Pods tab: rows from pods and events, the unreachable state, and the tab in headless Chromium."""

import json
import os
import subprocess
import urllib.request
from pathlib import Path

import pytest
from conftest import CLOSED_PORT, FIXTURES, LOCUST_DIR, WEB_UI_PORT, locust_cmd, pods_tab_page, run_env, stop, wait_http

from liveness_lab.base.kube import KubeUnavailable
from liveness_lab.locust_ext import pods_tab


class StubKube:
    """Kube's interface over API JSON recorded from the kind cluster (kubectl get -o json)."""

    namespace = "liveness-lab"

    def __init__(self, pods=None, events=None, error=None):
        self._pods, self._events, self._error = pods, events, error

    def pods(self):
        if self._error:
            raise KubeUnavailable(self._error)
        return self._pods

    def events(self):
        return self._events


def api_items(name):
    return json.loads((FIXTURES / name).read_text())["items"]


def test_rows_show_ready_pods_restarts_and_the_last_liveness_failure_per_variant():
    poller = pods_tab.PodsPoller(StubKube(api_items("pods.json"), api_items("events.json")))
    poller.refresh()
    rows = {r["name"]: r for r in poller.rows}
    assert set(rows) == {"blocking", "reactive"}
    assert rows["blocking"]["restarts"] >= 1
    assert "UTC" in rows["blocking"]["failed"]
    # The latest of the Unhealthy "Liveness probe failed" and Killing "failed liveness probe" events.
    assert "liveness probe" in rows["blocking"]["message"].lower()
    assert rows["reactive"]["restarts"] == 0
    assert rows["reactive"]["failed"] == "none"
    assert rows["reactive"]["ready"] == "1/1"
    # The probe in force, read from the pod spec, its named port resolved.
    assert rows["blocking"]["probe"] == "httpGet http (8080) /livez, every 5 s, timeout 1 s, 3 failures"


def test_the_probe_column_names_a_tcp_probe_and_each_kind_during_a_rollout():
    pods = api_items("pods.json")
    blocking = [p for p in pods if "blocking" in p["metadata"]["name"]]
    tcp = json.loads(json.dumps(blocking[0]))
    tcp["metadata"]["name"] += "-tcp"
    tcp["spec"]["containers"][0]["livenessProbe"] = {"tcpSocket": {"port": "http"}, "periodSeconds": 10}
    poller = pods_tab.PodsPoller(StubKube([*pods, tcp], []))
    poller.refresh()
    rows = {r["name"]: r for r in poller.rows}
    assert rows["blocking"]["probe"] == (
        "httpGet http (8080) /livez, every 5 s, timeout 1 s, 3 failures; tcpSocket http (8080), every 10 s, timeout 1 s, 3 failures"
    )


def test_an_unreachable_api_becomes_a_row_not_an_exception():
    poller = pods_tab.PodsPoller(StubKube(error="listing pods failed: connection refused"))
    poller.refresh()
    assert poller.rows[0]["name"] == "Kubernetes API unreachable"
    assert "connection refused" in poller.rows[0]["message"]


@pytest.fixture
def locust_web_ui(services, tmp_path):
    """A host Locust with its web UI on 127.0.0.1, swarming the reactive instance, its Kubernetes API a
    closed loopback port; no LIVENESS_LAB_UI_TOKEN: its UI is open, as `locust -f locustfile.py` on the host
    is (the other browser tests' Locust requires a token, as the chart's master does)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n"
        f"clusters: [{{name: nowhere, cluster: {{server: 'https://127.0.0.1:{CLOSED_PORT}', insecure-skip-tls-verify: true}}}}]\n"
        "users: [{name: nobody, user: {token: none}}]\n"
        "contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody, namespace: liveness-lab}}]\n"
    )
    env = run_env(services, KUBECONFIG=str(kubeconfig), LIVENESS_LAB_PODS_REFRESH="1")
    env.pop("KUBERNETES_SERVICE_HOST", None)
    log = open(tmp_path / "locust.log", "w")
    proc = subprocess.Popen(
        locust_cmd(
            "--web-host",
            "127.0.0.1",
            "--web-port",
            str(WEB_UI_PORT),
            "--autostart",
            "-u",
            "1",
            "-r",
            "1",
            "--latency-ms",
            "100",
            "ReactiveUser",
        ),
        cwd=LOCUST_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_http(f"http://127.0.0.1:{WEB_UI_PORT}/", 60, proc)
        yield f"http://127.0.0.1:{WEB_UI_PORT}"
    finally:
        stop(proc)


def test_pods_route_reports_the_unreachable_api(locust_web_ui):
    wait_http(f"{locust_web_ui}/liveness-lab/pods", 10)
    for _ in range(20):
        body = json.load(urllib.request.urlopen(f"{locust_web_ui}/liveness-lab/pods", timeout=5))
        if body["rows"][0]["message"] != "not read yet":
            break
        __import__("time").sleep(0.5)
    assert body["rows"][0]["name"] == "Kubernetes API unreachable", body
    assert str(CLOSED_PORT) in body["rows"][0]["message"] or "refused" in body["rows"][0]["message"].lower(), body


def test_pods_tab_renders_in_headless_chromium(locust_web_ui, tmp_path):
    with pods_tab_page(locust_web_ui) as page:
        for column in ("Variant", "Ready / total", "Restarts", "Liveness probe", "Last liveness failure", "Message"):
            page.get_by_role("columnheader", name=column).wait_for(timeout=10000)
        page.get_by_text("Kubernetes API unreachable").wait_for(timeout=20000)
        shot = Path(os.environ.get("LIVENESS_LAB_SCREENSHOTS", tmp_path)) / "pods-tab-unreachable.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot))
    assert shot.stat().st_size > 0
