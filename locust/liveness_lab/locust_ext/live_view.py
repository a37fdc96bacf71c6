"""The data of the web UI's Live tab: per variant, on one time axis since the swarm started, requests/s
answered and failed, latency p50 and p95, Ready pods / total, cumulative restarts, and every liveness
failure, liveness kill and container restart as a marker; served as JSON by ``GET /liveness-lab/live``.

One source, two inputs, no new load on the Kubernetes API: the master's own per-request-name stats (the
workers name each request after its variant, ``variants.request_name``) and the Pods tab's poller
(``pods_tab.PodsPoller``), which already lists pods and events every few seconds. A greenlet samples
both every ``LIVENESS_LAB_LIVE_REFRESH`` seconds (default 2) into a history kept on the master for the
whole swarm, so every browser tab reads the same history from memory, and one opened late sees it all.
A new swarm (Locust's ``test_start``) and Locust's Reset (``reset_stats``) start the history again.

When the Kubernetes API cannot be reached, the JSON says so (``kube.error``), the load series go on,
and Locust carries on. The tab itself is the React component in ``locust/webui/``.
"""

import json
import logging
import os
import time

import gevent
from flask import Blueprint, Response

from liveness_lab.base import DEFAULT_LATENCY_MS, countdown, style
from liveness_lab.base.causes import CLOCK_SLACK_S, Restart, attribute_restarts, counter_kills, event_kills
from liveness_lab.base.probes import Probe
from liveness_lab.base.variants import TABLE, request_name, variant_of_pod

log = logging.getLogger(__name__)

# rps: requests answered per second; fps: failed per second; p50/p95 in ms; ready/pods: None while the
# API does not answer; restarts: cumulative since the history started.
SERIES = ("t", "rps", "fps", "p50", "p95", "ready", "pods", "restarts")
# Runner states in which the history grows (locust.runners' STATE_* values).
SAMPLED_STATES = ("spawning", "running", "stopping")
# The API keeps events an hour (the API server's --event-ttl): what the countdown remembers of them.
KEEP_EVENTS_S = 3600
LABELS = {kind: m["label"] for kind, m in style.MARKERS.items()}


class LiveHistory:
    """The Live tab's history: samples per variant and the probe-event markers, since the swarm started.

    STATS is a Locust ``RequestStats`` (the master's ``environment.runner.stats``), POLLER the Pods tab's
    ``PodsPoller`` or None when that tab is off. Nothing here calls the Kubernetes API.
    """

    def __init__(self, stats_of, poller=None, latency_ms=DEFAULT_LATENCY_MS, every: float | None = None):
        self._stats_of = stats_of  # a callable: the runner's RequestStats now (a runner may be replaced)
        self.poller = poller
        self.latency_ms = latency_ms
        self.every = every or float(os.environ.get("LIVENESS_LAB_LIVE_REFRESH", "2"))
        self._greenlet = None
        # What the events told of the pods' liveness failures and kills, kept across a new history.
        self._reader = countdown.EventReader()
        self._occurrences = []  # countdown.Occurrence
        self._ends = set()  # (pod, time a container of it ended): the API's lastState of each restart seen
        self._probes = {}  # pod -> its liveness Probe, from its spec
        self._thresholds = {}  # pod -> {"Liveness": F, "Startup": F}: the probes that kill, from its spec
        self._records = {}  # (uid, count, last) -> every event update seen, for each restart's own Killing event
        self._counter = {}  # pod -> [(t, {probe type: counts})]: the kubelet's probe counter, where the poller reads it
        self.clear(None)

    def clear(self, started: float | None) -> None:
        """Forget the history; STARTED (epoch seconds) is the new time zero, None until a swarm starts.
        What the events told of the pods' liveness failures and kills is kept: a failure before the swarm
        still counts towards a kill in it."""
        self.started = started
        self.series = {v.name: {k: [] for k in SERIES} for v in TABLE}
        self.markers = {v.name: [] for v in TABLE}
        self._restart_markers = {v.name: [] for v in TABLE}
        self._restart_log = []  # (Restart, its marker) of this history
        self._pods = {}  # pod name -> {"variant", "baseline", "restarts"}
        self._swarmed = set()  # variants with requests in this history
        self.updated = None

    # --- sampling ---

    def sample(self, now: float | None = None) -> None:
        """One sample of every variant's load and pods, and the events new since the last one."""
        now = time.time() if now is None else now
        if self.started is None:
            self.started = now
        stats = self._stats_of()
        pods, events = self._kube_records()
        for p in pods:
            if p.get("livenessPeriodS") and p.get("livenessThreshold"):
                self._probes[p["name"]] = Probe(period_s=p["livenessPeriodS"], failure_threshold=p["livenessThreshold"])
            self._thresholds[p["name"]] = {
                k: p.get(f) for k, f in (("Liveness", "livenessThreshold"), ("Startup", "startupThreshold")) if p.get(f)
            }
            if p.get("lastTerminatedAt"):
                self._ends.add((p["name"], p["lastTerminatedAt"]))
        for e in events:
            self._records.setdefault((e["uid"], e["count"], e["last"]), e | {"t": now})
        self._read_counter()
        self._occurrences += self._reader.read(events, self._probes.get)
        self._mark_restarts(pods, now)
        self._count_down(now)
        for v in TABLE:
            entry = stats.entries.get((request_name(v.name), "GET")) if stats is not None else None
            mine = [p for p in pods if p["variant"] == v.name and not p["deleting"]]
            s = self.series[v.name]
            if entry is not None and entry.num_requests:
                self._swarmed.add(v.name)
            # Locust's own current rates (what its Charts tab plots): the last 10 s of one-second
            # buckets, 2 s back. Answered = all requests less the failed ones.
            rps = entry.current_rps if entry else 0.0
            fps = entry.current_fail_per_sec if entry else 0.0
            s["t"].append(round(now, 1))
            s["rps"].append(round(max(0.0, rps - fps), 2))
            s["fps"].append(round(fps, 2))
            s["p50"].append(entry.get_current_response_time_percentile(0.5) if entry else None)
            s["p95"].append(entry.get_current_response_time_percentile(0.95) if entry else None)
            known = self.poller is not None and self.poller.error is None
            s["ready"].append(sum(p["ready"] for p in mine) if known else None)
            s["pods"].append(len(mine) if known else None)
            s["restarts"].append(self._restarts(v.name) if known else None)
        self.updated = now

    def _read_counter(self) -> None:
        """The poller's latest sample of the kubelet's probe counter, once per sample the poller took."""
        counts, at = getattr(self.poller, "probes", None), getattr(self.poller, "probes_at", None)
        if not counts or at is None:
            return
        for pod, c in counts.items():
            rows = self._counter.setdefault(pod, [])
            if not rows or rows[-1][0] < at:
                rows.append((at, c))

    def _kube_records(self):
        if self.poller is None or self.poller.error is not None:
            return [], []
        return self.poller.pods, self.poller.events

    def _count_down(self, now: float) -> None:
        """The markers since the swarm started: every liveness failure and kill with its place in the
        countdown ("2/3", base/countdown.py: how aggregated and dropped events are counted), the
        failures a kill implies that no event reported, and the restarts."""
        self._occurrences = [o for o in self._occurrences if o.t >= now - KEEP_EVENTS_S]
        shown = {v.name: list(self._restart_markers[v.name]) for v in TABLE}
        for m in countdown.countdown(self._occurrences, sorted(self._ends), self._probes.get):
            variant = variant_of_pod(m.pod)
            if variant in shown and m.t >= self.started - 1:  # event times are whole seconds
                shown[variant].append(
                    {
                        "t": round(m.t, 3),
                        "kind": m.kind,
                        "pod": m.pod,
                        "message": m.message[:300],
                        "label": m.label,
                        "text": countdown.describe(m, self.started, LABELS)[:600],
                    }
                )
        self._prune(now)
        for variant, kills in self._attribute().items():
            shown[variant] += kills
        self.markers = {v: sorted(ms, key=lambda m: (m["t"], m["kind"] == "restart")) for v, ms in shown.items()}

    def _prune(self, now: float) -> None:
        self._records = {k: e for k, e in self._records.items() if (e["last"] or now) >= now - KEEP_EVENTS_S}
        self._counter = {pod: [x for x in rows if x[0] >= now - KEEP_EVENTS_S] for pod, rows in self._counter.items()}

    def _attribute(self) -> dict[str, list[dict]]:
        """Each restart's own cause (base.causes: the probe counter, its own Killing event, its last state),
        said in its marker; and a kill marker for each kill the counter saw that no Killing event told."""
        kills = event_kills(list(self._records.values()))
        added = {v.name: [] for v in TABLE}
        for pod in sorted({r.pod for r, _ in self._restart_log} | set(self._counter)):
            rows = self._counter.get(pod, [])
            counted = counter_kills(pod, rows, self._thresholds.get(pod, {}))
            mine = [(r, m) for r, m in self._restart_log if r.pod == pod]

            def covered(_pod, since, until, rows=rows):
                return (
                    bool(rows) and rows[0][0] <= max(since, self.started or since) + CLOCK_SLACK_S and rows[-1][0] >= until - CLOCK_SLACK_S
                )

            attribute_restarts([r for r, _ in mine], [k for k in kills if k.pod == pod], counted, covered, self.started or 0)
            for r, m in mine:
                m["cause"] = r.cause
                m["text"] = f"{LABELS['restart']} at +{r.t - self.started:.1f} s: {m['message']}: {r.describe()}"[:600]
            told = [k.t for k in kills if k.pod == pod]
            variant = variant_of_pod(pod)
            for k in counted:
                if variant in added and k.t >= (self.started or 0) - 1 and not any(abs(k.t - t) <= 2 * CLOCK_SLACK_S + 1 for t in told):
                    text = (
                        f"{LABELS['kill']} ({k.probe.lower()}) between +{k.since - self.started:.1f} and +{k.t - self.started:.1f} s: "
                        f"the kubelet's probe counter saw {k.failures} failed results in a row; no Killing event told it"
                    )
                    added[variant].append({"t": round(k.t, 3), "kind": "kill", "pod": pod, "message": text, "label": "", "text": text})
        return added

    def _mark_restarts(self, pods: list[dict], now: float) -> None:
        """A marker per container restart seen since the swarm started: a pod's restart count grew. The
        time is when the old container ended (its lastState), else when the count was seen to grow."""
        for p in pods:
            if p["variant"] not in self._restart_markers:
                continue
            known = self._pods.get(p["name"])
            if known is None:
                # A pod there at the first sample keeps the restarts it had as a baseline; one created
                # during the swarm counts all of its restarts.
                first = not any(self.series[v.name]["t"] for v in TABLE)
                known = self._pods[p["name"]] = {
                    "variant": p["variant"],
                    "baseline": p["restarts"] if first else 0,
                    "restarts": p["restarts"] if first else 0,
                    "ended": p["lastTerminatedAt"],
                    "pending": None,
                }
            # A lastState the kubelet has not updated yet still names the previous restart's container.
            ended = p["lastTerminatedAt"]
            fresh = bool(ended) and (known["ended"] is None or ended > known["ended"]) and ended >= self.started - 1
            state = (ended, p["lastTerminatedReason"], p["lastTerminatedExitCode"]) if fresh else (now, None, None)
            if p["restarts"] > known["restarts"]:
                restart = Restart(p["name"], *state)
                marker = {"t": 0.0, "kind": "restart", "pod": p["name"], "label": ""}
                self._describe_restart(restart, marker, p["restarts"])
                self._restart_markers[p["variant"]].append(marker)
                self._restart_log.append((restart, marker))
                self._ends.add((p["name"], restart.t))
                known["restarts"], known["pending"] = p["restarts"], None if fresh else (restart, marker)
                known["ended"] = ended if fresh else known["ended"]
            elif fresh and known["pending"] is not None:
                # The container's lastState caught up with a restart seen before it: its own time and state.
                restart, marker = known["pending"]
                self._ends.discard((p["name"], restart.t))
                restart.t, restart.reason, restart.exit_code = state
                self._describe_restart(restart, marker, known["restarts"])
                self._ends.add((p["name"], restart.t))
                known["pending"], known["ended"] = None, ended

    def _describe_restart(self, r: Restart, marker: dict, count: int) -> None:
        why = ", ".join(str(x) for x in (r.reason, r.exit_code and f"exit code {r.exit_code}") if x)
        marker["t"] = round(r.t, 3)
        marker["message"] = f"container restarted ({why or 'reason not reported'}), restart {count}"
        marker["text"] = f"{LABELS['restart']} at +{r.t - self.started:.1f} s: {marker['message']}"

    def _restarts(self, variant: str) -> int:
        return sum(k["restarts"] - k["baseline"] for k in self._pods.values() if k["variant"] == variant)

    # --- the JSON ---

    def to_json(self, now: float | None = None, state: str | None = None) -> dict:
        """What GET /liveness-lab/live returns (see the module docstring)."""
        now = time.time() if now is None else now
        if self.poller is None:
            kube = {"ok": False, "error": "the Pods tab is off (LIVENESS_LAB_PODS_TAB=off): no pod data", "namespace": None}
        else:
            kube = {
                "ok": self.poller.error is None,
                "error": self.poller.error,
                "namespace": self.poller.kube.namespace,
                "updated": self.poller.updated,
            }
        variants = []
        for v in TABLE:
            s = self.series[v.name]
            swarmed = v.name in self._swarmed
            has_pods = any(s["pods"])
            if not (swarmed or has_pods or self.markers[v.name]):
                continue
            variants.append(
                {
                    "name": v.name,
                    "mode": v.mode,
                    "colour": style.variant_colour(v.name),
                    "swarmed": swarmed,
                    "has_pods": has_pods,
                    "series": s,
                    "markers": self.markers[v.name],
                }
            )
        return {
            "started": self.started,
            "now": round(now, 3),
            "updated": self.updated,
            "state": state,
            "refresh_s": self.every,
            "latency_ms": self.latency_ms,
            "kube": kube,
            "style": {"markers": style.MARKERS, "reference": style.REFERENCE_COLOUR},
            "variants": variants,
        }

    # --- the greenlet ---

    def _loop(self, state_of):
        while True:
            try:
                if state_of() in SAMPLED_STATES:
                    self.sample()
            except Exception:  # never let the tab take Locust down
                log.exception("Live tab sample failed")
            gevent.sleep(self.every)

    def start(self, state_of):
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._loop, state_of)

    def stop(self):
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None


def install(environment, poller=None) -> LiveHistory | None:
    """Adds GET /liveness-lab/live to ENVIRONMENT's web UI (master or local runner) and starts sampling."""
    web_ui = environment.web_ui
    if web_ui is None:
        return None

    def runner_stats():
        return environment.runner.stats if environment.runner is not None else None

    def state():
        return getattr(environment.runner, "state", None)

    history = LiveHistory(runner_stats, poller, getattr(environment.parsed_options, "latency_ms", DEFAULT_LATENCY_MS))

    @environment.events.test_start.add_listener
    def _new_swarm(**_kwargs):
        history.latency_ms = getattr(environment.parsed_options, "latency_ms", DEFAULT_LATENCY_MS)
        history.clear(time.time())

    @environment.events.reset_stats.add_listener
    def _reset(**_kwargs):
        history.clear(time.time() if state() in SAMPLED_STATES else None)

    blueprint = Blueprint("liveness_lab_live", __name__)

    @blueprint.route("/liveness-lab/live")
    @web_ui.auth_required_if_enabled
    def live_json():
        # Compact: the whole history goes to every open tab every refresh (an hour of two variants: 140 KiB).
        return Response(json.dumps(history.to_json(state=state()), separators=(",", ":")), mimetype="application/json")

    web_ui.app.register_blueprint(blueprint)
    history.start(state)
    return history
