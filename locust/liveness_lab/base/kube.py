"""Reads liveness-lab's pods and their events from the Kubernetes API, as plain JSON-like dicts.

Used by the Pods tab (``locust_ext/pods_tab.py``) and the scripted run's recorder (``report/recorder.py``). It needs
only ``get``/``list``/``watch`` on ``pods`` and ``events`` in its namespace (the chart's Role for Locust).

Configuration, first that works: the pod's service account (``load_incluster_config``), then the
kubeconfig (``$KUBECONFIG`` or ``~/.kube/config``, context ``$LIVENESS_LAB_KUBE_CONTEXT`` or the
current one) for runs on the host. The namespace is ``coordinates.namespace()``:
``$LIVENESS_LAB_NAMESPACE``, else the service account's namespace, else ``liveness-lab``.

Everything past ``Kube.pods()``/``Kube.events()`` works on the API's own JSON (camelCase keys, as
``kubectl get -o json`` prints it), so fixtures recorded from a real cluster drive the tests.
"""

import logging
import os
import re
from datetime import UTC, datetime

from . import coordinates
from .probes import container_env, container_liveness, container_ports, container_probe
from .variants import POD_SELECTOR, variant_of_pod

# urllib3 logs a warning per retry: an unreachable API is shown in the tab, not in Locust's log every 3 s.
logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
# Short, so an unreachable API shows up in the tab within seconds instead of hanging a refresh.
REQUEST_TIMEOUT_S = float(os.environ.get("LIVENESS_LAB_KUBE_TIMEOUT", "3"))


class KubeUnavailable(Exception):
    """No configuration, or the API does not answer: said in the UI and the report, never fatal."""


class Kube:
    """A lazily connected CoreV1 client for one namespace."""

    def __init__(self, namespace: str | None = None):
        self._namespace = namespace
        self._api = None
        self.source = None  # "in-cluster" or "kubeconfig", once connected

    @property
    def namespace(self) -> str:
        return self._namespace or coordinates.namespace()

    def _connect(self):
        if self._api is not None:
            return self._api
        # Imported here so that the locustfile loads (and swarms) even where the client is broken.
        from kubernetes import client, config

        try:
            config.load_incluster_config()
            self.source = "in-cluster"
        except config.ConfigException:
            try:
                # LIVENESS_LAB_KUBE_CONTEXT: scripts/demo.sh pins kind's context; default: the current one.
                # KUBECONFIG as it is now: the client reads it once, when it is first imported.
                config.load_kube_config(config_file=os.environ.get("KUBECONFIG"), context=coordinates.named_context())
                self.source = "kubeconfig"
            except Exception as e:  # missing file, bad YAML, no current context...
                raise KubeUnavailable(f"no Kubernetes configuration (in-cluster or kubeconfig): {e}") from e
        # One retry, not urllib3's three: an unreachable API should show in the tab within seconds.
        cfg = client.Configuration.get_default_copy()
        cfg.retries = 1
        self._api = client.CoreV1Api(client.ApiClient(cfg))
        return self._api

    def api_client(self):
        """The connected client's ApiClient (report.clock asks the API server for its Date)."""
        return self._connect().api_client

    def _call(self, what, fn, **kwargs):
        api = self._connect()
        try:
            result = fn(api)(self.namespace, _request_timeout=REQUEST_TIMEOUT_S, **kwargs)
        except Exception as e:  # connection refused, timeout, 403...
            raise KubeUnavailable(f"listing {what} in namespace {self.namespace} failed: {_short(e)}") from e
        return api.api_client.sanitize_for_serialization(result).get("items", [])

    def pods(self) -> list[dict]:
        """The chart's pods (label app.kubernetes.io/name=liveness-lab), as API JSON."""
        return self._call("pods", lambda api: api.list_namespaced_pod, label_selector=POD_SELECTOR)

    def events(self) -> list[dict]:
        """Events about pods in the namespace, as API JSON."""
        return self._call("events", lambda api: api.list_namespaced_event, field_selector="involvedObject.kind=Pod")

    def pod_proxy(self, pod: str, port: int, path: str, timeout_s: float) -> bytes:
        """GET a pod's own endpoint through the API server (pods/proxy: the recorder's view of the service's
        metrics). TIMEOUT_S is short: a saturated blocking pod may not answer at all."""
        api = self._connect()
        try:
            resp = api.connect_get_namespaced_pod_proxy_with_path(
                f"{pod}:{port}", self.namespace, path, _preload_content=False, _request_timeout=timeout_s
            )
        except Exception as e:
            raise KubeUnavailable(f"pod proxy {pod}:{port}/{path} failed: {_short(e)}") from e
        return resp.data

    def node_proxy(self, node: str, path: str) -> bytes:
        """GET a kubelet endpoint through the API server (nodes/proxy, cluster-scoped: the recorder's CPU
        check and the kubelet's probe counter; kind's admin kubeconfig has it, the chart's Locust only with
        ``kubeletProbeMetrics.enabled``)."""
        api = self._connect()
        try:
            resp = api.connect_get_node_proxy_with_path(node, path, _preload_content=False, _request_timeout=REQUEST_TIMEOUT_S * 3)
        except Exception as e:
            raise KubeUnavailable(f"node proxy {node}/{path} failed: {_short(e)}") from e
        return resp.data

    def previous_log(self, pod: str, container: str, tail_lines: int) -> str:
        """The last TAIL_LINES lines of CONTAINER's previous run in POD (the one its last restart ended), each
        with the container runtime's timestamp: the kubelet keeps that one run's log until the next restart."""
        api = self._connect()
        try:
            return api.read_namespaced_pod_log(
                pod,
                self.namespace,
                container=container,
                previous=True,
                timestamps=True,
                tail_lines=tail_lines,
                _request_timeout=REQUEST_TIMEOUT_S * 3,
            )
        except Exception as e:
            raise KubeUnavailable(f"previous log of {pod}/{container} failed: {_short(e)}") from e

    def probe_counts(self, nodes) -> dict:
        """The kubelet's own probe counter of this namespace's pods on NODES (probe_counts of each node's
        ``/metrics/probes``), merged: {pod: {probe type: {...}}}."""
        out = {}
        for node in sorted(set(nodes)):
            out |= probe_counts(self.node_proxy(node, "metrics/probes").decode("utf-8", "replace"), self.namespace)
        return out


def _short(e: Exception) -> str:
    """One line: the exception's kind, where it happened and why (urllib3 nests the cause at the end)."""
    text = str(e).strip().splitlines()
    first = f"{type(e).__name__}: {text[0] if text else ''}"
    return first if len(first) <= 200 else f"{first[:110]} ... {first[-80:]}"


def parse_time(value) -> float | None:
    """API timestamp ('2026-11-22T12:06:16Z' or with fractions) -> epoch seconds."""
    if not value:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(UTC).timestamp()


def pod_record(pod: dict) -> dict:
    """What the tab and the report need of one pod (API JSON) in one flat dict."""
    meta = pod.get("metadata", {})
    status = pod.get("status", {})
    containers = status.get("containerStatuses") or []
    last_terminated = {}
    for c in containers:
        last_terminated = (c.get("lastState") or {}).get("terminated") or last_terminated
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    liveness, startup = container_probe(pod, "Liveness"), container_probe(pod, "Startup")
    waiting = next(((c.get("state") or {}).get("waiting") for c in containers if (c.get("state") or {}).get("waiting")), None)
    running = next(((c.get("state") or {}).get("running") for c in containers if (c.get("state") or {}).get("running")), None)
    return {
        "name": meta.get("name", ""),
        "uid": meta.get("uid"),  # the kernel's cgroups name the pod by it (report.cgroups)
        "variant": variant_of_pod(meta.get("name", ""), meta.get("labels")),
        "phase": status.get("phase"),
        "reason": status.get("reason"),  # "Evicted" for an evicted pod
        "ready": conditions.get("Ready") == "True",
        "restarts": sum(int(c.get("restartCount") or 0) for c in containers),
        "waiting": (waiting or {}).get("reason"),  # e.g. CrashLoopBackOff
        "lastTerminatedReason": last_terminated.get("reason"),  # "Error" after SIGTERM, "OOMKilled"...
        "lastTerminatedExitCode": last_terminated.get("exitCode"),
        "lastTerminatedAt": parse_time(last_terminated.get("finishedAt")),
        # The running container's start: after a restart, minus lastTerminatedAt, the back-off's wait.
        "startedAt": parse_time((running or {}).get("startedAt")),
        # The kubelet's word that the running container passed its startup probe (containerStatuses[].started);
        # kubernetes#141155: on 1.35-1.37 a container restarted after a liveness kill inherits true from the one killed.
        "started": next((c.get("started") for c in containers if (c.get("state") or {}).get("running")), None),
        "deleting": bool(meta.get("deletionTimestamp")),
        "node": (pod.get("spec") or {}).get("nodeName"),  # whose kubelet probes it
        "liveness": container_liveness(pod),  # its liveness probe in one line, None without a spec
        # What decides a kill, for the countdown (base/countdown.py); None without a spec.
        "livenessPeriodS": liveness.period_s if liveness else None,
        "livenessThreshold": liveness.failure_threshold if liveness else None,
        "startupThreshold": startup.failure_threshold if startup else None,
        # Where /actuator answers when the chart moved it to the management server (probes.target:
        # management, the container port named so); None: on the main port.
        "actuatorPort": container_ports(pod).get("management"),
        "mode": container_env(pod, "APP_MODE"),  # the service's mode (the chart sets APP_MODE); None: not the chart's
    }


def event_record(event: dict) -> dict:
    """One event (API JSON) flattened; `last` is when it last happened (events aggregate with `count`)."""
    obj = event.get("involvedObject", {})
    first = parse_time(event.get("firstTimestamp") or event.get("eventTime"))
    last = parse_time(event.get("lastTimestamp") or (event.get("series") or {}).get("lastObservedTime")) or first
    return {
        "uid": event.get("metadata", {}).get("uid") or event.get("metadata", {}).get("name"),
        "pod": obj.get("name", ""),
        "variant": variant_of_pod(obj.get("name", "")),
        "reason": event.get("reason"),
        "type": event.get("type"),
        "message": (event.get("message") or "").strip(),
        "count": int(event.get("count") or (event.get("series") or {}).get("count") or 1),
        "first": first,
        "last": last,
    }


def is_liveness_failure(event: dict) -> bool:
    """An `Unhealthy` event from the liveness probe (kubelet: "Liveness probe failed: ...")."""
    return event.get("reason") == "Unhealthy" and event.get("message", "").startswith("Liveness probe failed")


def is_liveness_kill(event: dict) -> bool:
    """A `Killing` event for a failed liveness probe ("Container X failed liveness probe, will be restarted")."""
    return killed_by(event) == "Liveness"


def killed_by(event: dict) -> str | None:
    """The probe a `Killing` event names as the cause of a restart, "Liveness" or "Startup" ("Container X
    failed startup probe, will be restarted"); None for any other event ("Stopping container X": the pod
    is being deleted)."""
    if event.get("reason") != "Killing":
        return None
    message = event.get("message", "")
    return next((probe for probe in ("Liveness", "Startup") if f"failed {probe.lower()} probe" in message), None)


# One sample of Prometheus' text format: name{label="value",...} value
_SAMPLE = re.compile(r"^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def metric_samples(text: str):
    """(name, labels, value) of each sample line of a Prometheus text exposition (comments skipped)."""
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m or line.startswith("#"):
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        yield m.group(1), dict(_LABEL.findall(m.group(2) or "")), value


# The kubelet's probe results (pkg/kubelet/prober/prober_manager.go, ProberResults and ProberDuration): every
# probe run counts once by its result, successful, failed or unknown, whatever the event recorder then
# drops; the duration histogram observes successful and unknown results only (worker.go's doProbe).
PROBE_TOTAL, PROBE_DURATION = "prober_probe_total", "prober_probe_duration_seconds"


def probe_counts(text: str, namespace: str) -> dict:
    """The probe counter of NAMESPACE's pods in a kubelet's /metrics/probes text: {pod: {probe type
    ("Liveness", "Readiness", "Startup"): {"successful": n, "failed": n, "unknown": n, "uid": pod uid,
    "seconds": the summed durations of the successful and unknown results, "timed": how many}}}. The
    kubelet's duration histogram has a single bucket (+Inf), so its sum and count are all it tells: between
    two samples a probe period apart, one result's own duration."""
    out = {}
    for name, labels, value in metric_samples(text):
        if labels.get("namespace") != namespace or not labels.get("pod") or not labels.get("probe_type"):
            continue
        counts = out.setdefault(labels["pod"], {}).setdefault(labels["probe_type"], {})
        if name == PROBE_TOTAL and labels.get("result"):
            counts[labels["result"]] = counts.get(labels["result"], 0) + int(value)
            counts["uid"] = labels.get("pod_uid")
        elif name == PROBE_DURATION + "_sum":
            counts["seconds"] = value
        elif name == PROBE_DURATION + "_count":
            counts["timed"] = int(value)
    return out
