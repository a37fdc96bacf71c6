"""The report builder on runs recorded from the kind cluster (fixtures/run-pass, fixtures/run-fail):
plots and files written, and the verdict computed both ways."""

import copy
import shutil

import pytest
from conftest import FIXTURES

from report import build, verdict


@pytest.fixture
def passing():
    return verdict.load_run(FIXTURES / "run-pass")


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


def test_passing_run_restarts_blocking_after_liveness_failures_and_leaves_reactive_alone(passing):
    result = verdict.judge(passing)
    assert result["verdict"] == "PASS", result["checks"]
    blocking, reactive = result["analyses"]["blocking"], result["analyses"]["reactive"]
    assert blocking["restarts"] and all(r["afterLivenessFailure"] for r in blocking["restarts"])
    # The probe: liveness every 5 s, 1 s timeout, 3 failures -> the kill decision 11-16 s after
    # saturation, then up to 35 s of graceful shutdown before the container is gone.
    assert blocking["firstLivenessFailureS"] < blocking["firstRestartS"] < 120
    assert reactive["restarts"] == [] and reactive["unhealthy"] == 0 and reactive["failures"] == 0
    assert reactive["requests"] > 1000


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
    return result["verdict"], [text for _, ok, text in result["checks"] if not ok]


def test_a_reactive_liveness_failure_fails_the_verdict(passing):
    data = copy.deepcopy(passing)
    t = verdict.phases(data["run"])["hold"] + 30
    reactive_pod = next(p["name"] for r in data["timeline"] if r["kind"] == "pods" for p in r["pods"] if p["variant"] == "reactive")
    data["timeline"].append({"t": t, "kind": "event", "uid": "x", "pod": reactive_pod, "variant": "reactive", "reason": "Unhealthy",
                             "type": "Warning", "message": "Liveness probe failed: context deadline exceeded", "count": 1, "first": t, "last": t})
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and any("Unhealthy" in f for f in failed), failed


def test_a_restart_without_liveness_failures_or_by_oom_fails_the_verdict(passing):
    data = copy.deepcopy(passing)
    data["timeline"] = [r for r in data["timeline"] if not (r["kind"] == "event" and r["reason"] in ("Unhealthy", "Killing"))]
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and any("preceded by a liveness failure" in f for f in failed)

    data = copy.deepcopy(passing)
    for r in data["timeline"]:
        for p in r["pods"] if r["kind"] == "pods" else []:
            if p["variant"] == "blocking" and p["lastTerminatedReason"]:
                p["lastTerminatedReason"] = "OOMKilled"
    outcome, failed = failed_checks(data)
    assert outcome == "FAIL" and any("OOMKilled" in f for f in failed)


def test_reactive_failures_fail_the_verdict(passing):
    data = copy.deepcopy(passing)
    for row in data["totals"]:
        if row["Name"] == "reactive /api/work":
            row["Failure Count"] = "3"
    assert failed_checks(data)[0] == "FAIL"


def test_a_run_without_blocking_is_inconclusive(passing):
    data = copy.deepcopy(passing)
    data["run"]["variants"] = "reactive"
    assert verdict.judge(data)["verdict"] == "INCONCLUSIVE"


def test_cpu_starvation_is_flagged(passing):
    data = copy.deepcopy(passing)
    for r in data["timeline"]:
        if r["kind"] == "cpu":
            r["busy"] = 1.0
    cpu = verdict.judge(data)["cpu"]
    assert cpu["starved"] and any("busy" in w for w in cpu["warnings"])


def test_a_run_that_lost_the_kubernetes_api_has_no_verdict(passing):
    data = copy.deepcopy(passing)
    t = verdict.phases(data["run"])["hold"]
    data["timeline"] += [{"t": t + i, "kind": "error", "what": "api", "message": "connection refused"} for i in range(10)]
    result = verdict.judge(data)
    assert result["verdict"] == "INCONCLUSIVE" and "did not answer 10 times" in result["disturbances"][0]
