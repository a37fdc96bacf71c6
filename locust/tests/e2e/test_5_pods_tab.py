"""The Pods tab of the in-cluster Locust shows the restart counts of the live cluster, after the scripted
run made some: a one-user swarm on the reactive variant (the tab exists once a swarm runs), the tab in
headless Chromium compared with the pods the Kubernetes API lists, the swarm stopped. Its screenshot,
pods-tab-live.png, stays in the logs folder."""

import time

import playwright.sync_api  # noqa: F401  (missing: a collection error, never a skip)
from conftest import pods_tab_page, web_swarm
from conftest import web_post as post

from liveness_lab.base.kube import Kube, pod_record


def test_the_pods_tab_shows_the_restart_counts_of_the_live_cluster(web_ui, screenshots, settled_release):
    web_swarm(web_ui, user_count=1, spawn_rate=1, user_classes=["ReactiveUser"], shape_class="Default")
    try:
        with pods_tab_page(web_ui) as page:
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
            page.screenshot(path=str(screenshots / "pods-tab-live.png"))
        assert shown == want
    finally:
        post(web_ui, "/stop")
