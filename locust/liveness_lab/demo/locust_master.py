"""The release's own Locust master, driven through its REST API: how ``scripts/demo.sh --load cluster``
offers the scripted run's load from inside the cluster, and how every run checks that the master is not
swarming.

Where the master answers (``Transport``):

- ``ServiceProxy``: the Kubernetes API server's service proxy,
  ``/api/v1/namespaces/<ns>/services/<release>-locust-ui:web/proxy/<path>``, with the kubeconfig's
  credentials: works on any cluster the context reaches, NodePorts or not (the default);
- ``DirectHttp``: a URL, ``LIVENESS_LAB_LOCUST_UI`` (e.g. http://127.0.0.1:8089, kind's port mapping).

Either way with the release's token (``base/ui_token.py``: the Secret ``<release>-ui``, or
``LIVENESS_LAB_UI_TOKEN``), without which the master answers 401: ``Authorization: Bearer`` straight to the
master; ``X-Liveness-Lab-Token`` through the service proxy, whose API server keeps the Authorization header
(the kubeconfig's own credential) for itself.

The run (``ClusterLocust``), with the same data as the host's
``locust --headless --csv --csv-full-history`` and DemoShape:

1. ``GET /stats/requests``: the master answers and has workers;
2. ``POST /stats/reset``; ``GET /liveness-lab/stats-history?after=<huge>``: the newest tick's number;
3. ``POST /swarm`` with ``user_classes`` (the chosen variants'), ``shape_class=DemoShape``, the phases
   (``demo_users``, ``demo_ramp_s``, ``demo_hold_s``, ``demo_cooldown_s``, ``demo_quiet_s``: the shape
   reads them as it starts) and ``latency_ms``, ``rate_per_user``, ``request_timeout_s`` (sent on to the workers);
4. while the shape runs: ``GET /stats/requests`` each second (its state), and every few seconds the
   history's new ticks, appended to ``locust_stats_history.csv``; the shape ends the swarm itself
   (state ``stopped``) after ramp + hold + cool-down + quiet;
5. ``GET /stats/requests/csv`` -> ``locust_stats.csv``, ``/stats/failures/csv`` -> ``locust_failures.csv``,
   ``/exceptions/csv`` -> ``locust_exceptions.csv``, ``/stats/report`` -> ``locust.html``.

Every request and its answer's gist goes to ``locust.log`` in the run's folder.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from liveness_lab.base import ui_token
from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError

SHAPE_CLASS = "DemoShape"
HISTORY_ROUTE = "/liveness-lab/stats-history"
SEQ_HEADER = "X-Stats-History-Seq"
NOW_HEADER = "X-Stats-History-Now"
FETCH_EVERY_S = 5
# After the timetable, how long the shape may take to report "stopped" before the run stops it.
END_GRACE_S = 60
# Longer than /stats/requests may answer from its cache (2 s, doubled when slow).
STATE_CACHE_S = 10
# How long the master may not answer before the run gives up on it.
SILENT_MAX_S = 45
CSV_FILES = {
    "locust_stats.csv": "/stats/requests/csv",
    "locust_failures.csv": "/stats/failures/csv",
    "locust_exceptions.csv": "/exceptions/csv",
}


# How long a run waits for a worker to connect: when both Locust Deployments roll (a helm upgrade or the
# lab's rollback that changes the variants), the new worker may first reach the old master, lose it and
# restart (seen: 14 s after the rollout), then connect to the new one.
WORKER_WAIT_S = 90


@dataclass
class Reply:
    status: int
    headers: dict
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.body)


class MasterUnavailable(Exception):
    """The master did not answer (no Service, no endpoint, the API server refused, a timeout)."""


class MasterRefused(MasterUnavailable):
    """The master answered 401: no token, or not its release's."""


def refused(what: str, status: int, token: str | None) -> MasterUnavailable:
    if status != 401:
        return MasterUnavailable(f"{what}: HTTP {status}")
    return MasterRefused(f"{what}: HTTP 401, the master {'refused the token sent' if token else 'requires its release token'}")


class DirectHttp:
    """The master's web UI at a URL, with its token as a Bearer header (none: an open UI)."""

    def __init__(self, url: str, token: str | None = None):
        self.url = url.rstrip("/")
        self.token = token

    def __str__(self) -> str:
        return self.url

    def request(self, method: str, path: str, query: dict | None = None, form: list | None = None, timeout: float = 10) -> Reply:
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = urllib.parse.urlencode(form or []).encode() if method == "POST" else None
        req = urllib.request.Request(url, data=data, method=method, headers=ui_token.bearer(self.token))
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return Reply(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
        except urllib.error.HTTPError as e:
            raise refused(f"{method} {url}", e.code, self.token) from e
        except (OSError, urllib.error.URLError) as e:
            raise MasterUnavailable(f"{method} {url}: {getattr(e, 'reason', e)}") from e


class ServiceProxy:
    """The master's web UI through the API server's service proxy (the Python client's ApiClient, so the
    kubeconfig's credentials and CA), with its token in X-Liveness-Lab-Token."""

    def __init__(self, api_client, namespace: str, service: str, port: str = "web", context: str = "", token: str | None = None):
        self.api_client, self.namespace, self.service, self.port, self.context = api_client, namespace, service, port, context
        self.token = token

    def __str__(self) -> str:
        return f"service {self.service} in {self.namespace} (through the API server{', context ' + self.context if self.context else ''})"

    def base(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/services/{self.service}:{self.port}/proxy"

    def request(self, method: str, path: str, query: dict | None = None, form: list | None = None, timeout: float = 10) -> Reply:
        headers = {"Accept": "*/*", **ui_token.proxied(self.token)}
        if method == "POST":
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            # The client's own request building (the kubeconfig's server, credentials and CA), as its
            # generated methods do it: param_serialize, call_api, read.
            method_, url, headers_, body, post = self.api_client.param_serialize(
                method=method,
                resource_path=self.base() + path,
                query_params=list((query or {}).items()) or None,
                header_params=headers,
                post_params=list(form or []) if method == "POST" else None,
                auth_settings=["BearerToken"],
            )
            resp = self.api_client.call_api(method_, url, header_params=headers_, body=body, post_params=post, _request_timeout=timeout)
            data = resp.read()
        except Exception as e:  # urllib3's errors: no server, a timeout, TLS
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise MasterUnavailable(f"{method} {path} on {self}: {first}") from e
        if resp.status == 401 and ui_token.REALM in (resp.headers.get("WWW-Authenticate") or ""):  # the master's, not the API server's
            raise refused(f"{method} {path} on {self}", 401, self.token)
        if resp.status >= 400:  # 404: no such Service; 503: no Ready endpoint behind it
            raise MasterUnavailable(f"{method} {path} on {self}: HTTP {resp.status} {data[:120].decode('utf-8', 'replace').strip()}")
        return Reply(resp.status, {k.lower(): v for k, v in resp.headers.items()}, data)


@dataclass
class MasterStatus:
    state: str
    users: int | str
    workers: int | None

    @property
    def busy(self) -> bool:
        return self.state in ("spawning", "running", "stopping", "cleanup")


class LocustMaster:
    """The REST calls a scripted run makes, each logged to LOG_PATH when set. TOKEN_HINT: the command that
    prints the release's token, for the message when the master refuses it."""

    def __init__(self, transport, log_path: Path | None = None, token_hint: str = "kubectl get secret <release>-ui"):
        self.transport, self.log_path, self.token_hint = transport, log_path, token_hint

    def __str__(self) -> str:
        return str(self.transport)

    def _log(self, line: str) -> None:
        if self.log_path is not None:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(f"{time.strftime('%H:%M:%S', time.gmtime())} {line}\n")

    def call(self, method: str, path: str, query: dict | None = None, form: list | None = None, timeout: float = 10) -> Reply:
        try:
            reply = self.transport.request(method, path, query=query, form=form, timeout=timeout)
        except MasterUnavailable as e:
            self._log(f"{method} {path} -> {e}")
            raise
        if path != HISTORY_ROUTE and path != "/stats/requests":
            self._log(
                f"{method} {path}{'?' + urllib.parse.urlencode(query) if query else ''}"
                f"{' ' + urllib.parse.urlencode(form) if form else ''} -> {reply.status} {reply.text()[:300].strip()}"
            )
        return reply

    def status(self) -> MasterStatus | None:
        """The runner's state, users and connected workers; None when nothing answers. A master that
        refuses the token is a set-up error (SetupError) saying where the token comes from."""
        try:
            d = self.call("GET", "/stats/requests", timeout=5).json()
            return MasterStatus(str(d["state"]), d.get("user_count", "?"), d.get("worker_count"))
        except MasterRefused as e:
            raise SetupError(
                f"the release's Locust master refused the run ({e})",
                f"the token is the Secret's (`{self.token_hint}`); set LIVENESS_LAB_UI_TOKEN to it when your credentials may not read "
                "Secrets; a release installed before the chart made one: helm upgrade it",
            ) from e
        except (MasterUnavailable, ValueError, KeyError, TypeError):
            return None

    def stop(self) -> None:
        self.call("POST", "/stop")

    def reset_stats(self) -> None:
        self.call("POST", "/stats/reset")

    def history(self, after: int) -> tuple[str, int, float | None]:
        """The history's header and rows of ticks above AFTER, the newest tick's number, the master's clock."""
        r = self.call("GET", HISTORY_ROUTE, query={"after": str(after)})
        if r.status != 200 or SEQ_HEADER.lower() not in r.headers:
            raise MasterUnavailable(f"GET {HISTORY_ROUTE}: HTTP {r.status} without {SEQ_HEADER}: the master's image predates it")
        now = r.headers.get(NOW_HEADER.lower())
        return r.text(), int(r.headers[SEQ_HEADER.lower()]), float(now) if now else None

    def swarm_shape(self, user_classes: list[str], options: dict) -> str:
        form = [("user_classes", c) for c in user_classes] + [("shape_class", SHAPE_CLASS)] + [(k, str(v)) for k, v in options.items()]
        r = self.call("POST", "/swarm", form=form)
        try:
            d = r.json()
        except ValueError:
            d = {"success": False, "message": r.text()[:200]}
        if d.get("success") is False and "worker" in str(d.get("message", "")):
            # The master has no worker connected (locust_ext/swarm_guard.py): its message says what to do.
            raise SetupError(
                f"the release's Locust master did not start the swarm: {d.get('message')}",
                "kubectl get pods -l app.kubernetes.io/component=locust-worker (locust.workers in the chart's values)",
            )
        if not d.get("success") or SHAPE_CLASS not in str(d.get("message", "")):
            raise SetupError(
                f"the release's Locust master did not start the scripted run's shape: {d.get('message')!r}",
                "its image predates --load cluster (LIVENESS_LAB_SHAPE=offered on the master): rebuild and roll it out with "
                "scripts/cluster-up.sh",
            )
        return str(d["message"])

    def text(self, path: str) -> str:
        return self.call("GET", path, timeout=30).text()


def phase_options(
    users: int, ramp: int, hold: int, cooldown: int, quiet: int, latency_ms: int, rate: float, request_timeout_s: float | None = None
) -> dict:
    """The /swarm form's options: DemoShape's phases and the locustfile's latency, rate and request timeout
    (None: the master's own, LIVENESS_LAB_REQUEST_TIMEOUT_S or the default)."""
    timeout = {} if request_timeout_s is None else {"request_timeout_s": f"{request_timeout_s:g}"}
    return timeout | {
        "demo_users": users,
        "demo_ramp_s": ramp,
        "demo_hold_s": hold,
        "demo_cooldown_s": cooldown,
        "demo_quiet_s": quiet,
        "latency_ms": latency_ms,
        "rate_per_user": f"{rate:g}",
    }


@dataclass
class ClusterLocust:
    """The in-cluster swarm, shaped like the host's Locust process for Demo.follow and Demo.cleanup:
    ``poll()`` is None while the shape runs (fetching the history as it goes), then 0; ``send_signal`` and
    ``kill`` stop the master's swarm."""

    master: LocustMaster
    out: Path
    total_s: float
    clock: object = time.time
    sleep: object = time.sleep
    started: float = 0.0
    seq: int = 0
    returncode: int | None = None
    last_fetch: float = 0.0
    last_answer: float = 0.0
    clock_offset_s: float | None = None
    rows: int = 0
    notes: list = field(default_factory=list)

    @property
    def history_path(self) -> Path:
        return self.out / "locust_stats_history.csv"

    def check(self, want: int = 1) -> MasterStatus:
        """The master answers, has WANT workers (the chart's locust.workers: a swarm spread over fewer would
        ask each for more users than its limits hold; over more, a worker of a rollout, still connected and
        on its way out, would take its share of the users with it) and serves the history (before the run
        waits for anything)."""
        status = self.master.status()
        if status is None:
            raise SetupError(
                f"the release's Locust master does not answer ({self.master})",
                "is locust.enabled on in the release? kubectl get pods -l app.kubernetes.io/component=locust; or use --load host",
            )
        waited = 0.0
        while (status.workers or 0) != want and waited < WORKER_WAIT_S:
            if waited == 0:
                LOG.info(
                    "the release's Locust master has %s of its %s worker(s): waiting up to %s s for %s",
                    status.workers or 0,
                    want,
                    WORKER_WAIT_S,
                    "them to connect" if (status.workers or 0) < want else "the old ones of a rollout to leave",
                )
            self.sleep(2)
            waited += 2
            status = self.master.status() or status
        if (status.workers or 0) < want:
            raise SetupError(
                f"the release's Locust master has {status.workers or 0} of its {want} worker(s) connected after {WORKER_WAIT_S} s "
                f"({self.master})",
                "kubectl get pods -l app.kubernetes.io/component=locust-worker (locust.workers in the chart's values)",
            )
        if status.workers > want:
            raise SetupError(
                f"the release's Locust master has {status.workers} workers connected after {WORKER_WAIT_S} s, and its worker "
                f"Deployment asks for {want} ({self.master})",
                "kubectl get pods -l app.kubernetes.io/component=locust-worker: a worker of another Deployment or a stuck rollout",
            )
        self._history_place()
        return status

    def _history_place(self) -> None:
        try:
            _, self.seq, master_now = self.master.history(after=2**62)
        except MasterUnavailable as e:
            raise SetupError(
                f"the release's Locust master serves no stats history ({e})",
                "its image predates --load cluster: scripts/cluster-up.sh rebuilds and rolls it out",
            ) from e
        if master_now is not None:
            self.clock_offset_s = round(master_now - self.clock(), 3)

    def prepare(self, want: int = 1) -> MasterStatus:
        """check(WANT), then the stats cleared and the history's place noted: just before start()."""
        status = self.check(want)
        self.master.reset_stats()
        self._history_place()
        return status

    def start(self, user_classes: list[str], options: dict) -> float:
        self.history_path.write_text("")
        self.started = self.clock()
        message = self.master.swarm_shape(user_classes, options)
        self.last_answer = self.last_fetch = self.clock()
        LOG.info("in-cluster Locust: %s (%s)", message, self.master)
        return self.started

    def fetch(self) -> None:
        text, seq, _ = self.master.history(self.seq)
        lines = text.splitlines(keepends=True)
        header, rows = (lines[0], lines[1:]) if lines else ("", [])
        with open(self.history_path, "a", encoding="utf-8", newline="") as f:
            if f.tell() == 0:
                f.write(header)
            f.writelines(rows)
        self.rows += len(rows)
        self.seq = seq

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        now = self.clock()
        elapsed = now - self.started
        try:
            if now - self.last_fetch >= FETCH_EVERY_S:
                self.fetch()
                self.last_fetch = now
            status = self.master.status()
        except MasterUnavailable:
            status = None
        if status is None:
            if now - self.last_answer > SILENT_MAX_S:
                self.notes.append(f"the master did not answer for {SILENT_MAX_S} s: the run ended there")
                LOG.warning("the in-cluster Locust master has not answered for %s s: ending the run", SILENT_MAX_S)
                return self.finish(stop=False)
            return None
        self.last_answer = now
        # /stats/requests is cached for 2 s (Locust's memoize, doubled when slow): the state from before
        # the /swarm may still answer for a few seconds.
        if not status.busy and status.state != "init" and elapsed > STATE_CACHE_S:
            if elapsed < self.total_s - 2:
                self.notes.append(f"the swarm ended at +{elapsed:.0f} s of {self.total_s:.0f} ({status.state})")
                LOG.warning(
                    "the in-cluster swarm ended early, at +%.0f s of %.0f (%s): stopped from elsewhere?",
                    elapsed,
                    self.total_s,
                    status.state,
                )
            return self.finish(stop=False)
        if elapsed > self.total_s + END_GRACE_S:
            LOG.warning("the in-cluster swarm still %s %s s after its timetable: stopping it", status.state, END_GRACE_S)
            return self.finish(stop=True)
        return None

    def finish(self, stop: bool) -> int:
        if stop:
            try:
                self.master.stop()
            except MasterUnavailable as e:
                LOG.warning("could not stop the in-cluster swarm: %s", e)
        # The tick after the stop, then everything since the last fetch.
        self.sleep(1.5)
        try:
            self.fetch()
            for name, path in CSV_FILES.items():
                (self.out / name).write_text(self.master.text(path))
            try:
                (self.out / "locust.html").write_text(self.master.text("/stats/report"))
            except MasterUnavailable as e:
                LOG.warning("no HTML report from the master: %s", e)
        except MasterUnavailable as e:
            LOG.warning("the master's final stats could not be fetched: %s", e)
            self.notes.append(f"final stats not fetched: {e}")
        LOG.info("in-cluster Locust: %s history rows fetched", self.rows)
        self.returncode = 0
        return 0

    # Demo.cleanup's interface (a subprocess.Popen's)
    def send_signal(self, _sig=None) -> None:
        if self.returncode is None:
            try:
                self.master.stop()
                LOG.info("in-cluster swarm stopped (POST /stop)")
            except MasterUnavailable as e:
                LOG.warning("could not stop the in-cluster swarm: %s; stop it: POST /stop or Stop in its web UI", e)
            self.returncode = 130

    def kill(self) -> None:
        self.send_signal()

    def wait(self, timeout: float | None = None) -> int | None:
        return self.returncode
