"""The effective settings of liveness-lab's variants, read from their Deployments in the cluster: probe
timings and targets, replicas, container resources, and the environment that sets the latency, the
event loops and Tomcat's worker threads. scripts/demo.sh records them in run.json as the run starts; the verdict times the first
liveness kill against them (kill_window).

Usage (from locust/, as scripts/demo.sh runs it):
    kubectl get deployments -l app.kubernetes.io/instance=liveness-lab -o json | python -m liveness_lab.report.settings

Prints one JSON object keyed by each Deployment's `app.kubernetes.io/component` label (the variant).
"""

import json
import re
import sys
from dataclasses import dataclass

from liveness_lab.base import DEFAULT_LATENCY_MS
from liveness_lab.base.probes import probe_settings

COMPONENT_LABEL = "app.kubernetes.io/component"
# Reactor Netty's event-loop count, when the JVM is told one (otherwise max(CPUs, 4): docs/sources.md,
# "Reactor Netty event loops").
_IO_WORKERS = re.compile(r"-Dreactor\.netty\.ioWorkerCount=(\d+)")
# Event timestamps are whole seconds; a restart's own time comes from the container's finishedAt.
CLOCK_SLACK_S = 2.0


def event_loops(java_tool_options: str | None) -> int | None:
    """The -Dreactor.netty.ioWorkerCount in JAVA_TOOL_OPTIONS (the last one wins, as in the JVM)."""
    found = _IO_WORKERS.findall(java_tool_options or "")
    return int(found[-1]) if found else None


def deployment_settings(deployment: dict) -> dict:
    """The settings of one Deployment's first container (the service)."""
    spec = deployment["spec"]
    container = spec["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container.get("env", []) if "value" in e}
    return {
        "replicas": spec.get("replicas", 1),
        "liveness": probe_settings(container.get("livenessProbe")),
        "readiness": probe_settings(container.get("readinessProbe")),
        "startup": probe_settings(container.get("startupProbe")),
        "resources": container.get("resources", {}),
        # The environment that shapes the waiting: the mode, the latency knobs, the JVM flags, Tomcat's pool.
        "env": {k: v for k, v in env.items() if k in ("APP_MODE", "JAVA_TOOL_OPTIONS") or "LATENCY" in k or k.startswith("SERVER_TOMCAT_")},
        "eventLoops": event_loops(env.get("JAVA_TOOL_OPTIONS")),
        # server.tomcat.threads.max of a servlet variant (the chart's servlet.threadsMax).
        "tomcatThreads": int(env["SERVER_TOMCAT_THREADS_MAX"]) if str(env.get("SERVER_TOMCAT_THREADS_MAX") or "").isdigit() else None,
    }


def settings_by_variant(deployments: dict) -> dict:
    """`kubectl get deployments -o json` (a List) -> {variant: settings}."""
    out = {}
    for d in deployments.get("items", []):
        variant = d["metadata"].get("labels", {}).get(COMPONENT_LABEL)
        if variant:
            out[variant] = deployment_settings(d)
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class ProbeSettings:
    period_s: int
    timeout_s: int
    failure_threshold: int
    path: str | None = None
    port: str | int | None = None
    kind: str = "httpGet"  # run.json before it recorded the kind: the chart's probes were all httpGet

    @classmethod
    def from_json(cls, probe: dict | None):
        if not probe:
            return None
        return cls(
            probe["periodSeconds"],
            probe["timeoutSeconds"],
            probe["failureThreshold"],
            probe.get("path"),
            probe.get("port"),
            probe.get("type") or "httpGet",
        )

    def describe(self) -> str:
        where = f" {self.path or ''} on {self.port}" if self.port is not None else ""
        if self.kind != "httpGet":
            where = f" {self.kind}" + (f" on {self.port}" if self.port is not None else "")
        return f"every {self.period_s} s, {self.timeout_s} s timeout, {self.failure_threshold} failures{where}"


@dataclass(frozen=True)
class VariantSettings:
    """What run.json recorded of one variant's Deployment (report.settings)."""

    liveness: ProbeSettings | None
    readiness: ProbeSettings | None
    startup: ProbeSettings | None
    replicas: int | None
    resources: dict
    env: dict
    event_loops: int | None
    tomcat_threads: int | None = None

    @classmethod
    def from_json(cls, s: dict):
        return cls(
            liveness=ProbeSettings.from_json(s.get("liveness")),
            readiness=ProbeSettings.from_json(s.get("readiness")),
            startup=ProbeSettings.from_json(s.get("startup")),
            replicas=s.get("replicas"),
            resources=s.get("resources") or {},
            env=s.get("env") or {},
            event_loops=s.get("eventLoops"),
            tomcat_threads=s.get("tomcatThreads"),
        )


def run_settings(run: dict) -> dict[str, VariantSettings] | None:
    """Per variant, the settings run.json recorded; None for a run recorded before it did."""
    recorded = run.get("settings")
    if not isinstance(recorded, dict):
        return None
    return {v: VariantSettings.from_json(s) for v, s in recorded.items()}


@dataclass(frozen=True)
class KillWindow:
    """When the first liveness kill may come, in seconds after the load start."""

    earliest_s: float  # (F-1)*P + T
    latest_s: float  # F*P + T
    early_slack_s: float
    late_slack_s: float
    probe: ProbeSettings

    @property
    def low(self) -> float:
        return self.earliest_s - self.early_slack_s

    @property
    def high(self) -> float:
        return self.latest_s + self.late_slack_s

    def contains(self, seconds: float) -> bool:
        return self.low <= seconds <= self.high

    def describe(self) -> str:
        p = self.probe
        return (
            f"{self.low:.0f}-{self.high:.0f} s: (F-1)*P+T {self.earliest_s:.0f} s to F*P+T {self.latest_s:.0f} s "
            f"(P {p.period_s} s, T {p.timeout_s} s, F {p.failure_threshold}), slack {self.early_slack_s:.0f} s early, "
            f"{self.late_slack_s:.0f} s late"
        )


def kill_window(probe: ProbeSettings, event_loops: int | None, run: dict, tomcat_threads: int | None = None) -> KillWindow:
    """The window of the first liveness kill, in seconds after the load start.

    docs/sources.md, "Kubelet probes": once the event loops are saturated, the kubelet decides the kill between
    (F-1)*P + T and F*P + T later (F failureThreshold, P periodSeconds, T timeoutSeconds of the liveness
    probe): where in its period the probe clock stands when saturation comes is unknown, hence the width P.
    Saturation is timed from the load start, not from the first failed probe: that failure is already T
    into the window and its kill comes exactly (F-1)*P after it, so timing from it would test nothing. The
    load start comes a little before saturation, so the window gets a slack: CLOCK_SLACK_S early (event
    times are whole seconds), and late CLOCK_SLACK_S plus the time the ramp takes to put one request on
    each event loop (users start evenly over the ramp, each with one request in flight at most; the whole
    ramp when the event-loop count is not known). On Tomcat (TOMCAT_THREADS, a servlet variant) a probe
    waits its turn in the pool's FIFO queue: it times out once more than threads x T / L requests wait
    ahead of it, so saturation comes with threads x (1 + T / L) users in flight.
    """
    p, t, f = probe.period_s, probe.timeout_s, probe.failure_threshold
    ramp, users = float(run["phases"]["ramp"]), int(run["users_per_variant"])
    if tomcat_threads:
        latency_s = float(run.get("latency_ms") or DEFAULT_LATENCY_MS) / 1000
        saturating = tomcat_threads * (1 + t / latency_s) if latency_s > 0 else None
    else:
        saturating = event_loops
    # The ramp starts users evenly; the loops (or threads) are all held once there are that many users.
    to_saturation = ramp if not saturating else ramp * min(1.0, saturating / users)
    return KillWindow((f - 1) * p + t, f * p + t, CLOCK_SLACK_S, CLOCK_SLACK_S + to_saturation, probe)


def main() -> int:
    json.dump(settings_by_variant(json.load(sys.stdin)), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
