"""The Pods tab of the Locust web UI: per variant, pods Ready/total, restarts, the last liveness failure,
and the liveness probe in force (kind, port, path, timing), so a workshop sees which lesson is on screen.

Built on Locust's documented web-UI extension points (its ``examples/extend_web_ui.py``):
``web_ui.template_args["extended_tabs"/"extended_tables"]`` declare the tab and its columns, and an
``after_request`` hook adds the rows to ``/stats/requests`` as ``extended_stats``, which the UI polls
every few seconds while a swarm runs. The rows come from a background greenlet that lists pods and
events every ``LIVENESS_LAB_PODS_REFRESH`` seconds (default 3), so a slow API never slows the UI.
``GET /liveness-lab/pods`` returns the same rows as JSON.

When the Kubernetes API cannot be reached, the tab says so in its first row and Locust carries on.
Set ``LIVENESS_LAB_PODS_TAB=off`` to leave the tab out.

With ``LIVENESS_LAB_KUBELET_PROBES=on`` (the chart's ``locust.kubeletProbeMetrics.enabled``, which grants
``get`` on ``nodes/proxy``) each refresh also reads the kubelet's own probe counter of the pods' nodes
(``kube.probe_counts``), for the Live tab and the workshop's checks: every probe result, which the
kubelet's events thin out. Without it, or when the API refuses it, they say their kills are the events'.
"""

import json
import logging
import os
import time
from datetime import UTC, datetime

import gevent
from flask import Blueprint, jsonify, request

from liveness_lab.base.kube import Kube, KubeUnavailable, event_record, is_liveness_failure, is_liveness_kill, pod_record
from liveness_lab.base.variants import VARIANTS

log = logging.getLogger(__name__)

TAB_KEY = "pods"
# Column keys are single words: the UI camelCases snake_case keys of the stats response.
COLUMNS = [
    {"key": "name", "title": "Variant"},
    {"key": "ready", "title": "Ready / total"},
    {"key": "restarts", "title": "Restarts"},
    {"key": "probe", "title": "Liveness probe"},
    {"key": "failed", "title": "Last liveness failure"},
    {"key": "message", "title": "Message"},
]


def summarize(pods: list[dict], events: list[dict], now: float | None = None) -> list[dict]:
    """Tab rows from pod and event records (kube.pod_record / kube.event_record), one per variant seen."""
    now = time.time() if now is None else now
    rows = []
    for variant in VARIANTS:
        mine = [p for p in pods if p["variant"] == variant and not p["deleting"]]
        # Kills count too: the kubelet's event spam filter drops the Unhealthy events of a pod that keeps
        # failing (a burst of 25 per pod and type), while its Killing events (type Normal) still show.
        failures = [e for e in events if e["variant"] == variant and (is_liveness_failure(e) or is_liveness_kill(e))]
        if not mine and not failures:
            continue
        last = max(failures, key=lambda e: e["last"] or 0, default=None)
        states = sorted({p["waiting"] for p in mine if p["waiting"]})
        rows.append(
            {
                "name": variant,
                "ready": f"{sum(p['ready'] for p in mine)}/{len(mine)}" + (f" ({', '.join(states)})" if states else ""),
                "restarts": sum(p["restarts"] for p in mine),
                # Pods of one variant share a spec, except for a moment during a rollout: show each kind.
                "probe": "; ".join(sorted({p["liveness"] for p in mine if p.get("liveness")})) or "?",
                "failed": _when(last["last"], now) if last else "none",
                "message": f"{last['pod']}: {last['message']}"[:200] if last else "",
            }
        )
    if not rows:
        rows.append(
            {"name": "(none)", "ready": "0/0", "restarts": 0, "probe": "", "failed": "", "message": "no liveness-lab pods in the namespace"}
        )
    return rows


def unreachable_rows(error: str) -> list[dict]:
    return [{"name": "Kubernetes API unreachable", "ready": "?", "restarts": "?", "probe": "", "failed": "", "message": error}]


def _when(ts: float | None, now: float) -> str:
    if not ts:
        return "?"
    stamp = datetime.fromtimestamp(ts, UTC).strftime("%H:%M:%S UTC")
    return f"{stamp} ({max(0, int(now - ts))} s ago)"


class PodsPoller:
    """Keeps the latest tab rows, refreshed by a greenlet."""

    def __init__(self, kube: Kube | None = None, every: float | None = None):
        self.kube = kube or Kube()
        self.every = every or float(os.environ.get("LIVENESS_LAB_PODS_REFRESH", "3"))
        self.rows = unreachable_rows("not read yet")
        self.updated = None
        # The records behind the rows, for the Live tab (live_view.py): it reads them here, so the
        # Kubernetes API is listed once per refresh, whatever the number of tabs and browsers.
        self.pods: list[dict] = []
        self.events: list[dict] = []
        # The pods as the API listed them, for the workshop's checks (workshop/tab.py: whether the release
        # has settled reads their conditions).
        self.items: list[dict] = []
        self.error: str | None = "not read yet"
        # The kubelet's probe counter of the variant pods ({pod: {probe type: counts}}), when asked to read
        # it and allowed; None otherwise, and probes_error says why.
        self.read_probes = os.environ.get("LIVENESS_LAB_KUBELET_PROBES", "off") == "on"
        self.probes: dict | None = None
        self.probes_at: float | None = None
        self.probes_error: str | None = None if self.read_probes else "not read (locust.kubeletProbeMetrics.enabled is off)"
        self._greenlet = None

    def refresh(self):
        try:
            items = self.kube.pods()
            pods = [pod_record(p) for p in items]
            events = [event_record(e) for e in self.kube.events()]
            self.rows = summarize(pods, events)
            self.items, self.pods, self.events, self.error = items, pods, events, None
            self.refresh_probes(pods)
        except KubeUnavailable as e:
            self.rows = unreachable_rows(str(e))
            self.error = str(e)
        except Exception as e:  # never let the tab take Locust down
            log.exception("Pods tab refresh failed")
            self.rows = unreachable_rows(f"{type(e).__name__}: {e}")
            self.error = f"{type(e).__name__}: {e}"
        self.updated = time.time()

    def refresh_probes(self, pods: list[dict]) -> None:
        """The kubelet's probe counter of the variant pods' nodes, when read_probes; a refusal is kept and
        said (the chart's ClusterRole for nodes/proxy is missing)."""
        if not self.read_probes:
            return
        try:
            counts = self.kube.probe_counts({p["node"] for p in pods if p["node"] and p["variant"]})
        except KubeUnavailable as e:
            self.probes, self.probes_error = None, str(e)
            return
        self.probes = {pod: c for pod, c in counts.items() if pod in {p["name"] for p in pods if p["variant"]}}
        self.probes_at, self.probes_error = time.time(), None

    def _loop(self):
        while True:
            self.refresh()
            gevent.sleep(self.every)

    def start(self):
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._loop)

    def stop(self):
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None


def install(environment, poller: PodsPoller | None = None) -> PodsPoller | None:
    """Adds the Pods tab to ENVIRONMENT's web UI (master or local runner); returns the poller."""
    web_ui = environment.web_ui
    if web_ui is None or os.environ.get("LIVENESS_LAB_PODS_TAB", "on") == "off":
        return None
    poller = poller or PodsPoller()
    web_ui.template_args["extended_tabs"] = [{"title": "Pods", "key": TAB_KEY}]
    web_ui.template_args["extended_tables"] = [{"key": TAB_KEY, "structure": COLUMNS}]

    blueprint = Blueprint("liveness_lab_pods", __name__)

    @blueprint.route("/liveness-lab/pods")
    @web_ui.auth_required_if_enabled
    def pods_json():
        return jsonify({"namespace": poller.kube.namespace, "updated": poller.updated, "rows": poller.rows})

    @web_ui.app.after_request
    def add_pods_rows(response):
        if not request.path.endswith("/stats/requests") or response.status_code != 200 or not response.is_json:
            return response
        body = response.get_json()
        body["extended_stats"] = [*body.get("extended_stats", []), {"key": TAB_KEY, "data": poller.rows}]
        response.set_data(json.dumps(body))
        return response

    web_ui.app.register_blueprint(blueprint)
    poller.start()
    return poller
