"""Your own service (issue 68), its first part: what the lab's measurement would do to a Deployment it did not
deploy, planned from the Deployment, its pods and the Services of its namespace as the API gives them (JSON),
before anything is created. The load itself and its recording are the next part; this one decides

- which container is measured: the first with a liveness probe, else the first with a port, else the first;
- where the load goes: the Deployment's own Service (the first whose selector its pod template's labels
  meet), on the Service port given (a number or a name) or else the one that reaches the container's port
  its probes ask, or the first; the path given, or "/"; a Deployment no Service selects is refused, and so
  is one with nothing that says it answers HTTP (no httpGet probe, no port named http) unless a path is given;
- the steps: 1, 2, 4, ... users up to the maximum, each held for the liveness probe's F x P + T (what a
  kill takes once the probe fails: the kill window's end) plus a margin, so that a step that saturates the
  service shows its kill before the next one starts; a Deployment without a liveness probe is held to
  Kubernetes' defaults (P 10 s, T 1 s, F 3) and the plan says so;
- whether it needs --yes: every context but kind's (``kind-*``).

Every refusal is a PlanError whose text names what is missing and what to give instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from liveness_lab.base.probes import Probe
from liveness_lab.base.probes import describe as describe_probe

# Kubernetes' own defaults for a probe that does not set them (the API's: periodSeconds 10, timeoutSeconds 1,
# failureThreshold 3), which a Deployment without a liveness probe is held to, to size the steps.
DEFAULT_PROBE = Probe(period_s=10, timeout_s=1, failure_threshold=3)
# Seconds added to each step's hold beyond F x P + T: the kill's event, and the restart it starts, seen.
STEP_MARGIN_S = 10
MAX_USERS = 64


class PlanError(ValueError):
    """What the plan cannot be made of, and what to give instead."""


@dataclass(frozen=True)
class Step:
    users: int
    hold_s: int


@dataclass(frozen=True)
class Target:
    context: str
    namespace: str
    deployment: str
    container: str
    liveness: Probe | None
    readiness: Probe | None
    startup: Probe | None
    service: str
    port: int
    path: str
    method: str = "GET"

    @property
    def url(self) -> str:
        """Where the load goes, from inside the cluster."""
        return f"http://{self.service}.{self.namespace}.svc:{self.port}{self.path}"


def measured_container(deployment: dict) -> dict:
    """The Deployment's container the measurement is about: the first with a liveness probe, else the first
    with a port, else the first."""
    containers = ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []
    if not containers:
        raise PlanError(f"Deployment {name_of(deployment)} has no container")
    return next((c for c in containers if c.get("livenessProbe")), next((c for c in containers if c.get("ports")), containers[0]))


def name_of(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("name", "?")


def selects(service: dict, labels: dict) -> bool:
    """SERVICE's selector is met by LABELS (a Service without a selector selects no pod of ours)."""
    selector = (service.get("spec") or {}).get("selector") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def own_service(deployment: dict, services: list[dict]) -> dict:
    """The first Service (by name) whose selector the Deployment's pod template meets."""
    labels = ((deployment["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
    mine = sorted((s for s in services if selects(s, labels)), key=name_of)
    if not mine:
        raise PlanError(
            f"no Service in namespace {deployment['metadata'].get('namespace', '?')} selects the pods of Deployment "
            f"{name_of(deployment)} (their labels: {labels}): the load goes through a Service; create one, or name it"
        )
    return mine[0]


def container_port(container: dict, port) -> int | None:
    """A container port by number, or by its name; None where the container has no such port."""
    for p in container.get("ports") or []:
        if port in (p.get("containerPort"), p.get("name")):
            return p.get("containerPort")
    return port if isinstance(port, int) else None


def service_port(service: dict, container: dict, asked=None) -> int:
    """The Service's port to load: ASKED (a number or a name) if given, else the one whose target is the port
    the container's probes ask, else the first."""
    ports = (service.get("spec") or {}).get("ports") or []
    if not ports:
        raise PlanError(f"Service {name_of(service)} has no port")
    if asked is not None:
        found = next((p for p in ports if asked in (p.get("port"), p.get("name"), str(p.get("port")))), None)
        if found is None:
            names = ", ".join(f"{p.get('name') or '-'} {p.get('port')}" for p in ports)
            raise PlanError(f"Service {name_of(service)} has no port {asked} (it has: {names})")
        return found["port"]
    probed = {
        container_port(container, probe.port)
        for probe in (Probe.from_spec(container.get(f"{kind}Probe")) for kind in ("liveness", "readiness", "startup"))
        if probe is not None and probe.port is not None
    }
    for p in ports:
        if container_port(container, p.get("targetPort", p.get("port"))) in probed:
            return p["port"]
    return ports[0]["port"]


def answers_http(container: dict) -> bool:
    """Something in the container says it answers HTTP: an httpGet probe, or a port named http."""
    probes = [Probe.from_spec(container.get(f"{kind}Probe")) for kind in ("liveness", "readiness", "startup")]
    return any(p is not None and p.kind == "httpGet" for p in probes) or any(
        (p.get("name") or "").startswith("http") for p in container.get("ports") or []
    )


def target(context: str, deployment: dict, services: list[dict], path: str | None = None, port=None, method: str = "GET") -> Target:
    """The Target of DEPLOYMENT (API JSON) among SERVICES (its namespace's, API JSON)."""
    container = measured_container(deployment)
    if path is None and not answers_http(container):
        raise PlanError(
            f"Deployment {name_of(deployment)}: nothing says its container {container.get('name')} answers HTTP (no httpGet "
            "probe, no port named http): give the path to load (--path /...) if it does"
        )
    if path is not None and not path.startswith("/"):
        raise PlanError(f"--path {path!r}: a path starts with /, e.g. /api/orders")
    service = own_service(deployment, services)
    return Target(
        context=context,
        namespace=deployment["metadata"].get("namespace", "default"),
        deployment=name_of(deployment),
        container=container.get("name", "?"),
        liveness=Probe.from_spec(container.get("livenessProbe")),
        readiness=Probe.from_spec(container.get("readinessProbe")),
        startup=Probe.from_spec(container.get("startupProbe")),
        service=name_of(service),
        port=service_port(service, container, port),
        path=path or "/",
        method=method.upper(),
    )


def steps(liveness: Probe | None, max_users: int = MAX_USERS) -> list[Step]:
    """1, 2, 4, ... users up to MAX_USERS (the last step MAX_USERS itself), each held F x P + T plus the
    margin of the liveness probe (Kubernetes' defaults without one)."""
    if max_users < 1:
        raise PlanError(f"--max-users {max_users}: at least 1")
    probe = liveness or DEFAULT_PROBE
    hold = round(probe.failure_threshold * probe.period_s + probe.timeout_s) + STEP_MARGIN_S
    users, out = 1, []
    while users < max_users:
        out.append(Step(users, hold))
        users *= 2
    return out + [Step(max_users, hold)]


def needs_yes(context: str) -> bool:
    """Outside a kind cluster the load needs --yes: it is someone's service."""
    return not context.startswith("kind-")


def describe(t: Target, plan: list[Step]) -> list[str]:
    """The plan in lines, as the command prints it before it does anything."""
    live = t.liveness.describe() if t.liveness else f"none: the steps are held to Kubernetes' defaults ({DEFAULT_PROBE.describe()})"
    total = sum(s.hold_s for s in plan)
    return [
        f"target:    Deployment {t.deployment} in namespace {t.namespace} (context {t.context}), container {t.container}",
        f"probes:    liveness {live}",
        f"           readiness {describe_probe(t.readiness)}; startup {describe_probe(t.startup)}",
        f"load:      {t.method} {t.url} from inside the cluster",
        f"steps:     {', '.join(str(s.users) for s in plan)} concurrent users, {plan[0].hold_s} s each "
        f"(the liveness probe's F x P + T + {STEP_MARGIN_S} s), at most {total} s; it stops at the first liveness kill",
    ]
