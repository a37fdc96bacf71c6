"""The effective settings of liveness-lab's variants, read from their Deployments in the cluster: probe
timings and targets, replicas, container resources, and the environment that sets the latency, the
event loops and Tomcat's worker threads. scripts/demo.sh records them in run.json as the run starts; the verdict times the first
liveness kill against them (report.kills.kill_window).

Usage (from locust/, as scripts/demo.sh runs it):
    kubectl get deployments -l app.kubernetes.io/instance=liveness-lab -o json | python -m liveness_lab.report.settings

Prints one JSON object keyed by each Deployment's `app.kubernetes.io/component` label (the variant).
"""

import json
import re
import sys
from dataclasses import dataclass

from liveness_lab.base.probes import Probe, service_container

COMPONENT_LABEL = "app.kubernetes.io/component"
# Reactor Netty's event-loop count, when the JVM is told one (otherwise max(CPUs, 4): docs/sources.md,
# "Reactor Netty event loops").
_IO_WORKERS = re.compile(r"-Dreactor\.netty\.ioWorkerCount=(\d+)")


def event_loops(java_tool_options: str | None) -> int | None:
    """The -Dreactor.netty.ioWorkerCount in JAVA_TOOL_OPTIONS (the last one wins, as in the JVM)."""
    found = _IO_WORKERS.findall(java_tool_options or "")
    return int(found[-1]) if found else None


def deployment_settings(deployment: dict) -> dict:
    """The settings of one Deployment's first container (the service)."""
    spec = deployment["spec"]
    container = service_container(deployment) or {}
    env = {e["name"]: e.get("value") for e in container.get("env", []) if "value" in e}
    return {
        "replicas": spec.get("replicas", 1),
        **{key: _recorded(container.get(f"{key}Probe")) for key in ("liveness", "readiness", "startup")},
        "resources": container.get("resources", {}),
        # The environment that shapes the waiting: the mode, the latency knobs, the JVM flags, Tomcat's pool.
        "env": {k: v for k, v in env.items() if k in ("APP_MODE", "JAVA_TOOL_OPTIONS") or "LATENCY" in k or k.startswith("SERVER_TOMCAT_")},
        "eventLoops": event_loops(env.get("JAVA_TOOL_OPTIONS")),
        # server.tomcat.threads.max of a servlet variant (the chart's servlet.threadsMax).
        "tomcatThreads": int(env["SERVER_TOMCAT_THREADS_MAX"]) if str(env.get("SERVER_TOMCAT_THREADS_MAX") or "").isdigit() else None,
    }


def _recorded(spec: dict | None) -> dict | None:
    probe = Probe.from_spec(spec)
    return probe.to_json() if probe else None


def settings_by_variant(deployments: dict) -> dict:
    """`kubectl get deployments -o json` (a List) -> {variant: settings}."""
    out = {}
    for d in deployments.get("items", []):
        variant = d["metadata"].get("labels", {}).get(COMPONENT_LABEL)
        if variant:
            out[variant] = deployment_settings(d)
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class VariantSettings:
    """What run.json recorded of one variant's Deployment (report.settings)."""

    liveness: Probe | None
    readiness: Probe | None
    startup: Probe | None
    replicas: int | None
    resources: dict
    env: dict
    event_loops: int | None
    tomcat_threads: int | None = None

    @classmethod
    def from_json(cls, s: dict):
        return cls(
            liveness=Probe.from_json(s.get("liveness")),
            readiness=Probe.from_json(s.get("readiness")),
            startup=Probe.from_json(s.get("startup")),
            replicas=s.get("replicas"),
            resources=s.get("resources") or {},
            env=s.get("env") or {},
            event_loops=s.get("eventLoops"),
            tomcat_threads=s.get("tomcatThreads"),
        )


def run_settings(run: dict) -> dict[str, VariantSettings] | None:
    """Per variant, the settings run.json recorded; None where it has none (the API did not answer)."""
    recorded = run.get("settings")
    if not isinstance(recorded, dict):
        return None
    return {v: VariantSettings.from_json(s) for v, s in recorded.items()}


def main() -> int:
    json.dump(settings_by_variant(json.load(sys.stdin)), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
