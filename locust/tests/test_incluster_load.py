"""Load from inside the cluster (``--load cluster``, liveness_lab/demo/locust_master.py, demo/load_source.py,
locust_ext/stats_history.py) and
the release flags (``--context``, ``--namespace``, ``--release``): the REST sequence against a stand-in
master answering what a real Locust 2.47 master answered (fixtures/master/), the stats history the master
serves mapped into what the report reads, the automatic choice between host and cluster, the lock per
release, and the set-up errors for a context, namespace or release that is not there."""

import csv
import io
import json
import os
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
from conftest import FIXTURES

# Locust (and gevent's patching) before anything imports ssl: the order the suite's other Locust tests keep.
from locust.env import Environment
from locust.stats import PERCENTILES_TO_REPORT, StatsCSVFileWriter

from liveness_lab import __main__ as cli_main
from liveness_lab.base import coordinates, exits, ui_token
from liveness_lab.demo import cluster_lock as lock
from liveness_lab.demo import load_source as load
from liveness_lab.demo import locust_master as master
from liveness_lab.demo import no_other_load as swarm
from liveness_lab.demo import release
from liveness_lab.demo import run as demo_mod
from liveness_lab.locust_ext import stats_history, swarm_guard, ui_auth
from liveness_lab.locust_ext.demo_shape import DemoShape, phases
from liveness_lab.report.load import series

REC = FIXTURES / "master"
HUGE = 2**62


def fixture_text(name: str) -> str:
    return (REC / name).read_text()


def history_ticks() -> tuple[str, list[str]]:
    """The recorded history (a real master's, fixtures/master/history-run.csv) as the header and one CSV
    text per second, the ticks the master keeps."""
    lines = fixture_text("history-run.csv").splitlines(keepends=True)
    by_t: dict[str, list[str]] = {}
    for line in lines[1:]:
        by_t.setdefault(line.split(",", 1)[0], []).append(line)
    return lines[0], ["".join(v) for v in by_t.values()]


class StandIn:
    """A Locust master's REST API as the recorded one answered: ready, then a shape swarm that runs for
    RUN_POLLS state requests, then stopped; the history grows a tick per state request. With TOKEN, every
    request without it answers 401, as the chart's master does (locust_ext/ui_auth.py)."""

    def __init__(self, workers=1, shape=True, history=True, run_polls=8, stale_polls=0, token=None, worker_gone=False):
        self.token, self.refused, self.worker_gone = token, 0, worker_gone
        self.calls: list[tuple[str, str, dict]] = []
        # Locust caches /stats/requests for 2 s: the state before a /swarm answers for a while after it.
        self.stale_polls, self.stale, self.before = stale_polls, 0, None
        self.state, self.workers, self.shape, self.history, self.run_polls = "ready", workers, shape, history, run_polls
        self.header, self.ticks = history_ticks()
        self.served = 2  # ticks the master had before the run (old ones)
        self.proxied: list[str] = []

    def status(self) -> dict:
        body = json.loads(fixture_text("stats-requests-stopped.json"))
        if self.stale > 0:
            self.stale -= 1
            body.update(state=self.before, worker_count=self.workers)
            return body
        if self.state == "running":
            self.run_polls -= 1
            self.served = min(len(self.ticks), self.served + 3)
            if self.run_polls <= 0:
                self.state, self.served = "stopped", len(self.ticks)
        body.update(state=self.state, worker_count=self.workers)
        return body

    def handle(self, method: str, path: str, query: dict, form: dict, headers=None) -> tuple[int, dict, bytes]:
        if self.token and ui_auth.presented(SimpleNamespace(headers=headers or {})) != self.token:
            self.refused += 1
            return 401, {"WWW-Authenticate": ui_token.CHALLENGE}, b'{"title": "Token required", "status": 401}'
        self.calls.append((method, path, form or query))
        if path == "/stats/requests":
            return 200, {}, json.dumps(self.status()).encode()
        if path == "/stats/reset":
            return 200, {}, b"ok"
        if path == "/swarm":
            if self.worker_gone:  # the worker left after the run counted it: the master's guard answers
                return 200, {}, json.dumps({"success": False, "message": swarm_guard.NO_WORKER, "host": ""}).encode()
            if not self.shape or form.get("shape_class") != ["DemoShape"]:
                return 200, {}, fixture_text("swarm-no-shape.json").encode()
            self.before, self.stale = self.state, self.stale_polls
            self.state, self.served = "running", 2
            return 200, {}, fixture_text("swarm-shape.json").encode()
        if path == "/stop":
            self.state = "stopped"
            return 200, {}, b'{"success": true, "message": "Test stopped"}'
        if path == master.HISTORY_ROUTE:
            if not self.history:
                return 404, {}, b"<!doctype html><title>404 Not Found</title>"
            after = int(query["after"][0])
            # seq numbers: tick i (0-based) is i + 1
            body = self.header + "".join(t for i, t in enumerate(self.ticks[: self.served]) if i + 1 > after)
            return 200, {master.SEQ_HEADER: str(self.served), master.NOW_HEADER: "1795543305.225"}, body.encode()
        files = {"/stats/requests/csv": "stats.csv", "/stats/failures/csv": "failures.csv", "/exceptions/csv": None, "/stats/report": None}
        if path in files:
            name = files[path]
            return (
                200,
                {},
                (fixture_text(name) if name else "Count,Message,Traceback,Nodes\n" if "exc" in path else "<html></html>").encode(),
            )
        return 404, {}, b"not found"


@pytest.fixture
def stand_in():
    made = {}

    def serve(**kwargs):
        api = StandIn(**kwargs)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, method):
                url = urllib.parse.urlparse(self.path)
                headers = {k: v for k, v in self.headers.items()}
                if url.path.startswith("/api/v1/"):  # the API server's service proxy in front of the master
                    api.proxied.append(url.path)
                    url = url._replace(path=url.path.split("/proxy", 1)[1])
                    # What the API server does once it has authenticated the request: the Authorization
                    # header was the client's credential to it, and goes no further (k8s.io/apiserver).
                    headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
                n = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(n).decode()) if n else {}
                status, headers, body = api.handle(method, url.path, urllib.parse.parse_qs(url.query), form, headers)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self.answer("GET")

            def do_POST(self):
                self.answer("POST")

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        made["server"] = server
        return api, f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    if "server" in made:
        made["server"].shutdown()


class Clock:
    def __init__(self):
        self.t = 1795543263.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


def drive(url, out, total_s=33.0, transport=None, want=1):
    clock = Clock()
    m = master.LocustMaster(transport or master.DirectHttp(url), out / "locust.log")
    run = master.ClusterLocust(m, out, total_s, clock=clock, sleep=clock.sleep)
    status = run.prepare(want)
    run.start(["BlockingUser", "ReactiveUser"], master.phase_options(40, 10, 180, 5, 90, 1000, 1.0, 45.0))
    polls = 0
    while run.poll() is None:
        clock.sleep(1)
        polls += 1
        assert polls < 500, "the run never ended"
    return run, status, clock


# --- the REST sequence ----------------------------------------------------------------------------------


def test_the_rest_sequence_starts_the_shape_with_the_runs_phases_and_fetches_every_tick_once(stand_in, tmp_path):
    api, url = stand_in(run_polls=30)
    run, status, _ = drive(url, tmp_path, total_s=25)
    assert status.workers == 1 and run.returncode == 0
    seq = [(m, p) for m, p, _ in api.calls if p != "/stats/requests"]
    # the history is served; reset, where the history is now, the swarm; then history fetches; the final files
    assert seq[:4] == [("GET", master.HISTORY_ROUTE), ("POST", "/stats/reset"), ("GET", master.HISTORY_ROUTE), ("POST", "/swarm")]
    assert [p for _, p in seq[-4:]] == ["/stats/requests/csv", "/stats/failures/csv", "/exceptions/csv", "/stats/report"]
    assert api.calls[0][1] == "/stats/requests"  # the master answers and has workers, before anything changes
    swarm_form = next(f for m, p, f in api.calls if p == "/swarm")
    assert swarm_form == {
        "user_classes": ["BlockingUser", "ReactiveUser"],
        "shape_class": ["DemoShape"],
        "demo_users": ["40"],
        "demo_ramp_s": ["10"],
        "demo_hold_s": ["180"],
        "demo_cooldown_s": ["5"],
        "demo_quiet_s": ["90"],
        "latency_ms": ["1000"],
        "rate_per_user": ["1"],
        "request_timeout_s": ["45"],
    }
    afters = [int(f["after"][0]) for m, p, f in api.calls if p == master.HISTORY_ROUTE]
    assert afters[:3] == [HUGE, HUGE, 2] and afters[2:] == sorted(afters[2:])
    # The file is the header and every tick from the run's start, each once, in order: the two ticks the
    # master held before the run are not in it.
    header, ticks = history_ticks()
    assert (tmp_path / "locust_stats_history.csv").read_text() == header + "".join(ticks[2:])
    assert (tmp_path / "locust_stats.csv").read_text() == fixture_text("stats.csv")
    assert not any(p == "/stop" for _, p, _ in api.calls)  # the shape ended the swarm itself
    log = (tmp_path / "locust.log").read_text()
    assert "POST /swarm user_classes=BlockingUser&user_classes=ReactiveUser&shape_class=DemoShape" in log


def test_a_swarm_past_its_timetable_is_stopped(stand_in, tmp_path):
    api, url = stand_in(run_polls=10**6)
    run, _, clock = drive(url, tmp_path, total_s=20)
    assert ("POST", "/stop") in [(m, p) for m, p, _ in api.calls]
    assert clock.t - 1795543263.0 >= 20 + master.END_GRACE_S


def test_the_state_before_the_swarm_does_not_end_it(stand_in, tmp_path):
    """/stats/requests is cached for 2 s: a 'stopped' from before the /swarm must not end the run."""
    api, url = stand_in(run_polls=40, stale_polls=4)
    api.state = "stopped"
    run, _, clock = drive(url, tmp_path, total_s=30)
    assert clock.t - 1795543263.0 >= 30 and run.notes == []


def test_a_swarm_stopped_from_elsewhere_ends_the_run_and_says_so(stand_in, tmp_path):
    api, url = stand_in(run_polls=15)
    run, _, clock = drive(url, tmp_path, total_s=60)
    assert clock.t - 1795543263.0 < 30 and any("the swarm ended at +" in n for n in run.notes)


@pytest.mark.parametrize(
    "kwargs,said",
    [
        ({"workers": 0}, "has 0 of its 1 worker(s) connected"),
        ({"history": False}, "serves no stats history"),
        ({"shape": False}, "did not start the scripted run's shape"),
        ({"worker_gone": True}, "did not start the swarm: no Locust worker is connected"),
    ],
)
def test_a_master_that_cannot_run_it_is_a_setup_error(stand_in, tmp_path, kwargs, said):
    api, url = stand_in(**kwargs)
    with pytest.raises(exits.SetupError) as e:
        drive(url, tmp_path)
    assert said in e.value.message and e.value.fix
    if "workers" in kwargs:  # asked again every 2 s for WORKER_WAIT_S before it gives up
        asked = sum(1 for _, p, _ in api.calls if p == "/stats/requests")
        assert asked == 1 + master.WORKER_WAIT_S // 2, asked


def connecting(api, asked, at, workers, original=master.LocustMaster.status):
    """LocustMaster.status that counts each ask in ASKED and has the stand-in master report WORKERS from the
    AT-th ask on: workers connecting while the run waits."""

    def status(self):
        asked.append(1)
        if len(asked) == at:
            api.workers = workers
        return original(self)

    return status


def test_a_worker_that_connects_while_the_run_waits_is_taken(stand_in, tmp_path):
    """Both Locust Deployments rolled: the new worker lost the old master and restarts; the run waits."""
    api, url = stand_in(workers=0)
    asked = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(master.LocustMaster, "status", connecting(api, asked, at=4, workers=1))
        run, status, _ = drive(url, tmp_path, total_s=25)
    assert status.workers == 1 and len(asked) >= 4


def test_a_swarm_waits_for_every_worker_the_release_asks_for():
    """locust.workers: 2 (a load of 18,000 users, 9,000 each): the run starts once both are connected, and
    the Deployment says how many (a release without a worker Deployment: one)."""
    from liveness_lab.demo import release as rel

    def worker(replicas, component="locust-worker"):
        return {"metadata": {"labels": {"app.kubernetes.io/component": component}}, "spec": {"replicas": replicas}}

    assert rel.locust_workers({"items": [worker(1, "reactive"), worker(2)]}) == 2
    assert rel.locust_workers({"items": [worker(1, "reactive")]}) == 1


@pytest.mark.parametrize(
    "connected,said",
    [
        # locust.workers: 2, one connected: the run waits for the second and gives up without it.
        (1, ["has 1 of its 2 worker(s) connected after"]),
        # Both Locust Deployments rolled and an old worker still connected to the new master (2026-11-30:
        # "3 worker(s) connected" for 2): the run waits for it to leave, and says so when it never does.
        (3, ["has 3 workers connected after", "asks for 2"]),
    ],
)
def test_the_run_waits_for_as_many_workers_as_the_release_asks_for(stand_in, tmp_path, connected, said):
    api, url = stand_in(workers=connected)
    with pytest.raises(exits.SetupError) as e:
        drive(url, tmp_path, want=2)
    assert all(x in e.value.message for x in said), e.value.message
    asked = []
    (tmp_path / "two").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(master.LocustMaster, "status", connecting(api, asked, at=3, workers=2))
        run, status, _ = drive(url, tmp_path / "two", total_s=25, want=2)
    assert status.workers == 2 and run.returncode == 0 and len(asked) >= 3


def test_no_master_is_a_setup_error(tmp_path):
    with pytest.raises(exits.SetupError) as e:
        drive("http://127.0.0.1:9", tmp_path)  # nothing listens on the discard port
    assert "does not answer" in e.value.message and "locust.enabled" in e.value.fix


def test_through_the_api_servers_service_proxy_with_the_official_client(stand_in, tmp_path):
    """The same sequence through kubernetes' own ApiClient (its request building, as on a real cluster),
    at the service proxy's path of the release's locust-ui Service."""
    from kubernetes import client

    api, url = stand_in(run_polls=20)
    api_client = client.ApiClient(client.Configuration(host=url))
    proxy = master.ServiceProxy(api_client, "team-a", "demo-locust-ui", "web", "ctx")
    run, status, _ = drive(url, tmp_path, total_s=15, transport=proxy)
    assert status.workers == 1 and run.rows > 0
    assert set(api.proxied) >= {
        "/api/v1/namespaces/team-a/services/demo-locust-ui:web/proxy/swarm",
        f"/api/v1/namespaces/team-a/services/demo-locust-ui:web/proxy{master.HISTORY_ROUTE}",
    }
    assert next(f for m, p, f in api.calls if p == "/swarm")["shape_class"] == ["DemoShape"]
    with pytest.raises(master.MasterUnavailable, match="HTTP 404"):  # no such Service: the API server's 404
        master.ServiceProxy(api_client, "team-a", "demo-locust-ui", "web").request("GET", "/nothing")


def test_the_run_sends_the_releases_token_as_a_bearer_straight_and_in_its_own_header_through_the_proxy(stand_in, tmp_path):
    """The chart's master requires its token. Straight to it (LIVENESS_LAB_LOCUST_UI) as Authorization:
    Bearer; through the service proxy as X-Liveness-Lab-Token, since the API server keeps Authorization (the
    stand-in drops it, as the API server does): a token sent there as a Bearer would never arrive."""
    from kubernetes import client

    api, url = stand_in(run_polls=8, token="t0ken")
    (tmp_path / "direct").mkdir()
    run, status, _ = drive(url, tmp_path / "direct", total_s=8, transport=master.DirectHttp(url, "t0ken"))
    assert status.workers == 1 and run.rows > 0 and api.refused == 0
    api_client = client.ApiClient(client.Configuration(host=url))
    api_client.set_default_header("Authorization", "Bearer the-kubeconfigs-own")  # the API server's, not the master's
    (tmp_path / "proxied").mkdir()
    proxy = master.ServiceProxy(api_client, "team-a", "demo-locust-ui", "web", "ctx", token="t0ken")
    api.state, api.run_polls = "ready", 8
    run, status, _ = drive(url, tmp_path / "proxied", total_s=8, transport=proxy)
    assert status.workers == 1 and run.rows > 0 and api.refused == 0 and api.proxied


@pytest.mark.parametrize("token", [None, "not-it"], ids=["no token", "a wrong token"])
def test_a_master_that_refuses_the_token_is_a_setup_error_saying_where_the_token_is(stand_in, tmp_path, token):
    api, url = stand_in(token="t0ken")
    m = master.LocustMaster(master.DirectHttp(url, token), tmp_path / "locust.log", "kubectl -n team-a get secret demo-liveness-lab-ui ...")
    with pytest.raises(exits.SetupError) as e:
        master.ClusterLocust(m, tmp_path, 10).prepare()
    assert "refused the run" in e.value.message and "HTTP 401" in e.value.message
    assert "get secret demo-liveness-lab-ui" in e.value.fix and "LIVENESS_LAB_UI_TOKEN" in e.value.fix
    assert [c for c in api.calls if c[0] == "POST"] == []  # nothing was started, stopped or reset


def test_the_token_is_the_releases_secret_unless_given(tmp_path):
    """release_master: LIVENESS_LAB_UI_TOKEN when set, else the Secret <release>-ui read with the run's
    credentials; none when the release has no Secret (an older release: its UI is open)."""
    import base64

    class WithSecret(Cluster):
        secret = {"data": {"token": base64.b64encode(b"from-the-secret").decode()}}

        def ui_token(self):
            return ui_token.from_secret(self.secret)

    cluster = WithSecret(namespace="team-a", release="demo")
    environ = {"LIVENESS_LAB_LOCUST_UI": "http://127.0.0.1:9"}
    assert swarm.release_master(cluster, environ).transport.token == "from-the-secret"
    assert swarm.release_master(cluster, {**environ, "LIVENESS_LAB_UI_TOKEN": "given"}).transport.token == "given"
    cluster.secret = None
    proxied = swarm.release_master(cluster, {})
    assert isinstance(proxied.transport, master.ServiceProxy) and proxied.transport.token is None
    assert ui_token.secret_name("demo") == "demo-liveness-lab-ui" and ui_token.secret_name("liveness-lab") == "liveness-lab-ui"


# --- the data: what the report reads --------------------------------------------------------------------


def test_the_masters_history_rows_are_locusts_own_file_rows(tmp_path):
    """HistoryRows writes what Locust's --csv-full-history file holds: the same columns, the same row for
    the same stats."""
    env = Environment()
    env.create_local_runner()
    for ms in (200, 210, 1200):
        env.stats.log_request("GET", "blocking /api/work", ms, 11)
    env.stats.log_error("GET", "reactive /api/work", "ConnectionRefusedError")
    env.stats.log_request("GET", "reactive /api/work", 5, 0)
    ours = stats_history.HistoryRows(env)
    theirs = StatsCSVFileWriter(env, PERCENTILES_TO_REPORT, str(tmp_path / "locust"), full_history=True)
    assert ours.stats_history_csv_columns == theirs.stats_history_csv_columns
    out = io.StringIO()
    theirs._stats_history_data_rows(csv.writer(out), 1795543300.4)
    assert ours.tick(1795543300.4) == out.getvalue()
    assert ours.header() == ",".join(theirs.stats_history_csv_columns) + "\r\n"
    theirs.close_files()
    env.runner.quit()


def test_ticks_are_numbered_and_kept_to_the_last_ones():
    rows = SimpleNamespace(tick=lambda now: f"{int(now)},row\r\n", header=lambda: "Timestamp,x\r\n")
    ticks = stats_history.Ticks(rows, keep=3)
    for t in range(5):
        ticks.take(100 + t)
    text, seq = ticks.after(0)
    assert seq == 5 and text == "Timestamp,x\r\n102,row\r\n103,row\r\n104,row\r\n"
    assert ticks.after(4) == ("Timestamp,x\r\n104,row\r\n", 5) and ticks.after(HUGE) == ("Timestamp,x\r\n", 5)


def test_the_fetched_history_gives_the_report_its_series(stand_in, tmp_path):
    """The recorded run (20 users, 2 req/s each, 10 per variant, 200 ms; ramp 5, hold 15, cool-down 3,
    quiet 10) read as the verdict reads a host run's file: 20 req/s per variant at hold, counts that end
    at the totals of locust_stats.csv, and no load in the quiet."""
    api, url = stand_in(run_polls=100)
    drive(url, tmp_path)
    history = list(csv.DictReader((tmp_path / "locust_stats_history.csv").open(newline="")))
    totals = {r["Name"]: r for r in csv.DictReader((tmp_path / "locust_stats.csv").open(newline=""))}
    for variant in ("blocking", "reactive"):
        rows = series(history, variant)
        t0 = rows[0].t
        hold = [r.rps for r in rows if 5 + 5 <= r.t - t0 <= 5 + 13]
        assert hold and all(17 <= rps <= 23 for rps in hold), hold
        assert rows[-1].requests == int(totals[f"{variant} /api/work"]["Request Count"]) and rows[-1].failures == 0
        assert all(r.rps == 0 for r in rows if r.t - t0 > 5 + 15 + 3 + 6)


def test_the_shape_takes_its_phases_from_the_swarm_request():
    shape = DemoShape()
    options = SimpleNamespace(demo_users="6", demo_ramp_s="2", demo_hold_s="3", demo_cooldown_s="1", demo_quiet_s="4")
    shape.runner = SimpleNamespace(environment=SimpleNamespace(parsed_options=options))
    shape.reset_time()
    assert shape.p == {"users": 6, "ramp": 2.0, "hold": 3.0, "cooldown": 1.0, "quiet": 4.0}
    assert phases({"LIVENESS_LAB_HOLD_S": "30"}, SimpleNamespace(demo_hold_s=None))["hold"] == 30.0


# --- the automatic choice ---------------------------------------------------------------------------------


def services(name: str) -> dict:
    return json.loads(fixture_text(name))


def test_kinds_nodeports_that_answer_choose_the_host():
    probed = []
    mode, why = load.choose_load(
        "auto", services("services-nodeport.json"), ["blocking", "reactive"], "liveness-lab", probe=lambda port: probed.append(port)
    )
    assert (mode, probed) == ("host", [30080, 30081]) and "answer on 127.0.0.1" in why


def test_nodeports_that_do_not_answer_choose_the_cluster_and_say_why():
    mode, why = load.choose_load(
        "auto",
        services("services-nodeport.json"),
        ["blocking", "reactive"],
        "liveness-lab",
        probe=lambda port: "Connection refused" if port == 30080 else None,
    )
    assert mode == "cluster" and "chosen automatically" in why and "blocking: 127.0.0.1:30080 does not answer (Connection refused)" in why


def test_a_release_without_nodeports_chooses_the_cluster_without_probing():
    def probe(port):
        raise AssertionError("probed a port the release does not expose")

    mode, why = load.choose_load("auto", services("services-clusterip.json"), ["blocking"], "liveness-lab", probe=probe)
    assert mode == "cluster" and "Service liveness-lab-blocking is ClusterIP, no NodePort" in why


def test_another_releases_nodeports_are_not_this_ones():
    mode, why = load.choose_load("auto", services("services-nodeport.json"), ["blocking"], "team-b", probe=lambda port: None)
    assert mode == "cluster" and "no Service of component blocking in release team-b" in why
    moved = services("services-nodeport.json")
    next(s for s in moved["items"] if s["metadata"]["name"] == "liveness-lab-blocking")["spec"]["ports"][0]["nodePort"] = 31080
    assert "nodePort 31080, not 30080" in load.choose_load("auto", moved, ["blocking"], "liveness-lab", probe=lambda p: None)[1]


def renamed(release: str) -> dict:
    """services-nodeport.json as release RELEASE (a name without the chart's) has them: <release>-liveness-lab-*."""
    found = services("services-nodeport.json")
    for s in found["items"]:
        s["metadata"]["name"] = s["metadata"]["name"].replace("liveness-lab", f"{release}-liveness-lab", 1)
        s["metadata"]["labels"]["app.kubernetes.io/instance"] = release
    return found


def test_a_release_whose_name_lacks_the_charts_is_found_by_its_labels():
    """helm's fullname is <release>-liveness-lab for release bob: its Services are found by component, not name."""
    bob = renamed("bob")
    assert load.choose_load("auto", bob, ["blocking", "reactive"], "bob", probe=lambda port: None)[0] == "host"
    assert swarm.locust_ui_service(bob, "bob") == "bob-liveness-lab-locust-ui"
    assert swarm.locust_ui_service(services("services-nodeport.json"), "liveness-lab") == "liveness-lab-locust-ui"
    assert swarm.locust_ui_service(None, "bob") == "bob-liveness-lab-locust-ui"
    assert swarm.locust_ui_service(None, "liveness-lab") == "liveness-lab-locust-ui"


def test_an_event_of_a_release_whose_name_lacks_the_charts_is_its_variants(monkeypatch):
    """Events name only their pod: bob's blocking pod is bob-liveness-lab-blocking-<hash>-<id> (helm's
    fullname), and its liveness events must count for blocking (a demo of release bob saw none)."""
    from liveness_lab.base import kube, variants

    event = {
        "involvedObject": {"name": "bob-liveness-lab-blocking-846598dd46-tgcq2"},
        "reason": "Unhealthy",
        "message": "Liveness probe failed: timeout",
        "firstTimestamp": "2026-11-24T21:08:15Z",
    }
    monkeypatch.setenv("LIVENESS_LAB_RELEASE", "bob")
    assert kube.event_record(event)["variant"] == "blocking"
    assert variants.variant_of_pod("bob-blocking-846598dd46-tgcq2") is None
    monkeypatch.setenv("LIVENESS_LAB_RELEASE", "liveness-lab")
    assert kube.event_record({**event, "involvedObject": {"name": "liveness-lab-reactive-5d-x"}})["variant"] == "reactive"
    assert variants.fullname("team-liveness-lab") == "team-liveness-lab"


def test_an_explicit_choice_is_taken_and_an_unreachable_host_is_a_setup_error():
    assert load.choose_load("cluster", None, ["blocking"], "liveness-lab") == ("cluster", "--load cluster")
    with pytest.raises(exits.SetupError) as e:
        load.choose_load("host", services("services-clusterip.json"), ["blocking"], "liveness-lab")
    assert "--load host: the variants are not reachable" in e.value.message and "--load cluster" in e.value.fix
    assert load.choose_load("auto", None, ["blocking"], "liveness-lab")[0] == "cluster"


def test_the_probe_tells_a_listening_port_from_a_closed_one():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert load.tcp_answers(port) is None
    assert load.tcp_answers(port)  # closed now: why, e.g. "Connection refused"


# --- the release: flags, lock, errors ---------------------------------------------------------------------


def test_the_lock_follows_the_release():
    assert lock.lock_name("liveness-lab") == lock.LOCK_NAME == "liveness-lab-run-lock"
    assert lock.lock_name("team-a") == "team-a-run-lock" != lock.lock_name("team-b")


class Cluster:
    """ClusterApi's surface for one release in one namespace, recording the lock's ConfigMap calls."""

    api_client = None

    def __init__(self, context="ctx", namespace="team-a", release="demo", ns_status=None, deployments=None):
        self.context, self.namespace, self.release = context, namespace, release
        self.ns_status, self._deployments = ns_status, deployments
        self.core = SimpleNamespace(
            created=[],
            create_namespaced_config_map=lambda ns, body: self.core.created.append((ns, body["metadata"]["name"])),
            delete_namespaced_config_map=lambda name, ns: None,
            read_namespaced_config_map=lambda name, ns: {"metadata": {"resourceVersion": "1"}, "data": {}},
        )

    def namespace_status(self):
        return self.ns_status

    def deployments(self):
        if self._deployments is None:
            return json.loads((FIXTURES / "deployments.json").read_text())
        return self._deployments

    def services(self):
        return services("services-nodeport.json")

    def pods(self):
        return {"items": []}


def test_a_demo_takes_the_lock_of_its_release_in_its_namespace(monkeypatch, tmp_path):
    cluster = Cluster()
    environ = {"LIVENESS_LAB_KUBE_CONTEXT": "ctx", "LIVENESS_LAB_NAMESPACE": "team-a", "LIVENESS_LAB_RELEASE": "demo"}

    def stop_here(plan):
        raise KeyboardInterrupt

    d = demo_mod.Demo(demo_mod.DemoOptions(out=tmp_path / "run"), environ=environ, api=cluster)
    monkeypatch.setattr(d, "choose_load", stop_here)
    with pytest.raises(KeyboardInterrupt):
        d.run()
    assert cluster.core.created == [("team-a", "demo-run-lock")]


@pytest.mark.parametrize(
    "cluster,said,fix",
    [
        (Cluster(ns_status=404), "namespace team-a not found (context ctx)", "--namespace NAME"),
        (Cluster(deployments={"items": []}), "release demo not found in namespace team-a (context ctx)", "--release NAME"),
    ],
)
def test_a_missing_namespace_or_release_is_a_setup_error(cluster, said, fix, tmp_path):
    environ = {
        "LIVENESS_LAB_KUBE_CONTEXT": "ctx",
        "LIVENESS_LAB_NAMESPACE": "team-a",
        "LIVENESS_LAB_RELEASE": "demo",
        "LIVENESS_LAB_READY_WAIT": "1",
        "LIVENESS_LAB_LOCUST_UI": "http://127.0.0.1:9",
    }
    d = demo_mod.Demo(demo_mod.DemoOptions(out=tmp_path / "run"), environ=environ, api=cluster)
    with pytest.raises(exits.SetupError) as e:
        d.run()
    assert e.value.message.startswith(said) and fix in e.value.fix
    assert cluster.core.created == []  # nothing was taken


def test_a_namespace_the_credentials_may_not_read_is_no_error():
    assert release.check_target(Cluster(ns_status=403)).variants == ["blocking", "reactive"]


def test_kinds_own_target_is_the_default_and_any_other_is_checked():
    assert coordinates.read({}).is_kind_default() and coordinates.read({"LIVENESS_LAB_RELEASE": "liveness-lab"}).is_kind_default()
    assert not coordinates.read({"LIVENESS_LAB_NAMESPACE": "team-a"}).is_kind_default()


def test_a_missing_context_exits_3_naming_it(monkeypatch, tmp_path, capsys):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\ncurrent-context: ''\n")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    for name in ("LIVENESS_LAB_KUBE_CONTEXT", "LIVENESS_LAB_NAMESPACE", "LIVENESS_LAB_RELEASE"):
        monkeypatch.setenv(name, "")
    assert cli_main.main(["demo", "--context", "nope", "--out", str(tmp_path / "run")], environ=os.environ) == exits.SETUP
    err = capsys.readouterr().err
    assert "no kubeconfig context nope" in err and "kubectl config get-contexts, then --context NAME" in err


def test_the_flags_reach_every_client_of_the_run(monkeypatch):
    seen = {}
    monkeypatch.setattr(demo_mod, "run_demo", lambda opts, console, environ: seen.update(opts=opts, env=dict(environ)) or 0)
    environ = {}
    assert cli_main.main(["demo", "--context", "c1", "--namespace", "n1", "--release", "r1", "--load", "cluster"], environ=environ) == 0
    assert {k: seen["env"][k] for k in ("LIVENESS_LAB_KUBE_CONTEXT", "LIVENESS_LAB_NAMESPACE", "LIVENESS_LAB_RELEASE")} == {
        "LIVENESS_LAB_KUBE_CONTEXT": "c1",
        "LIVENESS_LAB_NAMESPACE": "n1",
        "LIVENESS_LAB_RELEASE": "r1",
    }
    assert seen["opts"].load == "cluster"
    assert cli_main.main(["demo"], environ=(fresh := {})) == 0
    assert (fresh["LIVENESS_LAB_KUBE_CONTEXT"], fresh["LIVENESS_LAB_NAMESPACE"], fresh["LIVENESS_LAB_RELEASE"]) == (
        "kind-liveness-lab",
        "liveness-lab",
        "liveness-lab",
    ) and seen["opts"].load == "auto"


@pytest.mark.parametrize("sub", ["demo", "lab"])
def test_both_commands_take_the_release_flags_and_load(sub, capsys):
    with pytest.raises(SystemExit):
        cli_main.main([sub, "--help"], environ={})
    out = capsys.readouterr().out
    for flag in ("--context NAME", "--namespace NAME", "--release NAME", "--load {auto,host,cluster}"):
        assert flag in out
    with pytest.raises(SystemExit) as e:
        cli_main.main([sub, "--load", "laptop"], environ={})
    assert e.value.code == exits.SETUP
