"""Every restart with its own cause (base.causes, report.facts): the recorded runs' restarts re-attributed
from their own Killing events, a restart borrowed from an earlier kill refused, the kubelet's probe counter
as ground truth (a row of F failures since the last other result is a kill; where the counter and the
events disagree the counter wins), and a stale lastState that names the previous restart's container."""

import copy
import json
import shutil

import pytest
from conftest import FIXTURES

from liveness_lab.base import kube
from liveness_lab.base.causes import counter_kills
from liveness_lab.report import verdict
from liveness_lab.report.facts import load_run, run_facts
from liveness_lab.report.pods import pod_history
from liveness_lab.report.predictions import NOT_HELD, NOT_MEASURED, Evidence, judge_line
from liveness_lab.report.recorder import Recorder

CHART = {
    "liveness": {"periodSeconds": 5, "timeoutSeconds": 1, "failureThreshold": 3, "type": "httpGet", "path": "/livez", "port": "http"},
    "startup": {"periodSeconds": 2, "timeoutSeconds": 1, "failureThreshold": 30, "type": "httpGet", "path": "/livez", "port": "http"},
}


def analyses(folder):
    return run_facts(load_run(folder)).analyses


def test_the_dependency_runs_startup_kills_are_named_as_such_each_from_its_own_killing_event():
    reactive = analyses(FIXTURES / "lab-dependency-in-liveness")["reactive"]
    causes = [(r.pod[-5:], r.cause) for r in reactive.pods.restarts]
    # Each pod: a liveness kill under the outage, then its new container's startup probe asked the same
    # dead dependency and was killed for that (before: both "after earlier liveness failures").
    assert causes == [("9wv6q", "liveness"), ("zk2qc", "liveness"), ("9wv6q", "startup"), ("zk2qc", "startup")]
    startup = reactive.pods.restarts[2]
    assert "failed startup probe, will be restarted" in startup.evidence and startup.kill.probe == "Startup"
    a = reactive
    ev = Evidence(a, load_run(FIXTURES / "lab-dependency-in-liveness").run, live=False, elapsed=a.phases.end - a.phases.start)
    line = judge_line("kill_reason", "liveness", ev)
    assert line.state == NOT_HELD and "a startup-probe kill" in line.measured, line.measured


def test_each_of_the_passing_runs_five_kills_has_its_own_killing_event_and_three_failures(chart_settings):
    folder = FIXTURES / "run-pass"
    data = load_run(folder)
    data.run["settings"] = chart_settings
    blocking = run_facts(data).analyses["blocking"]
    restarts = blocking.pods.restarts
    assert len(restarts) == 5 and all(r.cause == "liveness" for r in restarts)
    kills = [r.kill.t for r in restarts]
    assert len(set(kills)) == 5  # none borrowed from another restart
    ends = [blocking.phases.start - 10] + [r.t for r in restarts]
    assert all(before < k <= end + 2 for before, k, end in zip(ends, kills, ends[1:], strict=False))
    marks = blocking.countdown()
    for kill in (m for m in marks if m.kind == "kill"):
        assert [m.label for m in marks if m.kill_t == kill.t and m.kind != "kill"] == ["1/3", "2/3", "3/3"]
    # Without the counter, the failures are the events' and those the kills imply (3 per kill here).
    assert blocking.liveness_failures() == (15, "the kubelet's events, with the failures each kill implies")


def test_a_planted_restart_with_only_an_earlier_kills_failures_is_not_a_liveness_restart(tmp_path):
    """run-pass's blocking pod given a sixth restart after its fifth, with no event of its own: exit 143
    and failures earlier in the run used to count it as liveness."""
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    records = [json.loads(x) for x in (folder / "timeline.jsonl").read_text().splitlines()]
    snaps = [r for r in records if r["kind"] == "pods"]
    fifth = min(r["t"] for r in snaps for p in r["pods"] if p["variant"] == "blocking" and p["restarts"] == 5)
    at = fifth + 10
    for r in snaps:
        for p in r["pods"]:
            if p["variant"] == "blocking" and r["t"] >= at + 1:
                p["restarts"] += 1
                p["lastTerminatedAt"], p["lastTerminatedExitCode"], p["lastTerminatedReason"] = at, 143, "Error"
    (folder / "timeline.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = verdict.judge(load_run(folder))
    planted = result.facts.analyses["blocking"].pods.restarts[-1]
    assert planted.cause == "unknown" and planted.kill is None
    assert "with no Killing event of its own" in planted.evidence
    # Its cause is not measured, so the claim cannot tell (never a guess either way).
    assert result.verdict == "INCONCLUSIVE" and any("cause unknown: " + planted.pod in w for w in result.why_cannot_tell), (
        result.why_cannot_tell
    )


# --- the kubelet's probe counter ---------------------------------------------------------------------------

POD = "liveness-lab-blocking-5996c55b89-jjfw9"


def counts(ok, failed, unknown=0, uid="u1", startup=(1, 0)):
    return {
        "Liveness": {"successful": ok, "failed": failed, "unknown": unknown, "uid": uid},
        "Startup": {"successful": startup[0], "failed": startup[1], "unknown": 0, "uid": uid},
    }


def test_a_row_of_threshold_failures_since_the_last_other_result_is_a_kill():
    rows = [(0, counts(10, 0)), (5, counts(11, 0)), (10, counts(11, 1)), (15, counts(11, 2)), (20, counts(11, 3))]
    (kill,) = counter_kills(POD, rows, {"Liveness": 3})
    assert (kill.t, kill.since, kill.first_failure, kill.failures, kill.probe) == (20, 15, 10, 3, "Liveness")
    # An unknown result breaks the row as a success does (the prober worker's resultRun).
    broken = [(0, counts(10, 0)), (5, counts(10, 2)), (10, counts(10, 2, unknown=1)), (15, counts(10, 3, unknown=1))]
    assert counter_kills(POD, broken, {"Liveness": 3}) == []
    # A new worker (a new pod of the same name: another uid) counts anew.
    reborn = [(0, counts(10, 2)), (5, counts(0, 1, uid="u2")), (10, counts(0, 2, uid="u2"))]
    assert counter_kills(POD, reborn, {"Liveness": 3}) == []


def counter_run(tmp_path, chart_settings, counter, events=True):
    """run-pass with the chart's settings and COUNTER(t, start) as the probe counter sampled every second;
    without EVENTS, every Unhealthy and Killing event dropped (as the kubelet's spam filter does)."""
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    run = json.loads((folder / "run.json").read_text()) | {"settings": chart_settings | {"blocking": chart_settings["blocking"] | CHART}}
    (folder / "run.json").write_text(json.dumps(run))
    records = [json.loads(x) for x in (folder / "timeline.jsonl").read_text().splitlines()]
    if not events:
        records = [r for r in records if not (r["kind"] == "event" and r["reason"] in ("Unhealthy", "Killing"))]
    start = float(run["locust_started"])
    t0, t1 = records[0]["t"], records[-1]["t"]
    records += [{"t": t0 + i, "kind": "probes", "pods": {POD: counter(t0 + i, start)}} for i in range(int(t1 - t0))]
    records.sort(key=lambda r: r["t"])
    (folder / "timeline.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def pass_counter(t, start):
    """The counter as run-pass's five kills would have left it: a success every 5 s, and before each kill
    (its Killing event's time) three failures a period apart, the last at the kill."""
    kills = [k.t for k in analyses(FIXTURES / "run-pass")["blocking"].kills]
    failures = [k - d for k in kills for d in (10, 5, 0)]
    failed = sum(1 for f in failures if f <= t)
    grid = [start - 60 + 5 * x for x in range(int((t - (start - 60)) // 5) + 1)]
    ok = sum(1 for g in grid if not any(k - 12.5 <= g <= k + 2.5 for k in kills))
    return counts(ok, failed)


def test_with_the_counter_every_kill_is_its_own_even_when_the_events_were_dropped(tmp_path, chart_settings):
    blocking = analyses(counter_run(tmp_path, chart_settings, pass_counter, events=False))["blocking"]
    restarts = blocking.pods.restarts
    assert [r.cause for r in restarts] == ["liveness"] * 5
    assert all(r.kill.source == "counter" and r.kill.failures == 3 for r in restarts)
    assert all("no Killing event of its own" in r.evidence for r in restarts)
    assert blocking.liveness_failures() == (15, "the kubelet's probe counter")
    checks = blocking.kill_checks()
    assert len(checks) == 5 and not any(c["agree"] for c in checks)  # the countdown has no kill without events


def test_with_the_counter_and_the_events_each_kill_agrees_with_the_countdown(tmp_path, chart_settings):
    blocking = analyses(counter_run(tmp_path, chart_settings, pass_counter))["blocking"]
    assert all(r.cause == "liveness" and r.kill.source == "counter and event" for r in blocking.pods.restarts)
    checks = blocking.kill_checks()
    assert [c["counterFailures"] for c in checks] == [3] * 5 and all(c["agree"] for c in checks), [
        (round(c["t"] - blocking.phases.start, 1), c["countdown"]) for c in checks
    ]
    assert checks[0]["countdown"] == "3/3, 3 reported by events"


def test_where_the_counter_and_the_events_disagree_the_counter_wins(tmp_path, chart_settings):
    def startup_rows(t, start):
        """The same, but the counter saw the startup probe fail its 30 before each restart instead."""
        c = pass_counter(t, start)
        c["Liveness"]["successful"] += c["Liveness"].pop("failed")
        c["Liveness"]["failed"] = 0
        kills = [k.t for k in analyses(FIXTURES / "run-pass")["blocking"].kills]
        c["Startup"]["failed"] = 30 * sum(1 for k in kills if k <= t)
        return c

    blocking = analyses(counter_run(tmp_path, chart_settings, startup_rows))["blocking"]
    first = blocking.pods.restarts[0]
    assert first.cause == "startup" and "its Killing event says liveness: the counter wins" in first.evidence


def test_a_restart_whose_cause_nothing_recorded_cannot_be_judged(tmp_path):
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    records = [json.loads(x) for x in (folder / "timeline.jsonl").read_text().splitlines()]
    records = [r for r in records if not (r["kind"] == "event" and r["reason"] == "Killing")]
    for r in records:
        for p in r.get("pods", []) if r["kind"] == "pods" else []:
            p["lastTerminatedExitCode"] = None if p["variant"] == "blocking" else p["lastTerminatedExitCode"]
    (folder / "timeline.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    a = analyses(folder)["blocking"]
    line = judge_line("kill_reason", "liveness", Evidence(a, load_run(folder).run, live=False, elapsed=100))
    assert line.state == NOT_MEASURED and "cause unknown" in line.measured


def test_a_stale_last_state_gives_a_restart_the_snapshots_time_until_its_own_comes():
    def snap(t, restarts, ended, code=143):
        pod = {"name": POD, "variant": "blocking", "ready": True, "restarts": restarts}
        last = {"lastTerminatedAt": ended, "lastTerminatedReason": "Error", "lastTerminatedExitCode": code}
        return {"t": t, "kind": "pods", "pods": [pod | last]}

    # The count rises at t=100 while lastState still names the first restart's container (ended at 50).
    timeline = [snap(40, 0, None), snap(60, 1, 50), snap(100, 2, 50), snap(103, 2, 98, 137)]
    r = pod_history(timeline, "blocking").restarts
    assert [(x.t, x.exit_code) for x in r] == [(50, 143), (98, 137)]
    assert [x.t for x in pod_history(timeline[:3], "blocking").restarts] == [50, 100]  # not 50 twice


# --- reading the counter ------------------------------------------------------------------------------

# A kubelet's /metrics/probes as kind's node served it (fixtures/kubelet/metrics-probes.txt, 2026-11-28).
METRICS = (FIXTURES / "kubelet" / "metrics-probes.txt").read_text()
RECORDED_POD = "liveness-lab-blocking-5dd498d6f8-gvm7h"


def test_the_counter_of_the_namespaces_pods_is_read_from_the_kubelets_text():
    found = kube.probe_counts(METRICS, "liveness-lab")
    assert all(pod.startswith("liveness-lab-") for pod in found) and RECORDED_POD in found
    liveness = found[RECORDED_POD]["Liveness"]
    assert liveness["successful"] == liveness["timed"] == 14 and liveness.get("failed", 0) == 0 and liveness["uid"]
    assert liveness["seconds"] == pytest.approx(0.1826, abs=1e-3)  # 13 ms a probe
    assert "kube-system" not in str(found) and set(found[RECORDED_POD]) == {"Liveness", "Readiness", "Startup"}


class FakeKube:
    namespace = "liveness-lab"

    def __init__(self, refuse=False):
        self.refuse, self.asked = refuse, []

    def probe_counts(self, nodes):
        self.asked.append(sorted(nodes))
        if self.refuse:
            raise kube.KubeUnavailable("node proxy kind-control-plane/metrics/probes failed: ApiException: (403) Forbidden")
        return kube.probe_counts(METRICS, self.namespace)


def test_the_recorder_samples_the_counter_of_the_variant_pods_nodes_and_says_once_when_refused(tmp_path):
    out = (tmp_path / "t.jsonl").open("w")
    recorder = Recorder(out, FakeKube())
    recorder.nodes = {"liveness-lab-control-plane"}
    recorder.probes()
    refused = Recorder(out, FakeKube(refuse=True))
    refused.nodes = {"liveness-lab-control-plane"}
    refused.probes()
    refused.probes()
    out.close()
    records = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert records[0]["kind"] == "probes" and RECORDED_POD in records[0]["pods"]
    assert [r["kind"] for r in records[1:]] == ["error"] and records[1]["what"] == "probes"
    assert refused.kube.asked == [["liveness-lab-control-plane"]]  # said once, not asked again


def test_a_report_without_the_counter_says_its_kills_are_the_events_alone(tmp_path):
    folder = shutil.copytree(FIXTURES / "run-pass", tmp_path / "run")
    with (folder / "timeline.jsonl").open("a") as f:
        f.write(json.dumps({"t": 1795349640.0, "kind": "error", "what": "probes", "message": "(403) Forbidden"}) + "\n")
    facts = run_facts(load_run(folder))
    assert any("probe counter was not read ((403) Forbidden)" in n for n in facts.notes)
    assert copy.deepcopy(facts.analyses["blocking"].to_json())["probeCounter"] == "(403) Forbidden"


def test_a_counter_sample_that_came_after_the_kill_still_gives_that_restart_its_cause():
    # A busy recorder (the machine 91 % busy, 2026-11-28, samples up to 7 s apart): the kubelet killed a
    # pod at +92.3 s; the samples of its counter came at +86.4 (2 failed in a row) and +97.9 s (3), 5.6 s
    # after the kill. The row's last failure lies between those samples, so before the restart.
    from liveness_lab.base.causes import Kill, Restart, attribute_restarts

    restart = Restart("p", 92.5, "Error", 143)
    event = Kill("p", 92.3, "Liveness", "event", message="Container service failed liveness probe, will be restarted")
    late = Kill("p", 97.9, "Liveness", "counter", failures=3, since=86.4, first_failure=82.4)
    kills = attribute_restarts([restart], [event], [late], lambda pod, since, until: True, 0.0)
    assert restart.cause == "liveness" and "3 failed Liveness results in a row" in restart.evidence
    assert [k.source for k in kills] == ["counter and event"]
    # The next life's row (its last sample before it after the restart) is not this restart's.
    restart2 = Restart("p", 92.5, "Error", 143)
    next_life = Kill("p", 140.0, "Liveness", "counter", failures=3, since=135.0, first_failure=127.0)
    attribute_restarts([restart2], [event], [next_life], lambda pod, since, until: True, 0.0)
    assert restart2.cause == "unknown" and "the counter wins" in restart2.evidence


def test_a_new_pods_first_failures_count_from_its_series_first_sample():
    # cold-scale-out on 2026-11-28: the pod's first samples had only readiness; liveness's series came with
    # its first result (failed 1), then 2 and 3: the kill at +47.0 s, its Killing event at the same second.
    rows = [
        (32.1, {"Readiness": {"failed": 1, "uid": "u"}}),
        (36.1, {"Liveness": {"failed": 1, "uid": "u"}, "Readiness": {"failed": 3, "uid": "u"}}),
        (41.4, {"Liveness": {"failed": 2, "uid": "u"}, "Readiness": {"failed": 4, "uid": "u"}}),
        (47.0, {"Liveness": {"failed": 3, "uid": "u"}, "Readiness": {"failed": 6, "uid": "u"}}),
    ]
    kills = counter_kills("p", rows, {"Liveness": 3})
    assert [(k.t, k.failures, k.since, k.first_failure) for k in kills] == [(47.0, 3, 41.4, 36.1)]
    # A series already there when the recording began: its first count may hold earlier successes' row
    # breaks, so it starts nothing.
    assert counter_kills("p", rows[1:], {"Liveness": 3}) == []
