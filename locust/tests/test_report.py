"""The report builder on runs recorded from the kind cluster (fixtures/run-pass, run-fail, run-disturbed):
plots and files written, the verdict computed every way, and the first kill timed against the probe
settings recorded in run.json (fixtures/deployments.json: the chart's Deployments, as `kubectl get -o json`
gives them to report.settings)."""

import json

import copy
import shutil

import pytest
from conftest import FIXTURES

from report import build, settings, verdict


@pytest.fixture
def passing():
    return verdict.load_run(FIXTURES / "run-pass")


@pytest.fixture
def chart_settings():
    return settings.settings_by_variant(json.loads((FIXTURES / "deployments.json").read_text()))


@pytest.fixture
def passing_with_settings(passing, chart_settings):
    """The passing run as if run.json had recorded the chart's settings (it ran with them: its liveness
    failures are 5 s apart and the kill came at the third)."""
    data = copy.deepcopy(passing)
    data.run["settings"] = chart_settings
    return data


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
    assert "load start -> first restart" in summary and "CPU starvation" in summary
    # One document, two renderings: every section of summary.md is a section of report.html.
    for heading in (line[3:] for line in summary.splitlines() if line.startswith("## ")):
        assert f"<h2>{heading}</h2>" in html, heading


def test_passing_run_restarts_blocking_after_liveness_failures_and_leaves_reactive_alone(passing):
    result = verdict.judge(passing)
    assert result.verdict == "PASS", result.checks
    blocking, reactive = result.analyses["blocking"], result.analyses["reactive"]
    assert blocking.pods.restarts and all(r.after_liveness_failure for r in blocking.pods.restarts)
    assert blocking.first_liveness_failure_s < blocking.first_liveness_kill_s < blocking.first_restart_s
    assert reactive.pods.restarts == [] and reactive.probes.unhealthy == 0 and reactive.figures.failures == 0
    assert reactive.figures.requests > 1000


def test_recorded_failing_run_fails_and_exits_1(tmp_path):
    # 2 users per variant: 2 requests in flight never block 4 event loops, so nothing restarts.
    folder = shutil.copytree(FIXTURES / "run-fail", tmp_path / "run")
    assert build.main([str(folder)]) == 1
    assert (folder / "blocking.png").exists()
    summary = (folder / "summary.md").read_text()
    assert summary.startswith("# liveness-lab scripted run: FAIL")
    assert "restarted 0 time(s) (needs >= 1)" in summary


def test_a_run_whose_pods_were_replaced_midway_has_no_verdict_and_exits_2(tmp_path):
    # Recorded while another developer re-created the release under the run.
    folder = shutil.copytree(FIXTURES / "run-disturbed", tmp_path / "run")
    assert build.main([str(folder)]) == 2
    summary = (folder / "summary.md").read_text()
    assert summary.startswith("# liveness-lab scripted run: INCONCLUSIVE")
    assert "pods created during the run" in summary


def failed_checks(data):
    result = verdict.judge(data)
    return result.verdict, [c.text for c in result.failed()]


def test_a_reactive_liveness_failure_fails_the_verdict(passing):
    data = copy.deepcopy(passing)
    t = verdict.run_phases(data.run).hold + 30
    reactive_pod = next(p["name"] for r in data.timeline if r["kind"] == "pods" for p in r["pods"] if p["variant"] == "reactive")
    data.timeline.append({"t": t, "kind": "event", "uid": "x", "pod": reactive_pod, "variant": "reactive", "reason": "Unhealthy",
                             "type": "Warning", "message": "Liveness probe failed: context deadline exceeded", "count": 1, "first": t, "last": t})
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and any("Unhealthy" in f for f in failed), failed


def test_a_restart_without_liveness_failures_or_by_oom_fails_the_verdict(passing):
    data = copy.deepcopy(passing)
    data.timeline = [r for r in data.timeline if not (r["kind"] == "event" and r["reason"] in ("Unhealthy", "Killing"))]
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and any("preceded by a liveness failure" in f for f in failed)

    data = copy.deepcopy(passing)
    for r in data.timeline:
        for p in r["pods"] if r["kind"] == "pods" else []:
            if p["variant"] == "blocking" and p["lastTerminatedReason"]:
                p["lastTerminatedReason"] = "OOMKilled"
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and any("OOMKilled" in f for f in failed)


def test_reactive_failures_fail_the_verdict(passing):
    data = copy.deepcopy(passing)
    for row in data.totals:
        if row["Name"] == "reactive /api/work":
            row["Failure Count"] = "3"
    assert failed_checks(data)[0] == "FAIL"


def test_a_run_without_blocking_is_inconclusive(passing):
    data = copy.deepcopy(passing)
    data.run["variants"] = "reactive"
    assert verdict.judge(data).verdict == "INCONCLUSIVE"


def test_cpu_starvation_is_flagged(passing):
    data = copy.deepcopy(passing)
    for r in data.timeline:
        if r["kind"] == "cpu":
            r["busy"] = 1.0
    cpu = verdict.judge(data).cpu
    assert cpu.starved and any("busy" in w for w in cpu.warnings)


def test_a_run_that_lost_the_kubernetes_api_has_no_verdict(passing):
    data = copy.deepcopy(passing)
    t = verdict.run_phases(data.run).hold
    data.timeline += [{"t": t + i, "kind": "error", "what": "api", "message": "connection refused"} for i in range(10)]
    result = verdict.judge(data)
    assert result.verdict == "INCONCLUSIVE" and "did not answer 10 times" in result.disturbances[0]


def test_the_chart_settings_are_read_from_its_deployments(chart_settings):
    blocking = chart_settings["blocking"]
    assert set(chart_settings) == {"blocking", "reactive"}
    assert blocking["liveness"] == {"periodSeconds": 5, "timeoutSeconds": 1, "failureThreshold": 3, "type": "httpGet", "path": "/livez", "port": "http"}
    assert blocking["eventLoops"] == 4 and blocking["env"]["APP_MODE"] == "blocking" and "DEMO_LATENCY_MS" in blocking["env"]
    assert blocking["resources"]["limits"]["cpu"] == "1"


def test_the_kill_window_is_computed_from_the_recorded_probe(chart_settings):
    run = {"phases": {"ramp": 10}, "users_per_variant": 20}
    s = settings.VariantSettings.from_json(chart_settings["blocking"])
    w = settings.kill_window(s.liveness, s.event_loops, run)
    # (F-1)*P+T and F*P+T of the probe; late slack: the clock's plus the 2 s the ramp takes to start 4 users.
    assert (w.earliest_s, w.latest_s) == (11, 16) and (w.low, w.high) == (9, 20)
    slower = settings.ProbeSettings(period_s=10, timeout_s=2, failure_threshold=4)
    w = settings.kill_window(slower, None, run)  # event loops unknown: the whole ramp as late slack
    assert (w.earliest_s, w.latest_s) == (32, 42) and (w.low, w.high) == (30, 54)


def test_the_recorded_passing_run_kills_within_the_window(passing_with_settings):
    result = verdict.judge(passing_with_settings)
    timing = [c for c in result.checks if "first liveness kill" in c.text]
    assert result.verdict == "PASS" and result.notes == []
    assert len(timing) == 1 and timing[0].ok, timing
    assert "+13.3s after load start, within 9-20 s" in timing[0].text


def test_a_kill_outside_the_window_fails_the_verdict(passing_with_settings):
    # The same run judged against Kubernetes' default probe (10 s period, 3 failures: 21-31 s): a kill
    # 13 s after the load start is too early for it.
    data = passing_with_settings
    data.run["settings"]["blocking"]["liveness"].update(periodSeconds=10)
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and failed == [
        "liveness-lab-blocking-5996c55b89-jjfw9 first liveness kill at +13.3s after load start, OUTSIDE 19-35 s: "
        "(F-1)*P+T 21 s to F*P+T 31 s (P 10 s, T 1 s, F 3), slack 2 s early, 4 s late"
    ]


def test_a_run_without_settings_gets_no_timing_check_and_says_so(tmp_path):
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    assert "settings" not in json.loads((folder / "run.json").read_text())
    assert build.main([str(folder)]) == 0
    summary = (folder / "summary.md").read_text()
    assert "first liveness kill at" not in summary
    assert "- note: run.json records no probe settings (recorded before it did, or the API did not answer): the kill timing is not checked" in summary


def test_a_report_with_settings_shows_them_and_the_window(tmp_path, chart_settings):
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    run = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps(run | {"settings": chart_settings}))
    assert build.main([str(folder)]) == 0
    summary, html = (folder / "summary.md").read_text(), (folder / "report.html").read_text()
    for text in ("liveness every 5 s, 1 s timeout, 3 failures /livez on http", "first liveness kill expected at 9-20 s"):
        assert text in summary and text in html
    assert "note:" not in summary
    assert json.loads((folder / "verdict.json").read_text())["killWindows"]["blocking"] == {"fromS": 9, "toS": 20, "earliestS": 11, "latestS": 16}


@pytest.mark.parametrize("folder, outcome", [("run-pass", "PASS"), ("run-fail", "FAIL"), ("run-disturbed", "INCONCLUSIVE")])
def test_every_recorded_run_keeps_its_verdict_with_settings_recorded(folder, outcome, chart_settings):
    data = verdict.load_run(FIXTURES / folder)
    without = verdict.judge(data)
    data.run["settings"] = chart_settings
    result = verdict.judge(data)
    assert without.verdict == result.verdict == outcome
    # The fail and disturbed runs have no kill to time (no restart; pods replaced first): a note, not a check.
    assert [c for c in result.checks if "first liveness kill" not in c.text] == without.checks
