"""A container's probe as the kubelet runs it: its kind (httpGet, tcpSocket ...), where it asks, and the
timing that decides a restart. One type for every reader: the Pods tab (what is on screen), run.json's
recorded settings (what the verdict times kills against), the countdown (which failure of the threshold
each one is) and the workshop's comparison of a container with a step's change.

The kubelet kills a container once ``failure_threshold`` (F) probes in a row have failed, one every
``period_s`` (P), each waiting ``timeout_s`` (T) at most: from the moment every probe fails, the kill
comes (F-1)P+T to FP+T later (``report.kills.kill_window`` times it; docs/sources.md, "Kubelet probes").
"""

from dataclasses import dataclass

# What the kubelet uses when a probe leaves a field out (the API server fills these in anyway).
PROBE_DEFAULTS = {"periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3}
PROBE_KINDS = ("httpGet", "tcpSocket", "grpc", "exec")
# The three probes of a container spec, by the kubelet's name for each (prober_probe_total's probe_type).
PROBE_FIELDS = {"Liveness": "livenessProbe", "Readiness": "readinessProbe", "Startup": "startupProbe"}


@dataclass(frozen=True)
class Probe:
    """One probe: its timing, its kind and where it asks (path and port; port a number or a port name)."""

    period_s: float
    timeout_s: float = PROBE_DEFAULTS["timeoutSeconds"]
    failure_threshold: int = PROBE_DEFAULTS["failureThreshold"]
    path: str | None = None
    port: str | int | None = None
    kind: str = "httpGet"  # run.json before it recorded the kind: the chart's probes were all httpGet

    @classmethod
    def from_spec(cls, spec: dict | None):
        """A probe of a container spec (API JSON, or rendered by the chart); None without one."""
        if not spec:
            return None
        kind = next((k for k in PROBE_KINDS if k in spec), None)
        target = (spec.get(kind) or {}) if kind not in (None, "exec") else {}
        return cls(
            period_s=int(spec.get("periodSeconds", PROBE_DEFAULTS["periodSeconds"])),
            timeout_s=int(spec.get("timeoutSeconds", PROBE_DEFAULTS["timeoutSeconds"])),
            failure_threshold=int(spec.get("failureThreshold", PROBE_DEFAULTS["failureThreshold"])),
            path=target.get("path"),
            port=target.get("port"),
            kind=kind,
        )

    @classmethod
    def from_json(cls, recorded: dict | None):
        """A probe as run.json records it (``to_json``); None without one."""
        if not recorded:
            return None
        return cls(
            recorded["periodSeconds"],
            recorded["timeoutSeconds"],
            recorded["failureThreshold"],
            recorded.get("path"),
            recorded.get("port"),
            recorded.get("type") or "httpGet",
        )

    def to_json(self) -> dict:
        """What run.json records (and the workshop compares): the spec's own field names."""
        return {
            "periodSeconds": self.period_s,
            "timeoutSeconds": self.timeout_s,
            "failureThreshold": self.failure_threshold,
            "type": self.kind,
            "path": self.path,
            "port": self.port,
        }

    def where(self, ports: dict | None = None) -> str:
        """Where it asks: "http (8080) /livez", "tcpSocket http"; PORTS maps port names to numbers."""
        port = self.port
        if isinstance(port, str) and ports and port in ports:
            port = f"{port} ({ports[port]})"
        return " ".join(str(x) for x in (port, self.path) if x is not None)

    def describe(self, ports: dict | None = None) -> str:
        """One line a workshop reads: "httpGet http (8080) /livez, every 5 s, timeout 1 s, 3 failures"."""
        return f"{self.kind} {self.where(ports)}".rstrip() + (
            f", every {self.period_s:g} s, timeout {self.timeout_s:g} s, {self.failure_threshold} failures"
        )


def describe(probe: Probe | None, ports: dict | None = None) -> str:
    """Probe.describe, "none" without a probe."""
    return probe.describe(ports) if probe else "none"


def service_container(obj: dict) -> dict | None:
    """The service container of a pod or of a Deployment's pod template (API JSON): its first, as the chart
    renders one; None where it has none."""
    spec = obj.get("spec") or {}
    spec = (spec.get("template") or {}).get("spec") or spec
    containers = spec.get("containers") or []
    return containers[0] if containers else None


def container_ports(pod: dict) -> dict:
    """The named ports of a pod's first container (API JSON): {"http": 8080, "management": 8081}."""
    container = service_container(pod) or {}
    return {p["name"]: p.get("containerPort") for p in container.get("ports") or [] if p.get("name")}


def container_env(pod: dict, name: str) -> str | None:
    """The literal value of environment variable NAME of a pod's first container (API JSON), if set so."""
    container = service_container(pod) or {}
    return next((e.get("value") for e in container.get("env") or [] if e.get("name") == name), None)


def container_probe(pod: dict, probe_type: str = "Liveness") -> Probe | None:
    """The probe of PROBE_TYPE (Liveness, Readiness, Startup) of a pod's first container (API JSON)."""
    return Probe.from_spec((service_container(pod) or {}).get(PROBE_FIELDS[probe_type]))


def container_liveness(pod: dict) -> str | None:
    """The described liveness probe of a pod's first container (API JSON), None when the spec has none."""
    if service_container(pod) is None:
        return None
    return describe(container_probe(pod), container_ports(pod))
