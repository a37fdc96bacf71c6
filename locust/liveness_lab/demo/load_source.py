"""Where a scripted run's load comes from (``--load host|cluster|auto``):

- ``host``: Locust on this machine, against the variants' NodePorts on 127.0.0.1 (kind maps 30080-30083
  there, kind-config.yaml); the default on kind;
- ``cluster``: the release's own Locust master and workers (``locust_master.py``), driven through the API
  server, swarming the variants' Services from inside the cluster: any cluster, NodePorts or not;
- ``auto`` (the default): ``host`` when every chosen variant's Service is a NodePort on the port the
  variant table gives (the one kind maps) and 127.0.0.1 answers on it, else ``cluster``, saying why.
"""

from __future__ import annotations

import socket

from liveness_lab.base import LOAD_WHERE as CHOICES
from liveness_lab.base.exits import SetupError
from liveness_lab.base.variants import VARIANTS

HOST_TARGET = "host: Locust on this machine, kind NodePorts on 127.0.0.1"


def tcp_answers(port: int, host: str = "127.0.0.1", timeout: float = 1.0) -> str | None:
    """None when HOST:PORT accepts a connection, else why not."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as e:
        return e.strerror or type(e).__name__


def nodeport_problems(services: dict, variants: list[str], release: str, probe=tcp_answers) -> list[str]:
    """Why Locust on the host cannot reach each of VARIANTS on 127.0.0.1:<its nodePort>, one line each;
    empty when it can. SERVICES: the release's Services (a List, API JSON)."""
    # By the component label: the chart's Service names carry its fullname, which is the release's name
    # only when that contains the chart's (release "bob" has bob-liveness-lab-blocking).
    labels = [(s, s["metadata"].get("labels") or {}) for s in services.get("items", [])]
    by_component = {lb.get("app.kubernetes.io/component"): s for s, lb in labels if lb.get("app.kubernetes.io/instance") == release}
    problems = []
    for v in variants:
        svc, want = by_component.get(v), VARIANTS[v]
        if svc is None:
            problems.append(f"{v}: no Service of component {v} in release {release}")
            continue
        name = svc["metadata"]["name"]
        spec = svc.get("spec") or {}
        ports = [p.get("nodePort") for p in spec.get("ports") or [] if p.get("nodePort")]
        if spec.get("type") != "NodePort" or not ports:
            problems.append(f"{v}: Service {name} is {spec.get('type', '?')}, no NodePort")
        elif want not in ports:
            problems.append(f"{v}: Service {name} has nodePort {ports[0]}, not {want} (the port kind maps to 127.0.0.1)")
        else:
            why = probe(want)
            if why:
                problems.append(f"{v}: 127.0.0.1:{want} does not answer ({why})")
    return problems


def choose_load(requested: str, services: dict | None, variants: list[str], release: str, probe=tcp_answers) -> tuple[str, str]:
    """(host|cluster, why): REQUESTED unless it is auto. An explicit host whose NodePorts do not answer is a
    set-up error (its run would only count connection errors)."""
    if requested not in CHOICES:
        raise SetupError(f"--load {requested}: not one of {', '.join(CHOICES)}", "--load host, --load cluster or leave it out (auto)")
    if requested == "cluster":
        return "cluster", "--load cluster"
    problems = (
        nodeport_problems(services, variants, release, probe) if services is not None else ["the release's Services could not be read"]
    )
    if requested == "host":
        if problems:
            raise SetupError(
                f"--load host: the variants are not reachable from this machine: {'; '.join(problems)}",
                "--load cluster (the release's own Locust, through the API server), or scripts/cluster-up.sh",
            )
        return "host", "--load host"
    if problems:
        return "cluster", f"chosen automatically: the variants' NodePorts are not reachable from this machine ({'; '.join(problems)})"
    return "host", "chosen automatically: the variants' NodePorts answer on 127.0.0.1"
