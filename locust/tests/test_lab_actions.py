"""The lab's scenario actions (issue 39): the catalogue checks them and the keys that go with them
(kubelet, the predictions that read the actions) and names the file and the field of every
mistake; the action runner does each action at its second after the load start, writes it to the run's
timeline, waits for the rollout, and puts back what it changed; the kubelet's configuration is read from
/configz as the kubelet answers it."""

import copy
import json
import textwrap

import pytest
from conftest import FIXTURES

from liveness_lab.base import scenario
from liveness_lab.demo.release import ApiUnavailable
from liveness_lab.lab import actions, catalogue, kubelet

GOOD = """\
title: A test scenario with actions
lesson: What it teaches.
sources: [somewhere#1]
values: {downstream: {enabled: true}}
variants: [blocking, reactive]
load: {users: 5, ramp: 10, hold: 60}
actions:
  - {at: 40, target: downstream, env: {DEMO_API_DELAY: 3s}, note: slow}
  - {at: 20, target: downstream, replicas: 0, grace: 0, note: a crash}
  - {at: 30, target: reactive, replicas: 3}
kubelet: {maxContainerRestartPeriod: 60}
predict:
  blocking: {kill_timing: from-action}
  reactive: {recovery_after_actions: "<=30", added_restarts: 0, added_liveness_failures: 0, throttled_pct: ">0"}
"""


def write(tmp_path, text, name="test-one.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_file_with_actions_loads_them_in_order_of_time(tmp_path):
    s = scenario.load_scenario(write(tmp_path, GOOD))
    assert [(a.at, a.target) for a in s.actions] == [(20, "downstream"), (30, "reactive"), (40, "downstream")]
    assert s.actions[0].describe() == "downstream: replicas 0 (its pods deleted with 0 s grace)"
    assert s.actions[2].describe() == "downstream: DEMO_API_DELAY=3s" and s.actions[2].note == "slow"
    assert s.kubelet == {"maxContainerRestartPeriod": 60}
    removed = scenario.load_scenario(write(tmp_path, GOOD.replace("DEMO_API_DELAY: 3s", "DEMO_API_DELAY: null")))
    assert removed.actions[2].env == {"DEMO_API_DELAY": None} and removed.actions[2].describe() == "downstream: DEMO_API_DELAY removed"


@pytest.mark.parametrize(
    "change, field, problem",
    [
        (
            ("  - {at: 30, target: reactive, replicas: 3}", "  - {at: 30, target: reactive, replica: 3}"),
            "actions[2].replica",
            "unknown key",
        ),
        (("{at: 30, target: reactive,", "{target: reactive,"), "actions[2].at", "missing"),
        (("{at: 30, target: reactive,", "{at: 70, target: reactive,"), "actions[2].at", "within the load (0 to ramp + hold, 70 s)"),
        (("{at: 30, target: reactive,", "{at: 30.5, target: reactive,"), "actions[2].at", "not a whole number"),
        (("{at: 30, target: reactive,", "{at: 30, target: virtual,"), "actions[2].target", "neither a swarmed variant"),
        (("values: {downstream: {enabled: true}}", "values: {}"), "actions[0].target", "the scenario's values must enable it"),
        (("target: reactive, replicas: 3}", "target: reactive}"), "actions[2]", "needs one of replicas"),
        (("target: reactive, replicas: 3}", "target: reactive, replicas: 3, env: {A: b}}"), "actions[2]", "needs one of replicas"),
        (("target: reactive, replicas: 3}", "target: reactive, replicas: 11}"), "actions[2].replicas", "from 0 to 10"),
        (("target: reactive, replicas: 3}", "target: reactive, replicas: 3, grace: 0}"), "actions[2].grace", "replicas: 0 only"),
        (("env: {DEMO_API_DELAY: 3s}", "env: {}"), "actions[0].env", "must map variable names"),
        (("env: {DEMO_API_DELAY: 3s}", "env: {'1 BAD': x}"), "actions[0].env", "not an environment variable name"),
        (("env: {DEMO_API_DELAY: 3s}", "env: {A: [1]}"), "actions[0].env.A", "not a text or null"),
        (("actions:\n", "actions: {at: 1}\nunused:\n"), "unused", "unknown key"),
        # cpu_check is gone (only the machine's busy share voids a run, for every scenario): a file that
        # still has it is refused, not read as it once was.
        (("kubelet: {", "cpu_check: machine\nkubelet: {"), "cpu_check", "unknown key"),
        (("kubelet: {maxContainerRestartPeriod: 60}", "kubelet: {maxRestart: 60}"), "kubelet.maxRestart", "unknown key"),
        (
            ("kubelet: {maxContainerRestartPeriod: 60}", "kubelet: {maxContainerRestartPeriod: 301}"),
            "kubelet.maxContainerRestartPeriod",
            "1 to 300",
        ),
        (('throttled_pct: ">0"', "throttled_pct: lots"), "predict.reactive.throttled_pct", "is not a count"),
    ],
)
def test_a_bad_action_or_key_is_refused_naming_the_file_and_the_field(tmp_path, change, field, problem):
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(scenario.ScenarioError) as e:
        scenario.load_scenario(path)
    assert str(e.value).startswith(f"{path}: {field}: ") and problem in str(e.value), str(e.value)


def test_the_predictions_that_read_actions_need_them(tmp_path):
    without = GOOD.split("actions:")[0] + "kubelet" + GOOD.split("kubelet", 1)[1]
    with pytest.raises(scenario.ScenarioError, match=r"predict.blocking.kill_timing: needs the scenario's actions"):
        scenario.load_scenario(write(tmp_path, without))
    no_scale_up = GOOD.replace("  - {at: 30, target: reactive, replicas: 3}\n", "")
    with pytest.raises(scenario.ScenarioError, match=r"predict.reactive.added_restarts: needs an action that raises reactive's replicas"):
        scenario.load_scenario(write(tmp_path, no_scale_up))


def test_every_catalogue_scenario_with_actions_acts_within_its_load():
    for s in catalogue.load_catalogue():
        assert all(a.at < s.load["ramp"] + s.load["hold"] for a in s.actions), s.name


class Api:
    """The release API as lab.actions uses it (demo.release.ClusterApi), on a Deployment in memory: what a
    unit of scheduling and undo needs; the real API is exercised by the lab's runs on the cluster."""

    release = "liveness-lab"

    def __init__(self, clock):
        self.clock, self.calls = clock, []
        self.env = [{"name": "APP_MODE", "value": "reactive"}, {"name": "DEMO_DRAIN", "value": "5s"}]
        self.replicas, self.rolled_out_at, self.fail = 1, 0.0, set()

    def deployment(self, name):
        ready = self.replicas if self.clock() >= self.rolled_out_at else 0
        return {
            "metadata": {"generation": 2},
            "spec": {"replicas": self.replicas, "template": {"spec": {"containers": [{"env": self.env}]}}},
            "status": {"observedGeneration": 2, "replicas": self.replicas, "updatedReplicas": self.replicas, "readyReplicas": ready,
                       "availableReplicas": ready},
        }  # fmt: skip

    def scale_deployment(self, name, replicas):
        if "scale" in self.fail:
            raise ApiUnavailable("scaling Deployment: Forbidden")
        self.calls.append(("scale", name, replicas, round(self.clock())))
        self.replicas, self.rolled_out_at = replicas, self.clock() + 12

    def replace_env(self, name, env):
        self.calls.append(("env", name, [e["name"] + "=" + e["value"] for e in env], round(self.clock())))
        self.env, self.rolled_out_at = env, self.clock() + 20

    def component_pods(self, component):
        return [{"metadata": {"name": f"{self.release}-{component}-abc"}}]

    def delete_pod(self, name, grace_s=None):
        self.calls.append(("delete", name, grace_s, round(self.clock())))


class Clock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def run_actions(api, clock, scenario_actions, until):
    records = []
    runner = actions.ActionRunner(api, scenario_actions, clock=clock, sleep=clock.sleep)
    runner.record = lambda kind, **fields: records.append({"kind": kind, "t": round(clock() - 1000), **fields})
    original = clock.sleep

    def sleep(seconds):  # the load ends at UNTIL: the demo stops the runner then
        original(seconds)
        if clock() - 1000 >= until:
            runner.stopped.set()

    runner.sleep = sleep
    runner.run(1000.0)
    return runner, records


def test_the_runner_acts_at_its_seconds_records_each_action_and_its_rollout_then_puts_everything_back():
    steps = [
        scenario.Action(20, "downstream", replicas=0, grace=0, note="a crash"),
        scenario.Action(30, "downstream", replicas=1),
        scenario.Action(40, "downstream", env={"DEMO_API_DELAY": "3s"}, note="slow"),
    ]
    clock = Clock()
    api = Api(clock)
    runner, records = run_actions(api, clock, steps, until=120)
    assert api.calls == [
        ("scale", "liveness-lab-downstream", 0, 1020),
        ("delete", "liveness-lab-downstream-abc", 0, 1020),
        ("scale", "liveness-lab-downstream", 1, 1030),
        ("env", "liveness-lab-downstream", ["APP_MODE=reactive", "DEMO_DRAIN=5s", "DEMO_API_DELAY=3s"], 1040),
    ]
    kinds = [(r["kind"], r["index"], r["t"]) for r in records]
    # Each action when it was done; each rollout once the Deployment runs it: at once for a scale to 0; the
    # scale up (12 s) is overtaken by the environment's change at 40 s (20 s more), so both are done at 60 s.
    assert kinds == [("action", 0, 20), ("action-done", 0, 20), ("action", 1, 30), ("action", 2, 40), ("action-done", 1, 60),
                     ("action-done", 2, 60)]  # fmt: skip
    assert records[0]["what"] == "downstream: replicas 0 (its pods deleted with 0 s grace)" and records[0]["note"] == "a crash"
    assert [r["seconds"] for r in records if r["kind"] == "action-done"] == [0.0, 30.0, 20.0]
    assert runner.undo() == ["liveness-lab-downstream: environment put back"]
    assert api.env == [{"name": "APP_MODE", "value": "reactive"}, {"name": "DEMO_DRAIN", "value": "5s"}] and api.replicas == 1
    assert runner.undo() == []  # nothing left to put back


def test_an_action_the_api_refuses_is_recorded_and_the_run_goes_on(tmp_path):
    s = scenario.load_scenario(write(tmp_path, GOOD))
    clock = Clock()
    api = Api(clock)
    api.fail.add("scale")
    runner, records = run_actions(api, clock, s.actions, until=100)
    refused = [r for r in records if r.get("error")]
    assert [r["index"] for r in refused] == [0, 1] and "Forbidden" in refused[0]["error"]
    assert [(r["kind"], r["index"]) for r in records if not r.get("error")] == [("action", 2), ("action-done", 2)]


def test_the_environment_changes_as_kubectl_set_env_would():
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert actions.with_env(env, {"B": "3", "C": "4"}) == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "3"},
        {"name": "C", "value": "4"},
    ]
    assert actions.with_env(env, {"A": None}) == [{"name": "B", "value": "2"}]
    assert env == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]  # untouched


def test_a_rollout_is_done_when_every_wanted_replica_is_updated_ready_and_available():
    d = {"metadata": {"generation": 3}, "spec": {"replicas": 1}, "status": {"observedGeneration": 3}}
    assert not actions.rolled_out(
        d | {"status": d["status"] | {"replicas": 2, "updatedReplicas": 1, "readyReplicas": 2, "availableReplicas": 2}}
    )
    full = {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    assert actions.rolled_out(d | {"status": d["status"] | full})
    assert not actions.rolled_out(d | {"status": {"observedGeneration": 2, **full}})  # the controller has not seen the change
    assert actions.rolled_out({"metadata": {"generation": 4}, "spec": {"replicas": 0}, "status": {"observedGeneration": 4}})


def test_the_kubelets_restart_cap_is_read_from_configz_and_a_missing_one_is_named_with_the_fix():
    # /configz as kind's v1.37 kubelet answers it with its default cap (recorded, trimmed: it prints 5m0s);
    # the same answer with the cap --max-restart-period 60 sets, as Go prints 60 s (1m0s; not recorded); and
    # one whose configuration names no crashLoopBackOff at all (a kubelet before KEP-5593's field).
    default = json.loads((FIXTURES / "kubelet" / "configz-default.json").read_text())
    assert default["kubeletconfig"]["crashLoopBackOff"] == {"maxContainerRestartPeriod": "5m0s"}
    with_cap = copy.deepcopy(default)
    with_cap["kubeletconfig"]["crashLoopBackOff"]["maxContainerRestartPeriod"] = "1m0s"
    without = copy.deepcopy(default)
    del without["kubeletconfig"]["crashLoopBackOff"]
    assert kubelet.settings(default) == {"maxContainerRestartPeriod": 300}
    assert kubelet.settings(with_cap) == {"maxContainerRestartPeriod": 60}
    assert kubelet.settings(without) == {"maxContainerRestartPeriod": 300}
    assert [kubelet.go_duration_s(x) for x in ("1m0s", "300s", "1m30s", "2.5m", "500ms")] == [60, 300, 90, 150, 0.5]
    with pytest.raises(ValueError):
        kubelet.go_duration_s("60")
    found = {"liveness-lab-control-plane": {"maxContainerRestartPeriod": 300}}
    assert kubelet.unmet({"maxContainerRestartPeriod": 300}, found) == []
    assert kubelet.unmet({"maxContainerRestartPeriod": 60}, found) == [
        "node liveness-lab-control-plane: maxContainerRestartPeriod 300 s, the scenario needs 60 s"
    ]
    assert (
        kubelet.how_to_get({"maxContainerRestartPeriod": 60}) == "scripts/cluster-down.sh && scripts/cluster-up.sh --max-restart-period 60"
    )
    assert kubelet.how_to_get({"maxContainerRestartPeriod": 300}) == "scripts/cluster-down.sh && scripts/cluster-up.sh"


# --- probes changed by an action: in the template (a rollout) or in the running pods (KEP-6318) -----------

PROBE_ACTIONS = GOOD.replace(
    "  - {at: 30, target: reactive, replicas: 3}\n",
    "  - {at: 30, target: reactive, replicas: 3}\n"
    "  - {at: 50, target: blocking, probe: {liveness: {timeoutSeconds: 8, periodSeconds: 10}}}\n"
    "  - {at: 55, target: blocking, probe: {readiness: {failureThreshold: 2}}, in_place: true}\n",
)


def test_probe_actions_say_what_they_change_and_where(tmp_path):
    s = scenario.load_scenario(write(tmp_path, PROBE_ACTIONS))
    rollout, in_place = s.actions[3], s.actions[4]
    assert rollout.probe == {"liveness": {"timeoutSeconds": 8, "periodSeconds": 10}} and not rollout.in_place
    assert rollout.describe() == "blocking: liveness timeoutSeconds=8, periodSeconds=10 (a rollout)"
    assert in_place.in_place and in_place.describe() == "blocking: readiness failureThreshold=2 (in its running pods)"
    assert "in_place" not in rollout.to_json() and in_place.to_json()["in_place"] is True


@pytest.mark.parametrize(
    "change, field, problem",
    [
        (("probe: {liveness: {timeoutSeconds: 8,", "probe: {lively: {timeoutSeconds: 8,"), "actions[3].probe.lively", "unknown probe"),
        (("{timeoutSeconds: 8, periodSeconds: 10}", "{timeout: 8}"), "actions[3].probe.liveness.timeout", "unknown setting"),
        (("{timeoutSeconds: 8, periodSeconds: 10}", "{timeoutSeconds: 0}"), "actions[3].probe.liveness.timeoutSeconds", "from 1"),
        (("{timeoutSeconds: 8, periodSeconds: 10}", "{successThreshold: 2}"), "actions[3].probe.liveness.successThreshold", "must be 1"),
        (("probe: {liveness: {timeoutSeconds: 8, periodSeconds: 10}}", "probe: {}"), "actions[3].probe", "must map a probe"),
        (("probe: {liveness: {timeoutSeconds: 8, periodSeconds: 10}}}", "probe: {liveness: {}}}"), "actions[3].probe.liveness", "must map"),
        (("{failureThreshold: 2}}, in_place: true}", "{failureThreshold: 2}}, in_place: yes-please}"), "actions[4].in_place", "goes with"),
        (
            ("target: reactive, replicas: 3}", "target: reactive, replicas: 3, in_place: true}"),
            "actions[2].in_place",
            "goes with probe only",
        ),
        (("periodSeconds: 10}}}", "periodSeconds: 10}}, env: {A: b}}"), "actions[3]", "needs one of replicas"),
    ],
)
def test_a_bad_probe_action_is_refused_naming_the_field(tmp_path, change, field, problem):
    assert change[0] in PROBE_ACTIONS
    path = write(tmp_path, PROBE_ACTIONS.replace(*change))
    with pytest.raises(scenario.ScenarioError) as e:
        scenario.load_scenario(path)
    assert str(e.value).startswith(f"{path}: {field}: ") and problem in str(e.value), str(e.value)


class ProbeApi(Api):
    """Api with the probes of the Deployment's template and of its two running pods, as the API server
    defaults them (every field present)."""

    def __init__(self, clock):
        super().__init__(clock)
        probe = {"httpGet": {"path": "/livez", "port": "http"}, "timeoutSeconds": 1, "periodSeconds": 5, "failureThreshold": 3}
        self.template = {"livenessProbe": dict(probe)}
        self.pods = {f"liveness-lab-blocking-{x}": {"livenessProbe": dict(probe)} for x in ("a", "b")}

    def deployment(self, name):
        d = super().deployment(name)
        d["spec"]["template"]["spec"]["containers"][0].update(copy.deepcopy(self.template))
        return d

    def component_pods(self, component):
        return [{"metadata": {"name": n}, "spec": {"containers": [copy.deepcopy(c)]}} for n, c in self.pods.items()]

    def set_probe(self, name, kind, fields, pod=False, dry_run=False):
        self.calls.append(("probe", name, kind, fields, pod, round(self.clock())))
        target = self.pods[name] if pod else self.template
        target[f"{kind}Probe"].update(fields)
        if not pod:
            self.rolled_out_at = self.clock() + 15


def test_a_probe_changed_in_the_template_is_a_rollout_and_in_place_changes_each_running_pod_then_both_are_put_back():
    steps = [
        scenario.Action(20, "blocking", probe={"liveness": {"timeoutSeconds": 8, "periodSeconds": 10}}),
        scenario.Action(40, "blocking", probe={"liveness": {"failureThreshold": 6}}, in_place=True),
    ]
    clock = Clock()
    api = ProbeApi(clock)
    runner, records = run_actions(api, clock, steps, until=120)
    assert api.calls == [
        ("probe", "liveness-lab-blocking", "liveness", {"timeoutSeconds": 8, "periodSeconds": 10}, False, 1020),
        ("probe", "liveness-lab-blocking-a", "liveness", {"failureThreshold": 6}, True, 1040),
        ("probe", "liveness-lab-blocking-b", "liveness", {"failureThreshold": 6}, True, 1040),
    ]
    # The rollout is done once the Deployment runs it (15 s); the pods' change needs none, done at once.
    assert [(r["kind"], r["index"], r["t"]) for r in records] == [
        ("action", 0, 20), ("action-done", 0, 35), ("action", 1, 40), ("action-done", 1, 40)
    ]  # fmt: skip
    assert records[2]["inPlace"] is True and records[2]["pods"] == ["liveness-lab-blocking-a", "liveness-lab-blocking-b"]
    assert "inPlace" in records[0] and records[0]["inPlace"] is False
    del api.pods["liveness-lab-blocking-b"]  # replaced since: nothing to put back in it
    assert runner.undo() == [
        "liveness-lab-blocking: liveness probe put back",
        "pod liveness-lab-blocking-a: liveness probe put back in place",
    ]
    assert api.template["livenessProbe"] | {} == {"httpGet": {"path": "/livez", "port": "http"}, "timeoutSeconds": 1, "periodSeconds": 5,
                                                  "failureThreshold": 3}  # fmt: skip
    assert api.pods["liveness-lab-blocking-a"]["livenessProbe"]["failureThreshold"] == 3
    assert runner.undo() == []


def test_a_probe_changed_in_the_template_makes_the_runs_new_pods_its_own_and_one_in_place_does_not():
    from liveness_lab.report.actions import rolls_out

    assert rolls_out({"probe": {"liveness": {"timeoutSeconds": 8}}, "inPlace": False})
    assert not rolls_out({"probe": {"liveness": {"timeoutSeconds": 8}}, "inPlace": True})
    assert rolls_out({"env": {"A": "b"}}) and not rolls_out({"replicas": 2})


def test_the_kills_after_the_last_action_count_from_its_end(tmp_path):
    """The crash run: reactive killed once, at +41.3 s, after the downstream went at +30 s and before it came
    back (+110 s, rolled out at +121.6 s)."""
    import shutil

    from liveness_lab.report.facts import load_run, run_facts
    from liveness_lab.report.predictions import evidence_of, judge_line

    def line(folder, value):
        facts = run_facts(load_run(folder))
        return judge_line("kills_after_actions", value, evidence_of(facts.analyses["reactive"], facts.run, facts))

    after = line(FIXTURES / "lab-dependency-crash", 0)
    assert after.held and after.measured == "0 liveness kill(s) after the last action (done at +122 s)", after.measured
    # Without its second action the last one is the crash (done at +30.7 s): the kill comes after it.
    folder = shutil.copytree(FIXTURES / "lab-dependency-crash", tmp_path / "crash")
    records = [json.loads(x) for x in (folder / "timeline.jsonl").read_text().splitlines()]
    kept = [r for r in records if not (r["kind"].startswith("action") and r.get("index") == 1)]
    (folder / "timeline.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    assert line(folder, 0).held is False and line(folder, ">=1").held
    # An action not done within the recording (a startup too early: the scale-out never Ready): not measured.
    late = line(FIXTURES / "lab-startup-too-early", 0)
    assert late.held is None and "was not done when the recording ended" in late.measured


class RefusingCore:
    """CoreV1Api's pod calls as kind's v1.37 API server answered a probe change in a running pod
    (fixtures/orchestration/pod-probe-refused.json, recorded 2026-11-29) or, with ACCEPT, as one with
    MutableContainerProbes would (the dry run's 200)."""

    def __init__(self, accept=False):
        self.accept, self.patches = accept, []

    def list_namespaced_pod(self, namespace, label_selector=None, _request_timeout=None):
        probe = {"httpGet": {"path": "/livez", "port": "http"}, "timeoutSeconds": 1}
        return {"items": [
            {"metadata": {"name": "liveness-lab-blocking-a"}, "spec": {"containers": [{}]}, "status": {"phase": "Running"}},
            {"metadata": {"name": "liveness-lab-reactive-b"}, "spec": {"containers": [{"livenessProbe": probe}]},
             "status": {"phase": "Running"}},
        ]}  # fmt: skip

    def patch_namespaced_pod(self, name, namespace, body, dry_run=None, _request_timeout=None):
        from kubernetes.client.exceptions import ApiException

        self.patches.append((name, body, dry_run))
        if not self.accept:
            recorded = json.loads((FIXTURES / "orchestration" / "pod-probe-refused.json").read_text())
            e = ApiException(status=recorded["code"], reason="Unprocessable Entity")
            e.body = json.dumps(recorded)
            raise e


def test_whether_the_cluster_takes_probe_changes_in_running_pods_is_asked_by_a_dry_run():
    from liveness_lab.demo.release import ClusterApi

    api = ClusterApi.__new__(ClusterApi)
    api.namespace, api.selector, api.timeout = "liveness-lab", "app.kubernetes.io/instance=liveness-lab", 10
    api._json = lambda obj: obj
    api.core = RefusingCore()
    said = api.in_place_refusal()
    assert said.startswith('the API server refused it (HTTP 422): Pod "liveness-lab-locust-6c9b5466cc-shwp7" is invalid: spec: Forbidden')
    assert "@@" not in said  # the diff the API server adds is left out
    # Asked of the pod with a liveness probe, one second longer, as a dry run: nothing kept.
    assert api.core.patches == [
        ("liveness-lab-reactive-b", [{"op": "add", "path": "/spec/containers/0/livenessProbe/timeoutSeconds", "value": 2}], "All")
    ]
    api.core = RefusingCore(accept=True)
    assert api.in_place_refusal() is None


def test_a_scenario_that_changes_probes_in_place_is_skipped_on_a_cluster_that_refuses_it_and_refused_by_name(tmp_path):
    from liveness_lab.base.exits import SetupError
    from liveness_lab.lab import runner

    s = scenario.load_scenario(write(tmp_path, PROBE_ACTIONS))
    plain = scenario.load_scenario(write(tmp_path, GOOD, "plain.yaml"))

    class Refusing:
        asked = 0

        def in_place_refusal(self):
            Refusing.asked += 1
            return "the API server refused it (HTTP 422): Forbidden"

    lab = runner.Lab(runner.LabOptions())
    lab.api = Refusing()
    assert lab.in_place_ready(plain) and Refusing.asked == 0  # nothing in place: not asked
    assert not lab.in_place_ready(s) and lab.skipped == ["test-one"]
    assert not lab.in_place_ready(s) and Refusing.asked == 1  # asked once per lab
    by_name = runner.Lab(runner.LabOptions(only=["test-one"]))
    by_name.api = Refusing()
    with pytest.raises(SetupError) as e:
        by_name.in_place_ready(s)
    assert "changes probes in running pods, which this cluster refuses: the API server refused it (HTTP 422)" in e.value.message
    assert "MutableContainerProbes" in e.value.fix
