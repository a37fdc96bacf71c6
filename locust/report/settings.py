"""The effective settings of liveness-lab's variants, read from their Deployments in the cluster: probe
timings and targets, replicas, container resources, and the environment that sets the latency and the
event loops. scripts/demo.sh records them in run.json as the run starts; the verdict times the liveness
kills against them (verdict.kill_window).

Usage (from locust/, as scripts/demo.sh runs it):
    kubectl get deployments -l app.kubernetes.io/instance=liveness-lab -o json | python -m report.settings

Prints one JSON object keyed by each Deployment's `app.kubernetes.io/component` label (the variant).
"""

import json
import re
import sys

COMPONENT_LABEL = "app.kubernetes.io/component"
# What the kubelet uses when a probe leaves a field out (the API server fills these in anyway).
PROBE_DEFAULTS = {"periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3}
# Reactor Netty's event-loop count, when the JVM is told one (FACTS.md: otherwise max(CPUs, 4)).
_IO_WORKERS = re.compile(r"-Dreactor\.netty\.ioWorkerCount=(\d+)")


def probe_settings(probe: dict | None) -> dict | None:
    """periodSeconds, timeoutSeconds, failureThreshold and where it asks (path, port) of one probe."""
    if not probe:
        return None
    out = {key: int(probe.get(key, default)) for key, default in PROBE_DEFAULTS.items()}
    target = probe.get("httpGet") or probe.get("tcpSocket") or probe.get("grpc") or {}
    out["path"] = target.get("path")
    out["port"] = target.get("port")
    return out


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
        # The environment that shapes the waiting: the mode, the latency knobs, the JVM flags.
        "env": {k: v for k, v in env.items() if k in ("APP_MODE", "JAVA_TOOL_OPTIONS") or "LATENCY" in k},
        "eventLoops": event_loops(env.get("JAVA_TOOL_OPTIONS")),
    }


def settings_by_variant(deployments: dict) -> dict:
    """`kubectl get deployments -o json` (a List) -> {variant: settings}."""
    out = {}
    for d in deployments.get("items", []):
        variant = d["metadata"].get("labels", {}).get(COMPONENT_LABEL)
        if variant:
            out[variant] = deployment_settings(d)
    return dict(sorted(out.items()))


def main() -> int:
    json.dump(settings_by_variant(json.load(sys.stdin)), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
