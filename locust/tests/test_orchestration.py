"""The scripted runs' orchestration (python -m liveness_lab demo|lab) on recorded cluster responses: the
cluster lock's claim, refusal and stale takeover (the API's own ConfigMap and 409/404 answers, in
fixtures/orchestration/), the release's defaults and settling read from Deployments and pods, the swarm
check against a stand-in web UI, the exit codes, and one place for the latency default."""

import copy
import json
import os
import re
import shutil
import signal
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import yaml
from conftest import FIXTURES, REPO
from kubernetes.client.exceptions import ApiException

import liveness_lab.base
from liveness_lab import __main__ as cli_main
from liveness_lab.base import exits
from liveness_lab.base.console import LOG
from liveness_lab.demo import cluster_lock as lock
from liveness_lab.demo import no_other_load as swarm
from liveness_lab.demo import options, record, release
from liveness_lab.demo import run as demo_mod

REC = FIXTURES / "orchestration"


def recorded(name: str) -> dict:
    return json.loads((REC / name).read_text())


def api_error(name: str) -> ApiException:
    body = recorded(name)
    e = ApiException(status=body["code"], reason=body["reason"])
    e.body = json.dumps(body)
    return e


class FakeCoreV1:
    """The four config-map calls of CoreV1Api over one stored object, answering as the API server did
    (fixtures/orchestration): 409 AlreadyExists on create, 404 on read, 409 Conflict on a replace whose
    resourceVersion is not the stored one."""

    def __init__(self, stored: dict | None = None):
        self.stored = copy.deepcopy(stored)
        self.calls = []
        self.before_replace = None  # a hook: another run acting between our read and our replace

    def create_namespaced_config_map(self, namespace, body):
        self.calls.append(("create", body))
        if self.stored is not None:
            raise api_error("create-already-exists.json")
        self.stored = copy.deepcopy(body)
        self.stored["metadata"]["resourceVersion"] = "1"

    def read_namespaced_config_map(self, name, namespace):
        self.calls.append(("read", name))
        if self.stored is None:
            raise api_error("read-not-found.json")
        return copy.deepcopy(self.stored)

    def replace_namespaced_config_map(self, name, namespace, body):
        self.calls.append(("replace", body["metadata"].get("resourceVersion")))
        if self.before_replace:
            self.before_replace(self)
            self.before_replace = None
        if self.stored is None or body["metadata"].get("resourceVersion") != self.stored["metadata"]["resourceVersion"]:
            raise api_error("replace-conflict.json")
        self.stored = copy.deepcopy(body)
        self.stored["metadata"]["resourceVersion"] = str(int(body["metadata"]["resourceVersion"]) + 1)

    def delete_namespaced_config_map(self, name, namespace):
        self.calls.append(("delete", name))
        if self.stored is None:
            raise api_error("read-not-found.json")
        self.stored = None


def held(**fields) -> dict:
    """The recorded lock, another run's (on the machine 'laptop', until 2026-11-18), with FIELDS changed."""
    cm = recorded("lock-configmap.json")
    cm["data"].update({k: str(v) for k, v in fields.items()})
    return cm


NOW = 1794999500  # within the recorded lock's time


def claim(api: FakeCoreV1, environ=None, host="here", command_of=lambda pid: None):
    environ = {} if environ is None else environ
    cl = lock.ClusterLock(
        lock.ConfigMapStore(api, "liveness-lab"),
        "kind-liveness-lab",
        environ=environ,
        host=host,
        pid=999,
        clock=lambda: NOW,
        command_of=command_of,
        clone="/repo",
    )
    return cl.claim("demo.sh", 600, "scripts/demo.sh --hold 30"), environ


@pytest.fixture
def messages(caplog):
    caplog.set_level("INFO", logger=LOG.name)
    LOG.propagate = True
    yield caplog
    LOG.propagate = False


def test_a_free_lock_is_taken_passed_on_and_given_back(messages):
    api = FakeCoreV1()
    c, environ = claim(api)
    data = api.stored["data"]
    assert c.owned and data["token"] == c.token == environ[lock.TOKEN_ENV]
    assert (
        data["pid"] == "999"
        and data["script"] == "demo.sh"
        and data["expires"] == str(NOW + 600)
        and data["command"] == "scripts/demo.sh --hold 30"
    )
    assert "cluster lock taken (configmap liveness-lab-run-lock in liveness-lab, until 2026-" in messages.text
    c.release()
    assert api.stored is None and lock.TOKEN_ENV not in environ


def test_another_runs_lock_is_refused_naming_holder_and_fix():
    api = FakeCoreV1(held())
    with pytest.raises(exits.SetupError) as e:
        claim(api)
    assert e.value.message.startswith(
        "another scripted run holds the cluster: alice@laptop (pid 4242 on laptop, clone /home/alice/liveness-lab)"
    )
    assert "scripts/demo.sh --hold 60" in e.value.message and "until 2026-11-18 " in e.value.message
    assert (
        e.value.fix.startswith("wait for it to end")
        and "kubectl --context kind-liveness-lab -n liveness-lab delete configmap liveness-lab-run-lock" in e.value.fix
    )
    assert api.stored["data"]["token"] == "laptop-4242-1794999400-12345"  # untouched
    assert [c[0] for c in api.calls] == ["create", "read"]


def test_a_live_pid_on_this_host_running_its_run_is_refused():
    for command in ("bash scripts/demo.sh --hold 60", "/repo/.venv/bin/python -m liveness_lab demo --hold 60"):
        api = FakeCoreV1(held(host="here"))
        with pytest.raises(exits.SetupError, match="another scripted run holds the cluster"):
            claim(api, command_of=lambda pid, c=command: c)


def test_a_gone_pid_is_taken_over_by_a_replace_at_the_version_read(messages):
    api = FakeCoreV1(held(host="here"))
    c, _ = claim(api, command_of=lambda pid: None)
    read_version = recorded("lock-configmap.json")["metadata"]["resourceVersion"]
    assert ("replace", read_version) in api.calls and api.stored["data"]["token"] == c.token and c.owned
    assert "took over a stale cluster lock (pid 4242 is gone from this host): alice@laptop (pid 4242 on laptop" not in messages.text
    assert "took over a stale cluster lock (pid 4242 is gone from this host): alice@laptop (pid 4242 on here" in messages.text


def test_a_pid_that_is_now_another_program_is_stale():
    api = FakeCoreV1(held(host="here"))
    c, _ = claim(api, command_of=lambda pid: "vim notes.txt")
    assert c.owned and api.stored["data"]["token"] == c.token


def test_a_lock_past_its_expiry_is_taken_over(messages):
    api = FakeCoreV1(held(expires=1000))
    claim(api)
    assert "took over a stale cluster lock (its run would have ended by 1970-01-01 00:16:40 UTC)" in messages.text


def test_two_runs_that_find_it_stale_cannot_both_win():
    api = FakeCoreV1(held(expires=1000))

    def someone_else_takes_it(fake):
        fake.stored = held(token="theirs", host="elsewhere")
        fake.stored["metadata"]["resourceVersion"] = str(int(fake.stored["metadata"]["resourceVersion"]) + 1)

    api.before_replace = someone_else_takes_it
    with pytest.raises(exits.SetupError, match="another scripted run holds the cluster"):
        claim(api)
    assert api.stored["data"]["token"] == "theirs"
    assert [c[0] for c in api.calls] == ["create", "read", "replace", "create", "read"]


def test_a_child_runs_under_its_parents_token_and_a_stranger_is_refused(messages):
    api = FakeCoreV1(held(token="parent-token"))
    c, _ = claim(api, environ={lock.TOKEN_ENV: "parent-token"})
    assert not c.owned and "running under its lock" in messages.text
    c.release()
    assert api.stored["data"]["token"] == "parent-token"
    with pytest.raises(exits.SetupError) as e:
        claim(api, environ={lock.TOKEN_ENV: "another-token"})
    assert "LIVENESS_LAB_LOCK_TOKEN is set, but the cluster's lock is not that run's (holder: alice@laptop" in e.value.message
    assert "unset LIVENESS_LAB_LOCK_TOKEN" in e.value.fix


def test_a_lock_no_longer_ours_is_left_as_it_is(messages):
    api = FakeCoreV1()
    c, _ = claim(api)
    api.stored = held()
    c.release()
    assert api.stored is not None and "the cluster lock is no longer this run's (now: alice@laptop" in messages.text


# --- the release's defaults and settling ------------------------------------------------------------


def deployments(latency="1000") -> dict:
    d = json.loads((FIXTURES / "deployments.json").read_text())
    for item in d["items"]:
        for e in item["spec"]["template"]["spec"]["containers"][0]["env"]:
            if e["name"] == "DEMO_LATENCY_MS":
                e["value"] = latency
    return d


def test_defaults_are_what_the_deployments_run():
    found = release.defaults_from_deployments(deployments("500"))
    assert found.variants == ["blocking", "reactive"]
    assert found.latency_ms == {"blocking": 500, "reactive": 500}
    assert found.settings["blocking"]["liveness"]["periodSeconds"] == 5
    assert found.latency_of(["blocking", "reactive"]) == 500


def test_the_plan_takes_the_release_unless_a_flag_or_the_environment_says(tmp_path):
    defaults = release.defaults_from_deployments(deployments("500"))
    plan = demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path), defaults, environ={})
    assert (plan.variants, plan.latency_ms, plan.latency_source) == (["blocking", "reactive"], 500, "release")
    plan = demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path), defaults, environ={"LIVENESS_LAB_LATENCY_MS": "700"})
    assert (plan.latency_ms, plan.latency_source) == (700, "LIVENESS_LAB_LATENCY_MS")
    plan = demo_mod.resolve_plan(
        demo_mod.DemoOptions(out=tmp_path, latency_ms=100, variants=["reactive"]), defaults, environ={"LIVENESS_LAB_LATENCY_MS": "700"}
    )
    assert (plan.variants, plan.latency_ms, plan.latency_source) == (["reactive"], 100, "--latency-ms")
    # Locust's request timeout: the flag, else the environment, else the default; a bad one is refused.
    assert plan.request_timeout_s == 10
    env = {"LIVENESS_LAB_REQUEST_TIMEOUT_S": "45"}
    assert demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path), defaults, environ=env).request_timeout_s == 45
    assert demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path, request_timeout_s=30), defaults, environ=env).request_timeout_s == 30
    with pytest.raises(exits.SetupError, match="LIVENESS_LAB_REQUEST_TIMEOUT_S='soon' is not a number of seconds above 0"):
        demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path), defaults, environ={"LIVENESS_LAB_REQUEST_TIMEOUT_S": "soon"})
    with pytest.raises(exits.SetupError, match="variant 'offloaded' is not deployed") as e:
        demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path, variants=["offloaded"]), defaults, environ={})
    assert "--set variants.offloaded.enabled=true" in e.value.fix
    with pytest.raises(exits.SetupError, match="--variants nope names a variant chart/values.yaml does not have") as e:
        demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path, variants=["nope"]), defaults, environ={})
    assert e.value.fix.startswith("choose from blocking,reactive,")
    mixed = deployments("500")
    next(e for e in mixed["items"][1]["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "DEMO_LATENCY_MS")["value"] = (
        "900"
    )
    with pytest.raises(exits.SetupError, match="different latencies"):
        demo_mod.resolve_plan(demo_mod.DemoOptions(out=tmp_path), release.defaults_from_deployments(mixed), environ={})


def pod(name, variant, ready_since="2026-11-24T15:00:00Z", deleting=False, restarts=0, ready=True):
    meta = {"name": name, "labels": {"app.kubernetes.io/component": variant}, "creationTimestamp": "2026-11-24T14:59:00Z"}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-24T15:01:00Z"
    return {
        "metadata": meta,
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready_since}],
            "containerStatuses": [{"restartCount": restarts}],
        },
    }


def rolled_out(d: dict, generation=2, observed=2, updated=1, ready=1, replicas=1) -> dict:
    d = copy.deepcopy(d)
    for item in d["items"]:
        item["metadata"]["generation"] = generation
        item["status"] = {
            "observedGeneration": observed,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "replicas": replicas,
        }
    return d


T = release.parse_time("2026-11-24T15:02:00Z")


def test_a_release_right_after_an_upgrade_is_not_settled_and_says_why():
    # As seen after `helm upgrade --set latencyMs=500 --wait`: the new pods Ready, the old ones terminating.
    pods = {
        "items": [
            pod("liveness-lab-blocking-new", "blocking", "2026-11-24T15:01:50Z"),
            pod("liveness-lab-blocking-old", "blocking", deleting=True),
            pod("liveness-lab-reactive-new", "reactive", "2026-11-24T15:01:30Z"),
        ]
    }
    problems = release.settle_problems(rolled_out(deployments()), pods, ["blocking", "reactive"], T, 20)
    assert problems == [
        "blocking: pod(s) still terminating: liveness-lab-blocking-old",
        "blocking: pod liveness-lab-blocking-new Ready for 10 s only (settling: 20 s)",
    ]
    problems = release.settle_problems(rolled_out(deployments(), observed=1), {"items": []}, ["blocking"], T, 20)
    assert problems == ["blocking: the Deployment's newest spec is not yet seen by its controller"]
    problems = release.settle_problems(rolled_out(deployments(), updated=0, replicas=2), {"items": []}, ["reactive"], T, 20)
    assert problems == ["reactive: rolling out (0 of 1 updated, 1 Ready, 2 in all)"]


def test_a_settled_release_has_no_problem_and_restarted_pods_are_found():
    pods = {
        "items": [
            pod("liveness-lab-blocking-a", "blocking", restarts=2),
            pod("liveness-lab-reactive-b", "reactive"),
            pod("liveness-lab-blocking-old", "blocking", deleting=True, restarts=5),
        ]
    }
    pods_settled = {"items": pods["items"][:2]}
    assert release.settle_problems(rolled_out(deployments()), pods_settled, ["blocking", "reactive"], T, 20) == []
    assert release.restarted_pods(pods, ["blocking", "reactive"]) == ["liveness-lab-blocking-a"]


# --- the in-cluster swarm ----------------------------------------------------------------------------


@pytest.fixture
def web_ui():
    """A stand-in for the in-cluster Locust's web UI on 127.0.0.1: its workers report a state of their
    own, as Locust's do; POST /stop stops its swarm."""
    state = {"state": "running"}

    class UI(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, body):
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            users = 40 if state["state"] == "running" else 0
            self.reply({"state": state["state"], "user_count": users, "workers": [{"id": "w", "state": "ready"}]})

        def do_POST(self):
            state["state"] = "stopped"
            self.reply({"success": True, "message": "Test stopped"})

    server = HTTPServer(("127.0.0.1", 0), UI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", state
    server.shutdown()


def test_a_swarm_is_refused_with_the_stop_command(web_ui):
    ui, state = web_ui
    with pytest.raises(exits.SetupError) as e:
        swarm.ensure_no_swarm(ui, stop=False)
    assert e.value.message.startswith("the in-cluster Locust is swarming the variants (running, 40 users)")
    assert e.value.fix.startswith(f"stop it: curl -X POST {ui}/stop") and state["state"] == "running"


def test_a_swarm_is_stopped_and_said(web_ui, messages):
    ui, state = web_ui
    swarm.ensure_no_swarm(ui, stop=True, sleep=lambda s: None)
    assert state["state"] == "stopped"
    assert f"the in-cluster Locust is swarming (running, 40 users): stopping it (POST {ui}/stop)" in messages.text
    assert "in-cluster Locust stopped (stopped)" in messages.text


def test_an_idle_or_absent_locust_is_no_swarm(web_ui, messages):
    ui, state = web_ui
    state["state"] = "ready"
    swarm.ensure_no_swarm(ui, stop=False)
    assert "in-cluster Locust: ready, not swarming" in messages.text
    swarm.ensure_no_swarm("http://127.0.0.1:9", stop=False)  # nothing listens on the discard port
    assert "no in-cluster Locust answers on http://127.0.0.1:9" in messages.text


# --- exit codes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--bogus"],
        ["demo", "--hold", "0"],
        ["demo", "--rate", "x"],
        ["demo", "--variants", ","],
        ["lab", "--repeat", "0"],
        ["lab", "--nope"],
        ["nothing"],
        [],
    ],
)
def test_usage_errors_exit_3(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli_main.main(argv, environ={})
    assert e.value.code == exits.SETUP
    assert "fix: see" in capsys.readouterr().err


def test_help_exits_0_and_states_the_exit_codes(capsys):
    for sub in ("demo", "lab"):
        with pytest.raises(SystemExit) as e:
            cli_main.main([sub, "--help"], environ={})
        assert e.value.code == 0
        out = capsys.readouterr().out
        assert re.search(r"3 +usage or set-up error", out) and re.search(r"1 +FAIL", out)


def test_a_setup_error_exits_3_and_prints_the_fix(monkeypatch, capsys):
    def refuse(opts, console, environ):
        raise exits.SetupError("another scripted run holds the cluster: alice", "wait for it to end")

    monkeypatch.setattr(demo_mod, "run_demo", refuse)
    assert cli_main.main(["demo", "--hold", "30"], environ={}) == exits.SETUP
    err = capsys.readouterr().err
    assert "error: another scripted run holds the cluster: alice\n  fix: wait for it to end" in err


@pytest.mark.parametrize("run,code", [("run-pass", exits.PASS), ("run-fail", exits.FAIL), ("run-disturbed", exits.INCONCLUSIVE)])
def test_the_verdict_is_the_exit_code(run, code, tmp_path, chart_settings):
    folder = tmp_path / run
    shutil.copytree(FIXTURES / run, folder)
    data = json.loads((folder / "run.json").read_text())
    data["settings"] = chart_settings
    (folder / "run.json").write_text(json.dumps(data))
    d = demo_mod.Demo(demo_mod.DemoOptions(), print_summary=False)
    assert d.report(demo_mod.Plan(["blocking", "reactive"], 1000, "release", folder)) == code


def test_a_rollouts_events_are_not_the_runs(tmp_path, chart_settings):
    """Unhealthy events of a pod the run never saw (an old reactive pod, shut down by a rollout just
    before the load) do not count against reactive."""
    folder = tmp_path / "run"
    shutil.copytree(FIXTURES / "run-pass", folder)
    data = json.loads((folder / "run.json").read_text())
    data["settings"] = chart_settings
    (folder / "run.json").write_text(json.dumps(data))
    t = float(data["locust_started"]) + 1
    old = {
        "t": t,
        "kind": "event",
        "uid": "rollout",
        "pod": "liveness-lab-reactive-0ld0ld-xxxxx",
        "variant": "reactive",
        "reason": "Unhealthy",
        "type": "Warning",
        "message": 'Readiness probe failed: Get "http://10.244.0.9:8080/readyz": context deadline exceeded',
        "count": 2,
        "first": t,
        "last": t,
    }
    with open(folder / "timeline.jsonl", "a") as f:
        f.write(json.dumps(old) + "\n")
    from liveness_lab.report.facts import load_run
    from liveness_lab.report.verdict import judge

    result = judge(load_run(folder))
    assert result.verdict == "PASS" and result.facts.analyses["reactive"].probes.unhealthy == 0


# --- one place for the latency default ----------------------------------------------------------------


def test_the_latency_default_is_the_charts_everywhere():
    """chart/values.yaml latencyMs sets it; the service's own fallback (DemoProperties' @DefaultValue,
    application.yaml leaves it to that) and Locust's (liveness_lab.base.DEFAULT_LATENCY_MS, for a locustfile
    run without the chart and old run.json files) must say the same."""
    chart = yaml.safe_load((REPO / "chart" / "values.yaml").read_text())["latencyMs"]
    java = next((REPO / "service" / "src" / "main").rglob("DemoProperties.java")).read_text()
    service = int(re.search(r'@DefaultValue\("(\d+)"\)\s+long latencyMs', java).group(1))
    app = yaml.safe_load((REPO / "service" / "src" / "main" / "resources" / "application.yaml").read_text())
    app_latency = (app.get("demo") or {}).get("latency-ms")
    assert service == chart == liveness_lab.base.DEFAULT_LATENCY_MS, (
        f"chart latencyMs {chart}, DemoProperties {service}, DEFAULT_LATENCY_MS {liveness_lab.base.DEFAULT_LATENCY_MS}"
    )
    assert app_latency in (None, chart) or str(app_latency).endswith(f":{chart}}}"), f"application.yaml demo.latency-ms is {app_latency}"


# --- the run's pieces ---------------------------------------------------------------------------------


def test_the_phase_follows_the_timetable():
    o = options.DemoOptions(ramp=10, hold=30, quiet=20)
    assert [options.phase_at(o, t) for t in (0, 9.9, 10, 39, 40, 44.9, 45, 64, 65)] == [
        "ramp",
        "ramp",
        "hold",
        "hold",
        "cool-down",
        "cool-down",
        "quiet",
        "quiet",
        "ending",
    ]
    assert options.max_run_seconds(o, 2, 300) == 65 + 120 + 600 + 300


def test_restarts_so_far_count_from_the_first_snapshot(tmp_path):
    rec = record.LiveRecorder.__new__(record.LiveRecorder)
    rec.first, rec.restarts = {}, {}
    rec.saw(
        [
            {"name": "b1", "variant": "blocking", "restarts": 2},
            {"name": "r1", "variant": "reactive", "restarts": 0},
            {"name": "x", "variant": None, "restarts": 9},
        ]
    )
    assert rec.restarts == {"blocking": 0, "reactive": 0}
    rec.saw([{"name": "b1", "variant": "blocking", "restarts": 4}, {"name": "r1", "variant": "reactive", "restarts": 0}])
    assert rec.restarts == {"blocking": 2, "reactive": 0}


def test_the_lab_runs_each_scenarios_load_and_the_worst_outcome_wins(tmp_path):
    from liveness_lab.lab import catalogue, runner

    s = next(x for x in catalogue.load_catalogue() if x.name == "baseline")
    o = runner.demo_options(s, tmp_path)
    assert (o.variants, o.users, o.hold, o.quiet, o.ramp, o.out) == (
        s.variants,
        s.load["users"],
        s.load["hold"],
        s.load["quiet"],
        s.load["ramp"],
        tmp_path,
    )
    assert o.latency_ms == s.load["latency_ms"]
    assert runner.worst([0, 2, 0]) == exits.CANNOT_TELL and runner.worst([2, 1, 0]) == exits.NOT_HELD and runner.worst([0, 0]) == exits.HELD
    assert runner.duration("10m") == 600 and runner.duration("90s") == 90


def test_a_bad_scenario_choice_is_a_setup_error():
    from liveness_lab.lab import runner

    with pytest.raises(exits.SetupError, match="no scenario nope"):
        runner.Lab(runner.LabOptions(only=["nope"]), environ={}).choose()


def test_right_after_a_recorded_upgrade_the_release_says_500_ms_and_is_not_settled():
    """As recorded right after `helm upgrade --reuse-values --set latencyMs=500 --wait` returned."""
    deps, pods = recorded("deployments-after-upgrade.json"), recorded("pods-after-upgrade.json")
    defaults = release.defaults_from_deployments(deps)
    assert defaults.variants == ["blocking", "reactive"] and defaults.latency_of(defaults.variants) == 500
    problems = release.settle_problems(deps, pods, defaults.variants, release.parse_time("2026-11-24T15:08:10Z"), 20)
    assert [p for p in problems if "still terminating" in p] == [
        "blocking: pod(s) still terminating: liveness-lab-blocking-55b84d964-ncq9m",
        "reactive: pod(s) still terminating: liveness-lab-reactive-64b6b58bb8-26rm9",
    ]
    assert any("Ready for 4 s only" in p for p in problems)
    # The old pods gone and the new ones Ready for 20 s: settled.
    pods["items"] = [p for p in pods["items"] if not p["metadata"].get("deletionTimestamp")]
    assert release.settle_problems(deps, pods, defaults.variants, release.parse_time("2026-11-24T15:08:30Z"), 20) == []


# --- however a run ends, the lock is given back (and the lab's release restored) ------------------------


class FakeCluster:
    """ClusterApi's surface over recorded Deployments and a FakeCoreV1 lock store."""

    context, namespace, release = "kind-liveness-lab", "liveness-lab", "liveness-lab"
    api_client = None

    def __init__(self):
        self.core = FakeCoreV1()
        self.restarted = []

    def services(self):
        raise release.ApiUnavailable("listing Services: not recorded")

    def deployments(self):
        return recorded("deployments-after-upgrade.json")

    def pods(self):
        return {"items": []}

    def delete_pods(self, names):
        pass

    def restart_deployment(self, name):
        self.restarted.append(name)


def test_an_interrupted_demo_gives_the_lock_back(monkeypatch, tmp_path):
    cluster = FakeCluster()
    environ = {}

    def interrupted(ui, stop):
        assert cluster.core.stored is not None  # the lock is held here
        raise KeyboardInterrupt

    monkeypatch.setattr(demo_mod, "ensure_no_swarm", interrupted)
    d = demo_mod.Demo(demo_mod.DemoOptions(out=tmp_path / "run"), environ=environ, api=cluster)
    with pytest.raises(KeyboardInterrupt):
        d.run()
    assert cluster.core.stored is None and lock.TOKEN_ENV not in environ


def test_a_replaced_locust_master_gets_its_workers_rolled_out_again_after_the_upgrade():
    """Both Locust Deployments rolled by a scenario's values (2026-11-30: a worker started beside the new
    master kept retrying the old one's address); a master the upgrade left alone leaves them alone."""
    from liveness_lab.lab import runner

    def pod(component, created):
        return {"metadata": {"labels": {"app.kubernetes.io/component": component}, "creationTimestamp": created}}

    since = release.parse_time("2026-11-30T06:43:20Z")
    for master_created, rolled in (("2026-11-30T06:43:24Z", ["liveness-lab-locust-worker"]), ("2026-11-30T05:00:00Z", [])):
        cluster = FakeCluster()
        cluster.pods = lambda created=master_created: {"items": [pod("locust", created), pod("locust-worker", "2026-11-30T06:43:25Z")]}
        lab = runner.Lab(runner.LabOptions(), environ={})
        lab.api = cluster
        lab.fresh_locust_workers(since)
        assert cluster.restarted == rolled


class FakeHelm:
    def __init__(self, signal_during_rollback=None):
        self.calls, self.rev = [], 7
        self.signal_during_rollback = signal_during_rollback

    def revision(self):
        return self.rev

    def values_yaml(self):
        return "{}"

    def run(self, *args, log=None, timeout=None, own_session=False):
        self.calls.append(args[0] if args[0] != "rollback" else f"rollback {args[2]}")
        if args[0] == "rollback" and self.signal_during_rollback:
            os.kill(os.getpid(), self.signal_during_rollback)  # the user's second Ctrl-C, or a SIGTERM
            self.calls.append("rollback ended")
        if args[0] == "upgrade":
            self.rev += 1
        return ""


def test_a_lab_stopped_mid_scenario_restores_the_release_and_gives_the_lock_back(monkeypatch, tmp_path):
    from liveness_lab.lab import runner

    cluster, helm = FakeCluster(), FakeHelm()
    lab = runner.Lab(runner.LabOptions(only=["baseline"], out=str(tmp_path / "lab")), environ={})

    def connect():
        lab.api, lab.helm = cluster, helm

    monkeypatch.setattr(lab, "connect", connect)

    class Interrupted(demo_mod.Demo):
        def run(self):
            assert self.environ[lock.TOKEN_ENV] == cluster.core.stored["data"]["token"]  # the demo runs under the lab's lock
            raise KeyboardInterrupt

    monkeypatch.setattr(runner, "Demo", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        lab.run()
    assert helm.calls == ["upgrade", "rollback 7"] and cluster.core.stored is None


def test_a_signal_during_the_restore_waits_for_the_rollback_to_end(tmp_path):
    """2026-11-30: a SIGTERM during the restore killed helm midway; the release stayed pending-rollback and
    the next lab's upgrade was refused. Now the rollback ends, then the signal stops the lab."""
    from liveness_lab.lab import runner

    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        cluster, helm = FakeCluster(), FakeHelm(signal_during_rollback=signal.SIGTERM)
        lab = runner.Lab(runner.LabOptions(only=["baseline"], out=str(tmp_path / "lab")), environ={})
        lab.api, lab.helm, lab.out, lab.restore_to = cluster, helm, tmp_path, 7
        with pytest.raises(Stopped):
            lab.restore()
        assert helm.calls == ["rollback 7", "rollback ended"] and signal.getsignal(signal.SIGTERM) is stop
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_run_that_breaks_is_never_a_verdict(monkeypatch, capsys):
    def broken(opts, console, environ):
        raise KeyError("locust_started")

    monkeypatch.setattr(demo_mod, "run_demo", broken)
    assert cli_main.main(["demo"], environ={}) == exits.SETUP
    assert "error: the run broke: KeyError" in capsys.readouterr().err


def test_no_stats_from_locust_is_a_setup_error(tmp_path):
    (tmp_path / "locust.log").write_text("$ locust ...\nError: unknown User class(es): NopeUser\n")
    d = demo_mod.Demo(demo_mod.DemoOptions(), print_summary=False)
    with pytest.raises(exits.SetupError, match="Locust recorded no stats: .*NopeUser"):
        d.report(demo_mod.Plan(["blocking"], 1000, "release", tmp_path))


def test_a_resumed_lab_keeps_the_judged_runs_runs_the_rest_and_counts_them_all(monkeypatch, tmp_path):
    """--resume in a pass's folder: baseline-1 judged there (not held) is kept and counted, baseline-2 that
    stopped before its judgement is moved aside and run again with baseline-3; the release's values stay
    those the pass began with."""
    from liveness_lab.lab import judge, runner

    out = tmp_path / "lab"
    out.mkdir()
    (out / "release-values.yaml").write_text("latencyMs: 1000 # as the pass began\n")
    for name, outcome in (("baseline-1", judge.NOT_HELD),):
        (out / name).mkdir()
        judge.write(judge.Judgement("baseline", str(out / name), outcome, [], [], "FAIL", {}), out / name)
    (out / "baseline-2").mkdir()
    (out / "baseline-2" / "demo.log").write_text("stopped\n")
    cluster, helm, ran = FakeCluster(), FakeHelm(), []
    lab = runner.Lab(runner.LabOptions(only=["baseline"], repeat=3, out=str(out), resume=True), environ={})

    def connect():
        lab.api, lab.helm = cluster, helm

    def run_scenario(scenario, folder):
        assert not folder.exists()  # the stopped run's leftovers are not mixed into its new run
        ran.append(folder.name)
        return runner.HELD

    monkeypatch.setattr(lab, "connect", connect)
    monkeypatch.setattr(lab, "run_scenario", run_scenario)
    assert lab.run() == runner.NOT_HELD  # the kept run counts
    assert ran == ["baseline-2", "baseline-3"]
    assert (out / "baseline-2.stopped" / "demo.log").is_file()
    assert (out / "release-values.yaml").read_text().startswith("latencyMs: 1000")
    assert cluster.core.stored is None

    # Without a pass to go on with, --resume is refused before the cluster is touched.
    refused = runner.Lab(runner.LabOptions(only=["baseline"], out=str(tmp_path / "none"), resume=True), environ={})
    monkeypatch.setattr(refused, "connect", lambda: pytest.fail("connected"))
    with pytest.raises(exits.SetupError, match="--resume goes on with a lab folder"):
        refused.run()
    # A new pass into a folder that holds one (without --resume) is refused too, the folder untouched: its
    # runs' recordings would take the new ones.
    before = sorted(p.name for p in out.iterdir())
    again = runner.Lab(runner.LabOptions(only=["baseline"], out=str(out)), environ={})
    monkeypatch.setattr(again, "connect", lambda: pytest.fail("connected"))
    with pytest.raises(exits.SetupError, match=r"is not empty \(baseline-1, baseline-2.stopped") as refusal:
        again.run()
    assert f"--resume --out {out.resolve()}" in refusal.value.fix, refusal.value.fix
    assert sorted(p.name for p in out.iterdir()) == before
