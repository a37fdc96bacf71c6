"""The Live tab: its JSON endpoint, GET /liveness-lab/live, on a real Locust environment and web UI (no
server started) with pods and events recorded from the kind cluster (fixtures/pods.json, events.json,
kubectl get -o json during a passing run, after the blocking pod's first restart); then the tab in
headless Chromium on a local Locust swarming the real service jar, with no Kubernetes API."""

import copy
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import (
    FIXTURES,
    LIVE_WEB_UI_PORT,
    LOCUST_DIR,
    REPLAY_WEB_UI_PORT,
    UI_TOKEN,
    closed_port_kubeconfig,
    pods_tab_page,
    run_env,
    stop,
    use_token,
    wait_http,
    web_post,
    web_read,
)
from locust import FastHttpUser, task
from locust.env import Environment
from recorded_events import events_listed, pods_listed, timeline
from test_pods_tab import StubKube

from liveness_lab.base import style, ui_token
from liveness_lab.base.kube import parse_time
from liveness_lab.base.variants import request_name
from liveness_lab.locust_ext import live_view, pods_tab

# The recorded run: the swarm started 12:13:50, the first liveness failure 12:14:03, the kills 12:14:13
# and 12:14:58 (one Killing event, count 2), the restart (container ended) 12:14:28.
SWARM_START = parse_time("2026-11-22T12:13:50Z")


class Nobody(FastHttpUser):
    host = "http://127.0.0.1:18082"  # never called: the tests log requests into the stats themselves

    @task
    def nothing(self):
        pass


def api_items(name):
    return json.loads((FIXTURES / name).read_text())["items"]


def before_restart(pods):
    """The recorded pods as they were before the blocking pod's restart: count 0, no last state."""
    pods = copy.deepcopy(pods)
    for p in pods:
        for c in p["status"]["containerStatuses"]:
            c["restartCount"], c["lastState"] = 0, {}
    return pods


@pytest.fixture
def env(monkeypatch):
    """A Locust environment with a local runner and its web UI (not serving); environment.kube stands in
    for the Kubernetes API with recorded JSON (set by each test)."""
    monkeypatch.setattr(sys, "argv", ["locust"])  # the web UI parses the command line for its form
    environment = Environment(user_classes=[Nobody])
    environment.create_local_runner()
    environment.create_web_ui("127.0.0.1", 0, delayed_start=True)
    environment.kube = StubKube([], [])
    yield environment
    environment.runner.quit()


def get(environment):
    """GET /liveness-lab/live through Flask's test client."""
    client = environment.web_ui.app.test_client()
    response = client.get("/liveness-lab/live")
    assert response.status_code == 200
    return response.get_json()


def load(stats, variant, answered, failed=0, ms=1000):
    """Logs requests into Locust's stats now, then moves its clock on 5 s: Locust's current rate leaves
    out the last 2 s."""
    for _ in range(answered):
        stats.log_request("GET", request_name(variant), ms, 10)
    for _ in range(failed):
        stats.log_request("GET", request_name(variant), 10000, 0)
        stats.log_error("GET", request_name(variant), "ReadTimeout")
    stats.total.last_request_timestamp += 5


@pytest.fixture
def live(env):
    """(environment, history, poller): the Live tab installed as the locustfile does, sampling by hand."""
    poller = pods_tab.PodsPoller(env.kube, every=3600)
    history = live_view.install(env, poller)
    history.stop()  # the tests sample by hand, at the recorded times
    return env, history, poller


def sample(history, poller, kube, pods, events, now):
    kube._pods, kube._events = pods, events
    poller.refresh()
    history.sample(now)


def test_a_kill_and_a_restart_become_markers_on_the_blocking_chart_only(live):
    env, history, poller = live
    history.clear(SWARM_START)
    recorded_pods, events = api_items("pods.json"), api_items("events.json")
    # Before the kill: no liveness event yet (those listed start 12:14:03), restart count 0.
    sample(history, poller, env.kube, before_restart(recorded_pods), [], SWARM_START + 10)
    load(env.runner.stats, "blocking", answered=20)
    load(env.runner.stats, "reactive", answered=20)
    sample(history, poller, env.kube, recorded_pods, events, SWARM_START + 70)

    body = get(env)
    by_name = {v["name"]: v for v in body["variants"]}
    assert list(by_name) == ["blocking", "reactive"]  # the variant table's order
    blocking, reactive = by_name["blocking"], by_name["reactive"]
    kinds = [m["kind"] for m in blocking["markers"]]
    # The Killing event (count 2) marks at its first and last time; the restart at the container's end.
    assert [m["t"] for m in blocking["markers"] if m["kind"] == "kill"] == [
        parse_time("2026-11-22T12:14:13Z"),
        parse_time("2026-11-22T12:14:58Z"),
    ]
    assert [m["t"] for m in blocking["markers"] if m["kind"] == "restart"] == [parse_time("2026-11-22T12:14:28Z")]
    assert "failure" in kinds
    kill = next(m for m in blocking["markers"] if m["kind"] == "kill")
    assert kill["message"] == "Container service failed liveness probe, will be restarted"
    assert kill["pod"].startswith("liveness-lab-blocking-")
    assert "exit code 143" in next(m for m in blocking["markers"] if m["kind"] == "restart")["message"]
    # Readiness and startup probe failures are not liveness failures: none on reactive.
    assert reactive["markers"] == []
    assert blocking["series"]["restarts"] == [0, 1]
    assert reactive["series"]["restarts"] == [0, 0]
    assert blocking["series"]["ready"][-1] == 0 or blocking["series"]["ready"][-1] == 1
    assert reactive["series"]["ready"] == [1, 1] and reactive["series"]["pods"] == [1, 1]
    assert blocking["series"]["rps"][-1] > 0
    # Locust's current percentiles need 10 s of its own history; until then it has none (and says None).
    assert blocking["series"]["p50"][-1] in (None, 1000)
    # One colour per variant, the report's; the marker styles with it.
    assert blocking["colour"] == style.VARIANT_COLOURS["blocking"] != reactive["colour"]
    assert set(body["style"]["markers"]) == {"failure", "unreported", "kill", "restart"}
    assert body["kube"]["ok"] is True and body["latency_ms"] == 1000


def test_a_marker_is_kept_once_and_events_before_the_swarm_are_left_out(live):
    env, history, poller = live
    # A swarm started after the first kill: only the kill at 12:14:58 is in it.
    history.clear(parse_time("2026-11-22T12:14:30Z"))
    for now in (0, 3, 6):
        sample(history, poller, env.kube, api_items("pods.json"), api_items("events.json"), history.started + now)
    markers = get(env)["variants"][0]["markers"]
    assert [m["kind"] for m in markers if m["kind"] == "kill"] == ["kill"]
    # The pod already had its restart when the swarm started: a baseline, not a restart of this swarm.
    assert [m for m in markers if m["kind"] == "restart"] == []


def test_a_new_kill_of_an_aggregated_event_adds_a_marker_at_its_new_time(live):
    env, history, poller = live
    history.clear(SWARM_START)
    events = api_items("events.json")
    sample(history, poller, env.kube, api_items("pods.json"), events, SWARM_START + 70)
    later = copy.deepcopy(events)
    killing = next(e for e in later if e["reason"] == "Killing")
    killing["count"], killing["lastTimestamp"] = 3, "2026-11-22T12:15:43Z"
    sample(history, poller, env.kube, api_items("pods.json"), later, SWARM_START + 115)
    kills = [m for m in get(env)["variants"][0]["markers"] if m["kind"] == "kill"]
    assert [m["t"] for m in kills][-1] == parse_time("2026-11-22T12:15:43Z") and len(kills) == 3


def replay(history, poller, kube, times):
    """Samples the Live tab at TIMES, the Kubernetes API answering what it answered the recorder then
    (fixtures/run-pass/timeline.jsonl)."""
    records, pods_json = timeline("run-pass"), api_items("pods.json")
    for now in times:
        sample(history, poller, kube, pods_listed(pods_json, records, now), events_listed(records, now), now)


def countdowns(markers):
    """Per kill: the labels of the failures (reported or not) that the countdown gives it, in order."""
    kills = [m for m in markers if m["kind"] == "kill"]
    out = []
    for i, kill in enumerate(kills):
        since = kills[i - 1]["t"] if i else float("-inf")
        out.append([m.get("label") for m in markers if m["kind"] in ("failure", "unreported") and since < m["t"] <= kill["t"]])
    return out


def test_after_the_first_kill_each_kill_still_counts_down_its_three_failures(live):
    """The defect: after the first kill the tab showed no failure markers. The kubelet's event spam filter
    stops the pod's Unhealthy events there (tests/test_countdown.py shows it on the same recording); each
    later kill still follows 3 failures in a row, and the tab shows them, numbered, those no event
    reported hollow and saying so."""
    env, history, poller = live
    history.clear(SWARM_START)
    replay(history, poller, env.kube, [SWARM_START + s for s in range(0, 200, 3)])  # the poller's 3 s
    blocking = next(v for v in get(env)["variants"] if v["name"] == "blocking")
    markers = blocking["markers"]
    assert [m["t"] - SWARM_START for m in markers if m["kind"] == "kill"] == [23, 68, 108, 148, 188]
    assert countdowns(markers) == [["1/3", "2/3", "3/3"]] * 5
    first_kill = parse_time("2026-11-22T12:14:13Z")
    after = [m for m in markers if m["t"] > first_kill and m["kind"] in ("failure", "unreported")]
    assert len(after) == 12 and {m["kind"] for m in after} == {"failure", "unreported"}
    reported = next(m for m in after if m["kind"] == "failure")
    assert reported["text"].startswith("liveness failure 1/3 at +58.0 s: Liveness probe failed: Get")
    unreported = next(m for m in after if m["kind"] == "unreported")
    assert unreported["text"].startswith("liveness failure 2/3 at +63.0 s, no event of its own: the kubelet's event spam filter")
    kill = next(m for m in markers if m["kind"] == "kill" and m["t"] > first_kill)
    assert kill["text"].startswith("liveness kill after 3/3 at +68.0 s: Container service failed liveness probe")
    assert all(m["label"] == "" for m in markers if m["kind"] == "restart") and len([m for m in markers if m["kind"] == "restart"]) == 4


def test_a_count_that_rose_by_two_between_two_samples_is_two_failure_markers(live):
    """Sampled at 12:14:05 and 12:14:15, the liveness event went from count 1 (12:14:03) to 3 (12:14:13): three failures,
    the middle one placed a period before the last (the aggregated event gave only the last time)."""
    env, history, poller = live
    history.clear(SWARM_START)
    replay(history, poller, env.kube, [SWARM_START + 15, SWARM_START + 25])
    markers = next(v for v in get(env)["variants"] if v["name"] == "blocking")["markers"]
    failures = [(m["t"] - SWARM_START, m.get("label")) for m in markers if m["kind"] == "failure"]
    assert failures == [(13, "1/3"), (18, "2/3"), (23, "3/3")]
    assert "its time placed a period before the next" in markers[1]["text"]


def test_locusts_reset_clears_the_history(live):
    env, history, poller = live
    history.clear(SWARM_START)
    load(env.runner.stats, "blocking", answered=5)
    sample(history, poller, env.kube, api_items("pods.json"), api_items("events.json"), SWARM_START + 70)
    assert get(env)["variants"]
    # What the web UI's Reset button does: POST /stats/reset (Locust 2.47 accepts POST only).
    assert env.web_ui.app.test_client().post("/stats/reset").status_code == 200
    body = get(env)
    assert body["variants"] == [] and body["started"] is None  # the runner is not swarming
    assert env.web_ui.app.test_client().get("/stats/reset").status_code == 405


def test_a_swarmed_variant_with_no_pods_is_shown_without_pods(live):
    env, history, poller = live
    history.clear(time.time())
    reactive_only = [p for p in api_items("pods.json") if "reactive" in p["metadata"]["name"]]
    load(env.runner.stats, "blocking", answered=3, failed=2)
    sample(history, poller, env.kube, reactive_only, [], time.time())
    by_name = {v["name"]: v for v in get(env)["variants"]}
    assert by_name["blocking"]["has_pods"] is False and by_name["blocking"]["swarmed"] is True
    assert by_name["blocking"]["series"]["pods"] == [0] and by_name["blocking"]["series"]["fps"][0] > 0
    assert by_name["reactive"]["has_pods"] is True and by_name["reactive"]["swarmed"] is False


def test_an_unreachable_api_is_said_and_the_load_series_go_on(live):
    env, history, poller = live
    history.clear(time.time())
    env.kube._error = "listing pods in namespace liveness-lab failed: MaxRetryError: ... Connection refused"
    load(env.runner.stats, "reactive", answered=10)
    poller.refresh()
    history.sample()
    body = get(env)
    assert body["kube"]["ok"] is False and "Connection refused" in body["kube"]["error"]
    reactive = body["variants"][0]
    assert reactive["name"] == "reactive" and reactive["series"]["rps"][0] > 0
    assert reactive["series"]["ready"] == [None] and reactive["series"]["pods"] == [None]


def test_sampling_never_raises_into_locust(live):
    env, history, poller = live
    history._stats_of = lambda: (_ for _ in ()).throw(RuntimeError("boom"))
    history.every = 0.01
    history.start(lambda: "running")
    time.sleep(0.1)  # gevent-patched: the sampling greenlet runs and logs its failure
    history.stop()
    assert get(env)["variants"] == []


def test_a_new_swarm_starts_the_history_again(live):
    env, history, poller = live
    history.clear(SWARM_START)
    sample(history, poller, env.kube, api_items("pods.json"), api_items("events.json"), SWARM_START + 70)
    env.events.test_start.fire(environment=env)
    assert history.started > SWARM_START + 1000 and all(not m for m in history.markers.values())


# --- The tab in headless Chromium, on a local Locust swarming the real service jar ---


def local_locust(services, tmp_path, port, locustfile, workers=0, token=UI_TOKEN, **extra_env):
    """A host Locust (LOCUSTFILE) serving the web UI bundle (webui/dist, built by scripts/test-locust.sh) on
    127.0.0.1:PORT, the blocking and reactive instances as its targets, its Kubernetes API a closed
    loopback port, EXTRA_ENV added to its environment. With WORKERS, a master and that many workers on
    loopback, as the chart runs it (the web UI then has its Workers tab), else one local runner. With TOKEN
    (the suite's, by default) its web UI requires it, as the chart's master does, and the suite's clients
    send it (conftest.use_token); None: open, as Locust on the host is. Yields its URL."""
    if not (LOCUST_DIR / "webui/dist/index.html").is_file():
        pytest.fail("locust/webui/dist is not built: run scripts/build-webui.sh (scripts/test-locust.sh does)")
    env = run_env(
        services,
        KUBECONFIG=str(closed_port_kubeconfig(tmp_path / "kubeconfig")),
        LIVENESS_LAB_PODS_REFRESH="1",
        LIVENESS_LAB_LIVE_REFRESH="1",
        **({ui_token.TOKEN_ENV: token} if token else {}),
        **extra_env,
    )
    env.pop("KUBERNETES_SERVICE_HOST", None)
    log = open(tmp_path / "locust.log", "w")
    cmd = [sys.executable, "-m", "locust", "-f", str(locustfile), "--web-host", "127.0.0.1", "--web-port", str(port), "--class-picker"]
    procs = []
    if workers:
        master_port = free_loopback_port()
        cmd += ["--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(master_port)]
    procs.append(subprocess.Popen(cmd, cwd=LOCUST_DIR, env=env, stdout=log, stderr=subprocess.STDOUT))
    web_ui = f"http://127.0.0.1:{port}"
    use_token(web_ui, token)
    try:
        wait_http(web_ui + "/", 60, procs[0])
        for i in range(workers):
            worker_log = open(tmp_path / f"locust-worker-{i}.log", "w")
            worker = ["--worker", "--master-host", "127.0.0.1", "--master-port", str(master_port)]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "locust", "-f", str(locustfile), *worker],
                    cwd=LOCUST_DIR,
                    env=env,
                    stdout=worker_log,
                    stderr=subprocess.STDOUT,
                )
            )
        if workers:
            deadline = time.monotonic() + 60
            while len(web_read(web_ui, "/stats/requests").get("workers") or []) < workers:
                assert time.monotonic() < deadline and all(p.poll() is None for p in procs), f"{workers} workers did not connect"
                time.sleep(0.5)
        yield web_ui
    finally:
        for proc in reversed(procs):
            stop(proc)
        use_token(web_ui, None)
        drained(services["blocking"])


def free_loopback_port() -> int:
    """A TCP port free on 127.0.0.1 now (the master's port for its workers, asked of the kernel)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def drained(url, timeout=90):
    """Until the blocking instance answers /livez at once 3 times running: the swarm left requests queued
    on its event loops (each sleeping 1 s), and the next test shares the instance (a session fixture)."""
    deadline, quick = time.monotonic() + timeout, 0
    while quick < 3 and time.monotonic() < deadline:
        started = time.monotonic()
        try:
            urllib.request.urlopen(url + "/livez", timeout=5).read()
            quick = quick + 1 if time.monotonic() - started < 0.3 else 0
        except OSError:
            quick = 0
        time.sleep(0.5)


@pytest.fixture
def live_web_ui(services, tmp_path):
    yield from local_locust(services, tmp_path, LIVE_WEB_UI_PORT, LOCUST_DIR / "locustfile.py")


@pytest.fixture
def replay_web_ui(services, tmp_path):
    """As live_web_ui, with the pods and events of the recorded passing run replayed (replay_locustfile.py)."""
    yield from local_locust(services, tmp_path, REPLAY_WEB_UI_PORT, Path(__file__).parent / "replay_locustfile.py")


def headline(page, variant):
    """The chart title's figures line of VARIANT, as shown: {"answered": req/s, "failed": per s}."""
    text = page.locator(f'section[data-variant="{variant}"] svg text', has_text=re.compile(r"answered [\d.?]+ req/s")).first.text_content()
    figures = dict(re.findall(r"(answered|failed) ([\d.]+)", text))
    return {k: float(x) for k, x in figures.items()}


def test_the_live_tab_shows_each_variant_and_its_stop_and_reset_buttons_work(live_web_ui, tmp_path):
    """20 users per variant at 1 req/s of 1000 ms: the blocking instance (4 event loops) answers about 4
    a second, the reactive one all 20; there is no Kubernetes API, and the tab says so."""
    assert (
        web_post(live_web_ui, "/swarm", user_count=40, spawn_rate=40, user_classes=["BlockingUser", "ReactiveUser"], shape_class="Default")
        == 200
    )
    shot = Path(os.environ.get("LIVENESS_LAB_SCREENSHOTS", tmp_path)) / "live-tab-local.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    with pods_tab_page(live_web_ui, "Live", viewport=(1920, 1080)) as page:
        for variant in ("blocking", "reactive"):
            page.get_by_role("img", name=f"{variant} chart").wait_for(timeout=20000)
        page.get_by_role("status").filter(has_text="Kubernetes API unreachable").wait_for(timeout=20000)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            page.wait_for_timeout(2000)
            blocking, reactive = headline(page, "blocking"), headline(page, "reactive")
            if reactive.get("answered", 0) >= 15 and blocking.get("answered", 99) < 8:
                break
        page.screenshot(path=str(shot))
        assert reactive["answered"] >= 15 and reactive["failed"] == 0, (blocking, reactive)
        assert blocking["answered"] < reactive["answered"] / 2, (blocking, reactive)
        # The stock buttons, through the library's UI (sent as POST, as Locust 2.47 requires).
        before = web_read(live_web_ui, "/liveness-lab/live")
        page.get_by_role("button", name="Reset").click()
        page.wait_for_timeout(1500)
        after = web_read(live_web_ui, "/liveness-lab/live")
        assert after["started"] > before["started"], (before["started"], after["started"])
        assert max(len(v["series"]["t"]) for v in before["variants"]) >= 5
        assert all(len(v["series"]["t"]) <= 2 for v in after["variants"]), after["variants"]
        page.get_by_role("button", name="Stop").click()
        deadline = time.monotonic() + 20
        while web_read(live_web_ui, "/stats/requests")["state"] != "stopped" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert web_read(live_web_ui, "/stats/requests")["state"] == "stopped"
        # Every stock tab still opens.
        for tab in ("Statistics", "Charts", "Failures", "Exceptions", "Current ratio", "Download Data", "Logs", "Pods"):
            page.get_by_role("tab", name=tab).click()
        page.get_by_role("columnheader", name="Ready / total").wait_for(timeout=10000)
    assert shot.stat().st_size > 0


def test_kill_and_restart_markers_show_on_blocking_with_their_message_on_hover(replay_web_ui, tmp_path):
    """The recorded run's pods and events, replayed from the swarm's start (its first liveness kill 25 s
    in, the restart 40 s in, the second kill 70 s in), under real load: the markers appear on blocking
    only, at the replayed times, hovering the kill shows its message; and after the first kill, when
    the kubelet's spam filter has stopped the failure events, the second kill's three failures are
    there, each labelled with its place in the countdown (2/3 ...), and hovering one says which it is."""
    assert (
        web_post(
            replay_web_ui, "/swarm", user_count=40, spawn_rate=40, user_classes=["BlockingUser", "ReactiveUser"], shape_class="Default"
        )
        == 200
    )
    shot = Path(os.environ.get("LIVENESS_LAB_SCREENSHOTS", tmp_path)) / "live-tab-replay.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    with pods_tab_page(replay_web_ui, "Live", viewport=(1920, 1080)) as page:
        deadline = time.monotonic() + 120
        data = web_read(replay_web_ui, "/liveness-lab/live")
        while time.monotonic() < deadline:
            page.wait_for_timeout(1000)
            data = web_read(replay_web_ui, "/liveness-lab/live")
            blocking = next((v for v in data["variants"] if v["name"] == "blocking"), {"markers": []})
            if [m["kind"] for m in blocking["markers"]].count("kill") >= 2 and any(m["kind"] == "restart" for m in blocking["markers"]):
                break
        kills = [m["t"] for m in blocking["markers"] if m["kind"] == "kill"]
        assert len(kills) >= 2 and any(m["kind"] == "restart" for m in blocking["markers"]), blocking["markers"]
        page.wait_for_timeout(2500)  # one read by the page
        assert json.loads(page.locator('section[data-variant="blocking"]').get_attribute("data-kills")) == kills
        assert json.loads(page.locator('section[data-variant="reactive"]').get_attribute("data-kills")) == []
        # The kill happened 23 s after the recorded swarm start: at +25 s here (the replay's 2 s offset).
        assert 23 <= kills[0] - data["started"] <= 28, kills[0] - data["started"]
        # Every kill's countdown, the second's after the spam filter stopped the failure events: one
        # reported (1/3), two placed from the kill (hollow).
        assert countdowns(blocking["markers"])[:2] == [["1/3", "2/3", "3/3"]] * 2, blocking["markers"]
        second = [m for m in blocking["markers"] if kills[0] < m["t"] <= kills[1] and m["kind"] in ("failure", "unreported")]
        assert [m["kind"] for m in second] == ["failure", "unreported", "unreported"], second
        # What a person sees: the labels by the markers in the chart's event strip, once per kill at least.
        chart = page.locator('section[data-variant="blocking"] svg text')
        for label in ("1/3", "2/3", "3/3"):
            assert chart.filter(has_text=re.compile(rf"^{label}$")).count() >= 2, label

        def hover(t, text):
            """Points at the symbol at T until the tooltip shows TEXT: the tab redraws its charts at each read
            (every second here), which may hide a tooltip shown just before; a person moves the mouse again."""
            from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

            x, y = page.evaluate(
                "([x]) => window.livenessLabCharts.blocking.convertToPixel({xAxisIndex: 0, yAxisIndex: 0}, [x, 0.5])",
                [round(t - data["started"], 1)],
            )
            box = page.get_by_role("img", name="blocking chart").bounding_box()
            for attempt in range(4):
                page.mouse.move(box["x"] + x, box["y"] + y + 40)
                page.mouse.move(box["x"] + x, box["y"] + y)
                try:
                    page.get_by_text(text).first.wait_for(timeout=2500)
                    return
                except PlaywrightTimeoutError:
                    if attempt == 3:
                        raise

        hover(kills[0], re.compile(r"liveness kill after 3/3 at \+\d+\.\d s: Container service failed liveness probe"))
        hover(second[1]["t"], re.compile(r"liveness failure 2/3 at \+\d+\.\d s, no event of its own"))
        page.screenshot(path=str(shot))
    assert shot.stat().st_size > 0
