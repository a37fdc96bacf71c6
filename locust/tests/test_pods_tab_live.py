"""The Pods tab of a running Locust shows the restart counts of the live cluster (the kind e2e).

Skipped unless LIVENESS_LAB_LIVE_WEB_UI names the web UI to check, e.g. the chart's Locust master:
    LIVENESS_LAB_LIVE_WEB_UI=http://127.0.0.1:8089 LIVENESS_LAB_KUBE_CONTEXT=kind-liveness-lab \\
      scripts/test-locust.sh -k live
It starts a one-user swarm on the reactive variant (the tab exists once a swarm runs), compares the tab
with the pods the Kubernetes API lists, and stops the swarm.
"""

import os
import time
import urllib.parse
import urllib.request

import pytest
from conftest import pods_tab_page

from liveness_lab.kube import Kube, pod_record

WEB_UI = os.environ.get("LIVENESS_LAB_LIVE_WEB_UI", "").rstrip("/")
pytestmark = pytest.mark.skipif(not WEB_UI, reason="LIVENESS_LAB_LIVE_WEB_UI not set (the e2e sets it)")


def post(path, **form):
    data = urllib.parse.urlencode(form, doseq=True).encode()
    with urllib.request.urlopen(urllib.request.Request(WEB_UI + path, data=data), timeout=10) as r:
        return r.status


def test_pods_tab_shows_the_restart_counts_of_the_live_cluster():
    pytest.importorskip("playwright.sync_api")
    assert post("/swarm", user_count=1, spawn_rate=1, user_classes=["ReactiveUser"], shape_class="Default") == 200
    try:
        with pods_tab_page(WEB_UI) as page:
            deadline = time.monotonic() + 60
            while True:
                pods = [pod_record(x) for x in Kube().pods()]
                want = {v: sum(x["restarts"] for x in pods if x["variant"] == v and not x["deleting"]) for v in ("blocking", "reactive")}
                shown = {}
                for v in want:
                    row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=v, exact=True))
                    if row.count():
                        shown[v] = int(row.first.get_by_role("cell").nth(2).inner_text())
                if shown == want or time.monotonic() > deadline:
                    break
                page.wait_for_timeout(2000)
            page.screenshot(path=str(os.path.join(os.environ.get("LIVENESS_LAB_SCREENSHOTS", "/tmp"), "pods-tab-live.png")))
        assert shown == want
    finally:
        post("/stop")
