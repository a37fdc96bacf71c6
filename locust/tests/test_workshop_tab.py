"""The Workshop tab in headless Chromium (Debian's), on a local Locust swarming the real service jar, with
the recorded passing run's pods and events replayed and the release's Deployments and ConfigMap in memory
(replay_locustfile.py, recorded_release.py): no cluster. As a participant would: the workshop's step above
the start form, which proposes the demo's load; Start; step 1 turns green only once the replayed kill is
there; a reload keeps the progress; step 2's prediction, hint, solution and the lab's answer; Skip applies
the TCP probe (and stops the swarm), Reset puts the release back. The check's own refresh is 1 s here.
Screenshot: workshop-tab-replay.png (LIVENESS_LAB_SCREENSHOTS or pytest's tmp folder)."""

import json
import os
import re
import time
from pathlib import Path

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS, REPLAY_WEB_UI_PORT, login_url, web_read
from test_live_view import local_locust

# The recorded run's Locust started 9.7 s after the replay's zero (replay_locustfile.RECORDED_START): so
# the replayed swarm and this one start together, and the kill falls where the recorded one did (+13.3 s).
REPLAY_OFFSET_S = "-9.7"


@pytest.fixture
def workshop_web_ui(services, tmp_path):
    yield from local_locust(
        services,
        tmp_path,
        REPLAY_WEB_UI_PORT,
        Path(__file__).parent / "replay_locustfile.py",
        LIVENESS_LAB_REPLAY_OFFSET_S=REPLAY_OFFSET_S,
        LIVENESS_LAB_WORKSHOP_REFRESH="1",
    )


def check_of(page) -> tuple[str, str]:
    panel = page.get_by_test_id("workshop-check")
    return panel.get_attribute("data-state"), panel.get_by_role("status").inner_text()


def blocking_kills(web_ui) -> list[float]:
    live = web_read(web_ui, "/liveness-lab/live")
    blocking = next((v for v in live["variants"] if v["name"] == "blocking"), {"markers": []})
    return [m["t"] for m in blocking["markers"] if m["kind"] == "kill"]


def test_a_participant_walks_step_1_and_skips_and_resets_step_2(workshop_web_ui, tmp_path):
    from playwright.sync_api import sync_playwright

    web_ui = workshop_web_ui
    shot = Path(os.environ.get("LIVENESS_LAB_SCREENSHOTS", tmp_path)) / "workshop-tab-replay.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1100})
            page.goto(login_url(web_ui), timeout=30000)  # the link with the token, as cluster-up prints it
            # Before any swarm Locust shows only its start form: the step is above it, the form proposes the load.
            page.get_by_test_id("workshop-banner").filter(has_text="Workshop step 1 of 7 (0 done): Blocking is killed").wait_for(
                timeout=20000
            )
            assert page.get_by_label("Number of users (peak concurrency)").input_value() == "40"
            assert page.get_by_label("Ramp up (users started/second)").input_value() == "40"
            # On the host every variant of chart/values.yaml has a class (in the cluster only the deployed
            # two, all ticked): keep BlockingUser and ReactiveUser.
            rows = page.get_by_role("row")
            for i in range(rows.count()):
                name = rows.nth(i).inner_text().strip()
                box = rows.nth(i).get_by_role("checkbox")
                if box.count() == 1 and box.is_checked() != name.startswith(("BlockingUser", "ReactiveUser")):
                    box.click()
            page.get_by_role("button", name="Start").click()
            page.get_by_role("tab", name="Workshop").click(timeout=30000)
            started = time.time()

            # Step 1: checking until the replayed kill; green only once the API had a kill to show.
            states, met_at = [], None
            while time.time() < started + 90:
                state, reason = check_of(page)
                kills = blocking_kills(web_ui)
                states.append((round(time.time() - started, 1), state, bool(kills), reason))
                if state == "met":
                    met_at = time.time()
                    break
                page.wait_for_timeout(500)
            assert met_at, states[-3:]
            assert all(kills for _, state, kills, _ in states if state == "met"), states
            assert any(state == "checking" and "no liveness kill yet" in reason for _, state, _, reason in states), states
            kill = min(blocking_kills(web_ui))
            print(f"step 1 green {met_at - kill:.1f} s after the replayed kill ({met_at - started:.1f} s into the swarm)")
            assert page.get_by_test_id("workshop").get_attribute("data-done") == "1"

            # A reload keeps the progress (the master keeps it in the ConfigMap, in memory here).
            page.reload()
            page.get_by_role("tab", name="Workshop").click(timeout=30000)
            page.get_by_text("Workshop: 1/7 done").wait_for(timeout=10000)
            assert page.locator('[data-step-item="baseline"]').get_attribute("data-done") == "true"

            # Step 2: predict, a hint, the solution and the lab's answer.
            page.locator('[data-step-item="tcp-probe"]').click()
            page.get_by_test_id("workshop-step").and_(page.locator('[data-step="tcp-probe"]')).wait_for(timeout=10000)
            page.get_by_label("not killed, but its requests fail").check()
            page.get_by_role("button", name=re.compile(r"^Hint \(1 of 3\)")).click()
            page.get_by_test_id("workshop-hints").get_by_text("Hint 1: A TCP probe only opens a connection").wait_for(timeout=10000)
            page.get_by_role("button", name="Show solution").click()
            solution = page.get_by_test_id("workshop-solution")
            solution.get_by_text(
                "helm upgrade liveness-lab chart -n liveness-lab --reset-values --set variants.blocking.probes.liveness.type=tcpSocket",
                exact=False,
            ).wait_for(timeout=10000)
            page.get_by_test_id("workshop-answer").get_by_text("You predicted: not killed, but its requests fail").wait_for(timeout=10000)
            # Its change is not in place yet: the check says what differs.
            page.get_by_test_id("workshop-check").and_(page.locator('[data-state="change"]')).wait_for(timeout=10000)

            # Skip: the swarm stopped, blocking's liveness probe now tcpSocket (the in-memory Deployment).
            page.get_by_role("button", name="Skip: apply the change for me").click()
            page.get_by_text(re.compile("upgraded to this step's values with Helm and is rolling out; the swarm was stopped")).wait_for(
                timeout=10000
            )
            deadline = time.time() + 10  # Locust stops its users within a second or so
            while web_read(web_ui, "/stats/requests")["state"] != "stopped" and time.time() < deadline:
                time.sleep(0.5)
            assert web_read(web_ui, "/stats/requests")["state"] == "stopped"
            release = web_read(web_ui, "/liveness-lab/workshop/window")["release"]
            probe = next(d for d in release["deployments"]["items"] if d["metadata"]["name"] == "liveness-lab-blocking")["spec"][
                "template"
            ]["spec"]["containers"][0]["livenessProbe"]
            assert "tcpSocket" in probe and "httpGet" not in probe, probe
            deadline = time.time() + 10
            while check_of(page)[0] == "change" and time.time() < deadline:
                page.wait_for_timeout(500)
            assert check_of(page)[0] in ("settling", "waiting"), check_of(page)
            page.screenshot(path=str(shot), full_page=True)

            # Reset: back to the values the workshop started with; step 2's change is gone again.
            page.get_by_role("button", name="Reset the release").click()
            page.get_by_text("back to the values the workshop started with").wait_for(timeout=10000)
            deadline = time.time() + 10
            while check_of(page)[0] != "change" and time.time() < deadline:
                page.wait_for_timeout(500)
            state, reason = check_of(page)
            assert state == "change" and "livenessProbe is httpGet http /livez" in reason, (state, reason)
            saved = json.loads(json.dumps(web_read(web_ui, "/liveness-lab/workshop")))
            assert saved["done"] == 1 and saved["current"] == "tcp-probe"
        finally:
            if not shot.exists():
                page.screenshot(path=str(shot), full_page=True)
            browser.close()
    assert shot.stat().st_size > 0
