"""What the cluster's kubelets run with, where a scenario needs it (a scenario's `kubelet`, base.scenario):
read from each node's own configuration, `GET /api/v1/nodes/<node>/proxy/configz` (what the kubelet
loaded, its KubeletConfiguration with defaults applied; needs `nodes/proxy`, which kind's admin
kubeconfig has).

maxContainerRestartPeriod is `crashLoopBackOff.maxContainerRestartPeriod` (KEP-5593, beta and on by
default from Kubernetes 1.35): the cap of the CrashLoopBackOff delay, 300 s when the kubelet sets none.
On kind, `scripts/cluster-up.sh --max-restart-period SECONDS` sets it (docs/lab.md, "The back-off cap").
"""

import json
import re

# The kubelet's own cap when its configuration names none (pkg/kubelet: MaxContainerBackOff).
DEFAULT_MAX_RESTART_PERIOD_S = 300
_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)")
_UNITS = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


class KubeletUnreadable(Exception):
    """A node's configuration could not be read."""


def go_duration_s(text: str) -> float:
    """Seconds of a Go duration as the kubelet prints one: "1m0s", "300s", "1m30s", "2.5m"."""
    text = str(text).strip()
    parts = _GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a Go duration: {text!r}")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def settings(configz: dict) -> dict:
    """What a scenario may ask of one kubelet, from its /configz answer ({"kubeletconfig": {...}})."""
    config = configz.get("kubeletconfig") or {}
    period = (config.get("crashLoopBackOff") or {}).get("maxContainerRestartPeriod")
    return {"maxContainerRestartPeriod": round(go_duration_s(period)) if period else DEFAULT_MAX_RESTART_PERIOD_S}


def read(api) -> dict[str, dict]:
    """Per node, settings() of its kubelet (API: demo.release.ClusterApi's core client)."""
    try:
        nodes = [n.metadata.name for n in api.core.list_node(_request_timeout=api.timeout).items]
        out = {}
        for node in nodes:
            answer = api.core.connect_get_node_proxy_with_path(node, "configz", _preload_content=False, _request_timeout=api.timeout)
            out[node] = settings(json.loads(answer.data))
        return out
    except (ValueError, KeyError) as e:
        raise KubeletUnreadable(f"a node's /configz did not parse: {e}") from e
    except Exception as e:  # 403 without nodes/proxy, the API gone
        raise KubeletUnreadable(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__) from e


def unmet(wanted: dict, found: dict[str, dict]) -> list[str]:
    """What the nodes FOUND lack of WANTED, one line per node and setting; empty when every node has it."""
    return [
        f"node {node}: {key} {have.get(key)} s, the scenario needs {value} s"
        for node, have in sorted(found.items())
        for key, value in wanted.items()
        if have.get(key) != value
    ]


def how_to_get(wanted: dict) -> str:
    """The command that brings up kind's cluster with WANTED."""
    period = wanted.get("maxContainerRestartPeriod")
    option = "" if period in (None, DEFAULT_MAX_RESTART_PERIOD_S) else f" --max-restart-period {period}"
    return f"scripts/cluster-down.sh && scripts/cluster-up.sh{option}"
