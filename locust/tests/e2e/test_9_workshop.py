"""The Workshop tab of the in-cluster Locust on the live cluster (issue 40), as a participant walks it, in
headless Chromium (Debian's):

- step 1 (baseline): a swarm of the lab's load (20 users per variant at 1 request/s of 1000 ms) on a
  settled release; the tab's check stays "checking" until the Kubernetes API reports a liveness kill of a
  blocking pod, and turns "met" only after it (the seconds from the kill to green are printed: a figure
  for the issue's closing note); reactive is never killed; a reload shows the step done, and the progress
  is in the release's ConfigMap (what a restarted master reads);
- step 2 (tcp-probe): Skip in the tab upgrades the release through Helm to the step's values (the blocking
  Deployment's liveness probe tcpSocket, its only handler; the swarm stopped, the release rolls out); once it
  has settled, the same swarm meets the step's check (the lab's prediction: not killed, requests fail) with
  no kill of blocking;
- Reset in the tab upgrades the release back to the values it started with: the blocking Deployment's
  service container exactly as it was before this test and Helm's stored values as they were; the test waits
  until the release has settled again, so the cluster is left as it was found (the finally clause resets
  too when the test failed after Skip);
- the instructor's table (scripts/workshop.sh --json) has the release's line, with the step and done/total;
- the workshop's Role: the master's service account may do in its own namespace what `helm upgrade` does
  there, and nothing in any other namespace or cluster-wide.

About 5 minutes on 2 cores (up to 10 when the rollouts are slow): the settling before each swarm (20 s
of Ready), one swarm to the first kill (15-30 s), two rollouts of the blocking Deployment (Skip, Reset:
a new JVM and 20 s of settling each), one swarm to the TCP probe's evidence time (about 25 s). Blocking
pods that restarted in earlier tests are deleted first (their ReplicaSet replaces them; no new
generation), as the scripted run replaces them, so their back-off and spent event budget do not count.
Screenshots: workshop-step1-live.png, workshop-skip-live.png in the logs folder.
"""

import json
import os
import subprocess
import time

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS, login_url, web_post, web_read, web_swarm

from liveness_lab.workshop.change import container_of, differences

from . import kind
from .test_6_live_tab import blocking_kills, prerequisites, reactive_kills

LOAD = {"user_count": 40, "spawn_rate": 40, "user_classes": ["BlockingUser", "ReactiveUser"], "shape_class": "Default"}
LAB_LOAD = {"rate_per_user": 1.0, "latency_ms": 1000}
KILL_WAIT_S = float(os.environ.get("LIVENESS_LAB_LIVE_KILL_WAIT_S", "300"))
# Step 1's swarms at most, and how long into one a "not as predicted" (the kill missed its window: the
# window's end plus a period is about 23 s with the chart's probes) ends it for the next.
STEP1_SWARMS, RACE_LOST_S = 3, 40
TCP_MET_WAIT_S = 120  # the TCP probe's evidence time is about 21 s of swarm; the master checks every 3 s
BLOCKING = f"{kind.RELEASE}-blocking"
SERVICE_ACCOUNT = f"system:serviceaccount:{kind.NAMESPACE}:{kind.RELEASE}-locust"
PROGRESS = f"{kind.RELEASE}-workshop"


def deployment(name=BLOCKING) -> dict:
    return kind.kubectl_json("get", "deployment", name, "-n", kind.NAMESPACE)


def replace_restarted_blocking_pods() -> list[str]:
    pods = kind.kubectl_json("get", "pods", "-n", kind.NAMESPACE, "-l", "app.kubernetes.io/component=blocking")["items"]
    restarted = [
        p["metadata"]["name"] for p in pods if any(c.get("restartCount", 0) for c in (p.get("status") or {}).get("containerStatuses") or [])
    ]
    if restarted:
        kind.kubectl("delete", "pod", "-n", kind.NAMESPACE, "--wait=false", *restarted)
    return restarted


def check_on_screen(page) -> tuple[str, str, str]:
    panel = page.get_by_test_id("workshop-check")
    return panel.get_attribute("data-step"), panel.get_attribute("data-state"), panel.get_by_role("status").inner_text()


def swarm(web_ui: str) -> float:
    if web_read(web_ui, "/stats/requests").get("state") in ("spawning", "running"):
        web_post(web_ui, "/stop")
        time.sleep(2)
    started = time.time()
    web_swarm(web_ui, **LOAD, **LAB_LOAD)
    # The master judges only a swarm started on a settled release; it says so in the window. And the check
    # it serves must be this swarm's before the screen is read: an earlier swarm's check (test_6's ran the
    # same load and was met on its kill) must never pass for this one's.
    deadline, check = time.time() + 20, None
    while time.time() < deadline:
        window = web_read(web_ui, "/liveness-lab/workshop/window")["window"]
        if window and window["started"] >= started - 1:
            assert window["unsettled"] == [], f"the master saw the release unsettled at the swarm's start: {window['unsettled']}"
            check = web_read(web_ui, "/liveness-lab/workshop")["check"]
            if (check.get("window") or {}).get("started", 0) >= started - 1:
                return started
        time.sleep(0.5)
    workers = web_read(web_ui, "/stats/requests").get("workers")
    raise AssertionError(f"the master's check did not judge the new swarm within 20 s: {check}; its workers: {workers}")


def open_workshop_tab(page, web_ui: str) -> None:
    page.goto(login_url(web_ui), timeout=30000)  # the link with the token, as cluster-up prints it
    page.get_by_role("tab", name="Workshop").click(timeout=30000)
    page.get_by_test_id("workshop").wait_for(timeout=30000)


def test_the_workshop_tab_checks_a_real_kill_skips_and_resets_the_live_release(web_ui, screenshots):
    sync_api, kube = prerequisites(web_ui)
    state = kind.wait_master(web_ui, web_read)
    assert state["store"]["ok"], f"the master keeps no progress: {state['store']['error']}"
    before, values_before = container_of(deployment()), kind.helm_values()
    skipped = reset = False
    try:
        # --- Step 1: checking until the API reports a real kill, green only after it. ---
        # A swarm whose check says "not as predicted" is stopped and a new one started on a fresh pod, as a
        # room would, at most STEP1_SWARMS: where the users' connections land on the 4 event loops is chance
        # (a probe that finds a loop free restarts the countdown). .ci/run on 2026-12-07 failed here on a
        # defect, since fixed (the window's counter had no read from before the swarm, so the check placed a
        # kill at +11.4 s at +43.0 s): a swarm that does not meet the check is printed with what it said.
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1100})
            try:
                tries, met_at = [], None
                for _ in range(STEP1_SWARMS):
                    restarted = replace_restarted_blocking_pods()
                    # The Locust pods too: test_8's rollback rolls both Locust Deployments, and its worker, told
                    # to quit by the old master, restarts until it reaches the new one.
                    waited = kind.wait_settled("before step 1", kind.WITH_LOCUST)
                    print(f"replaced restarted blocking pods {restarted}; settled after {waited:.0f} s")
                    assert web_post(web_ui, "/liveness-lab/workshop/steps/baseline/select") == 200
                    started = swarm(web_ui)
                    open_workshop_tab(page, web_ui)
                    seen = []
                    while time.time() < started + KILL_WAIT_S:
                        step, shown, reason = check_on_screen(page)
                        kills = blocking_kills(kube, started)  # read after the screen: a kill shown is a kill listed
                        seen.append((round(time.time() - started, 1), step, shown, bool(kills), reason))
                        if step == "baseline" and shown == "met":
                            met_at = time.time()
                            break
                        if step == "baseline" and shown == "not as predicted" and time.time() > started + RACE_LOST_S:
                            break  # the kill missed its window: this swarm can no longer meet the check
                        page.wait_for_timeout(500)
                    tries.append([x for i, x in enumerate(seen) if i == 0 or x[1:] != seen[i - 1][1:]])
                    if met_at:
                        break
                    print(f"step 1, swarm {len(tries)}: not met; the check as it changed: {tries[-1]}; stopping it for a new one")
                    web_post(web_ui, "/stop")
                page.screenshot(path=str(screenshots / "workshop-step1-live.png"), full_page=True)
                if not met_at:
                    # What the check said each time it changed, and the Live tab's markers with each restart's
                    # evidence (CI, 2026-11-30: a first kill at +28.9 s whose counter showed no row).
                    try:
                        (screenshots / "workshop-step1-live.json").write_text(json.dumps(web_read(web_ui, "/liveness-lab/live"), indent=1))
                    except OSError as e:
                        (screenshots / "workshop-step1-live.json").write_text(json.dumps({"error": str(e)}))
                    pytest.fail(
                        f"step 1 not met in {len(tries)} swarm(s) (each up to {KILL_WAIT_S:.0f} s); the check as it changed in each: "
                        f"{tries}; the Live tab's markers: {screenshots / 'workshop-step1-live.json'}"
                    )
                print(f"step 1 met in swarm {len(tries)} of at most {STEP1_SWARMS}")
                assert all(kills for _, _, shown, kills, _ in seen if shown == "met"), seen
                assert any(shown == "checking" and not kills for _, _, shown, kills, _ in seen), (
                    f"never seen checking before the kill: {seen[:5]}"
                )
                kill = min(blocking_kills(kube, started))
                print(
                    f"step 1: first kill +{kill - started:.1f} s into the swarm (API event time, whole seconds); "
                    f"green on screen {met_at - kill:.1f} s after it"
                )
                assert reactive_kills(kube, started) == []
                done = int(page.get_by_test_id("workshop").get_attribute("data-done"))
                assert done >= 1

                # A reload shows the same; the ConfigMap holds it (what a restarted master reads).
                page.reload()
                open_workshop_tab(page, web_ui)
                page.get_by_text(f"Workshop: {done}/{state['total']} done").wait_for(timeout=15000)
                assert page.locator('[data-step-item="baseline"]').get_attribute("data-done") == "true"
                saved = json.loads(kind.kubectl_json("get", "configmap", PROGRESS, "-n", kind.NAMESPACE)["data"]["progress.json"])
                assert saved["steps"]["baseline"]["done"] and saved["done"] == done, saved
                web_post(web_ui, "/stop")

                # --- Step 2: Skip applies the TCP probe; on the settled release the swarm meets the check. ---
                page.locator('[data-step-item="tcp-probe"]').click()
                page.locator('[data-testid="workshop-step"][data-step="tcp-probe"]').wait_for(timeout=15000)
                page.get_by_role("button", name="Skip: apply the change for me").click()
                skipped = True
                page.get_by_text("upgraded to this step's values with Helm").wait_for(timeout=60000)
                probe = container_of(deployment())["livenessProbe"]
                assert "tcpSocket" in probe and "httpGet" not in probe, probe
                assert kind.helm_values()["variants"]["blocking"]["probes"]["liveness"]["type"] == "tcpSocket"
                rolled = kind.wait_settled("after Skip", kind.WITH_LOCUST)
                print(f"Skip: the release settled {rolled:.0f} s after")
                started = swarm(web_ui)
                met_at = None
                while time.time() < started + TCP_MET_WAIT_S:
                    step, shown, reason = check_on_screen(page)
                    assert shown != "not as predicted", reason
                    if step == "tcp-probe" and shown == "met":
                        met_at = time.time()
                        break
                    page.wait_for_timeout(1000)
                page.screenshot(path=str(screenshots / "workshop-skip-live.png"), full_page=True)
                assert met_at, f"step 2 not met within {TCP_MET_WAIT_S} s of the swarm: {check_on_screen(page)}"
                print(f"step 2 (tcp-probe after Skip): met {met_at - started:.1f} s into the swarm")
                assert blocking_kills(kube, started) == [], "the TCP probe's blocking pod was killed"
                web_post(web_ui, "/stop")

                # --- Reset: the release back as it was before this test. ---
                page.get_by_role("button", name="Reset the release").click()
                page.get_by_text("back to the values the workshop started with").wait_for(timeout=60000)
                reset = True
                assert differences(before, container_of(deployment())) == []
                assert kind.helm_values() == values_before, (kind.helm_values(), values_before)
                deadline = time.time() + 30
                while check_on_screen(page)[1] != "change" and time.time() < deadline:
                    page.wait_for_timeout(1000)
                assert check_on_screen(page)[1] == "change", check_on_screen(page)
                print(f"Reset: the release settled {kind.wait_settled('after Reset'):.0f} s after")
            finally:
                browser.close()

        # --- The instructor's table: this release's line. ---
        env = dict(os.environ, LIVENESS_LAB_KUBE_CONTEXT=kind.CONTEXT)
        out = subprocess.run(
            [kind.SCRIPTS / "workshop.sh", "--context", kind.CONTEXT, "--json"], capture_output=True, text=True, timeout=300, env=env
        )
        assert out.returncode == 0, out.stderr
        row = next(r for r in json.loads(out.stdout) if r["namespace"] == kind.NAMESPACE)
        assert row["release"] == kind.RELEASE and row["step"].startswith("tcp-probe") and row["done"] >= done, row
        print(f"scripts/workshop.sh: {row}")
    finally:
        web_post(web_ui, "/stop")
        if skipped and not reset:  # leave the shared cluster as it was found, without hiding the failure
            try:
                web_post(web_ui, "/liveness-lab/workshop/reset")
                kind.wait_settled("after the clean-up's Reset")
            except Exception as e:
                print(f"clean-up: the release may still run the TCP probe: {e}")


def can_i(verb: str, resource: str, namespace: str | None = kind.NAMESPACE) -> bool:
    where = ["-n", namespace] if namespace else ["--all-namespaces"]
    out = kind.kubectl("auth", "can-i", verb, resource, "--as", SERVICE_ACCOUNT, *where, check=False)
    return out.stdout.strip() == "yes"


def test_the_masters_account_may_upgrade_its_own_release_and_nothing_elsewhere(cluster):
    own = [("get", "secrets"), ("create", "secrets"), ("patch", f"deployments/{BLOCKING}"), ("create", "deployments")]
    own += [("delete", "services"), ("patch", f"configmaps/{PROGRESS}"), ("update", "roles"), ("patch", "networkpolicies")]
    missing = [r for r in own if not can_i(*r)]
    assert missing == [], "the workshop's Role lacks what helm upgrade needs in the namespace"
    assert not can_i("create", "pods") and not can_i("get", "nodes", None)
    elsewhere = [("patch", "deployments/coredns", "kube-system"), ("get", "secrets", "kube-system"), ("list", "configmaps", None)]
    assert [r for r in elsewhere if can_i(*r)] == []
