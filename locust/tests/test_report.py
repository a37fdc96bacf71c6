"""The report builder on runs recorded from the kind cluster (fixtures/run-pass, run-fail, run-disturbed):
plots and files written, the verdict computed every way, and the first kill timed against the probe
settings recorded in run.json (fixtures/deployments.json: the chart's Deployments, as `kubectl get -o json`
gives them to report.settings)."""

import copy
import io
import json
import shutil

import pytest
from conftest import FIXTURES

from liveness_lab.base.probes import Probe
from liveness_lab.report import build, facts, settings, verdict
from liveness_lab.report.kills import kill_window
from liveness_lab.report.load import served_load
from liveness_lab.report.recording import run_phases


@pytest.fixture
def passing():
    return facts.load_run(FIXTURES / "run-pass")


@pytest.fixture
def data(passing):
    """The passing run, to change in one test."""
    return copy.deepcopy(passing)


def built(fixture: str, tmp_path):
    """A copy of a recorded run folder with its report built: build's exit code, the folder, summary.md."""
    folder = shutil.copytree(FIXTURES / fixture, tmp_path / "run")
    rc = build.main([str(folder)])
    return rc, folder, (folder / "summary.md").read_text()


def test_recorded_passing_run_builds_a_self_contained_report_and_exits_0(tmp_path):
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    assert build.main([str(folder)]) == 0
    for name in ("blocking.png", "reactive.png", "cpu.png", "report.html", "summary.md", "verdict.json"):
        assert (folder / name).stat().st_size > 0, name
    assert (folder / "blocking.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (folder / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3
    assert "src='http" not in html and 'src="http' not in html  # nothing fetched from elsewhere
    summary = (folder / "summary.md").read_text()
    assert summary.startswith("# liveness-lab scripted run: PASS")
    assert "load start -> first restart" in summary and "The machine was under the line" in summary
    # One document, two renderings: every section of summary.md is a section of report.html.
    for heading in (line[3:] for line in summary.splitlines() if line.startswith("## ")):
        assert f"<h2>{heading}</h2>" in html, heading


def test_passing_run_restarts_blocking_after_liveness_failures_and_leaves_reactive_alone(passing):
    result = verdict.judge(passing)
    assert result.verdict == "PASS", [x.text() for x in result.lines]
    blocking, reactive = result.facts.analyses["blocking"], result.facts.analyses["reactive"]
    assert blocking.pods.restarts and all(r.liveness for r in blocking.pods.restarts)
    assert blocking.first_liveness_failure_s < blocking.first_liveness_kill_s < blocking.first_restart_s
    assert reactive.pods.restarts == [] and reactive.probes.unhealthy == 0 and reactive.figures.failures == 0
    assert reactive.figures.requests > 1000


def test_recorded_failing_run_fails_and_exits_1(tmp_path):
    # 2 users per variant: 2 requests in flight never block 4 event loops, so nothing restarts.
    rc, folder, summary = built("run-fail", tmp_path)
    assert rc == 1
    assert (folder / "blocking.png").exists()
    assert summary.startswith("# liveness-lab scripted run: FAIL")
    assert "- blocking restarts: predicted >=1, measured 0 (78gl2 0): NOT held" in summary


def test_a_run_whose_pods_were_replaced_midway_has_no_verdict_and_exits_2(tmp_path):
    # Recorded while another developer re-created the release under the run.
    rc, _, summary = built("run-disturbed", tmp_path)
    assert rc == 2
    assert summary.startswith("# liveness-lab scripted run: INCONCLUSIVE")
    assert "pods created during the run" in summary


def failed_checks(data):
    """The verdict, and the claim's lines that did not hold with why it could not tell."""
    result = verdict.judge(data)
    return result.verdict, [x.text() for x in result.lines if x.held is False] + result.why_cannot_tell


def test_a_reactive_liveness_failure_fails_the_verdict(data):
    t = run_phases(data.run).hold + 30
    reactive_pod = next(p["name"] for r in data.timeline if r["kind"] == "pods" for p in r["pods"] if p["variant"] == "reactive")
    data.timeline.append(
        {
            "t": t,
            "kind": "event",
            "uid": "x",
            "pod": reactive_pod,
            "variant": "reactive",
            "reason": "Unhealthy",
            "type": "Warning",
            "message": "Liveness probe failed: context deadline exceeded",
            "count": 1,
            "first": t,
            "last": t,
        }
    )
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and failed == ["reactive unhealthy: predicted 0, measured 1: NOT held"], failed


def test_a_restart_without_liveness_failures_or_by_oom_fails_the_verdict(data, passing):
    data.timeline = [r for r in data.timeline if not (r["kind"] == "event" and r["reason"] in ("Unhealthy", "Killing"))]
    outcome, failed = failed_checks(data)
    # Without its own Killing event, and with no probe counter read, a SIGTERM is not known to be a liveness
    # kill: the cause is not measured, so the run cannot tell (the lab's rule: never a guess either way).
    assert outcome == "INCONCLUSIVE" and len(failed) == 2, failed
    assert (
        failed[0].startswith("blocking kill_reason: 0 of 5 restarts liveness kills of their own; cause unknown: ")
        and "SIGTERM" in failed[0]
    )
    assert failed[1] == "blocking kill_timing: a restart of unknown cause at +28.3 s"  # it may have been the kill

    data = copy.deepcopy(passing)
    for r in data.timeline:
        for p in r["pods"] if r["kind"] == "pods" else []:
            if p["variant"] == "blocking" and p["lastTerminatedReason"]:
                p["lastTerminatedReason"] = "OOMKilled"
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and len(failed) == 1 and failed[0].startswith("blocking kill_reason: predicted liveness, measured 0 of 5"), (
        failed
    )
    assert "OOMKilled" in failed[0]


def test_reactive_failures_fail_the_verdict(data):
    for row in data.totals:
        if row["Name"] == "reactive /api/work":
            row["Failure Count"] = "3"
    assert failed_checks(data)[0] == "FAIL"


def test_a_run_without_blocking_is_inconclusive(data):
    data.run["variants"] = "reactive"
    assert verdict.judge(data).verdict == "INCONCLUSIVE"


def test_a_machine_busy_over_the_line_makes_the_run_inconclusive(data):
    for r in data.timeline:
        if r["kind"] == "cpu":
            r["busy"] = 1.0
    result = verdict.judge(data)
    assert result.facts.cpu.starved and any("100% busy" in w for w in result.facts.cpu.machine_warnings)
    assert result.verdict == "INCONCLUSIVE" and result.facts.cannot_tell[0].startswith("the machine busy: ")


def test_a_run_that_lost_the_kubernetes_api_has_no_verdict(data):
    t = run_phases(data.run).hold
    data.timeline += [{"t": t + i, "kind": "error", "what": "api", "message": "connection refused"} for i in range(10)]
    result = verdict.judge(data)
    assert result.verdict == "INCONCLUSIVE" and "did not answer 10 times" in result.facts.disturbances[0]


def test_the_chart_settings_are_read_from_its_deployments(chart_settings):
    blocking = chart_settings["blocking"]
    assert set(chart_settings) == {"blocking", "reactive"}
    assert blocking["liveness"] == {
        "periodSeconds": 5,
        "timeoutSeconds": 1,
        "failureThreshold": 3,
        "type": "httpGet",
        "path": "/livez",
        "port": "http",
    }
    assert blocking["eventLoops"] == 4 and blocking["env"]["APP_MODE"] == "blocking" and "DEMO_LATENCY_MS" in blocking["env"]
    assert blocking["resources"]["limits"]["cpu"] == "1"


def test_the_kill_window_is_computed_from_the_recorded_probe(chart_settings):
    run = {"phases": {"ramp": 10}, "users_per_variant": 20}
    s = settings.VariantSettings.from_json(chart_settings["blocking"])
    w = kill_window(s.liveness, run, s)
    # (F-1)*P+T and F*P+T of the probe; late slack: the clock's plus the 2 s the ramp takes to start 4 users.
    assert (w.earliest_s, w.latest_s) == (11, 16) and (w.low, w.high) == (9, 20)
    slower = Probe(period_s=10, timeout_s=2, failure_threshold=4)
    w = kill_window(slower, run)  # event loops unknown: the whole ramp as late slack
    assert (w.earliest_s, w.latest_s) == (32, 42) and (w.low, w.high) == (30, 54)


def test_the_recorded_passing_run_kills_within_the_window(passing):
    result = verdict.judge(passing)
    timing = [x for x in result.lines if x.key == "kill_timing"]
    assert result.verdict == "PASS" and result.why_cannot_tell == []
    assert [x.text() for x in timing] == ["blocking kill_timing: predicted first kill at 9-20 s, measured +13.3 s: held"]


def test_a_kill_outside_the_window_fails_the_verdict(passing):
    # The same run judged against Kubernetes' default probe (10 s period, 3 failures: 21-31 s, 19-35 with
    # its slack): a kill 13 s after the load start is too early for it.
    data = passing
    data.run["settings"]["blocking"]["liveness"].update(periodSeconds=10)
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and failed == ["blocking kill_timing: predicted first kill at 19-35 s, measured +13.3 s: NOT held"]


def test_a_run_without_settings_cannot_tell_and_says_why(tmp_path):
    # The API did not answer when the run began, so run.json has no probe settings: the kill cannot be
    # timed, and a claim with a prediction that cannot be measured cannot tell.
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    run = json.loads((folder / "run.json").read_text())
    del run["settings"]
    (folder / "run.json").write_text(json.dumps(run))
    assert build.main([str(folder)]) == 2
    summary = (folder / "summary.md").read_text()
    assert summary.startswith("# liveness-lab scripted run: INCONCLUSIVE")
    assert "- blocking kill_timing: predicted from-settings, measured no liveness probe settings recorded: not measured" in summary
    assert "- cannot tell: blocking kill_timing: no liveness probe settings recorded" in summary


def test_a_report_with_settings_shows_them_and_the_window(tmp_path):
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    assert build.main([str(folder)]) == 0
    summary, html = (folder / "summary.md").read_text(), (folder / "report.html").read_text()
    for text in ("liveness httpGet http /livez, every 5 s, timeout 1 s, 3 failures", "first liveness kill expected at 9-20 s"):
        assert text in summary and text in html
    assert "note: run.json records no probe settings" not in summary
    assert json.loads((folder / "verdict.json").read_text())["killWindows"]["blocking"] == {
        "fromS": 9,
        "toS": 20,
        "earliestS": 11,
        "latestS": 16,
    }


def test_the_report_counts_down_every_kill_in_its_plot_and_event_log(tmp_path, passing):
    """run-pass with the chart's probe (3 failures, every 5 s): each of the 5 kills follows failures 1/3,
    2/3, 3/3; after the first kill the kubelet's spam filter reported one of them (12:14:48), and the
    report places and says the others, as the Live tab does."""
    blocking = verdict.judge(passing).facts.analyses["blocking"]
    marks = blocking.countdown()
    kills = [m for m in marks if m.kind == "kill"]
    assert len(kills) == 5
    for kill in kills:
        assert [m.label for m in marks if m.kill_t == kill.t and m.kind != "kill"] == ["1/3", "2/3", "3/3"]
    assert [m.kind for m in marks].count("unreported") == 2 + 3 * 3
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    assert build.main([str(folder)]) == 0
    html = (folder / "report.html").read_text()
    assert "Unhealthy x2: Liveness probe failed" in html and "awaiting headers) [liveness failure 2/3]" in html
    assert html.count("will be restarted [liveness kill after 3/3]") == 5
    assert "liveness failure 2/3 at +53.3 s, no event of its own: the kubelet&#x27;s event spam filter dropped its event" in html


@pytest.mark.parametrize("folder, outcome", [("run-pass", "PASS"), ("run-fail", "FAIL"), ("run-disturbed", "INCONCLUSIVE")])
def test_every_recorded_run_keeps_its_verdict(folder, outcome):
    assert verdict.judge(facts.load_run(FIXTURES / folder)).verdict == outcome


# The load the variants saw: their own pods' request counts (the recorder's `metrics` samples) against
# what Locust offered. run-alone: demo.sh after it stopped a swarm started in the in-cluster web UI;
# run-extra-load: someone started that swarm again 15 s into the run (fixtures/README.md).


@pytest.fixture
def alone():
    return facts.load_run(FIXTURES / "run-alone")


def test_a_run_alone_passes_with_served_close_to_offered(alone):
    result = verdict.judge(alone)
    assert result.verdict == "PASS", result.facts.disturbances
    reactive = result.facts.loads["reactive"]
    # 20 more served than offered: the one request per user in flight when Locust stopped its users.
    assert (reactive.offered, reactive.served, reactive.allowance) == (930, 950, 20 + 47)
    assert not reactive.extra and not reactive.busy_before and reactive.missed == {}
    # A saturated blocking pod answers few scrapes, and its counter dies with each killed container.
    blocking = result.facts.loads["blocking"]
    assert blocking.served is not None and blocking.served <= blocking.offered
    assert sum(blocking.missed.values()) > blocking.samples and sum(blocking.resets.values()) == 2
    assert any("lower bound" in n for n in result.facts.load_notes)


def test_a_run_with_extra_load_has_no_verdict_and_exits_2(tmp_path):
    rc, folder, summary = built("run-extra-load", tmp_path)
    assert rc == 2
    html = (folder / "report.html").read_text()
    assert summary.startswith("# liveness-lab scripted run: INCONCLUSIVE")
    assert (
        "- reactive: its pods served 1,620 requests, the run offered 930 (allowed up to 997): another load generator swarmed it too"
        in summary
    )
    for text in (
        "| served by its pods / offered by Locust | 0 / 186 (0%) | 1,620 / 930 (174%) |",
        "## Load the variants saw",
        "- NOT ALONE reactive: served 1,620 / 930 (174%) offered; at most 997 allowed",
    ):
        assert text in summary
    assert "1,620 / 930 (174%)" in html
    load = json.loads((folder / "verdict.json").read_text())["load"]["variants"]["reactive"]
    assert load["extra"] and (load["served"], load["offered"]) == (1620, 930)
    # Without the other swarm's load nothing else would stop it passing: every claim check holds.
    assert "NOT held" not in summary.split("## The claim")[1].split("##")[0]


def with_reactive_served(data, extra):
    """DATA with EXTRA added to the reactive pod's count in every sample after the load started."""
    start = run_phases(data.run).start
    for r in data.timeline:
        for m in r["pods"].values() if r["kind"] == "metrics" else []:
            if m["variant"] == "reactive" and m["t"] >= start:
                m["served"] += extra
    return data


def test_the_allowance_is_the_limit_of_extra_load(alone):
    # 950 served against 930 offered, 67 allowed: 47 more is still alone, 48 more is not.
    assert verdict.judge(with_reactive_served(copy.deepcopy(alone), 47)).verdict == "PASS"
    result = verdict.judge(with_reactive_served(copy.deepcopy(alone), 48))
    assert result.verdict == "INCONCLUSIVE" and "allowed up to 997" in result.facts.disturbances[0]


def test_variants_busy_before_the_swarm_give_no_verdict(alone):
    data = copy.deepcopy(alone)
    start = run_phases(data.run).start
    first = next(r for r in data.timeline if r["kind"] == "metrics")
    assert all(m["t"] < start for m in first["pods"].values())
    next(m for m in first["pods"].values() if m["variant"] == "blocking")["inFlight"] = 3
    result = verdict.judge(data)
    assert result.verdict == "INCONCLUSIVE"
    assert result.facts.disturbances == [
        "blocking: already busy before the swarm started (3 request(s) in flight, 0 served during the baseline): something else is "
        "sending it requests"
    ]


def metrics_sample(t, served, restarts=0, in_flight=0, pod="liveness-lab-reactive-x"):
    return {
        "t": t,
        "kind": "metrics",
        "missed": {},
        "pods": {pod: {"variant": "reactive", "t": t, "served": served, "inFlight": in_flight, "restarts": restarts}},
    }


def test_a_counter_reset_by_a_restart_is_added_up():
    timeline = [
        metrics_sample(0, 7),
        metrics_sample(20, 17),
        metrics_sample(30, 5, restarts=1),
        metrics_sample(40, 9, restarts=1),
        metrics_sample(50, 30, restarts=2),
        metrics_sample(60, 2, restarts=2),
    ]
    # 10, then 5 after the first restart, 4, then 30 (a count above the old one, but a new container),
    # then a count that went down without a restart seen: a new container all the same, 2.
    load = served_load(timeline, "reactive", start=10, offered=100, users=5)
    assert load.served == 10 + 5 + 4 + 30 + 2 and load.resets == {"liveness-lab-reactive-x": 3}
    # Requests finished between two samples before the load started: something else sends load.
    busy = served_load([metrics_sample(0, 7), metrics_sample(5, 9)] + timeline[1:], "reactive", start=10, offered=100, users=5)
    assert busy.before_start_served == 2 and busy.busy_before


def test_a_variant_whose_count_was_never_read_has_no_verdict(alone):
    data = copy.deepcopy(alone)
    for r in data.timeline:
        if r["kind"] == "metrics":
            r["missed"].update({p: {**m, "message": "503"} for p, m in r["pods"].items() if m["variant"] == "reactive"})
            r["pods"] = {p: m for p, m in r["pods"].items() if m["variant"] != "reactive"}
    result = verdict.judge(data)
    assert result.verdict == "INCONCLUSIVE" and result.facts.disturbances[0].startswith(
        "reactive: its pods' own request count was never read"
    )


def test_a_timeline_without_the_service_counters_keeps_its_verdict_and_says_so(passing):
    result = verdict.judge(passing)  # run-pass: the recorder did not scrape the service's counters yet
    assert result.verdict == "PASS" and result.facts.loads == {}
    assert result.facts.load_notes == [
        "the timeline has no reading of the service's own counters (the recorder did not scrape them): the load the variants "
        "saw is not compared with what Locust offered"
    ]


def test_the_recorder_reads_the_service_counters_of_every_mode_tag():
    from liveness_lab.report.recorder import parse_service_metrics

    text = (
        "# TYPE demo_requests_in_flight gauge\n"
        'demo_requests_in_flight{application="liveness-lab-service",mode="reactive"} 3.0\n'
        'demo_work_latency_seconds_bucket{application="liveness-lab-service",mode="reactive",le="1.0"} 9\n'
        'demo_work_latency_seconds_count{application="liveness-lab-service",mode="reactive"} 950\n'
        'demo_work_latency_seconds_count{application="liveness-lab-service",mode="other"} 2\n'
        'demo_work_latency_seconds_sum{application="liveness-lab-service",mode="reactive"} 951.2\n'
        'jvm_gc_pause_seconds_count{action="end of minor GC",cause="Allocation Failure",gc="Copy"} 41\n'
        'jvm_gc_pause_seconds_sum{action="end of minor GC",cause="Allocation Failure",gc="Copy"} 0.5125\n'
        'jvm_gc_pause_seconds_sum{action="end of major GC",cause="Allocation Failure",gc="MarkSweepCompact"} 2.25\n'
        'jvm_gc_pause_seconds_max{action="end of major GC",cause="Allocation Failure",gc="MarkSweepCompact"} 1.1\n'
        'jvm_gc_live_data_size_bytes{application="liveness-lab-service"} 1.50790392E8\n'
        'jvm_gc_max_data_size_bytes{application="liveness-lab-service"} 1.78978816E8\n'
        'jvm_gc_memory_promoted_bytes_total{application="liveness-lab-service"} 3.24960984E8\n'
    )
    got = parse_service_metrics(text)
    assert got == {"served": 952, "inFlight": 3, "gcPauseS": 2.763, "liveB": 150790392, "oldMaxB": 178978816}
    assert parse_service_metrics("# nothing here\n") == {}


def test_the_recorder_reads_each_pods_counters_where_its_actuator_answers():
    """Main port 8080 by default; the management port when the chart moved actuator there."""
    from liveness_lab.report.recorder import Recorder

    pods = json.loads((FIXTURES / "pods.json").read_text())["items"]
    moved = copy.deepcopy(pods[0])
    moved["metadata"]["name"] += "-management"
    moved["spec"]["containers"][0]["ports"].append({"name": "management", "containerPort": 8081, "protocol": "TCP"})

    class Kube:
        asked = []

        def pods(self):
            return [*pods, moved]

        def pod_proxy(self, pod, port, path, timeout_s):
            self.asked.append((pod, port, path))
            return b'demo_requests_in_flight{mode="blocking"} 3.0\ndemo_work_latency_seconds_count{mode="blocking"} 7.0\n'

    out = io.StringIO()
    Recorder(out, Kube(), metrics_kube=Kube()).metrics()
    want = {p["metadata"]["name"]: 8080 for p in pods} | {moved["metadata"]["name"]: 8081}
    assert {pod: port for pod, port, _ in Kube.asked} == want
    assert {path for _, _, path in Kube.asked} == {"actuator/prometheus"}
    sample = json.loads(out.getvalue())
    assert len(sample["pods"]) == 3 and all(p["inFlight"] == 3 and p["served"] == 7 for p in sample["pods"].values())


def test_the_run_line_names_the_kubernetes_release_and_kubelets_of_another():
    assert build.kubernetes_words({"kubernetes": {"server": "v1.37.0", "kubelets": ["v1.37.0"]}}) == ", Kubernetes v1.37.0"
    mixed = {"kubernetes": {"server": "v1.37.0", "kubelets": ["v1.36.4", "v1.37.0"]}}
    assert build.kubernetes_words(mixed) == ", Kubernetes v1.37.0 (kubelets v1.36.4)"
    assert build.kubernetes_words({}) == build.kubernetes_words({"kubernetes": None}) == ""  # recorded before 2026-11-29


def test_the_fullest_old_generation_is_the_largest_share_after_a_major_collection_with_its_requests_in_flight():
    from liveness_lab.report.gc import fullest_heap

    def sample(t, live, in_flight, variant="reactive"):
        pod = {"variant": variant, "restarts": 0, "t": t, "inFlight": in_flight, "served": 0, "gcPauseS": 0.1}
        if live is not None:
            pod |= {"liveB": live, "oldMaxB": 178978816}
        return {"t": t, "kind": "metrics", "pods": {f"{variant}-pod": pod}, "missed": {}}

    timeline = [
        sample(1, None, 10),
        sample(3, 0, 20),
        sample(5, 120 * 2**20, 12000),
        sample(7, 150 * 2**20, 17000),
        sample(9, 90 * 2**20, 9000),
    ]
    high = fullest_heap(timeline, "reactive")
    assert (high.t, high.in_flight) == (7, 17000)
    assert high.describe() == "150 MiB live of 171 MiB (88 %) with 17,000 requests in flight"
    assert fullest_heap(timeline, "blocking") is None  # no scrape of it
    assert fullest_heap(timeline[:2], "reactive") is None  # no major collection yet: a live size of 0


def test_the_recorder_reads_each_pods_cadvisor_cpu_counters_and_memory_working_set_of_its_containers_only():
    from liveness_lab.report.recorder import parse_throttle

    text = (
        'container_cpu_cfs_periods_total{container="service",namespace="liveness-lab",pod="r-1"} 1217\n'
        'container_cpu_cfs_throttled_periods_total{container="service",namespace="liveness-lab",pod="r-1"} 148\n'
        'container_memory_working_set_bytes{container="service",namespace="liveness-lab",pod="r-1"} 4.4e+08 1795957176000\n'
        'container_memory_working_set_bytes{container="",namespace="liveness-lab",pod="r-1"} 4.5e+08\n'
        'container_memory_working_set_bytes{container="service",namespace="other",pod="x-1"} 1e+08\n'
        'container_memory_rss{container="service",namespace="liveness-lab",pod="r-1"} 4e+08\n'
    )
    assert parse_throttle(text, "liveness-lab") == {
        "r-1": {
            "container_cpu_cfs_periods_total": 1217.0,
            "container_cpu_cfs_throttled_periods_total": 148.0,
            "container_memory_working_set_bytes": 4.4e8,
        }
    }


def test_the_recorder_reads_a_restarted_containers_gc_log_once_per_restart_and_says_when_it_cannot():
    from liveness_lab.base.kube import KubeUnavailable
    from liveness_lab.report.recorder import Recorder

    log = (
        "2026-11-29T19:30:01.5Z [9.1s][info][gc] GC(7) Pause Young (Allocation Failure) 40M->21M(123M) 12.500ms\n"
        "2026-11-29T19:30:04Z [12.0s][info][gc] GC(8) Pause Full (Allocation Failure) 84M->83M(128M) 812.345ms\n"
    )

    class Kube:
        namespace = "liveness-lab"

        def __init__(self):
            self.asked, self.refuse = [], False

        def previous_log(self, pod, container, tail_lines):
            self.asked.append((pod, container))
            if self.refuse:
                raise KubeUnavailable(f"previous log of p/service failed: ApiException: {self.refuse}")
            return log

    def pod(restarts):
        meta = {"name": "liveness-lab-reactive-5d9c-abcde", "labels": {"app.kubernetes.io/component": "reactive"}}
        return {"metadata": meta, "status": {"containerStatuses": [{"name": "service", "restartCount": restarts}]}}

    out, kube = io.StringIO(), Kube()
    recorder = Recorder(out, kube)
    for n in (2, 2, 3, 3, 4):  # first seen after two restarts (before the recording): not read
        recorder.gc_logs(pod(n))
    kube.refuse = "(400) Bad Request"
    recorder.gc_logs(pod(5))
    kube.refuse = "(403) Forbidden"  # no pods/log: said once, not asked again
    recorder.gc_logs(pod(6))
    recorder.gc_logs(pod(7))
    records = [json.loads(x) for x in out.getvalue().splitlines()]
    assert kube.asked == [("liveness-lab-reactive-5d9c-abcde", "service")] * 4
    assert [r["kind"] for r in records] == ["gclog", "gclog", "error", "error"]
    assert records[0]["restarts"] == 3 and [p[1:] for p in records[0]["pauses"]] == [[12.5, "Young"], [812.345, "Full"]]
    assert records[2]["what"] == "gclog" and "(400)" in records[2]["message"]
