"""Records a timeline of liveness-lab's pods, their events and the CPU while a scripted run swarms.

Usage (from locust/, as scripts/demo.sh runs it):
    python -m liveness_lab.report.recorder --out reports/<ts>/timeline.jsonl --duration 400

One JSON object per line, each with ``t`` (epoch seconds, the clock of Locust's stats history) and ``kind``:

- ``pods``: every ``--every`` seconds, the pods (``kube.pod_record``: ready, restarts, last termination);
- ``event``: each new or re-counted event about a pod (``Unhealthy``, ``Killing``, ``BackOff``...);
- ``metrics``: every ``--metrics-every`` seconds, each variant pod's own count of the requests it served
  (``demo_work_latency_seconds_count``, summed over its ``mode`` tag) and of those in flight
  (``demo_requests_in_flight``), and the seconds its JVM has stopped for the collector since it started
  (Micrometer's ``jvm_gc_pause_seconds_sum``, every collector and cause), and its old generation's live
  bytes after the last major collection and size (``liveB``, ``oldMaxB``), read from ``/actuator/prometheus``
  through the API server's pod proxy
  (on the management port when the pod has one),
  with the pod's restart count (a restarted container counts from 0 again); a pod that did not answer
  (a saturated blocking pod often does not) is listed under ``missed`` with the reason. A thread of its
  own, so a pod that keeps the scrape waiting does not delay the pod snapshots;
- ``vthreads``: with each ``metrics`` sample, the virtual-thread scheduler of the pods whose mode runs on
  virtual threads (mounted, queued, parallelism, pool size), from Boot's ``/actuator/info``
  (report.scheduler), the same way;
- ``cpu``: the CPU busy fraction of the machine Docker runs the pods' kind node on, every second, from
  ``/proc/stat`` read inside the node container (``docker exec``): its kernel is that machine's, this
  Linux host with Docker Engine, Docker Desktop's VM on macOS (whose CPUs are not the Mac's), so the
  starvation check looks at the machine the pods run on, never the host's own ``/proc``;
  ``cgroup``: each container's CFS counters from the kernel (``cpu.stat``), every second, read the same
  way in each kind node that runs a variant pod (report.cgroups: cAdvisor's refresh schedule blurs a 15 s
  window; the kernel's counters do not), keyed by pod uid (``pods`` records carry it); and
  ``throttle``: CFS throttling per pod and its memory working set from the kubelet's cAdvisor metrics, when the API allows
  ``nodes/proxy`` (an admin kubeconfig does; the in-cluster Role does not, and the report says so);
- ``probes``: every ``--probes-every`` seconds (a few times a probe period), the kubelet's own probe counter
  of each variant pod (``prober_probe_total`` by probe type and result, and the successful probes'
  duration histogram, from each node's ``/metrics/probes`` through the API server: ``kube.probe_counts``),
  which no event filter thins: report.facts finds every kill in it; needs ``nodes/proxy`` like ``throttle``,
  and when it is refused an ``error`` record says so once and the report says its kills are the events' alone;
- ``gclog``: when a variant pod's container restarts, the GC pause lines of the run that ended (the
  kubelet keeps that one run's log until the next restart): ``report.gc.log_pauses``, each pause's end and
  length, from a JVM that logs its collections (``-Xlog:gc``; none otherwise, and ``pauses`` is empty), so
  the report knows how long a JVM that answered no scrape was stopped before its kill;
- ``clock``: at the start and at the end, the cluster's clock against the host's (``report.clock``),
  so the report judges every time in one clock;
- ``error``: the API did not answer (the run goes on; the report counts the gaps).

Stops after ``--duration`` seconds or on SIGTERM/SIGINT, whichever comes first.
"""

import argparse
import json
import signal
import subprocess
import sys
import threading
import time

from liveness_lab.base.kube import Kube, KubeUnavailable, event_record, metric_samples, pod_record
from liveness_lab.base.variants import SERVICE_PORT, variant_of_pod

from . import cgroups, clock, gc, scheduler
from .node_loop import NodeLoop

# cAdvisor's, per container; the working set is what the kernel's memory limit is held against (an OOM kill).
CADVISOR_METRICS = (
    "container_cpu_cfs_throttled_periods_total",
    "container_cpu_cfs_periods_total",
    "container_cpu_usage_seconds_total",
    "container_memory_working_set_bytes",
)
# The service's own meters (WorkEndpoint): requests to /api/work finished, and those being served now.
SERVED_METRIC, IN_FLIGHT_METRIC = "demo_work_latency_seconds_count", "demo_requests_in_flight"
GC_PAUSE_METRIC = "jvm_gc_pause_seconds_sum"
# The old generation: what its last major collection left live, and its size (Micrometer's JvmGcMetrics:
# "after reclamation", so it moves only when a major collection runs). Live over size is how full the
# heap stays with what the requests in flight hold.
LIVE_METRIC, OLD_MAX_METRIC = "jvm_gc_live_data_size_bytes", "jvm_gc_max_data_size_bytes"
SERVICE_METERS = {
    SERVED_METRIC: "served",
    IN_FLIGHT_METRIC: "inFlight",
    GC_PAUSE_METRIC: "gcPauseS",
    LIVE_METRIC: "liveB",
    OLD_MAX_METRIC: "oldMaxB",
}
# The lines of a killed container's log read for its GC pauses: a JVM collecting back to back logs a line
# a collection, a few thousand in the minutes before a kill at most.
GC_LOG_LINES = 20000
# A scrape waits this long at most: a blocking pod whose event loops are all asleep answers nothing, and
# the next sample is due anyway.
METRICS_TIMEOUT_S = 2.0


def cpu_times(line: str):
    """(busy, total) jiffies of all CPUs from /proc/stat's first line ("cpu  user nice system idle
    iowait ..."), or None when it is not one."""
    fields = line.split()
    if not fields or fields[0] != "cpu":
        return None
    try:
        numbers = [int(x) for x in fields[1:]]
    except ValueError:
        return None
    idle = numbers[3] + (numbers[4] if len(numbers) > 4 else 0)
    return sum(numbers) - idle, sum(numbers)


# Inside the node container, once a second (report.node_loop): /proc/stat's first line.
NODE_CPU_LOOP = "head -n 1 /proc/stat"


def kind_node_container(node: str, docker: str = "docker") -> bool:
    """NODE is a kind node container that the local Docker CLI reaches (kind labels its nodes)."""
    try:
        out = subprocess.run(
            [docker, "inspect", "--format", '{{index .Config.Labels "io.x-k8s.kind.cluster"}}', node],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() not in ("", "<no value>")


class MachineCpu(NodeLoop):
    """The Docker machine's CPU busy fraction, from /proc/stat inside a kind node container, one sample a
    second, handed to ON_SAMPLE(busy) from a thread of its own."""

    def __init__(self, node: str, on_sample, docker: str = "docker"):
        self.on_sample = on_sample
        super().__init__(node, NODE_CPU_LOOP, self._read, docker)

    def _read(self, lines):
        before = None
        for line in lines:
            now = cpu_times(line)
            if now and before and now[1] > before[1]:
                self.on_sample((now[0] - before[0]) / (now[1] - before[1]))
            before = now or before


def parse_throttle(text: str, namespace: str) -> dict:
    """Per pod, the cAdvisor CPU counters and memory working set of its containers in NAMESPACE, each summed
    over them: {pod: {metric: value}}."""
    out = {}
    for name, labels, value in metric_samples(text):
        if name not in CADVISOR_METRICS or labels.get("namespace") != namespace or not labels.get("container"):
            continue
        if labels.get("cpu", "total") != "total":
            continue
        pod = out.setdefault(labels.get("pod", ""), {})
        pod[name] = pod.get(name, 0.0) + value
    return out


def parse_service_metrics(text: str) -> dict:
    """The service's served and in-flight counts, its JVM's GC pauses and its old generation in one
    /actuator/prometheus text, each summed over its label sets (a mode tag; a collector, action and cause):
    {"served": n, "inFlight": n, "gcPauseS": seconds, "liveB": bytes, "oldMaxB": bytes}; a meter missing
    from the text is left out."""
    found = {}
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        key = SERVICE_METERS.get(name)
        if key:
            try:
                found[key] = found.get(key, 0.0) + float(line.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                continue
    return {k: round(v, 3) if k == "gcPauseS" else int(v) for k, v in found.items()}


class Recorder:
    def __init__(
        self,
        out,
        kube: Kube,
        every=1.0,
        events_every=2.0,
        throttle_every=15.0,
        metrics_kube: Kube | None = None,
        metrics_every=2.0,
        probes_every=1.0,
    ):
        self.out, self.kube = out, kube
        self.every, self.events_every, self.throttle_every, self.probes_every = every, events_every, throttle_every, probes_every
        self.nodes: set[str] = set()
        self.probes_ok = True
        # The metrics thread has a client of its own: no connection shared across threads.
        self.metrics_kube, self.metrics_every = metrics_kube, metrics_every
        self.seen_events = set()
        self.restarts_seen: dict[tuple[str, str], int] = {}  # (pod, container): restartCount
        self.gclog_ok = True
        self.node = None
        self.machine_cpu = None
        self.node_cgroups: dict[str, cgroups.NodeCgroups | None] = {}  # per node; None: not a kind node
        self.throttle_ok = True
        self.stopped = False
        self._lock = threading.Lock()

    def write(self, kind, **fields):
        with self._lock:
            self.out.write(json.dumps({"t": round(time.time(), 3), "kind": kind, **fields}) + "\n")
            self.out.flush()

    def metrics(self):
        """One sample of every variant pod's own counters (see the module docstring)."""
        kube = self.metrics_kube
        sampled, missed, threads, threads_missed = {}, {}, {}, {}
        for pod in map(pod_record, kube.pods()):
            if not pod["variant"] or pod["deleting"]:
                continue
            seen = {"variant": pod["variant"], "restarts": pod["restarts"], "t": round(time.time(), 3)}
            port = pod["actuatorPort"] or SERVICE_PORT
            try:
                text = kube.pod_proxy(pod["name"], port, "actuator/prometheus", METRICS_TIMEOUT_S)
                sampled[pod["name"]] = seen | parse_service_metrics(text.decode("utf-8", "replace"))
            except KubeUnavailable as e:
                missed[pod["name"]] = seen | {"message": pod["waiting"] or str(e)}
            if pod["mode"] not in scheduler.VIRTUAL_MODES:
                continue
            seen = seen | {"t": round(time.time(), 3)}
            try:
                body = kube.pod_proxy(pod["name"], port, "actuator/info", METRICS_TIMEOUT_S)
                threads[pod["name"]] = seen | scheduler.parse_info(body)
            except KubeUnavailable as e:
                threads_missed[pod["name"]] = seen | {"message": pod["waiting"] or str(e)}
        self.write("metrics", pods=sampled, missed=missed)
        if threads or threads_missed:
            self.write("vthreads", pods=threads, missed=threads_missed)

    def metrics_loop(self, until):
        while True:
            tick = time.time()
            try:
                self.metrics()
            except KubeUnavailable as e:
                self.write("error", what="metrics", message=str(e))
            if self.stopped or time.time() >= until:
                return  # the last sample is taken after the stop: the run's count is complete
            while not self.stopped and time.time() < min(until, tick + self.metrics_every):
                time.sleep(0.2)

    def pods(self):
        pods = self.kube.pods()
        if pods and not self.node:
            self.node = pods[0].get("spec", {}).get("nodeName")
        records = [pod_record(p) for p in pods]
        self.nodes |= {p["node"] for p in records if p["node"] and p["variant"]}
        self.write("pods", pods=records)
        for pod, record in zip(pods, records, strict=True):
            if record["variant"]:
                self.gc_logs(pod)

    def gc_logs(self, pod: dict):
        """A ``gclog`` record for each container of POD that restarted since the last look."""
        name = pod["metadata"]["name"]
        for c in (pod.get("status") or {}).get("containerStatuses") or []:
            key, count = (name, c["name"]), int(c.get("restartCount") or 0)
            before = self.restarts_seen.setdefault(key, count)
            if count <= before:
                continue
            self.restarts_seen[key] = count
            if not self.gclog_ok:
                continue
            try:
                text = self.kube.previous_log(name, c["name"], GC_LOG_LINES)
            except KubeUnavailable as e:
                # 403: no pods/log (the in-cluster Role's case): said once, not at every restart.
                self.gclog_ok = "(403)" not in str(e)
                self.write("error", what="gclog", message=str(e))
                continue
            self.write("gclog", pod=name, container=c["name"], restarts=count, lines=text.count("\n"), pauses=gc.log_pauses(text))

    def probes(self):
        """One sample of the kubelet's probe counter of every variant pod, from the nodes they run on."""
        if not (self.nodes and self.probes_ok):
            return
        try:
            counts = self.kube.probe_counts(self.nodes)
        except KubeUnavailable as e:
            self.probes_ok = False  # typically 403: no nodes/proxy; said once
            self.write("error", what="probes", message=str(e))
            return
        self.write("probes", pods={pod: c for pod, c in counts.items() if variant_of_pod(pod)})

    def events(self):
        for e in map(event_record, self.kube.events()):
            key = (e["uid"], e["count"], e["last"])
            if e["variant"] and key not in self.seen_events:
                self.seen_events.add(key)
                self.write("event", **e)

    def throttle(self):
        if not (self.node and self.throttle_ok):
            return
        try:
            text = self.kube.node_proxy(self.node, "metrics/cadvisor").decode("utf-8", "replace")
        except KubeUnavailable as e:
            self.throttle_ok = False  # typically 403: no nodes/proxy; said once, not every 15 s
            self.write("error", what="throttle", message=str(e))
            return
        self.write("throttle", pods=parse_throttle(text, self.kube.namespace))

    def clock(self, when: str):
        """The cluster's clock against the host's (report.clock), as a `clock` record."""
        try:
            api_client = self.kube.api_client()
            sample = clock.measure(clock.api_server_second(api_client))
        except Exception as e:  # no answer, no Date header: the report says the clocks were not compared
            self.write("error", what="clock", message=f"{when}: {type(e).__name__}: {e}")
            return
        self.write("clock", when=when, sample=sample.to_json())

    def start_machine_cpu(self):
        """The Docker machine's CPU, once the pods' node is known; said once when it cannot be read."""
        if self.machine_cpu is not None or not self.node:
            return
        if not kind_node_container(self.node):
            self.machine_cpu = False
            self.write(
                "error",
                what="cpu",
                message=f"node {self.node} is not a kind node container this Docker reaches: the machine's CPU is not sampled",
            )
            return
        source = f"/proc/stat of the Docker machine, read in kind node {self.node}"
        self.machine_cpu = MachineCpu(self.node, lambda busy: self.write("cpu", busy=round(busy, 3), source=source))

    def start_node_cgroups(self):
        """The kernel's CFS counters of each node that runs a variant pod, once it is known to be a kind node."""
        for node in sorted(self.nodes - set(self.node_cgroups)):
            if not kind_node_container(node):
                self.node_cgroups[node] = None
                self.write(
                    "error", what="cgroup", message=f"node {node} is not a kind node container this Docker reaches: cAdvisor's reads only"
                )
                continue
            self.node_cgroups[node] = cgroups.NodeCgroups(node, lambda pods, node=node: self.write("cgroup", node=node, pods=pods))

    def run(self, duration):
        started = time.time()
        last_events = last_throttle = last_probes = 0.0
        # "metrics": whether this timeline samples the service's own counters (report.load.records_metrics).
        self.write("start", namespace=self.kube.namespace, metrics=self.metrics_kube is not None)
        self.clock("start")
        sampler = None
        if self.metrics_kube is not None:
            sampler = threading.Thread(target=self.metrics_loop, args=(started + duration,), daemon=True)
            sampler.start()
        while not self.stopped and time.time() - started < duration:
            tick = time.time()
            try:
                self.pods()
                if tick - last_events >= self.events_every:
                    self.events()
                    last_events = tick
                if tick - last_throttle >= self.throttle_every:
                    self.throttle()
                    last_throttle = tick
                if tick - last_probes >= self.probes_every:
                    self.probes()
                    last_probes = tick
            except KubeUnavailable as e:
                self.write("error", what="api", message=str(e))
            self.start_machine_cpu()
            self.start_node_cgroups()
            time.sleep(max(0.0, self.every - (time.time() - tick)))
        # A last look, so restarts that happened in the final second are counted.
        try:
            self.events()
            self.probes()
            self.throttle()
        except KubeUnavailable as e:
            self.write("error", what="api", message=str(e))
        if sampler is not None:
            sampler.join(timeout=3 * METRICS_TIMEOUT_S + 10)
        if self.machine_cpu:
            self.machine_cpu.stop()
        for sampler in filter(None, self.node_cgroups.values()):
            sampler.stop()
        self.clock("end")
        self.write("stop")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="timeline file (JSON lines), appended to")
    parser.add_argument("--duration", type=float, required=True, help="seconds to record at most")
    parser.add_argument("--namespace", default=None, help="default: $LIVENESS_LAB_NAMESPACE or liveness-lab")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between pod snapshots")
    parser.add_argument("--metrics-every", type=float, default=2.0, help="seconds between samples of the service's own counters")
    parser.add_argument("--probes-every", type=float, default=1.0, help="seconds between samples of the kubelet's probe counter")
    args = parser.parse_args(argv)
    with open(args.out, "a", encoding="utf-8") as out:
        recorder = Recorder(
            out,
            Kube(args.namespace),
            every=args.every,
            metrics_kube=Kube(args.namespace),
            metrics_every=args.metrics_every,
            probes_every=args.probes_every,
        )

        def stop(*_):
            recorder.stopped = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        recorder.run(args.duration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
