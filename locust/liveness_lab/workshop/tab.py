"""The Workshop tab's server side, in the Locust master: the steps, each step's self-check re-run every
``LIVENESS_LAB_WORKSHOP_REFRESH`` seconds (3), the participant's progress, and the tab's actions, on the
web UI's own Flask app behind its own login (``--web-login``: with the release's token every route needs
it, ``locust_ext/ui_auth.py``).

Its routes are ``workshop.routes``'s.

Skip and Reset stop a running swarm first (new pods under load never settle, and the window would mix two
releases), then upgrade the release through Helm with its own chart (``helm.HelmRelease``): Skip to the
step's values, Reset to the values the workshop started with, each keeping every value of the
participant's that no step sets (``course.target_values``). The step's shown command is the
``helm upgrade --reuse-values --set ...`` that gets to the same values from the release as it is now. A
POST from a page of another origin is refused before it gets here (``ui_auth.refuse_other_origin``, for
every route of the web UI).

The data is the other tabs': the Pods poller's pods and events (no Kubernetes call of its own for them),
the master's stats history (``locust_ext/stats_history.py``) and its runner's counts; the Deployments are
read by name once a refresh (two GETs for two variants).
"""

import csv
import io
import json
import logging
import os
import shlex
import time

import gevent
import gevent.lock

from liveness_lab.base.kube import KubeUnavailable
from liveness_lab.base.settle import settle_problems
from liveness_lab.base.variants import TABLE, user_class

from .change import containers
from .check import SETTLE_S, Release, Window, evaluate
from .cluster import ApiError, WorkshopApi, progress_name
from .course import set_flags, target_values, workshop_keys
from .helm import HelmError, HelmRelease
from .progress import Progress, decode, encode

log = logging.getLogger(__name__)

EVERY_S = float(os.environ.get("LIVENESS_LAB_WORKSHOP_REFRESH", "3"))
# The last check's reason reaches the ConfigMap (the instructor's table) at most this often; a new state,
# a step met, an action at once.
SAVE_EVERY_S = 15.0
# A window keeps its records this long (a swarm left running for hours must not grow the master forever).
WINDOW_KEEP_S = 2 * 3600
BUSY = ("spawning", "running")
ACTIONS = ("select", "hint", "solution", "predict", "skip")


def unstamped(body: dict) -> dict:
    """A progress.json without its time of writing: what tells whether there is anything new to write."""
    return {k: v for k, v in body.items() if k != "updated"}


class ActionError(Exception):
    """An action refused: its HTTP status and what to say."""

    def __init__(self, status: int, title: str, detail: str):
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


class Workshop:
    """The steps, the progress and the current check of one release."""

    def __init__(
        self,
        steps,
        api: WorkshopApi,
        runner_of=lambda: None,
        options_of=lambda: None,
        poller=None,
        ticks=None,
        settle_s=SETTLE_S,
        helm: HelmRelease | None = None,
    ):
        self.steps = steps
        self.by_name = {s.name: s for s in steps}
        self.names = [s.name for s in steps]
        self.titles = {s.name: s.title for s in steps}
        self.api, self.poller, self.ticks = api, poller, ticks
        self.runner_of, self.options_of = runner_of, options_of
        self.settle_s = settle_s
        self.variants = [v.name for v in TABLE]
        self.progress = Progress.new(self.names[0])
        self.keys = workshop_keys(steps)
        self.helm = helm or HelmRelease(api)
        self.start: dict | None = None  # the release's values as the workshop found them
        self._rendered: tuple | None = None  # (release revision, step) -> its expected containers and command
        self.loaded = False
        self.store_error: str | None = "not read yet"
        self._rv = None
        self._saved = None
        self._saved_at = 0.0
        self.window: Window | None = None
        self._seen_events: set = set()
        self._cursor = 0
        self.release: Release | None = None
        self.result = None
        self.lock = gevent.lock.RLock()
        self._greenlet = None

    # --- progress in the ConfigMap ---

    def load(self) -> None:
        """The progress and the values the workshop started with from the ConfigMap; those values read from
        Helm's latest revision of the release the first time (the release as the workshop found it)."""
        try:
            found = self.api.read_progress()
        except ApiError as e:
            self.store_error = f"progress not kept: {e}"
            return
        if found is None:
            self.store_error = (
                f"progress not kept: ConfigMap {progress_name(self.api.release)} does not exist in {self.api.namespace} "
                "(the chart renders it with locust.workshop.enabled)"
            )
            data, self._rv = {}, None
        else:
            data, self._rv = found
            self.store_error = None
        saved, start = decode(data)
        if saved:
            self.progress = Progress.from_json(saved, self.names)
        self.start = start if isinstance(start, dict) else None
        if self.start is None:
            try:
                self.start = self.helm.latest().get("config") or {}
            except (ApiError, HelmError) as e:
                self.store_error = f"the release's values cannot be read from Helm: {e}"
                return
            log.info("workshop: the release's values as it started recorded: %s", json.dumps(self.start, sort_keys=True))
            self.save(force=True)
        self.loaded = True

    def follow(self) -> None:
        """The progress as the ConfigMap holds it, when someone else wrote it since this master last read or
        wrote it. Someone else is another master of the release: a step that changes a variant's mode rolls
        the master (its variant list names the modes), and for a moment the old one and the new one both
        answer; an action the old one took (a step selected) is the new one's too, not overwritten by it
        (found by the e2e: the new master kept the step it had read as it started). An unreadable
        ConfigMap changes nothing here: the next write says so."""
        if not self.loaded or self._rv is None:
            return
        try:
            found = self.api.read_progress()
        except ApiError:
            return
        if found is None or found[1] == self._rv:
            return
        data, self._rv = found
        saved, start = decode(data)
        if saved:
            self.progress = Progress.from_json(saved, self.names)
            self._saved = unstamped(self.progress.to_json(self.names, self.titles))
        if isinstance(start, dict):
            self.start = start
        self._rendered = None
        log.info("workshop: the progress another master wrote followed (step %s)", self.progress.current)

    def save(self, force: bool = False, now: float | None = None, periodic: bool = False) -> ActionError | None:
        """Writes the progress to the ConfigMap (at most every SAVE_EVERY_S unless FORCE). None when it was
        kept (or there is no ConfigMap to keep it in: the tab says so); else what to answer an action with,
        503 when the API refused or did not answer, 409 when someone else wrote it twice over (the store's
        error says the same to the tab). Never raises: the periodic check calls it too. A PERIODIC save
        that finds the ConfigMap written by someone else follows it instead (the next check is written
        over it); an action's writes over it once (the action is the newest thing said)."""
        now = time.time() if now is None else now
        if self._rv is None and self.store_error:
            return None  # no ConfigMap: kept in memory, and the tab says so
        self.progress.updated = now
        body = self.progress.to_json(self.names, self.titles)
        comparable = unstamped(body)
        if not force and (comparable == self._saved or now - self._saved_at < SAVE_EVERY_S):
            return None
        status = 503
        for attempt in (1, 2):
            try:
                self._rv = self.api.write_progress(encode(body, self.start), self._rv)
                self._saved, self._saved_at, self.store_error = comparable, now, None
                return None
            except ApiError as e:
                error = e
                if e.status == 409 and periodic:
                    self.follow()
                    return None
                if e.status == 409 and attempt == 1:  # an action: what it says wins
                    try:
                        found = self.api.read_progress()
                    except ApiError as again:
                        error = again
                        break
                    self._rv = found[1] if found else None
                    continue
                status = 409 if e.status == 409 else 503
                break
        self.store_error = f"progress not saved: {error}"
        log.warning("workshop: %s", self.store_error)
        title = "Progress changed elsewhere" if status == 409 else "Progress not saved"
        return ActionError(status, title, f"{self.store_error} (ConfigMap {progress_name(self.api.release)})")

    def save_or_refuse(self, now: float, done: str = "") -> None:
        """An action's save: a refused one is the action's answer (ActionError), saying what DONE already did."""
        refused = self.save(force=True, now=now)
        if refused is not None:
            raise ActionError(refused.status, refused.title, f"{done}; but {refused.detail}" if done else refused.detail)

    # --- the swarm: the window a check judges ---

    @staticmethod
    def _variant_of(deployment: dict) -> str:
        return (deployment["metadata"].get("labels") or {}).get("app.kubernetes.io/component")

    def on_swarm_start(self, now: float | None = None) -> None:
        """A new window: the swarm's load, and whether the release had settled as it started (read now)."""
        now = time.time() if now is None else now
        opts = self.options_of()
        try:
            deployments = self.api.deployments(self.variants)
            pods = {"items": self.poller.kube.pods()} if self.poller is not None else {"items": []}
            unsettled = settle_problems(deployments, pods, [self._variant_of(d) for d in deployments["items"]], now, self.settle_s)
        except (ApiError, KubeUnavailable) as e:
            deployments, unsettled = {"items": []}, [f"the Kubernetes API did not answer ({e})"]
        with self.lock:
            self.window = Window(
                started=now,
                users={},
                spawn_rate=float(getattr(opts, "spawn_rate", None) or 1),
                rate=float(getattr(opts, "rate_per_user", None) or 1),
                latency_ms=int(getattr(opts, "latency_ms", None) or 0),
                deployments=deployments,
                unsettled=unsettled,
            )
            self._seen_events = set()
            self._cursor = self.ticks.seq if self.ticks is not None else 0
            # The window's counter starts with its last read before the swarm: the baseline the swarm's first
            # failures count from (from its first read after the start, a kill whose first failures came
            # before that read would not be the counter's).
            self._keep_probes(now)
        log.info(
            "workshop: a swarm started%s", f" before the release settled: {'; '.join(unsettled)}" if unsettled else " on a settled release"
        )

    def _keep_probes(self, now: float) -> None:
        """The kubelet's probe counter as the poller last read it, into the window's timeline."""
        counts = getattr(self.poller, "probes", None) if self.poller is not None else None
        if counts is not None:
            self.window.timeline.append({"t": round(self.poller.probes_at or now, 3), "kind": "probes", "pods": counts})

    def on_spawned(self) -> None:
        runner = self.runner_of()
        if self.window is None or runner is None:
            return
        # A master runs no users: its own user_classes_count is all zeros; its workers report theirs.
        reported = getattr(runner, "reported_user_classes_count", None)
        counts = dict(reported if reported is not None else getattr(runner, "user_classes_count", None) or {})
        self.window.users = {v: counts.get(user_class(v), 0) for v in self.variants if counts.get(user_class(v))}

    def on_swarm_stop(self, now: float | None = None) -> None:
        if self.window is not None and self.window.stopped is None:
            self.window.stopped = time.time() if now is None else now

    def update_window(self, now: float) -> None:
        w = self.window
        if w is None or w.stopped is not None or now - w.started > WINDOW_KEEP_S:
            return
        runner = self.runner_of()
        if not w.users and runner is not None and getattr(runner, "state", None) == "running":
            self.on_spawned()
        if self.poller is not None and self.poller.error is None:
            w.timeline.append({"t": round(now, 3), "kind": "pods", "pods": self.poller.pods})
            for e in self.poller.events:
                key = (e["uid"], e["count"], e["last"])
                if e["variant"] and key not in self._seen_events and (e["last"] or 0) >= w.started - 60:
                    self._seen_events.add(key)
                    w.timeline.append({"t": round(now, 3), "kind": "event", **e})
            self._keep_probes(now)
        if self.ticks is not None:
            text, self._cursor = self.ticks.after(self._cursor)
            w.history += list(csv.DictReader(io.StringIO(text)))
        stats = getattr(runner, "stats", None)
        if stats is not None:
            w.failures = [
                {"Method": e.method, "Name": e.name, "Error": str(e.error), "Occurrences": e.occurrences} for e in stats.errors.values()
            ]

    # --- the check ---

    def tick(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self.lock:
            if not self.loaded:
                self.load()
            self.follow()
            try:
                deployments = self.api.deployments(self.variants)
                error = None
            except ApiError as e:
                deployments, error = {"items": []}, str(e)
            if self.poller is None:
                error = error or "the Pods tab is off (LIVENESS_LAB_PODS_TAB=off): no pod data"
            elif self.poller.error is not None:
                error = error or self.poller.error
            pods = {"items": self.poller.items if self.poller is not None else []}
            step = self.by_name[self.progress.current]
            expected, render_error = self.expected(step)
            self.release = Release(deployments, pods, expected, error, render_error)
            self.update_window(now)
            self.result = evaluate(step, self.release, self.window, now, self.settle_s)
            mine = self.progress.of(step.name)
            changed = self.progress.last.get("state") != self.result.state or self.progress.last.get("step") != step.name
            if self.result.met and not mine.done:
                mine.done, mine.met_at = True, now
                kills = [k for m in self.result.measured.values() for k in m["livenessKills"]]
                log.info(
                    "workshop: step %s met at +%.1f s of its swarm%s",
                    step.name,
                    self.result.elapsed or 0,
                    f" (first liveness kill at +{min(kills):.1f} s)" if kills else "",
                )
                changed = True
            self.progress.last = {"step": step.name, "state": self.result.state, "reason": self.result.reason, "t": round(now, 1)}
            self.save(force=changed, now=now, periodic=True)

    def _plan(self, step):
        """STEP on the release as Helm has it now: (latest revision, the values STEP runs it with, the --set
        flags from its current values to those); cached per revision and step."""
        release = self.helm.latest()
        if self._rendered and self._rendered[0] == (release["version"], step.name if step else None):
            return self._rendered[1]
        current = release.get("config") or {}
        target = target_values(current, self.start or {}, step, self.keys)
        plan = {"release": release, "target": target, "current": current, "expected": None}
        self._rendered = ((release["version"], step.name if step else None), plan)
        return plan

    def expected(self, step) -> tuple[dict | None, str | None]:
        """Each variant's service container as the release's chart renders it with STEP's values (the
        check's measure of whether the release runs them), or None and why not."""
        try:
            plan = self._plan(step)
            if plan["expected"] is None:
                plan["expected"] = containers(self.helm.render(plan["target"], plan["release"]))
            return plan["expected"], None
        except (ApiError, HelmError) as e:
            return None, str(e)

    def command(self, step, helm_release: str) -> str:
        """The helm upgrade that applies STEP's values to the release as it is now, as a participant types it:
        every value it will have (--reset-values), the same as Skip's."""
        try:
            plan = self._plan(step)
        except (ApiError, HelmError) as e:
            return f"(the command cannot be worked out now: {e})"
        if plan["target"] == plan["current"]:
            return f"(your release already runs these values: nothing to upgrade for {helm_release})"
        flags = " ".join(
            shlex.quote(f) if " " not in f else " ".join(shlex.quote(x) for x in f.split(" ", 1)) for f in set_flags(plan["target"])
        )
        return f"helm upgrade {helm_release} chart -n {self.api.namespace} --reset-values {flags} --wait"

    def _loop(self):
        while True:
            try:
                self.tick()
            except Exception:  # never let the tab take Locust down
                log.exception("Workshop check failed")
            gevent.sleep(EVERY_S)

    def start_checking(self):
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._loop)

    # --- actions ---

    def step(self, name: str):
        if name not in self.by_name:
            raise ActionError(404, "No such step", f"no step {name!r}; the steps are {', '.join(self.names)}")
        return self.by_name[name]

    def stop_swarm(self) -> bool:
        runner = self.runner_of()
        if runner is not None and getattr(runner, "state", None) in BUSY:
            runner.stop()
            self.on_swarm_stop()
            return True
        return False

    def _upgrade(self, step) -> bool:
        """The release upgraded through Helm to STEP's values (None: Reset's); False when it already runs them."""
        if self.start is None:
            why = "no record of the values the release started with: the progress ConfigMap is missing"
            raise ActionError(409, "Start not recorded", why)
        try:
            plan = self._plan(step)
            if plan["target"] == plan["current"]:
                return False
            self.helm.upgrade(plan["target"], plan["release"], f"the Workshop tab: {'skip ' + step.name if step else 'reset'}")
        except ApiError as e:
            raise ActionError(502, "The Kubernetes API refused", str(e)) from e
        except HelmError as e:
            raise ActionError(e.status, "Helm refused" if e.status != 409 else "Helm is busy", str(e)) from e
        self._rendered = None
        return True

    def act(self, name: str, action: str, body: dict | None = None, now: float | None = None) -> dict:
        now = time.time() if now is None else now
        if action not in ACTIONS:
            raise ActionError(
                404, "No such action", f"no action {action!r}; the actions are {', '.join(ACTIONS)} (and POST /liveness-lab/workshop/reset)"
            )
        step = self.step(name)
        with self.lock:
            self.follow()
            mine = self.progress.of(name)
            message = ""
            if action == "select":
                self.progress.current = name
            elif action == "hint":
                mine.hints = min(len(step.hints), mine.hints + 1)
            elif action == "solution":
                mine.solution = True
            elif action == "predict":
                choice = (body or {}).get("choice")
                if step.predict is None:
                    raise ActionError(409, "No question", f"step {name} asks no prediction")
                if choice not in step.predict.choices:
                    raise ActionError(400, "Bad choice", f"choice must be one of: {', '.join(step.predict.choices)}")
                mine.prediction = choice
            elif action == "skip":
                stopped = self.stop_swarm()
                changed = self._upgrade(step)
                mine.skipped_at = now
                self.progress.skips += 1
                self.progress.current = name
                done = "the release was upgraded to this step's values with Helm and is rolling out; "
                message = (
                    (done if changed else "the release already runs this step's values; ")
                    + ("the swarm was stopped; " if stopped else "")
                    + "start a swarm once the check says the release has settled"
                )
                log.info("workshop: skip %s: %s", name, message)
            self.save_or_refuse(now, message and f"the change was applied ({message})")
        if action == "skip":
            self.check_now()
        return {"ok": True, "message": message}

    def reset(self, now: float | None = None) -> dict:
        now = time.time() if now is None else now
        with self.lock:
            self.follow()
            stopped = self.stop_swarm()
            changed = self._upgrade(None)
            self.progress.resets += 1
            self.save_or_refuse(now, "the release was set back to the values it started with" if changed else "")
        message = (
            "the release was upgraded with Helm back to the values the workshop started with (yours that no step sets kept) "
            "and is rolling out"
            if changed
            else "the release already runs the values it started with"
        ) + ("; the swarm was stopped" if stopped else "")
        log.info("workshop: reset: %s", message)
        self.check_now()
        return {"ok": True, "message": message}

    def check_now(self) -> None:
        """The check again at once after Skip or Reset, so what the tab and the window show is the release
        as the action left it, not as the last periodic check (EVERY_S ago) read it."""
        try:
            self.tick()
        except Exception:  # the action itself succeeded; the next periodic check tries again
            log.exception("Workshop check after an action failed")

    # --- what the tab reads ---

    def to_json(self, helm_release: str) -> dict:
        fill = {"namespace": self.api.namespace, "release": helm_release}
        steps = []
        for s in self.steps:
            mine = self.progress.of(s.name)
            told = mine.done or mine.solution
            steps.append(
                {
                    **s.to_json(),
                    "done": mine.done,
                    "metAt": mine.met_at,
                    "skipped": mine.skipped_at is not None,
                    "hintsShown": [h.format_map(_Fill(fill)) for h in s.hints[: mine.hints]],
                    "solution": s.solution.format_map(_Fill(fill | {"command": self.command(s, helm_release)})) if mine.solution else None,
                    "prediction": mine.prediction,
                    "answer": s.predict.answer if (told and s.predict) else None,
                    "lesson": s.scenario.lesson if told else None,
                }
            )
        runner = self.runner_of()
        return {
            "namespace": self.api.namespace,
            "release": helm_release,
            "current": self.progress.current,
            "done": self.progress.done(self.names),
            "total": len(self.names),
            "steps": steps,
            "check": self.result.to_json()
            if self.result is not None
            else {"step": self.progress.current, "state": "unknown", "reason": "not checked yet"},
            "swarm": {"state": getattr(runner, "state", None), "started": self.window.started if self.window else None},
            "store": {"ok": self.store_error is None, "error": self.store_error, "configMap": progress_name(self.api.release)},
            "refresh_s": EVERY_S,
        }

    def window_json(self) -> dict:
        r = self.release
        return {
            "window": self.window.to_json() if self.window else None,
            "release": None
            if r is None
            else {
                "deployments": r.deployments,
                "pods": r.pods,
                "expected": r.expected,
                "renderError": r.render_error,
                "startValues": self.start,
                "error": r.error,
            },
            "step": self.progress.current,
        }


class _Fill(dict):
    """str.format_map that leaves unknown {names} as they are (a hint may show JSON or a shell brace)."""

    def __missing__(self, key):
        return "{" + key + "}"


# Replaced in tests/replay_locustfile.py and the workshop's tests: the recorded release instead of the API,
# and the real helm rendering it without a cluster.
Api = WorkshopApi
Helm = HelmRelease
